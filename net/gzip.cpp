#include "net/gzip.hpp"

#include <zlib.h>

#include <array>
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
  // One deflate() call takes at most 4 GiB (uInt) in and out.
  if (data.size() > (std::numeric_limits<uInt>::max() / 2)) {
    return core::fail("gzip: " + std::to_string(data.size()) + " bytes is too large to compress");
  }
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return core::fail("gzip: cannot initialise zlib's deflate");
  }
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  // deflateBound() is enough room for one Z_FINISH call: anything else is a zlib failure.
  const int rc = deflate(&z, Z_FINISH);
  const size_t written = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    return core::fail("gzip: deflate failed (zlib error " + std::to_string(rc) + ")");
  }
  out.resize(written);
  return out;
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
