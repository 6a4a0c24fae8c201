// A tiny driver for scripts/callgrind-parser.sh: parses one body N times with one variant, so
// instructions per byte = (Ir(N) - Ir(0)) / (N * body bytes).
//   parser_driver <alertd|alertd_chunked|split_rapidjson|rapidjson_sax|rapidjson_dom> <series|0> <N>
// series 0 = vmalert's instant_response.json; negative = generated with instance/pod scattered
// (a new one on every series). Prints the body size and the series count.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "datasource/response_parser.hpp"
#include "gen_response.hpp"
#include "parser_variants.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <variant> <series|0> <iterations>\n", argv[0]);
    return 2;
  }
  const std::string_view variant = argv[1];
  const long series = std::atol(argv[2]);
  const long n = std::atol(argv[3]);
  std::string body;
  if (series == 0) {
    std::ifstream in(ALERTD_INSTANT_RESPONSE_JSON, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    body = alertd_bench::wrap_result_array(ss.str());
  } else {
    body = series > 0 ? alertd_bench::generate_instant_response(static_cast<size_t>(series))
                     : alertd_bench::generate_instant_response(static_cast<size_t>(-series), true);
  }
  core::QueryResult out;
  datasource::InstantParser parser;
  alertd_bench::SplitRapidjsonParser split;
  bool ok = true;
  for (long i = 0; i < n; ++i) {
    if (variant == "alertd") {
      parser.reset(out);
      ok = parser.feed(body).has_value() && parser.finish().has_value();
    } else if (variant == "alertd_chunked") {
      parser.reset(out);
      for (size_t pos = 0; pos < body.size() && ok; pos += 64 * 1024) {
        ok = parser.feed(std::string_view(body).substr(pos, 64 * 1024)).has_value();
      }
      ok = ok && parser.finish().has_value();
    } else if (variant == "split_rapidjson") {
      ok = split.parse(body, out);
    } else if (variant == "rapidjson_sax") {
      ok = alertd_bench::parse_rapidjson_sax(body, out);
    } else if (variant == "rapidjson_dom") {
      ok = alertd_bench::parse_rapidjson_dom(body, out);
    } else {
      std::fprintf(stderr, "unknown variant %s\n", argv[1]);
      return 2;
    }
    if (!ok) {
      std::fprintf(stderr, "parse failed\n");
      return 1;
    }
  }
  std::printf("bytes=%zu series=%zu\n", body.size(), out.size());
  return 0;
}
