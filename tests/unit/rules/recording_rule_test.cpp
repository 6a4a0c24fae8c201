// Recording rules (vmalert.md §1, §6): renaming, rule labels, duplicates, limit, stale markers.
#include "rules/recording_rule.hpp"

#include <catch2/catch.hpp>

#include <chrono>
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
