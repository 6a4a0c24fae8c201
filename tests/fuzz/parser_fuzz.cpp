// Fuzzes datasource::InstantParser. For every input it checks that
//   1. parsing the whole buffer with a fresh parser and result,
//   2. feeding it in chunks cut at split points derived from the data, and
//   3. parsing it with a parser and result reused across inputs
// agree exactly: the same error message, or the same result (labels, samples bit for bit,
// type, flags). Any disagreement aborts. ASan/UBSan catch out-of-bounds reads and overflows.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "datasource/response_parser.hpp"

namespace {

std::string dump(const core::QueryResult& r) {
  std::string s = std::to_string(static_cast<int>(r.type)) + (r.is_partial ? "P" : "-") +
                  (r.series_fetched ? std::to_string(*r.series_fetched) : "none") + "|" +
                  std::string(r.string_value()) + "\n";
  for (size_t i = 0; i < r.size(); ++i) {
    for (auto l : r.labels(i)) {
      s.append(l.name).append("=").append(l.value).append("\x1f");
    }
    for (auto smp : r.samples(i)) {
      uint64_t bits = 0;
      std::memcpy(&bits, &smp.value, sizeof bits);
      s += std::to_string(smp.timestamp_ms) + ":" + std::to_string(bits) + " ";
    }
    s += "\n";
  }
  return s;
}

std::string outcome(const core::Result<void>& r, const core::QueryResult& out) {
  return r ? "OK " + dump(out) : "ERR " + r.error().message;
}

std::string parse_whole(datasource::InstantParser& p, std::string_view in, core::QueryResult& out) {
  p.reset(out);
  auto r = p.feed(in);
  if (r) r = p.finish();
  return outcome(r, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  core::QueryResult whole_out;
  datasource::InstantParser whole_parser;
  const std::string whole = parse_whole(whole_parser, in, whole_out);

  // Split points from the data: an FNV-1a hash of the input seeds a xorshift generator that
  // picks chunk lengths between 1 and 64 bytes (small, so boundaries land everywhere).
  uint64_t seed = 14695981039346656037ULL;
  for (size_t i = 0; i < size; ++i) seed = (seed ^ data[i]) * 1099511628211ULL;
  seed |= 1;
  core::QueryResult chunk_out;
  datasource::InstantParser chunk_parser;
  chunk_parser.reset(chunk_out);
  core::Result<void> r;
  size_t pos = 0;
  while (pos < size && r) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    const size_t len = std::min<size_t>(size - pos, 1 + seed % 64);
    r = chunk_parser.feed(in.substr(pos, len));
    pos += len;
  }
  if (r) r = chunk_parser.finish();
  const std::string chunked = outcome(r, chunk_out);
  if (chunked != whole) std::abort();

  static datasource::InstantParser reused_parser;
  static core::QueryResult reused_out;
  if (parse_whole(reused_parser, in, reused_out) != whole) std::abort();
  return 0;
}
