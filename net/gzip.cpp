#include "net/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string>

namespace net {

namespace {
constexpr size_t kOutChunk = 64 * 1024;
}  // namespace

struct GzipInflater::Stream {
  z_stream z{};
  bool ok = false;
  std::array<char, kOutChunk> out;
  Stream() { ok = inflateInit2(&z, 16 + MAX_WBITS) == Z_OK; }  // 16: gzip wrapper only
  ~Stream() {
    if (ok) inflateEnd(&z);
  }
};

GzipInflater::GzipInflater(size_t cap) : stream_(std::make_unique<Stream>()), cap_(cap) {}
GzipInflater::~GzipInflater() = default;

core::Result<void> GzipInflater::feed(std::string_view in, const Sink& sink) {
  Stream& s = *stream_;
  if (!s.ok) return core::fail("gzip: cannot initialise zlib", core::ErrorKind::bad_response);
  z_stream& z = s.z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  for (;;) {
    if (member_done_) {
      if (z.avail_in == 0) break;
      // Another gzip member follows (concatenated members are one body, as Go reads them).
      inflateReset(&z);
      member_done_ = false;
    }
    z.next_out = reinterpret_cast<Bytef*>(s.out.data());
    z.avail_out = static_cast<uInt>(s.out.size());
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      return core::fail(std::string("gzip: invalid compressed body: ") +
                            (z.msg != nullptr ? z.msg : "zlib error " + std::to_string(rc)),
                        core::ErrorKind::bad_response);
    }
    const size_t n = s.out.size() - z.avail_out;
    if (n != 0) {
      if (n > cap_ - inflated_) {
        return core::fail("response exceeds max size " + std::to_string(cap_) +
                              " bytes (after gzip decompression)",
                          core::ErrorKind::too_large);
      }
      inflated_ += n;
      if (auto err = sink(std::string_view(s.out.data(), n))) return core::fail(std::move(*err));
    }
    if (rc == Z_STREAM_END) {
      member_done_ = true;
      continue;
    }
    // Room left in the output: zlib consumed all the input it could. A full output buffer
    // may have more behind it.
    if (z.avail_out != 0) break;
  }
  return {};
}

core::Result<void> GzipInflater::finish() {
  if (!member_done_) {
    return core::fail("gzip: unexpected end of the compressed body", core::ErrorKind::bad_response);
  }
  return {};
}

core::Result<std::string> gzip_compress(std::string_view data) {
  // zlib's Z_DEFAULT_COMPRESSION is level 6.
  return GzipDeflater::compress(data, 6);
}

struct GzipDeflater::Stream {
  z_stream z{};
  bool ok = false;
  explicit Stream(int level) {
    // 16: a gzip wrapper; memLevel 8 and the 32 KiB window are zlib's defaults.
    ok = deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~Stream() {
    if (ok) deflateEnd(&z);
  }
};

GzipDeflater::GzipDeflater(int level)
    : stream_(std::make_unique<Stream>(std::clamp(level, 1, 9))) {}
GzipDeflater::~GzipDeflater() = default;

core::Result<void> GzipDeflater::run(std::string_view in, int flush, std::string& out) {
  if (!stream_->ok) return core::fail("gzip: cannot initialise zlib's deflate");
  if (finished_) return core::fail("gzip: write after the end of the compressed stream");
  z_stream& z = stream_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::array<char, 16 * 1024> buf;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf.data());
    z.avail_out = static_cast<uInt>(buf.size());
    const int rc = deflate(&z, flush);
    out.append(buf.data(), buf.size() - z.avail_out);
    if (rc == Z_STREAM_END) {
      finished_ = true;
      return {};
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return core::fail("gzip: zlib's deflate failed with " + std::to_string(rc));
    }
    // All input taken and the output not full: zlib has nothing more to give for now.
    if (z.avail_in == 0 && z.avail_out != 0 && flush == Z_NO_FLUSH) return {};
  }
}

core::Result<void> GzipDeflater::write(std::string_view in, std::string& out) {
  // zlib counts input in uInt: feed a huge body in slices.
  constexpr size_t kSlice = size_t{1} << 30;
  do {
    const std::string_view slice = in.substr(0, kSlice);
    if (auto r = run(slice, Z_NO_FLUSH, out); !r) return r;
    in.remove_prefix(slice.size());
  } while (!in.empty());
  return {};
}

core::Result<void> GzipDeflater::finish(std::string& out) { return run({}, Z_FINISH, out); }

core::Result<std::string> GzipDeflater::compress(std::string_view in, int level) {
  GzipDeflater d(level);
  std::string out;
  out.reserve(in.size() / 4 + 64);
  if (auto r = d.write(in, out); !r) return core::fail(r.error());
  if (auto r = d.finish(out); !r) return core::fail(r.error());
  return out;
}

namespace {

char lower_ascii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  }
  return true;
}

// A q-value as Go's strconv.ParseFloat reads the usual forms ("1", "0.5", "0", ".5"),
// clamped to [0, 1]; anything unreadable is 0, as in gzhttp.
double parse_qvalue(std::string_view v) {
  if (v.starts_with('+')) v.remove_prefix(1);
  double q = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), q);
  if (v.empty() || ec != std::errc{} || ptr != v.data() + v.size()) return 0;
  if (!(q > 0)) return 0;  // negative, zero or NaN
  return std::min(q, 1.0);
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
  std::string_view rest = accept_encoding;
  for (;;) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t semi = item.find(';');
    if (iequals(trim(item.substr(0, semi)), "gzip")) {
      // gzhttp's parseCoding: the q-value is that of the last parameter when it is "q=",
      // otherwise 1 ("gzip;q=0;x=y" accepts, a quirk kept so that both agree).
      double q = 1;
      while (semi != std::string_view::npos) {
        item.remove_prefix(semi + 1);
        semi = item.find(';');
        const std::string_view part = trim(item.substr(0, semi));
        q = part.starts_with("q=") ? parse_qvalue(part.substr(2)) : 1;
      }
      return q > 0;
    }
    if (comma == std::string_view::npos) return false;
    rest.remove_prefix(comma + 1);
  }
}

bool compressible_content_type(std::string_view content_type) {
  std::string ct(trim(content_type));
  for (char& c : ct) c = lower_ascii(c);
  for (const std::string_view compressed :
       {"compress", "zip", "snappy", "lzma", "xz", "zstd", "brotli", "stuffit"}) {
    if (ct.find(compressed) != std::string::npos) return false;
  }
  for (const std::string_view media : {"video/", "audio/", "image/jp"}) {
    if (ct.starts_with(media)) return false;
  }
  return true;
}

bool is_gzip_encoding(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  const auto ieq = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      const char c = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
      if (c != b[i]) return false;
    }
    return true;
  };
  return ieq(v, "gzip") || ieq(v, "x-gzip");
}

}  // namespace net
