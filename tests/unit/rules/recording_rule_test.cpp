// Recording rules (vmalert.md §1, §6): renaming, rule labels, duplicates, limit, stale markers.
#include "rules/recording_rule.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>
#include <string>
#include <vector>
#include <cmath>

#include "core/limit_hits.hpp"
#include "rules/group.hpp"
#include "tests/fakes/fake_querier.hpp"

namespace {

using namespace std::chrono_literals;
using fakes::FakeSeries;

rules::RecordingRule make(core::Labels rule_labels = {}, int limit = 0,
                          core::Labels group_labels = {}) {
  config::GroupSpec g;
  g.name = "grp";
  g.file = "rules.yml";
  g.labels = std::move(group_labels);
  config::RuleSpec r;
  r.kind = config::RuleKind::recording;
  r.name = "job:up:sum";
  r.expr = "sum(up) by (job)";
  r.labels = std::move(rule_labels);
  r.id = 7;
  rules::RuleContext ctx;
  ctx.limit = limit;
  ctx.external_labels = core::Labels{{"cluster", "c1"}};
  auto rule = rules::RecordingRule::create(r, g, ctx);
  REQUIRE(rule);
  return std::move(*rule);
}

const core::TimePoint kTs = core::from_unix_ms(1'700'000'040'000);
rules::EvalInfo with_series() { return rules::EvalInfo{}; }

}  // namespace

TEST_CASE("recording rule renames every series and adds the rule labels", "[rules][recording]") {
  auto rule = make(core::Labels{{"team", "db"}, {"job", "override"}, {"instance", ""}});
  auto result = fakes::make_result(
      {{core::Labels{{"__name__", "up"}, {"job", "api"}, {"instance", "a:1"}}, 3}},
      core::unix_ms(kTs) - 500);
  auto stats = rule.apply(result, kTs, {}, with_series());
  REQUIRE(stats);
  REQUIRE(stats->series.size() == 1);
  const auto& s = stats->series[0];
  CHECK(s.labels.get("__name__") == "job:up:sum");
  CHECK(s.labels.get("team") == "db");
  CHECK(s.labels.get("cluster") == "c1");      // external labels are rule labels
  CHECK(s.labels.get("job") == "override");    // the rule's value wins ...
  CHECK(s.labels.get("exported_job") == "api");  // ... the series' value is kept aside
  CHECK_FALSE(s.labels.contains("instance"));  // an empty value deletes the label
  CHECK(s.value == 3);
  CHECK(s.timestamp_ms == core::unix_ms(kTs) - 500);  // the sample's own timestamp
  CHECK(rule.describe().type == rules::RuleType::recording);
  CHECK(rule.describe().last_samples == 1);
}

TEST_CASE("recording rule fails the round on duplicate label sets", "[rules][recording]") {
  auto rule = make(core::Labels{{"job", "x"}});
  auto result = fakes::make_result({{core::Labels{{"job", "a"}}, 1}, {core::Labels{{"job", "x"}}, 2}});
  // {job=a} becomes {job=x, exported_job=a}; {job=x} stays {job=x}: different, no error.
  REQUIRE(rule.apply(result, kTs, {}, with_series()));
  auto same = fakes::make_result({{core::Labels{{"__name__", "a"}, {"job", "x"}}, 1},
                                  {core::Labels{{"__name__", "b"}, {"job", "x"}}, 2}});
  auto stats = rule.apply(same, kTs, {}, with_series());
  REQUIRE_FALSE(stats);
  CHECK(stats.error().message.find("same labelset") != std::string::npos);
  CHECK(rule.describe().last_error == stats.error().message);
  CHECK(rule.errors_total() == 1);
}

TEST_CASE("recording rule limit fails the round and writes nothing", "[rules][recording]") {
  auto rule = make({}, 1);
  auto result = fakes::make_result({{core::Labels{{"job", "a"}}, 1}, {core::Labels{{"job", "b"}}, 2}});
  const uint64_t hits = core::limit_hits(core::Limit::rule_results);
  auto stats = rule.apply(result, kTs, {}, with_series());
  REQUIRE_FALSE(stats);
  CHECK(stats.error().message == "exec exceeded limit of 1 with 2 series");
  CHECK(core::limit_hits(core::Limit::rule_results) == hits + 1);
}

TEST_CASE("a series that disappears gets a staleness marker", "[rules][recording]") {
  auto rule = make();
  REQUIRE(rule.apply(fakes::make_result({{core::Labels{{"job", "a"}}, 1}, {core::Labels{{"job", "b"}}, 2}}),
                     kTs, {}, with_series()));
  auto next = rule.apply(fakes::make_result({{core::Labels{{"job", "a"}}, 5}}), kTs + 1min, {},
                         with_series());
  REQUIRE(next);
  REQUIRE(next->series.size() == 2);
  CHECK(next->series[1].labels.get("job") == "b");
  CHECK(core::is_stale_nan(next->series[1].value));
  CHECK(next->series[1].timestamp_ms == core::unix_ms(kTs + 1min));
  // Removed on reload: every series it still writes goes stale.
  auto closed = rule.close(kTs + 2min);
  REQUIRE(closed.series.size() == 1);
  CHECK(closed.series[0].labels.get("job") == "a");
  CHECK(core::is_stale_nan(closed.series[0].value));
  CHECK(closed.alerts.empty());
}

TEST_CASE("recording rule staleness markers match a by-text model over random rounds",
          "[rules][recording]") {
  auto rule = make(core::Labels{{"job", "x"}});
  // {job=a..} become {job=x, exported_job=..}; {instance=..} only get job=x.
  std::vector<fakes::FakeSeries> all;
  for (int i = 0; i < 6; ++i) all.push_back({core::Labels{{"job", "a" + std::to_string(i)}}, 1});
  for (int i = 0; i < 6; ++i) all.push_back({core::Labels{{"instance", "h" + std::to_string(i)}}, 2});
  uint64_t rng = 7;
  std::set<std::string> prev;
  core::TimePoint t = kTs;
  for (int round = 0; round < 100; ++round) {
    std::vector<fakes::FakeSeries> in;
    for (const auto& f : all) {
      rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
      if ((rng >> 33) % 3 != 0) in.push_back(f);
    }
    auto res = rule.apply(fakes::make_result(in), t, {}, with_series());
    REQUIRE(res);
    std::set<std::string> now;
    std::vector<std::string> got;
    for (const auto& x : res->series) {
      if (core::is_stale_nan(x.value)) {
        got.push_back(x.labels.to_string());
        CHECK(x.timestamp_ms == core::unix_ms(t));
      } else {
        now.insert(x.labels.to_string());
      }
    }
    std::sort(got.begin(), got.end());
    std::vector<std::string> want;
    std::set_difference(prev.begin(), prev.end(), now.begin(), now.end(), std::back_inserter(want));
    INFO("round " << round);
    CHECK(got == want);
    prev = now;
    t += std::chrono::minutes(1);
  }
  auto closed = rule.close(t);
  std::vector<std::string> got;
  for (const auto& x : closed.series) got.push_back(x.labels.to_string());
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>(prev.begin(), prev.end()));
}

TEST_CASE("recording rule names the first series whose label set repeats", "[rules][recording]") {
  auto rule = make(core::Labels{{"job", "x"}});
  // Series 1 and 3 become {job=x}; series 2 and 4 {job=x, exported_job=a}. Series 3 is the
  // first met whose set an earlier one had.
  auto result = fakes::make_result({{core::Labels{{"job", "a"}}, 1},
                                    {core::Labels{{"__name__", "m"}, {"job", "x"}}, 2},
                                    {core::Labels{{"__name__", "n"}, {"job", "a"}}, 3},
                                    {core::Labels{{"job", "x"}}, 4}});
  auto stats = rule.apply(result, kTs, {}, with_series());
  REQUIRE_FALSE(stats);
  CHECK(stats.error().message ==
        "original metric {__name__=\"n\", job=\"a\"}; resulting labels {__name__=\"job:up:sum\", "
        "cluster=\"c1\", exported_job=\"a\", job=\"x\"}: result contains metrics with the same labelset during "
        "evaluation");
}

TEST_CASE("a group runs recording and alerting rules side by side", "[rules][group]") {
  config::GroupSpec g;
  g.name = "mixed";
  g.file = "f.yml";
  g.effective_interval = 1min;
  config::RuleSpec rec;
  rec.kind = config::RuleKind::recording;
  rec.name = "r";
  rec.expr = "x";
  rec.id = 1;
  config::RuleSpec alert;
  alert.name = "A";
  alert.expr = "x";
  alert.id = 2;
  g.rules = {rec, alert};
  rules::GroupContext ctx;
  ctx.emit_series = true;
  auto group = rules::Group::create(g, ctx);
  REQUIRE(group);
  REQUIRE((*group)->size() == 2);
  auto result = fakes::make_result({{core::Labels{{"job", "a"}}, 1}});
  rules::RoundTimes t{kTs, kTs, kTs};
  auto r0 = (*group)->on_result(0, result, t, {}, {});
  CHECK_FALSE(r0.error);
  CHECK(r0.alerts.empty());
  REQUIRE(r0.series.size() == 1);
  CHECK(r0.series[0].labels.get("__name__") == "r");
  auto r1 = (*group)->on_result(1, result, t, {}, {});
  CHECK(r1.fired == 1);
  REQUIRE(r1.alerts.size() == 1);
  CHECK(r1.series.size() == 2);  // ALERTS and ALERTS_FOR_STATE
}
