// bench_notifier: BM_Payload10_*: issue 10's encoder benchmark (1,000 alerts of 10 labels and
// 2 annotations: unchanged since the last round, all changed, the old encoder, and a RapidJSON
// Writer building the same bytes). And the Alertmanager payload for a batch of alerts shaped like vmalert-observed.md's
// example (13 labels, 2 annotations), written by notifier::encode_alerts, against a baseline
// that builds the same JSON with RapidJSON's Writer (plus the two spaces vmalert's qtpl adds).
// And bench_rules' AlertingRule::apply for a steady firing rule (same labels, literal annotations).
#include <benchmark/benchmark.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <string_view>
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

// How an alert carries its generatorURL (and whether a fragment holds its JSON):
//   url       the string, everything escaped afresh (the encoder before issue 10)
//   fragment  a pre-built core::AlertJson (rules/ for alerts with something to escape)
//   prefix    the rule's shared URL prefix and the alert's ID, label blocks that are their own
//             JSON copied straight (rules/ for every other alert, AlertingRule::set_payload)
enum class Carry { url, fragment, prefix };

// The issue-10 shape: 10 labels (8 from the series, alertgroup, alertname) and 2 annotations.
std::vector<notifier::Alert> make_batch10(int n, Carry carry) {
  const std::string prefix = "http://vm:28880/vmalert/alert?group_id=6810664301820910224&alert_id=";
  auto prefix_json = std::make_shared<const std::string>("\"generatorURL\":\"" + prefix);
  std::vector<notifier::Alert> out;
  const auto t0 = core::from_unix_ms(1'764'672'426'846) + 344494ns;
  for (int i = 0; i < n; ++i) {
    const std::string s = std::to_string(i);
    notifier::Alert a;
    a.labels = core::Labels{{"alertgroup", "A_group_001"},
                            {"alertname", "A_g001_r0000"},
                            {"dc", "dc1"},
                            {"env", "prod"},
                            {"instance", "host-" + s + ":9100"},
                            {"job", "node-" + std::to_string(i % 10)},
                            {"pod", "pod-" + s + "-abcdef"},
                            {"region", "eu-west-0"},
                            {"service", "svc-" + std::to_string(i % 10)},
                            {"severity", "warning"}};
    a.annotations =
        core::Labels{{"summary", "host-" + s + ":9100 value 109"},
                     {"description", "rule 1/0: job=node-6 pod=pod-" + s + "-abcdef value=109.00"}};
    // Alerts start at different times (no two startsAt alike); they share the round's endsAt.
    a.starts_at = t0 - std::chrono::milliseconds(1237 * i) - std::chrono::nanoseconds(7919 * i);
    a.ends_at = t0 + 20s;
    const uint64_t id = 3405761999840421324ULL + static_cast<uint64_t>(i);
    a.generator_url = prefix + std::to_string(id);
    if (carry == Carry::fragment) {
      a.json = core::AlertJson::build(a.labels, a.annotations, a.generator_url);
      a.generator_url.clear();
    } else if (carry == Carry::prefix) {
      a.url_prefix_json = prefix_json;
      a.url_id = id;
      a.generator_url.clear();
    }
    out.push_back(std::move(a));
  }
  return out;
}

// What a RapidJSON Writer builds for `batch` (timestamps formatted into a reused buffer, so the
// baseline allocates nothing per alert either). The same bytes as encode_alerts except the two
// spaces vmalert's template puts after "labels": and "annotations": (a Writer cannot).
void write_with_rapidjson(const std::vector<notifier::Alert>& batch,
                          const std::vector<std::string>& urls, rapidjson::StringBuffer& sb,
                          std::string& ts) {
  sb.Clear();
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  auto str = [&](std::string_view v) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  auto object = [&](const core::Labels& ls) {
    w.StartObject();
    for (const auto& l : ls) {
      w.Key(l.name.data(), static_cast<rapidjson::SizeType>(l.name.size()));
      str(l.value);
    }
    w.EndObject();
  };
  w.StartArray();
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& a = batch[i];
    w.StartObject();
    w.Key("startsAt");
    ts.clear();
    core::append_rfc3339_nano(ts, a.starts_at);
    str(ts);
    w.Key("generatorURL");
    str(urls[i]);
    w.Key("endsAt");
    ts.clear();
    core::append_rfc3339_nano(ts, *a.ends_at);
    str(ts);
    w.Key("labels");
    object(a.labels);
    w.Key("annotations");
    object(a.annotations);
    w.EndObject();
  }
  w.EndArray();
}

std::vector<std::string> urls_of(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    out.push_back("http://vm:28880/vmalert/alert?group_id=6810664301820910224&alert_id=" +
                  std::to_string(3405761999840421324ULL + static_cast<uint64_t>(i)));
  }
  return out;
}

// The payload with the two template spaces taken out, to compare with the Writer's.
std::string without_template_spaces(std::string s) {
  for (const std::string_view k : {"\"labels\": {", "\"annotations\": {"}) {
    for (size_t at = 0; (at = s.find(k, at)) != std::string::npos; at += k.size() - 1) {
      s.erase(at + k.size() - 2, 1);
    }
  }
  return s;
}

void report(benchmark::State& state, uint64_t allocs_before, size_t bytes, int alerts) {
  state.counters["allocs/alert"] = benchmark::Counter(
      static_cast<double>(alertd_bench::alloc_stats().allocations - allocs_before) /
      static_cast<double>(state.iterations()) / alerts);
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(alerts) * state.iterations());
}

// (a) Nothing changed since the last round, as rules/ sends such alerts (the shared URL prefix,
// label blocks copied whole): the payload is copies plus timestamps into a reused buffer.
void payload_unchanged(benchmark::State& state, Carry carry) {
  const int n = static_cast<int>(state.range(0));
  const auto batch = make_batch10(n, carry);
  std::string out;
  {  // the same bytes as escaping afresh, and as the Writer's but for the template's spaces
    std::string fresh;
    notifier::encode_alerts(make_batch10(n, Carry::url), fresh);
    notifier::encode_alerts(batch, out);
    rapidjson::StringBuffer sb;
    std::string ts;
    write_with_rapidjson(batch, urls_of(n), sb, ts);
    if (out != fresh || without_template_spaces(out) != sb.GetString()) {
      state.SkipWithError("payload bytes differ");
      return;
    }
  }
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    out.clear();
    notifier::encode_alerts(batch, out);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, before, out.size(), n);
}
void BM_Payload10_Unchanged(benchmark::State& state) { payload_unchanged(state, Carry::prefix); }
BENCHMARK(BM_Payload10_Unchanged)->Arg(1000);
// The same from pre-built fragments (the alerts whose blocks need escaping).
void BM_Payload10_UnchangedFragments(benchmark::State& state) {
  payload_unchanged(state, Carry::fragment);
}
BENCHMARK(BM_Payload10_UnchangedFragments)->Arg(1000);

// (b) Every alert changed since the last round (new annotation blocks, as when every rendered
// annotation differs): every fragment is built again, then the payload written from them.
void BM_Payload10_AllChanged(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto batch = make_batch10(n, Carry::fragment);
  const auto urls = urls_of(n);
  std::string out;
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    for (int i = 0; i < n; ++i) {
      auto& a = batch[static_cast<size_t>(i)];
      a.json = core::AlertJson::build(a.labels, a.annotations, urls[static_cast<size_t>(i)]);
    }
    out.clear();
    notifier::encode_alerts(batch, out);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, before, out.size(), n);
}
BENCHMARK(BM_Payload10_AllChanged)->Arg(1000);

// No fragment and no prefix: the URL escaped afresh, label blocks copied whole when they are
// their own JSON (the encoder before issue 10 escaped those afresh too: 352 us then).
void BM_Payload10_NoFragments(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto batch = make_batch10(n, Carry::url);
  std::string out;
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    out.clear();
    notifier::encode_alerts(batch, out);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, before, out.size(), n);
}
BENCHMARK(BM_Payload10_NoFragments)->Arg(1000);

// Baseline: a RapidJSON Writer into a reused StringBuffer, same alerts.
void BM_Payload10_RapidJsonWriter(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto batch = make_batch10(n, Carry::fragment);
  const auto urls = urls_of(n);
  rapidjson::StringBuffer sb;
  std::string ts;
  write_with_rapidjson(batch, urls, sb, ts);  // warm the buffer
  const auto before = alertd_bench::alloc_stats().allocations;
  for (auto _ : state) {
    write_with_rapidjson(batch, urls, sb, ts);
    benchmark::DoNotOptimize(sb.GetString());
  }
  report(state, before, sb.GetSize(), n);
}
BENCHMARK(BM_Payload10_RapidJsonWriter)->Arg(1000);

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
