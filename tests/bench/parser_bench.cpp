// Query-response parsing: alertd's streaming parser (RapidJSON split + DOM per element)
// against RapidJSON baselines, on vmalert's instant_response.json (219 series, 88 KB, wrapped
// in a response envelope) and on generated responses of 10k, 100k and 1M series
// (gen_response.hpp; -1000000: 1M series whose instance and pod change on every series).
//
// Counters: bytes_per_second (MB/s), allocs/op and B/op (operator new, RapidJSON included),
// allocs/series, and peak_x: the peak live heap of one parse with a fresh parser and a fresh
// QueryResult (result, DOM and buffers; not the body) divided by the body size. The *_chunked
// variant feeds the body in 64 KiB chunks, as the HTTP client does.
#include <benchmark/benchmark.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "alloc_counter.hpp"
#include "datasource/response_parser.hpp"
#include "gen_response.hpp"
#include "parser_variants.hpp"

namespace {

constexpr size_t kChunk = 64 * 1024;

const std::string& body_for(int64_t series) {
  static std::map<int64_t, std::string> cache;
  auto it = cache.find(series);
  if (it != cache.end()) return it->second;
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
  return cache.emplace(series, std::move(body)).first->second;
}

bool parse_chunked(datasource::InstantParser& p, std::string_view body, core::QueryResult& out) {
  p.reset(out);
  for (size_t pos = 0; pos < body.size(); pos += kChunk) {
    if (!p.feed(body.substr(pos, kChunk))) return false;
  }
  return p.finish().has_value();
}

enum class Variant { alertd, alertd_fresh, alertd_chunked, rapidjson_dom, rapidjson_sax, split_rapidjson };

bool parse_once(Variant v, std::string_view body, core::QueryResult& out,
                datasource::InstantParser& parser, alertd_bench::SplitRapidjsonParser& split) {
  switch (v) {
    case Variant::alertd:
    case Variant::alertd_fresh:
      parser.reset(out);
      return parser.feed(body).has_value() && parser.finish().has_value();
    case Variant::alertd_chunked: return parse_chunked(parser, body, out);
    case Variant::rapidjson_dom: return alertd_bench::parse_rapidjson_dom(body, out);
    case Variant::rapidjson_sax: return alertd_bench::parse_rapidjson_sax(body, out);
    case Variant::split_rapidjson: return split.parse(body, out);
  }
  return false;
}

void BM_Parse(benchmark::State& state, Variant v) {
  const std::string& body = body_for(state.range(0));
  datasource::InstantParser parser;
  alertd_bench::SplitRapidjsonParser split;
  core::QueryResult reused;
  // Warm up: steady state for the reused variants.
  if (!parse_once(v, body, reused, parser, split)) {
    state.SkipWithError("parse failed");
    return;
  }
  const size_t series = reused.size();
  const auto before = alertd_bench::alloc_stats();
  for (auto _ : state) {
    if (v == Variant::alertd_fresh) {
      core::QueryResult fresh;
      datasource::InstantParser p;
      benchmark::DoNotOptimize(parse_once(v, body, fresh, p, split));
    } else {
      benchmark::DoNotOptimize(parse_once(v, body, reused, parser, split));
    }
  }
  const auto after = alertd_bench::alloc_stats();
  const auto iters = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(body.size()));
  state.counters["series"] = static_cast<double>(series);
  state.counters["allocs/op"] = static_cast<double>(after.allocations - before.allocations) / iters;
  state.counters["allocs/series"] =
      static_cast<double>(after.allocations - before.allocations) / iters / static_cast<double>(series);
  state.counters["B/op"] = static_cast<double>(after.bytes - before.bytes) / iters;

  // Peak of one parse from cold: fresh parser and result.
  {
    const auto live = alertd_bench::alloc_stats().live_bytes;
    alertd_bench::reset_peak();
    {
      core::QueryResult fresh;
      datasource::InstantParser p;
      // Only the split variant pays for its arena.
      std::optional<alertd_bench::SplitRapidjsonParser> s;
      if (v == Variant::split_rapidjson) s.emplace();
      benchmark::DoNotOptimize(parse_once(v, body, fresh, p, s ? *s : split));
      state.counters["result_x"] =
          static_cast<double>(fresh.capacity_bytes()) / static_cast<double>(body.size());
    }
    const auto peak = alertd_bench::alloc_stats().peak_live_bytes;
    state.counters["peak_x"] =
        static_cast<double>(peak - live) / static_cast<double>(body.size());
  }
}

void sizes(benchmark::internal::Benchmark* b) {
  // Negative: the same count with instance/pod scattered, never in runs (gen_response.hpp).
  b->ArgName("series")->Arg(0)->Arg(10000)->Arg(100000)->Arg(1000000)->Arg(-1000000)->Unit(
      benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Parse, alertd, Variant::alertd)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Parse, alertd_chunked, Variant::alertd_chunked)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Parse, alertd_fresh, Variant::alertd_fresh)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Parse, split_rapidjson, Variant::split_rapidjson)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Parse, rapidjson_sax, Variant::rapidjson_sax)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Parse, rapidjson_dom, Variant::rapidjson_dom)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
