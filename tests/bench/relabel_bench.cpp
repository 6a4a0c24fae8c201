// bench_relabel: notifier::RelabelRules::apply on one alert's labels (12 labels): a typical
// alert_relabel_configs list on an alert it already went through (a steady alert, each round)
// and on a fresh copy (plus the copy's own cost), and each action alone. Reports allocations
// per alert: none is the goal when nothing changes.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "notifier/relabel.hpp"

namespace {

using A = core::RelabelAction;

core::Labels alert_labels() {
  return core::Labels{{"alertgroup", "A_group_001"},
                      {"alertname", "HighLatency"},
                      {"container", "c0"},
                      {"dc", "dc1"},
                      {"env", "prod"},
                      {"instance", "host-17:9100"},
                      {"job", "node-7"},
                      {"pod", "pod-17-abcdef"},
                      {"region", "eu-west-0"},
                      {"service", "svc-7"},
                      {"severity", "warning"},
                      {"team", "team-3"}};
}

core::RelabelConfig make(A action, std::vector<std::string> src, std::string regex,
                         std::string target = "", std::string replacement = "$1",
                         uint64_t modulus = 0) {
  core::RelabelConfig c;
  c.action = action;
  c.source_labels = std::move(src);
  c.source_labels_set = !c.source_labels.empty();
  if (!regex.empty()) c.regex = std::move(regex);
  c.target_label = std::move(target);
  c.replacement = std::move(replacement);
  c.modulus = modulus;
  return c;
}

// A realistic alert_relabel_configs list that leaves an already-relabeled alert unchanged.
std::vector<core::RelabelConfig> steady_rules() {
  return {
      make(A::drop, {"severity"}, "debug|info"),
      make(A::keep, {"env"}, "prod|staging"),
      make(A::replace, {"instance"}, "([^:]+):\\d+", "host"),
      make(A::labeldrop, {}, "tmp_.*|__.*"),
      make(A::replace, {"team", "service"}, "(.*);(.*)", "owner", "$1/$2"),
  };
}

void run(benchmark::State& state, const std::vector<core::RelabelConfig>& configs,
         bool fresh_copy) {
  auto rules = notifier::RelabelRules::compile(configs);
  if (!rules) {
    state.SkipWithError(rules.error().message.c_str());
    return;
  }
  core::Labels labels = alert_labels();
  if (!rules->apply(labels)) {
    state.SkipWithError("dropped");
    return;
  }
  const core::Labels input = fresh_copy ? alert_labels() : labels;
  core::Labels work = input;
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    if (fresh_copy) work = input;  // copy-assign into the same storage: no allocation
    benchmark::DoNotOptimize(rules->apply(work));
    benchmark::ClobberMemory();
  }
  const auto allocs = alertd_bench::alloc_stats().allocations - before;
  state.counters["allocs_per_alert"] =
      static_cast<double>(allocs) / static_cast<double>(state.iterations());
}

void BM_SteadyNoChange(benchmark::State& state) { run(state, steady_rules(), false); }
void BM_SteadyFromScratch(benchmark::State& state) { run(state, steady_rules(), true); }

// What BM_SteadyFromScratch pays for the copy alone.
void BM_CopyLabels(benchmark::State& state) {
  const core::Labels input = alert_labels();
  core::Labels work = input;
  for (auto _ : state) {
    work = input;
    benchmark::DoNotOptimize(work);
    benchmark::ClobberMemory();
  }
}

// One rule on an alert it has already been applied to (each round's steady state).
void BM_Action(benchmark::State& state) {
  std::vector<core::RelabelConfig> one;
  switch (state.range(0)) {
    case 0: one = {make(A::keep, {"env"}, "prod|staging")}; break;
    case 1: one = {make(A::replace, {"instance"}, "([^:]+):\\d+", "host")}; break;
    case 2: one = {make(A::hashmod, {"alertname", "instance"}, "", "shard", "$1", 16)}; break;
    case 3: one = {make(A::labelmap, {}, "(team|service)", "owner_$1")}; break;
    case 4: one = {make(A::labeldrop, {}, "pod|container")}; break;
    case 5: one = {make(A::lowercase, {"alertname"}, "", "alertname_lc", "$1")}; break;
    default: break;
  }
  static const char* const kNames[] = {"keep", "replace", "hashmod", "labelmap", "labeldrop",
                                       "lowercase"};
  state.SetLabel(kNames[state.range(0)]);
  run(state, one, false);
}

}  // namespace

BENCHMARK(BM_SteadyNoChange);
BENCHMARK(BM_SteadyFromScratch);
BENCHMARK(BM_CopyLabels);
BENCHMARK(BM_Action)->DenseRange(0, 5);
BENCHMARK_MAIN();
