// bench_notifier: the Alertmanager payload for a batch of alerts shaped like vmalert-observed.md's
// example (13 labels, 2 annotations), written by notifier::encode_alerts, against a baseline
// that builds the same JSON with RapidJSON's Writer (plus the two spaces vmalert's qtpl adds).
// And bench_rules' AlertingRule::apply for a steady firing rule (same labels, literal annotations).
#include <benchmark/benchmark.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "core/query_result.hpp"
#include "notifier/alertmanager_payload.hpp"
#include "rules/alerting_rule.hpp"

namespace {

using namespace std::chrono_literals;

core::Labels series_labels(int i) {
  const std::string n = std::to_string(i);
  return core::Labels{{"container", "c0"},
                      {"dc", "dc1"},
                      {"env", "prod"},
                      {"instance", "host-" + n + ":9100"},
                      {"job", "node-" + std::to_string(i % 10)},
                      {"owner", "team-" + std::to_string(i % 4) + "-oncall"},
                      {"pod", "pod-" + n + "-abcdef"},
                      {"region", "eu-west-0"},
                      {"service", "svc-" + std::to_string(i % 10)},
                      {"severity", "warning"},
                      {"team", "team-" + std::to_string(i % 4)}};
}

std::vector<notifier::Alert> make_batch(int n) {
  std::vector<notifier::Alert> out;
  const auto t0 = core::from_unix_ms(1'764'672'426'846) + 344494ns;
  for (int i = 0; i < n; ++i) {
    notifier::Alert a;
    a.labels = series_labels(i);
    a.labels.set("alertgroup", "A_group_001");
    a.labels.set("alertname", "A_g001_r0000");
    a.annotations = core::Labels{
        {"summary", "host-" + std::to_string(i) + ":9100 value 109"},
        {"description", "rule 1/0: job=node-6 pod=pod-6-abcdef value=109.00"}};
    a.starts_at = t0;
    a.ends_at = t0 + 20s;
    a.generator_url = "http://vm:28880/vmalert/alert?group_id=6810664301820910224&alert_id=" +
                      std::to_string(3405761999840421324ULL + static_cast<uint64_t>(i));
    out.push_back(std::move(a));
  }
  return out;
}

void BM_EncodeAlerts(benchmark::State& state) {
  const auto batch = make_batch(static_cast<int>(state.range(0)));
  std::string out;
  size_t bytes = 0;
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    out.clear();
    notifier::encode_alerts(batch, out);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["allocs/op"] = benchmark::Counter(
      static_cast<double>(alertd_bench::alloc_stats().allocations - before) /
      static_cast<double>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_EncodeAlerts)->Arg(10)->Arg(1000);

// Baseline: RapidJSON Writer into a reused StringBuffer (it escapes '<' and '\'' differently,
// which does not matter for these inputs).
void BM_EncodeAlertsRapidJsonBaseline(benchmark::State& state) {
  const auto batch = make_batch(static_cast<int>(state.range(0)));
  rapidjson::StringBuffer sb;
  size_t bytes = 0;
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    sb.Clear();
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.StartArray();
    for (const auto& a : batch) {
      w.StartObject();
      w.Key("startsAt");
      const std::string s = core::format_rfc3339_nano(a.starts_at);
      w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
      w.Key("generatorURL");
      w.String(a.generator_url.data(), static_cast<rapidjson::SizeType>(a.generator_url.size()));
      w.Key("endsAt");
      const std::string e = core::format_rfc3339_nano(*a.ends_at);
      w.String(e.data(), static_cast<rapidjson::SizeType>(e.size()));
      w.Key("labels");
      w.StartObject();
      for (const auto& l : a.labels) {
        w.Key(l.name.data(), static_cast<rapidjson::SizeType>(l.name.size()));
        w.String(l.value.data(), static_cast<rapidjson::SizeType>(l.value.size()));
      }
      w.EndObject();
      w.Key("annotations");
      w.StartObject();
      for (const auto& l : a.annotations) {
        w.Key(l.name.data(), static_cast<rapidjson::SizeType>(l.name.size()));
        w.String(l.value.data(), static_cast<rapidjson::SizeType>(l.value.size()));
      }
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
    bytes = sb.GetSize();
    benchmark::DoNotOptimize(sb.GetString());
  }
  state.counters["allocs/op"] = benchmark::Counter(
      static_cast<double>(alertd_bench::alloc_stats().allocations - before) /
      static_cast<double>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_EncodeAlertsRapidJsonBaseline)->Arg(10)->Arg(1000);

// One evaluation round of a firing rule over N series (steady state: every alert exists).
void BM_AlertingRuleApply(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  config::GroupSpec g;
  g.name = "A_group_001";
  g.file = "rules.yml";
  g.id = 6810664301820910224ULL;
  config::RuleSpec r;
  r.name = "A_g001_r0000";
  r.expr = "series_10";
  r.labels = core::Labels{{"severity", "warning"}};
  r.annotations = core::Labels{{"summary", "static summary"}};
  rules::RuleContext ctx;
  ctx.group_interval = 10s;
  auto rule = rules::AlertingRule::create(r, g, ctx);
  if (!rule) {
    state.SkipWithError(rule.error().message.c_str());
    return;
  }
  core::QueryResult result;
  for (int i = 0; i < n; ++i) {
    result.begin_series();
    result.add_label("__name__", "series_10");
    for (const auto& l : series_labels(i)) result.add_label(l.name, l.value);
    result.add_sample({0, 100.0 + i});
    result.end_series();
  }
  templates::TemplateEnv env;
  rules::EvalInfo info;
  info.emit_series = false;
  auto ts = core::from_unix_ms(1'764'672'420'000);
  (void)rule->apply(result, ts, env, info);  // create the alerts
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    ts += 10s;
    auto stats = rule->apply(result, ts, env, info);
    benchmark::DoNotOptimize(stats);
  }
  state.counters["allocs/op"] = benchmark::Counter(
      static_cast<double>(alertd_bench::alloc_stats().allocations - before) /
      static_cast<double>(state.iterations()));
  state.SetItemsProcessed(static_cast<int64_t>(n) * state.iterations());
}
BENCHMARK(BM_AlertingRuleApply)->Arg(10)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
