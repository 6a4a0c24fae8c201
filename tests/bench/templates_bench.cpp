// Rendering the two most common annotation shapes of the corpus (templates.md §1) for 10,000
// alerts, each into a reused std::string:
//   labels_humanize: `{{ $labels.instance }} value {{ $value | humanize }}`
//   printf:          `{{ printf "%.2f" $value }}% used on {{ $labels.instance }}`
// Counters: ns/render and allocs/render (bench_alloc). Baseline in the same run: hand-written
// code producing the same bytes (std::to_chars), i.e. the floor for this output.
#include <benchmark/benchmark.h>

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "templates/template.hpp"

namespace {

constexpr size_t kAlerts = 10000;

struct Alerts {
  std::vector<core::Labels> labels;
  std::vector<double> values;
  Alerts() {
    labels.reserve(kAlerts);
    values.reserve(kAlerts);
    for (size_t i = 0; i < kAlerts; ++i) {
      labels.push_back(core::Labels{{"instance", "host-" + std::to_string(i) + ".example.com:9100"},
                                    {"job", "node"},
                                    {"severity", i % 2 ? "warning" : "critical"}});
      values.push_back(static_cast<double>(i) * 1234.567 + 0.25);
    }
  }
};

const Alerts& alerts() {
  static const Alerts a;
  return a;
}

void report(benchmark::State& state, uint64_t allocs_before) {
  const double renders = static_cast<double>(kAlerts) * static_cast<double>(state.iterations());
  state.counters["ns/render"] =
      benchmark::Counter(renders, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["allocs/render"] =
      static_cast<double>(alertd_bench::alloc_stats().allocations - allocs_before) / renders;
}

void render_all(benchmark::State& state, const char* text) {
  auto t = templates::Template::parse(text);
  if (!t) {
    state.SkipWithError(t.error().message.c_str());
    return;
  }
  const Alerts& a = alerts();
  templates::TemplateData data;
  data.expr = "up == 0";
  templates::TemplateEnv env;
  env.external_url = "http://alertd.example.com";
  std::string out;
  out.reserve(256);
  // Warm up thread-local scratch buffers outside the measurement.
  data.labels = &a.labels[0];
  (void)t->render(data, env, out);
  const uint64_t before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    for (size_t i = 0; i < kAlerts; ++i) {
      data.labels = &a.labels[i];
      data.value = a.values[i];
      out.clear();
      if (!t->render(data, env, out)) state.SkipWithError("render failed");
      benchmark::DoNotOptimize(out.data());
    }
  }
  report(state, before);
}

void BM_Render_LabelsHumanize(benchmark::State& state) {
  render_all(state, "{{ $labels.instance }} value {{ $value | humanize }}");
}
BENCHMARK(BM_Render_LabelsHumanize)->Unit(benchmark::kMillisecond)->Repetitions(5)
    ->ReportAggregatesOnly(true);

void BM_Render_Printf(benchmark::State& state) {
  render_all(state, "{{ printf \"%.2f\" $value }}% used on {{ $labels.instance }}");
}
BENCHMARK(BM_Render_Printf)->Unit(benchmark::kMillisecond)->Repetitions(5)
    ->ReportAggregatesOnly(true);

// Baseline: the same bytes for the printf shape, written by hand.
void BM_Baseline_Handwritten(benchmark::State& state) {
  const Alerts& a = alerts();
  std::string out;
  out.reserve(256);
  const uint64_t before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    for (size_t i = 0; i < kAlerts; ++i) {
      out.clear();
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, a.values[i], std::chars_format::fixed, 2);
      out.append(buf, r.ptr);
      out.append("% used on ");
      out.append(*a.labels[i].get("instance"));
      benchmark::DoNotOptimize(out.data());
    }
  }
  report(state, before);
}
BENCHMARK(BM_Baseline_Handwritten)->Unit(benchmark::kMillisecond)->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
