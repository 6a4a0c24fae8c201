// Rule loading throughput on prometheus-promtool-testdata/rules_large.yml (1 group, 10,002
// recording rules, 1.1 MB). The file is a vmalert REJECT (exact duplicate rules), so every
// run also builds the full error list. Baselines in the same run: the load without the
// expression check, and the expression check alone.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "alloc_counter.hpp"
#include "config/loader.hpp"
#include "config/promql.hpp"

namespace {

const std::string kFile =
    std::string(ALERTD_RULES_CORPUS) + "/prometheus-promtool-testdata/rules_large.yml";

std::string read_file() {
  std::ifstream in(kFile, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void report(benchmark::State& state, uint64_t allocs_before, size_t rules) {
  const auto allocs = alertd_bench::alloc_stats().allocations - allocs_before;
  state.counters["rules/s"] = benchmark::Counter(static_cast<double>(rules) *
                                                     static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
  state.counters["allocs/rule"] =
      static_cast<double>(allocs) /
      (static_cast<double>(rules) * static_cast<double>(state.iterations()));
}

void BM_LoadRulesLarge(benchmark::State& state) {
  config::LoadOptions o;
  o.paths = {kFile};
  o.validate_expressions = state.range(0) != 0;
  size_t errors = 0;
  const uint64_t before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    auto r = config::load_rules(o);
    errors = r.errors.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["errors"] = static_cast<double>(errors);
  report(state, before, 10002);
}
BENCHMARK(BM_LoadRulesLarge)->Arg(1)->Arg(0)->ArgName("validate_expr")
    ->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

// The expression check alone over every expr of the file.
void BM_CheckPromqlLarge(benchmark::State& state) {
  config::LoadOptions o;
  o.validate_expressions = false;
  const auto r = config::parse_rules_text(read_file(), kFile, o);
  std::vector<std::string> exprs;
  // The file is rejected (duplicates), so collect the exprs with duplicates allowed: parse
  // again per rule is not needed; the expressions are the `expr:` lines.
  std::istringstream lines(read_file());
  for (std::string line; std::getline(lines, line);) {
    const auto pos = line.find("expr: ");
    if (pos != std::string::npos) exprs.push_back(line.substr(pos + 6));
  }
  benchmark::DoNotOptimize(r);
  const uint64_t before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    size_t bad = 0;
    for (const auto& e : exprs) bad += config::check_promql(e).has_value() ? 1 : 0;
    benchmark::DoNotOptimize(bad);
  }
  report(state, before, exprs.size());
}
BENCHMARK(BM_CheckPromqlLarge)->Unit(benchmark::kMillisecond)->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
