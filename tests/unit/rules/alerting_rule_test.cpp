// The alert state machine (vmalert.md §2), driven with a manual clock.
#include "rules/alerting_rule.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/limit_hits.hpp"
#include "tests/fakes/fake_querier.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/recording_notifier.hpp"

namespace {

using namespace std::chrono_literals;
using fakes::FakeSeries;
using rules::AlertState;

constexpr core::Duration kInterval = 30s;

struct RuleOptions {
  core::Duration for_{};
  core::Duration keep_firing_for{};
  core::Labels labels;
  core::Labels annotations;
  core::Labels group_labels;
  core::Labels external_labels;
  int limit = 0;
  bool disable_alertgroup = false;
  std::string alert_source;  // -external.alert.source
};

rules::AlertingRule make_rule(const RuleOptions& o) {
  config::GroupSpec g;
  g.name = "grp";
  g.file = "rules.yml";
  g.id = 42;
  g.labels = o.group_labels;
  config::RuleSpec r;
  r.name = "HighLoad";
  r.expr = "load > 1";
  r.for_ = o.for_;
  r.keep_firing_for = o.keep_firing_for;
  r.labels = o.labels;
  r.annotations = o.annotations;
  r.id = 7;
  rules::RuleContext ctx;
  ctx.external_labels = o.external_labels;
  ctx.external_url = "http://vm:8880";
  ctx.group_interval = kInterval;
  ctx.limit = o.limit;
  ctx.disable_alertgroup_label = o.disable_alertgroup;
  if (!o.alert_source.empty()) {
    auto source = rules::parse_alert_source(o.alert_source, true);
    REQUIRE(source.has_value());
    ctx.alert_source = std::move(*source);
  }
  auto rule = rules::AlertingRule::create(r, g, ctx);
  REQUIRE(rule.has_value());
  return std::move(*rule);
}

FakeSeries series(std::string instance, double v = 1) {
  return {core::Labels{{"__name__", "load"}, {"instance", std::move(instance)}}, v};
}

struct Harness {
  explicit Harness(const RuleOptions& o = {}) : rule(make_rule(o)) {}

  core::Result<rules::ExecStats> eval(const std::vector<FakeSeries>& s) {
    auto r = fakes::make_result(s);
    return rule.apply(r, clock.now(), env);
  }
  // Evaluates and then advances the clock one interval.
  core::Result<rules::ExecStats> step(const std::vector<FakeSeries>& s) {
    auto res = eval(s);
    clock.advance(kInterval);
    return res;
  }
  const rules::Alert& only_alert() const {
    REQUIRE(rule.alerts().size() == 1);
    return rule.alerts().front();
  }

  rules::AlertingRule rule;
  templates::TemplateEnv env;
  fakes::ManualClock clock;
};

}  // namespace

TEST_CASE("alert is pending after the first hit and fires after `for`", "[rules][state]") {
  Harness h({.for_ = 1min});
  const auto t0 = h.clock.now();
  REQUIRE(h.step({series("a")}));
  CHECK(h.only_alert().state == AlertState::pending);
  CHECK(h.only_alert().active_at == t0);
  CHECK(h.rule.state() == AlertState::pending);

  REQUIRE(h.step({series("a")}));  // t0+30s: 30s < 1m
  CHECK(h.only_alert().state == AlertState::pending);

  auto res = h.step({series("a")});  // t0+60s: fires
  REQUIRE(res);
  CHECK(res->fired == 1);
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.only_alert().start == t0 + 60s);
  CHECK(h.only_alert().active_at == t0);
  CHECK(h.rule.state() == AlertState::firing);
  CHECK(h.rule.fired_total() == 1);
}

TEST_CASE("for: 0 fires in the same round", "[rules][state]") {
  Harness h;
  const auto t0 = h.clock.now();
  auto res = h.step({series("a", 5)});
  REQUIRE(res);
  CHECK(res->fired == 1);
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.only_alert().start == t0);
  CHECK(h.only_alert().value == 5);
}

TEST_CASE("processed labels and alert ID", "[rules][labels]") {
  Harness h;
  REQUIRE(h.step({series("a")}));
  const auto& a = h.only_alert();
  CHECK(a.labels == core::Labels{{"alertgroup", "grp"}, {"alertname", "HighLoad"}, {"instance", "a"}});
  CHECK(a.id == a.labels.hash_without_name());
  CHECK(h.rule.alert(a.id) == &a);
  CHECK(h.rule.generator_url(a.id) ==
        "http://vm:8880/vmalert/alert?group_id=42&alert_id=" + std::to_string(a.id));
}

TEST_CASE("series answered in another order, or changed in place, keep their own alerts",
          "[rules][labels]") {
  // apply() first compares series i with the alert series i had last round: the IDs must be
  // those of the labels whatever the order, and a changed series a new alert.
  Harness h({.for_ = 1min});
  const auto t0 = h.clock.now();
  REQUIRE(h.step({series("a", 1), series("b", 2), series("c", 3)}));
  REQUIRE(h.step({series("c", 30), series("a", 10), series("b", 20)}));
  REQUIRE(h.rule.alerts().size() == 3);
  for (const auto& a : h.rule.alerts()) {
    CHECK(a.id == a.labels.hash_without_name());
    CHECK(a.active_at == t0);
    CHECK(a.value == 10 * (a.labels.get("instance") == "a"   ? 1
                           : a.labels.get("instance") == "b" ? 2
                                                             : 3));
  }
  // Series 0 is now "d" (a new alert), "c" went (pending: dropped), "a" and "b" fire.
  auto res = h.step({series("d", 4), series("a", 1), series("b", 2)});
  REQUIRE(res);
  CHECK(res->fired == 2);
  REQUIRE(h.rule.alerts().size() == 3);
  std::map<std::string, const rules::Alert*> by_instance;
  for (const auto& a : h.rule.alerts()) {
    CHECK(a.id == a.labels.hash_without_name());
    by_instance[std::string(*a.labels.get("instance"))] = &a;
  }
  REQUIRE(by_instance.size() == 3);
  CHECK(by_instance["a"]->state == AlertState::firing);
  CHECK(by_instance["b"]->state == AlertState::firing);
  CHECK(by_instance["d"]->state == AlertState::pending);
  CHECK(by_instance["d"]->active_at == t0 + 2 * kInterval);
  // Fewer series, then the same two again: still one alert each; a duplicate in the same
  // round still fails it.
  REQUIRE(h.step({series("b", 2)}));
  REQUIRE(h.step({series("a", 1), series("b", 2)}));
  // "a" resolved and is pending again, "d" (pending, unseen) went, "b" fires on.
  REQUIRE(h.rule.alerts().size() == 2);
  CHECK(h.rule.alerts()[0].state != h.rule.alerts()[1].state);
  for (const auto& a : h.rule.alerts()) {
    CHECK(a.id == a.labels.hash_without_name());
    CHECK(a.state == (a.labels.get("instance") == "a" ? AlertState::pending : AlertState::firing));
  }
  CHECK_FALSE(h.step({series("a", 1), series("a", 1)}));
}

TEST_CASE("label merging, exported_ conflicts and empty-value deletion", "[rules][labels]") {
  struct Case {
    std::string name;
    RuleOptions opts;
    core::Labels series_labels;
    core::Labels want;
  };
  const std::vector<Case> cases = {
      {"rule label overrides series value, old kept as exported_",
       {.labels = {{"severity", "critical"}}},
       {{"instance", "a"}, {"severity", "warning"}},
       {{"alertgroup", "grp"},
        {"alertname", "HighLoad"},
        {"exported_severity", "warning"},
        {"instance", "a"},
        {"severity", "critical"}}},
      {"same value: no exported_ copy",
       {.labels = {{"severity", "warning"}}},
       {{"instance", "a"}, {"severity", "warning"}},
       {{"alertgroup", "grp"}, {"alertname", "HighLoad"}, {"instance", "a"}, {"severity", "warning"}}},
      {"empty rule label deletes the series label",
       {.labels = {{"instance", ""}}},
       {{"instance", "a"}, {"job", "node"}},
       {{"alertgroup", "grp"}, {"alertname", "HighLoad"}, {"job", "node"}}},
      {"series alertname is exported",
       {},
       {{"alertname", "Other"}, {"instance", "a"}},
       {{"alertgroup", "grp"}, {"alertname", "HighLoad"}, {"exported_alertname", "Other"}, {"instance", "a"}}},
      {"external < group < rule",
       {.labels = {{"team", "rule"}},
        .group_labels = {{"team", "group"}, {"env", "group"}},
        .external_labels = {{"team", "ext"}, {"env", "ext"}, {"dc", "ext"}}},
       {{"instance", "a"}},
       {{"alertgroup", "grp"},
        {"alertname", "HighLoad"},
        {"dc", "ext"},
        {"env", "group"},
        {"instance", "a"},
        {"team", "rule"}}},
      {"disableAlertgroupLabel",
       {.disable_alertgroup = true},
       {{"instance", "a"}},
       {{"alertname", "HighLoad"}, {"instance", "a"}}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Harness h(c.opts);
      core::Labels ls = c.series_labels;
      ls.set("__name__", "load");
      REQUIRE(h.step({{ls, 1}}));
      CHECK(h.only_alert().labels == c.want);
    }
  }
}

TEST_CASE("random series and rule labels give vmalert's label sets, merged or added in turn",
          "[rules][labels]") {
  // The model is vmalert's labelSet.add: processed starts as the series without __name__,
  // origin as the series; each rule label (by name), then alertname and alertgroup, is set in
  // processed, and when origin has another value that one is kept as exported_<name>; an
  // empty value deletes. Names collide often here, so both of apply()'s ways (one merge when
  // nothing collides, one label at a time otherwise) are taken many times.
  std::mt19937 rng(20261206);
  const char* names[] = {"__name__", "alertname", "alertgroup", "instance",    "job",
                         "severity", "a",         "zz",         "exported_job"};
  const char* values[] = {"", "x", "y", "HighLoad", "grp"};
  auto pick = [&](auto& arr) { return std::string(arr[rng() % std::size(arr)]); };
  int merged_like = 0;
  for (int iter = 0; iter < 400; ++iter) {
    INFO("iteration " << iter);
    std::map<std::string, std::string> rule_labels;
    for (auto k = rng() % 4; k > 0; --k) rule_labels[pick(names)] = pick(values);
    std::map<std::string, std::string> series;
    for (auto k = 1 + rng() % 5; k > 0; --k) {
      std::string v = pick(values);
      series[pick(names)] = v.empty() ? "s" : v;
    }
    RuleOptions o;
    for (const auto& [k, v] : rule_labels) o.labels.set(k, v);
    o.disable_alertgroup = rng() % 4 == 0;
    // Simple templates only, so annotations read apply()'s builder: they must see origin.
    o.annotations.set("seen",
                      "{{ $labels.instance }}|{{ $labels.alertname }}|{{ $labels.job }}|"
                      "{{ $labels.a }}|{{ $labels.severity }}");

    std::map<std::string, std::string> origin = series;
    std::map<std::string, std::string> processed = series;
    processed.erase("__name__");
    bool collided = false;
    auto add = [&](const std::string& k, const std::string& v) {
      if (v.empty()) {
        processed.erase(k);
        collided = true;
        return;
      }
      processed[k] = v;
      auto it = origin.find(k);
      if (it == origin.end()) {
        origin[k] = v;
        return;
      }
      collided = true;
      if (it->second != v) processed["exported_" + k] = it->second;
    };
    for (const auto& [k, v] : rule_labels) add(k, v);
    add("alertname", "HighLoad");
    if (!o.disable_alertgroup) add("alertgroup", "grp");
    if (!collided) ++merged_like;

    core::Labels want;
    for (const auto& [k, v] : processed) want.set(k, v);
    core::Labels ls;
    for (const auto& [k, v] : series) ls.set(k, v);
    Harness h(o);
    REQUIRE(h.step({{ls, 1}}));
    const auto& alert = h.only_alert();
    CHECK(alert.labels == want);
    CHECK(alert.id == want.hash_without_name());
    auto get = [&](const char* k) {
      auto it = origin.find(k);
      return it == origin.end() ? std::string() : it->second;
    };
    CHECK(alert.annotations.get("seen") == get("instance") + "|" + get("alertname") + "|" +
                                               get("job") + "|" + get("a") + "|" + get("severity"));
  }
  CHECK(merged_like > 40);  // the merge's case is among them
}

TEST_CASE("resolved alert becomes inactive with ResolvedAt", "[rules][state]") {
  Harness h;
  REQUIRE(h.step({series("a")}));
  const auto t1 = h.clock.now();
  auto res = h.step({});
  REQUIRE(res);
  CHECK(res->samples == 0);
  CHECK(h.only_alert().state == AlertState::inactive);
  CHECK(h.only_alert().resolved_at == t1);
  CHECK(h.rule.state() == AlertState::inactive);
}

TEST_CASE("pending alert that disappears is deleted", "[rules][state]") {
  Harness h({.for_ = 5min});
  REQUIRE(h.step({series("a"), series("b")}));
  REQUIRE(h.rule.alerts().size() == 2);
  REQUIRE(h.step({series("b")}));
  REQUIRE(h.rule.alerts().size() == 1);
  CHECK(h.only_alert().labels.get("instance") == "b");
}

TEST_CASE("keep_firing_for holds a firing alert, then resolves it", "[rules][state]") {
  Harness h({.keep_firing_for = 1min});
  REQUIRE(h.step({series("a")}));
  const auto t1 = h.clock.now();
  REQUIRE(h.step({}));  // first miss
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.only_alert().stabilizing());
  CHECK(h.only_alert().keep_firing_since == t1);
  REQUIRE(h.step({}));  // t1+30s
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.only_alert().keep_firing_since == t1);

  SECTION("series returns: keep_firing_since cleared") {
    REQUIRE(h.step({series("a")}));
    CHECK(h.only_alert().state == AlertState::firing);
    CHECK_FALSE(h.only_alert().stabilizing());
  }
  SECTION("still missing after keep_firing_for: inactive") {
    const auto t3 = h.clock.now();  // t1+60s
    REQUIRE(h.step({}));
    CHECK(h.only_alert().state == AlertState::inactive);
    CHECK(h.only_alert().resolved_at == t3);
  }
}

TEST_CASE("re-fire after resolve starts a new pending period", "[rules][state]") {
  Harness h({.for_ = 1min});
  REQUIRE(h.step({series("a")}));
  REQUIRE(h.step({series("a")}));
  REQUIRE(h.step({series("a")}));
  REQUIRE(h.only_alert().state == AlertState::firing);
  REQUIRE(h.step({}));
  REQUIRE(h.only_alert().state == AlertState::inactive);
  const auto t4 = h.clock.now();
  REQUIRE(h.step({series("a")}));
  CHECK(h.only_alert().state == AlertState::pending);
  CHECK(h.only_alert().active_at == t4);
  REQUIRE(h.step({series("a")}));
  REQUIRE(h.step({series("a")}));
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.only_alert().start == t4 + 60s);
}

TEST_CASE("a query error leaves the alerts untouched", "[rules][errors]") {
  Harness h({.for_ = 1min});
  const auto t0 = h.clock.now();
  REQUIRE(h.step({series("a")}));
  h.rule.record_error(core::Error{"unexpected response code 500"}, h.clock.now());
  h.clock.advance(kInterval);
  CHECK(h.rule.last_error() == "unexpected response code 500");
  CHECK(h.rule.errors_total() == 1);
  CHECK(h.rule.last_update().samples == 0);
  CHECK(h.only_alert().state == AlertState::pending);
  CHECK(h.only_alert().active_at == t0);
  // The `for` clock kept running: the next good round fires.
  REQUIRE(h.step({series("a")}));
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.rule.last_error().empty());
  CHECK(h.rule.history().newest_first().size() == 3);
}

TEST_CASE("limit exceeded clears the alerts and fails the round", "[rules][errors]") {
  Harness h({.limit = 1});
  const uint64_t hits = core::limit_hits(core::Limit::rule_results);
  REQUIRE(h.step({series("a")}));
  CHECK(core::limit_hits(core::Limit::rule_results) == hits);
  auto res = h.step({series("a"), series("b")});
  REQUIRE_FALSE(res);
  CHECK(res.error().message == "exec exceeded limit of 1 with 2 alerts");
  CHECK(core::limit_hits(core::Limit::rule_results) == hits + 1);
  CHECK(h.rule.alerts().empty());
  CHECK(h.rule.last_error() == res.error().message);
  CHECK(h.rule.errors_total() == 1);
}

TEST_CASE("limit counts recently resolved alerts too (vmalert quirk)", "[rules][errors]") {
  Harness h({.limit = 1});
  REQUIRE(h.step({series("a")}));
  REQUIRE(h.step({}));  // a resolved: kept as inactive
  auto res = h.step({series("b")});
  REQUIRE_FALSE(res);
  CHECK(res.error().message == "exec exceeded limit of 1 with 2 alerts");
}

TEST_CASE("duplicate label set after dropping __name__ is an error", "[rules][errors]") {
  Harness h;
  std::vector<FakeSeries> s = {
      {core::Labels{{"__name__", "load1"}, {"instance", "a"}}, 1},
      {core::Labels{{"__name__", "load5"}, {"instance", "a"}}, 2},
  };
  auto res = h.step(s);
  REQUIRE_FALSE(res);
  CHECK(res.error().message ==
        "labels map[alertgroup:grp alertname:HighLoad instance:a]: result contains metrics with "
        "the same labelset after applying rule labels");
  CHECK(h.rule.last_error() == res.error().message);
}

TEST_CASE("a round failing on a duplicate keeps the alerts it created before it, as vmalert",
          "[rules][errors]") {
  Harness h;
  REQUIRE(h.step({series("x")}));
  auto res = h.step({series("y"), series("x"),
                     {core::Labels{{"__name__", "load1"}, {"instance", "z"}}, 1},
                     {core::Labels{{"__name__", "load5"}, {"instance", "z"}}, 2}, series("w")});
  REQUIRE_FALSE(res);
  std::vector<std::string> instances;
  uint64_t prev = 0;
  for (const auto& a : h.rule.alerts()) {
    CHECK(a.id > prev);  // sorted by ID
    prev = a.id;
    CHECK(a.id == a.labels.hash_without_name());
    instances.emplace_back(a.labels.get("instance").value_or(""));
  }
  std::sort(instances.begin(), instances.end());
  CHECK(instances == std::vector<std::string>{"x", "y", "z"});
  // The next round drops the pending alerts it does not see.
  REQUIRE(h.step({series("x")}));
  CHECK(h.only_alert().labels.get("instance") == "x");
}

TEST_CASE("restore_alerts adds active alerts once, by the ID of their labels", "[rules][state]") {
  Harness h;
  REQUIRE(h.step({series("b")}));
  std::vector<rules::Alert> saved;
  for (const char* inst : {"d", "a", "b", "a", "c"}) {
    rules::Alert a;
    a.id = 12345;  // not trusted: recomputed from the labels
    a.state = AlertState::firing;
    a.labels = core::Labels{{"alertname", "HighLoad"}, {"instance", inst}};
    a.active_at = core::from_unix_seconds(1700000000);
    saved.push_back(a);
  }
  saved.back().state = AlertState::inactive;  // "c": not restored
  saved[3].value = 99;                        // the second "a": the first one wins
  // "b" from the state file has other labels than the live one (no alertgroup): a new alert.
  CHECK(h.rule.restore_alerts(saved) == 3);
  CHECK(h.rule.restore_alerts(saved) == 0);
  REQUIRE(h.rule.alerts().size() == 4);
  uint64_t prev = 0;
  for (const auto& a : h.rule.alerts()) {
    CHECK(a.id > prev);
    prev = a.id;
    CHECK(a.id == a.labels.hash_without_name());
    // Kept in the interned form, as a new alert's labels are (the live "b" came from apply).
    CHECK(a.labels.is_interned());
    if (a.labels.get("instance") == "a") CHECK(a.value == 0);
  }
  const uint64_t id_d = core::Labels{{"alertname", "HighLoad"}, {"instance", "d"}}.hash_without_name();
  REQUIRE(h.rule.alert(id_d) != nullptr);
  CHECK(h.rule.alert(id_d)->state == AlertState::firing);
  CHECK(h.rule.alert(12345) == nullptr);
}

TEST_CASE("resolved alerts are kept for 15m", "[rules][state]") {
  Harness h;
  REQUIRE(h.step({series("a")}));
  const auto resolved = h.clock.now();
  REQUIRE(h.eval({}));
  h.clock.set(resolved + 15min);
  REQUIRE(h.eval({}));
  CHECK(h.rule.alerts().size() == 1);
  h.clock.set(resolved + 15min + 1s);
  REQUIRE(h.eval({}));
  CHECK(h.rule.alerts().empty());
}

TEST_CASE("alerts_to_send with resendDelay 0", "[rules][send]") {
  Harness h({.for_ = 30s});
  const auto resolve = 2min;
  REQUIRE(h.eval({series("a")}));
  CHECK(h.rule.alerts_to_send(h.clock.now() + 1ms, 0s, resolve).empty());  // pending: never

  h.clock.advance(kInterval);
  const auto fired_at = h.clock.now();
  REQUIRE(h.eval({series("a")}));
  auto now = h.clock.now() + 5ms;
  auto sent = h.rule.alerts_to_send(now, 0s, resolve);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].starts_at == fired_at);
  CHECK(sent[0].ends_at == now + resolve);
  CHECK(sent[0].labels == h.only_alert().labels);
  // Plain labels and annotations: no fragment, the URL travels as the rule's shared prefix and
  // the alert's ID (the string field stays empty).
  CHECK_FALSE(sent[0].json);
  REQUIRE(sent[0].url_prefix_json);
  CHECK(*sent[0].url_prefix_json + std::to_string(sent[0].url_id) + "\"" ==
        "\"generatorURL\":\"" + h.rule.generator_url(h.only_alert().id) + "\"");
  CHECK(sent[0].url_id == h.only_alert().id);
  CHECK(sent[0].generator_url.empty());
  CHECK(h.only_alert().last_sent == now);

  // Re-sent on every round.
  h.clock.advance(kInterval);
  REQUIRE(h.eval({series("a")}));
  CHECK(h.rule.alerts_to_send(h.clock.now() + 5ms, 0s, resolve).size() == 1);

  // Resolved: sent with endsAt = ResolvedAt, and again on every round until the retention.
  h.clock.advance(kInterval);
  const auto resolved_at = h.clock.now();
  REQUIRE(h.eval({}));
  sent = h.rule.alerts_to_send(h.clock.now() + 5ms, 0s, resolve);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].ends_at == resolved_at);
  CHECK(sent[0].starts_at == fired_at);
  h.clock.advance(kInterval);
  REQUIRE(h.eval({}));
  sent = h.rule.alerts_to_send(h.clock.now() + 5ms, 0s, resolve);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].ends_at == resolved_at);
}

TEST_CASE("alerts_to_send with resendDelay > 0", "[rules][send]") {
  Harness h;
  const auto delay = 5min;
  const auto resolve = 20min;  // 4 x max(30s, 5m)
  REQUIRE(h.eval({series("a")}));
  const auto t0 = h.clock.now();
  REQUIRE(h.rule.alerts_to_send(t0, delay, resolve).size() == 1);
  // Within the delay: nothing.
  CHECK(h.rule.alerts_to_send(t0 + 1min, delay, resolve).empty());
  CHECK(h.rule.alerts_to_send(t0 + 5min, delay, resolve).empty());  // not strictly after
  // After it: again.
  auto sent = h.rule.alerts_to_send(t0 + 5min + 1ms, delay, resolve);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].ends_at == t0 + 5min + 1ms + resolve);

  // Resolution is sent at once even within the delay, then only after the delay.
  h.clock.set(t0 + 6min);
  const auto resolved_at = h.clock.now();
  REQUIRE(h.eval({}));
  sent = h.rule.alerts_to_send(resolved_at + 1ms, delay, resolve);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].ends_at == resolved_at);
  CHECK(h.rule.alerts_to_send(resolved_at + 2min, delay, resolve).empty());

  // Re-fire (for 0) is sent at once even within the delay.
  h.clock.set(resolved_at + 3min);
  REQUIRE(h.eval({series("a")}));
  REQUIRE(h.only_alert().state == AlertState::firing);
  sent = h.rule.alerts_to_send(h.clock.now(), delay, resolve);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].starts_at == h.clock.now());
  CHECK(sent[0].ends_at == h.clock.now() + resolve);
}

TEST_CASE("ALERTS and ALERTS_FOR_STATE series with staleness markers", "[rules][series]") {
  Harness h({.for_ = 30s});
  const auto t0 = h.clock.now();
  auto res = h.step({series("a")});
  REQUIRE(res);
  REQUIRE(res->series.size() == 2);
  const auto& alerts = res->series[0];
  CHECK(alerts.merged_labels().get("__name__") == "ALERTS");
  CHECK(alerts.merged_labels().get("alertstate") == "pending");
  CHECK(alerts.merged_labels().get("instance") == "a");
  // ALERTS shares the alert's own label block (no copy per round).
  CHECK(alerts.labels == h.only_alert().labels);
  CHECK(alerts.value == 1);
  CHECK(alerts.timestamp_ms == core::unix_seconds(t0) * 1000);
  CHECK(res->series[1].merged_labels().get("__name__") == "ALERTS_FOR_STATE");
  CHECK(res->series[1].value == static_cast<double>(core::unix_seconds(t0)));

  // pending -> firing: ALERTS{pending} goes stale.
  res = h.step({series("a")});
  REQUIRE(res);
  REQUIRE(res->series.size() == 3);
  auto stale = std::find_if(res->series.begin(), res->series.end(),
                            [](const rules::Series& s) { return rules::is_stale_nan(s.value); });
  REQUIRE(stale != res->series.end());
  CHECK(stale->merged_labels().get("alertstate") == "pending");

  // firing -> inactive: both firing series go stale, nothing else emitted.
  res = h.step({});
  REQUIRE(res);
  REQUIRE(res->series.size() == 2);
  CHECK(std::all_of(res->series.begin(), res->series.end(),
                    [](const rules::Series& s) { return rules::is_stale_nan(s.value); }));
}

namespace {

// Random rounds over `all` (each series in a round with chance 2/3), with `for` so that alerts
// go pending -> firing, disappear and come back, then close(): the staleness markers must be
// exactly, and once each, the series written the round before and not in this one, by text.
void check_markers_against_text_model(RuleOptions o, const std::vector<FakeSeries>& all) {
  o.for_ = 60s;
  Harness h(o);
  uint64_t rng = 12345;
  auto next = [&] {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng >> 33;
  };
  std::set<std::string> prev;  // series texts written last round
  auto texts = [](const std::vector<rules::Series>& ss, bool stale) {
    std::vector<std::string> out;
    for (const auto& x : ss)
      if (rules::is_stale_nan(x.value) == stale) out.push_back(x.merged_labels().to_string());
    std::sort(out.begin(), out.end());
    return out;
  };
  int markers_seen = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<FakeSeries> in;
    for (const auto& f : all)
      if (next() % 3 != 0) in.push_back(f);
    auto res = h.step(in);
    REQUIRE(res);
    const auto written = texts(res->series, false);
    const std::set<std::string> now(written.begin(), written.end());
    std::vector<std::string> want;
    std::set_difference(prev.begin(), prev.end(), now.begin(), now.end(), std::back_inserter(want));
    const auto got = texts(res->series, true);
    INFO("round " << round);
    CHECK(got == want);
    markers_seen += static_cast<int>(got.size());
    prev = now;
  }
  CHECK(markers_seen > 100);
  auto closed = h.rule.close(h.clock.now());
  CHECK(texts(closed.series, true) == std::vector<std::string>(prev.begin(), prev.end()));
}

}  // namespace

TEST_CASE("staleness markers are exactly the series written last round and not this one",
          "[rules][series]") {
  // Plain alerts, and alerts carrying their own `alertstate` label (ALERTS overrides it, so two
  // alerts can write one ALERTS series).
  std::vector<FakeSeries> all;
  for (int i = 0; i < 8; ++i) all.push_back(series("i" + std::to_string(i)));
  for (const char* st : {"firing", "pending", "other", ""}) {
    FakeSeries f = series("i0");
    if (*st) f.labels.set("alertstate", st);
    f.labels.set("job", "j");
    all.push_back(f);
  }
  check_markers_against_text_model({}, all);
}

TEST_CASE("state restore sets ActiveAt of pending alerts once", "[rules][restore]") {
  Harness h({.for_ = 10min});
  REQUIRE(h.step({series("a")}));
  const auto& a = h.only_alert();
  core::Labels restored_labels = a.labels;
  restored_labels.set("__name__", "ALERTS_FOR_STATE");
  const auto earlier = core::unix_seconds(h.clock.now()) - 600;
  auto r = fakes::make_result({{restored_labels, static_cast<double>(earlier)}});
  CHECK(h.rule.restore(r) == 1);
  CHECK(h.only_alert().restored);
  CHECK(h.only_alert().active_at == core::TimePoint{std::chrono::seconds{earlier}});
  CHECK(h.rule.restore(r) == 0);  // already restored
  REQUIRE(h.step({series("a")}));
  CHECK(h.only_alert().state == AlertState::firing);

  CHECK(h.rule.restore_query(1h) ==
        "last_over_time(ALERTS_FOR_STATE{alertgroup=\"grp\",alertname=\"HighLoad\"}[3600s])");
}

TEST_CASE("restore query lists the literal rule labels only", "[rules][restore]") {
  Harness h({.for_ = 5min, .labels = {{"severity", "page"}, {"owner", "{{ $labels.team }}"}}});
  CHECK(h.rule.restore_query(30min) ==
        "last_over_time(ALERTS_FOR_STATE{alertgroup=\"grp\",alertname=\"HighLoad\","
        "severity=\"page\"}[1800s])");
}

TEST_CASE("restore before the first round makes an elapsed alert fire on that round",
          "[rules][restore]") {
  Harness h({.for_ = 5min});
  const Harness no_for;
  CHECK(no_for.rule.restore_query(1h).empty());  // no `for`: nothing to restore
  const auto earlier = core::unix_seconds(h.clock.now()) - 600;
  core::Labels restored_labels{{"__name__", "ALERTS_FOR_STATE"}, {"alertgroup", "grp"},
                               {"alertname", "HighLoad"}, {"instance", "a"}};
  CHECK(h.rule.restore(fakes::make_result({{restored_labels, static_cast<double>(earlier)},
                                           {restored_labels, 1e300}})) == 1);
  REQUIRE(h.step({series("a")}));
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.only_alert().restored);
  CHECK(h.only_alert().active_at == core::TimePoint{std::chrono::seconds{earlier}});
}

TEST_CASE("update_from keeps alerts and takes new settings", "[rules][reload]") {
  Harness h({.for_ = 5min});
  REQUIRE(h.step({series("a")}));
  const auto active_at = h.only_alert().active_at;
  h.rule.update_from(make_rule({.for_ = 30s, .annotations = {{"summary", "new"}}}));
  CHECK(h.rule.for_duration() == 30s);
  CHECK(h.rule.annotations().get("summary") == "new");
  REQUIRE(h.step({series("a")}));
  CHECK(h.only_alert().state == AlertState::firing);
  CHECK(h.only_alert().active_at == active_at);
  CHECK(h.only_alert().annotations.get("summary") == "new");
}

TEST_CASE("update_from takes labels and templates that change without the rule's ID",
          "[rules][reload]") {
  // Group and external labels are not part of the rule's ID: a reload that adds them (or makes
  // an annotation complex) updates the rule in place, and the next round must use the new
  // label list and templates, not the order and shortcut worked out for the old ones.
  Harness h({.labels = {{"zz", "{{ $labels.instance }}"}},
             .annotations = {{"s", "{{ $labels.instance }}"}}});
  REQUIRE(h.step({series("a")}));
  h.rule.update_from(make_rule({.labels = {{"zz", "{{ $labels.instance }}"}},
                                .annotations = {{"s", "{{ if true }}{{ $labels.aa }}{{ end }}"}},
                                .group_labels = {{"aa", "g"}, {"team", "t"}},
                                .external_labels = {{"dc", "x"}}}));
  REQUIRE(h.step({series("a")}));
  // The label set changed, so this is a new alert (the old one resolves).
  const auto alerts = h.rule.alerts();
  const auto it = std::find_if(alerts.begin(), alerts.end(), [](const rules::Alert& x) {
    return x.state != AlertState::inactive;
  });
  REQUIRE(it != alerts.end());
  const auto& a = *it;
  CHECK(a.labels == core::Labels{{"aa", "g"},
                                 {"alertgroup", "grp"},
                                 {"alertname", "HighLoad"},
                                 {"dc", "x"},
                                 {"instance", "a"},
                                 {"team", "t"},
                                 {"zz", "a"}});
  CHECK(a.annotations.get("s") == "g");
}

TEST_CASE("update history is a ring of update_entries_limit", "[rules][history]") {
  rules::UpdateHistory hist(2);
  CHECK(hist.empty());
  CHECK(hist.last().error.empty());
  hist.add({.error = "1"});
  hist.add({.error = "2"});
  hist.add({.error = "3"});
  auto all = hist.newest_first();
  REQUIRE(all.size() == 2);
  CHECK(all[0].error == "3");
  CHECK(all[1].error == "2");
  CHECK(hist.last().error == "3");
}

TEST_CASE("update history: a view shows what was added when it was taken", "[rules][history]") {
  rules::UpdateHistory hist(3);
  CHECK(hist.newest_first().empty());
  hist.add({.duration = 1ms, .error = "boom", .samples = 7, .series_fetched = 9});
  hist.add({.duration = 2ms, .error = "boom"});
  const uint64_t seen = hist.added();
  CHECK(seen == 2);
  hist.add({.duration = 3ms});
  auto then = hist.newest_first(seen);
  REQUIRE(then.size() == 2);
  CHECK(then[0].duration == 2ms);
  CHECK(then[0].error == "boom");
  CHECK_FALSE(then[0].series_fetched.has_value());
  CHECK(then[1].duration == 1ms);
  CHECK(then[1].samples == 7);
  CHECK(then[1].series_fetched == 9u);
  // Two more: the ring (3) dropped the first two; the old view keeps what is left of it.
  hist.add({.duration = 4ms});
  hist.add({.duration = 5ms});
  CHECK(hist.newest_first().size() == 3);
  CHECK(hist.newest_first().front().duration == 5ms);
  CHECK(hist.newest_first(seen).empty());
  CHECK(hist.newest_first(seen + 1).size() == 1);
  CHECK(hist.last().duration == 5ms);
  CHECK(hist.last().error.empty());
}

TEST_CASE("update history: read while the rule adds", "[rules][history]") {
  // A snapshot reader on another thread (the HTTP API) while the rule adds (TSan checks).
  rules::UpdateHistory hist(20);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    size_t max_seen = 0;
    while (!done.load()) {
      const auto all = hist.newest_first();
      for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].samples == all[i].samples + 1);
      max_seen = std::max(max_seen, all.size());
    }
    CHECK(max_seen <= 20);
  });
  const auto curl = std::make_shared<const rules::CurlMaker>([](core::TimePoint at) {
    return "curl 'http://prom/api/v1/query?query=up&time=" +
           std::to_string(
               std::chrono::duration_cast<std::chrono::seconds>(at.time_since_epoch()).count()) +
           "'";
  });
  for (size_t i = 1; i <= 5000; ++i) {
    rules::RuleUpdate u;
    u.samples = i;
    u.at = core::TimePoint(std::chrono::seconds(1700000000 + i));
    u.curl = curl;
    hist.add(std::move(u));
  }
  done = true;
  reader.join();
  const auto all = hist.newest_first();
  REQUIRE(all.size() == 20);
  CHECK(all.front().samples == 5000);
  CHECK(all.front().curl_text() == "curl 'http://prom/api/v1/query?query=up&time=1700005000'");
}

namespace {
// A curl maker as a querier's: `host`'s URL with the query time.
std::shared_ptr<const rules::CurlMaker> curl_for(const std::string& host) {
  return std::make_shared<const rules::CurlMaker>([host](core::TimePoint at) {
    return "curl -X POST 'http://" + host +
           ":9090/api/v1/query?query=up&time=" + core::format_rfc3339_seconds(at) + "&step=30s'";
  });
}
}  // namespace

TEST_CASE("update history: updates made by one curl maker share it, each made at its own time",
          "[rules][history]") {
  const auto a = curl_for("prom");
  const auto b = curl_for("other");
  rules::UpdateHistory hist(3);
  int64_t t = 1700000000;
  for (const auto& curl : {a, a, b, b, b, a}) {
    rules::RuleUpdate u;
    u.at = core::TimePoint(std::chrono::seconds(t += 30));
    u.curl = curl;
    hist.add(std::move(u));
  }
  const auto all = hist.newest_first();
  REQUIRE(all.size() == 3);
  CHECK(all[0].curl == a);
  CHECK(all[1].curl == b);
  CHECK(all[2].curl == b);
  CHECK(all[0].curl_text() ==
        "curl -X POST 'http://prom:9090/api/v1/query?query=up&time=2023-11-14T22:16:20Z&step=30s'");
  CHECK(
      all[1].curl_text() ==
      "curl -X POST 'http://other:9090/api/v1/query?query=up&time=2023-11-14T22:15:50Z&step=30s'");
  CHECK(
      all[2].curl_text() ==
      "curl -X POST 'http://other:9090/api/v1/query?query=up&time=2023-11-14T22:15:20Z&step=30s'");
  CHECK(hist.texts_kept() == 2);  // b once for its two entries, a

  // Twenty updates of one rule keep one maker; a history without curls keeps none.
  rules::UpdateHistory runs(20);
  for (int i = 0; i < 25; ++i) runs.add({.curl = a});
  CHECK(runs.texts_kept() == 1);
  rules::UpdateHistory none(20);
  for (int i = 0; i < 25; ++i) none.add({});
  CHECK(none.texts_kept() == 0);
  CHECK(none.newest_first().front().curl_text().empty());
  // A maker holding no function makes no text.
  CHECK(rules::RuleUpdate{.curl = std::make_shared<const rules::CurlMaker>()}.curl_text().empty());
}

TEST_CASE("update history: what comes back is what was added, texts kept once",
          "[rules][history]") {
  // Against a model (the last `capacity` updates, whole), over random updates: errors from a
  // small set or none, curls whose time moves on (sharing a base) or that change entirely.
  std::mt19937 rng(12);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> errors = {"", "", "timeout", "boom", "error: 503"};
  for (size_t capacity : {size_t{1}, size_t{2}, size_t{5}, size_t{20}}) {
    INFO("capacity " << capacity);
    rules::UpdateHistory hist(capacity);
    std::vector<rules::RuleUpdate> model;
    int64_t t = 1700000000;
    std::shared_ptr<const rules::CurlMaker> maker = curl_for("prom");
    for (int i = 0; i < 400; ++i) {
      rules::RuleUpdate u;
      u.time = core::TimePoint(std::chrono::seconds(t));
      u.at = u.time - std::chrono::seconds(pick(3));
      u.duration = std::chrono::microseconds(pick(5000));
      u.error = errors[static_cast<size_t>(pick(5))];
      u.samples = static_cast<uint64_t>(pick(4)) * 1000;
      if (pick(2) == 0) u.series_fetched = static_cast<uint64_t>(pick(3));
      t += pick(4) == 0 ? 86400 + pick(4000) : 30;
      if (pick(40) == 0) maker = curl_for("prom" + std::to_string(pick(100)));
      if (pick(10) != 0) u.curl = maker;
      model.push_back(u);
      hist.add(std::move(u));
      const auto got = hist.newest_first();
      const size_t n = std::min(capacity, model.size());
      REQUIRE(got.size() == n);
      for (size_t k = 0; k < n; ++k) {
        const rules::RuleUpdate& want = model[model.size() - 1 - k];
        CHECK(got[k].time == want.time);
        CHECK(got[k].at == want.at);
        CHECK(got[k].duration == want.duration);
        CHECK(got[k].error == want.error);
        CHECK(got[k].samples == want.samples);
        CHECK(got[k].series_fetched == want.series_fetched);
        CHECK(got[k].curl == want.curl);
        CHECK(got[k].curl_text() == want.curl_text());
      }
      CHECK(hist.texts_kept() <= 2 * n);
    }
  }
  // Counts past 32 bits saturate; 0 fetched is not "unset".
  rules::UpdateHistory hist(2);
  hist.add({.samples = uint64_t{1} << 40, .series_fetched = uint64_t{1} << 40});
  hist.add({.samples = 0, .series_fetched = 0});
  const auto got = hist.newest_first();
  REQUIRE(got.size() == 2);
  CHECK(got[0].series_fetched == 0u);
  CHECK(got[1].samples == UINT32_MAX);
  CHECK(got[1].series_fetched == UINT32_MAX - 1);
}

// --- with the template engine (templates/) ---

TEST_CASE("label and annotation templates", "[rules][template]") {
  Harness h({.labels = {{"owner", "{{ $labels.instance }}-oncall"}},
             .annotations = {{"summary", "{{ $labels.instance }} value {{ $value | humanize }}"},
                             {"static", "no template"}}});
  REQUIRE(h.step({series("host:9100", 1234567)}));
  const auto& a = h.only_alert();
  CHECK(a.labels.get("owner") == "host:9100-oncall");
  CHECK(a.annotations.get("summary") == "host:9100 value 1.235M");
  CHECK(a.annotations.get("static") == "no template");
}

TEST_CASE("annotations see the series value of a conflicting label", "[rules][template]") {
  Harness h({.labels = {{"severity", "critical"}},
             .annotations = {{"sev", "{{ $labels.severity }}"}, {"name", "{{ $labels.__name__ }}"}}});
  core::Labels ls{{"__name__", "load"}, {"instance", "a"}, {"severity", "warning"}};
  REQUIRE(h.step({{ls, 1}}));
  CHECK(h.only_alert().annotations.get("sev") == "warning");
  CHECK(h.only_alert().annotations.get("name") == "load");
  CHECK(h.only_alert().labels.get("severity") == "critical");
}

TEST_CASE("simple templates read the label builders and render what built label sets give",
          "[rules][template]") {
  // The first rule's templates are all simple (apply() hands them its builders), the second
  // adds one that is not (every template then gets built sets): the same labels and
  // annotations come out, the rule's own labels, the series' conflicting value and a missing
  // label included.
  const core::Labels templated_labels{{"owner", "{{ $labels.instance }}-oncall"},
                                      {"severity", "critical"}};
  const core::Labels annotations{{"sev", "{{ $labels.severity }}"},
                                 {"who", "{{ $labels.alertname }} on {{ $labels.owner }}"},
                                 {"missing", "[{{ $labels.nope }}]"},
                                 {"value", "{{ $value | humanize }} {{ $value }}"}};
  core::Labels with_complex = annotations;
  with_complex.set("complex", "{{ if true }}{{ $labels.instance }}{{ end }}");
  Harness simple({.labels = templated_labels, .annotations = annotations});
  Harness complex({.labels = templated_labels, .annotations = with_complex});
  core::Labels ls{{"__name__", "load"}, {"instance", "a:1"}, {"severity", "warning"}};
  REQUIRE(simple.step({{ls, 1234.5}}));
  REQUIRE(complex.step({{ls, 1234.5}}));
  const auto& a = simple.only_alert();
  const auto& b = complex.only_alert();
  CHECK(a.labels == b.labels);
  CHECK(a.labels.get("exported_severity") == "warning");
  CHECK(a.id == b.id);
  for (const auto& name : {"sev", "who", "missing", "value"}) {
    INFO(name);
    CHECK(a.annotations.get(name) == b.annotations.get(name));
  }
  CHECK(a.annotations.get("sev") == "warning");
  CHECK(a.annotations.get("who") == "HighLoad on a:1-oncall");
  CHECK(a.annotations.get("missing") == "[]");
  CHECK(a.annotations.get("value") == "1.234k 1234.5");
  CHECK(b.annotations.get("complex") == "a:1");
}

TEST_CASE(
    "annotations that read labels only are kept for the same alert, rendered again when "
    "they could differ",
    "[rules][template]") {
  const core::Labels annotations{{"who", "{{ $labels.instance }} in {{ $labels.k }}"},
                                 {"name", "{{ $labels.__name__ }}"},
                                 {"v", "{{ $value }}"},
                                 {"lit", "literal"}};
  auto with = [](std::string name, std::vector<core::Label> ls) {
    core::Labels out{{"__name__", name}, {"instance", "a"}};
    for (const auto& l : ls) out.set(l.name, l.value);
    return out;
  };
  SECTION("merged: rule labels apart from the series'") {
    Harness h({.labels = {{"severity", "page"}}, .annotations = annotations});
    REQUIRE(h.step({{with("load", {{"k", "x"}}), 1}}));
    const uint64_t id = h.only_alert().id;
    CHECK(h.only_alert().annotations.get("who") == "a in x");
    // __name__ is not in the ID: the same alert, whose $labels.__name__ changed.
    REQUIRE(h.step({{with("load2", {{"k", "x"}}), 2}}));
    CHECK(h.only_alert().id == id);
    CHECK(h.only_alert().annotations.get("who") == "a in x");
    CHECK(h.only_alert().annotations.get("name") == "load2");
    CHECK(h.only_alert().annotations.get("v") == "2");
    CHECK(h.only_alert().annotations.get("lit") == "literal");
    REQUIRE(h.step({{with("load2", {{"k", "y"}}), 3}}));  // another alert
    REQUIRE(h.rule.alerts().size() == 2);
    for (const auto& a : h.rule.alerts()) {
      if (a.state == AlertState::inactive) continue;
      CHECK(a.annotations.get("who") == "a in y");
    }
  }
  SECTION("a rule label with an empty value takes the series label out of the alert's labels") {
    Harness h({.labels = {{"k", ""}}, .annotations = annotations});
    REQUIRE(h.step({{with("load", {{"k", "x"}}), 1}}));
    const uint64_t id = h.only_alert().id;
    REQUIRE(h.step({{with("load", {{"k", "y"}}), 1}}));
    CHECK(h.only_alert().id == id);  // the same labels without k: the same alert
    CHECK(h.only_alert().annotations.get("who") == "a in y");
  }
  SECTION("the same alert from a series label in conflict, then from exported_k") {
    Harness h({.labels = {{"k", "v"}}, .annotations = annotations});
    REQUIRE(h.step({{with("load", {{"k", "w"}}), 1}}));
    const uint64_t id = h.only_alert().id;
    CHECK(h.only_alert().annotations.get("who") == "a in w");  // the series value
    REQUIRE(h.step({{with("load", {{"exported_k", "w"}}), 1}}));
    CHECK(h.only_alert().id == id);  // {exported_k=w, k=v, ...} both times
    CHECK(h.only_alert().annotations.get("who") == "a in v");
  }
  SECTION("a reload that changes the template") {
    Harness h({.annotations = annotations});
    REQUIRE(h.step({{with("load", {{"k", "x"}}), 1}}));
    h.rule.update_from(make_rule({.annotations = {{"who", "at {{ $labels.instance }}"}}}));
    REQUIRE(h.step({{with("load", {{"k", "x"}}), 1}}));
    CHECK(h.only_alert().annotations.get("who") == "at a");
  }
}

TEST_CASE("annotation variables: $activeAt, $for, $alertID, $groupID, $expr", "[rules][template]") {
  Harness h({.for_ = 1min,
             .annotations = {{"ids", "{{ $alertID }}/{{ $groupID }}"},
                             {"for", "{{ $for }}"},
                             {"expr", "{{ $expr }}"},
                             {"active", "{{ $activeAt.Unix }}"}}});
  const auto t0 = h.clock.now();
  REQUIRE(h.step({series("a")}));
  REQUIRE(h.step({series("a")}));  // $activeAt stays the first active time
  const auto& a = h.only_alert();
  CHECK(a.annotations.get("ids") == std::to_string(a.id) + "/42");
  CHECK(a.annotations.get("for") == "1m0s");
  CHECK(a.annotations.get("expr") == "load > 1");
  CHECK(a.annotations.get("active") == std::to_string(core::unix_seconds(t0)));
}

TEST_CASE("a render error sets the rule error but the round goes on", "[rules][template]") {
  Harness h({.annotations = {{"bad", "{{ index $labels.instance 5 }}"}, {"ok", "fine"}}});
  auto res = h.step({series("a")});
  REQUIRE(res);
  REQUIRE(res->template_error);
  CHECK_FALSE(h.rule.last_error().empty());
  CHECK(h.rule.errors_total() == 1);
  const auto& a = h.only_alert();
  CHECK(a.state == AlertState::firing);
  CHECK(a.annotations.get("ok") == "fine");
  // vmalert puts err.Error() in place of the value.
  CHECK(a.annotations.get("bad").value_or("").starts_with("error evaluating template: template: "));
}

TEST_CASE("an unparsable template is a construction error", "[rules][template]") {
  config::GroupSpec g;
  g.name = "grp";
  config::RuleSpec r;
  r.name = "Broken";
  r.expr = "up";
  r.annotations = core::Labels{{"summary", "{{ $labels.instance }} {{ if"}};
  auto rule = rules::AlertingRule::create(r, g, {});
  REQUIRE_FALSE(rule);
  CHECK(rule.error().message.find("group \"grp\": rule \"Broken\": annotation \"summary\"") == 0);
}

TEST_CASE("$type, $interval, $isPartial in annotations, zero values in label templates",
          "[rules][template]") {
  Harness h({.labels = {{"kind", "t={{ $type }};i={{ $interval }};e={{ $expr }}"}},
             .annotations = {{"ctx", "{{ $type }} {{ $interval }} {{ $isPartial }}"}}});
  auto r = fakes::make_result({series("a")});
  r.is_partial = true;
  REQUIRE(h.rule.apply(r, h.clock.now(), h.env));
  const auto& a = h.only_alert();
  CHECK(a.annotations.get("ctx") == "prometheus 30s true");
  CHECK(a.labels.get("kind") == "t=;i=0s;e=load > 1");
}

TEST_CASE("a round's batch through a Notifier: firing then resolved", "[rules][send]") {
  Harness h;
  fakes::RecordingNotifier n;
  const std::vector<std::pair<std::string, std::string>> headers = {{"X-Tenant", "t1"}};
  auto round = [&](const std::vector<FakeSeries>& s) {
    REQUIRE(h.eval(s));
    const auto batch = h.rule.alerts_to_send(h.clock.now(), 0s, 2min);
    if (!batch.empty()) n.send(batch, headers, [](std::optional<core::Error> e) { CHECK_FALSE(e); });
    h.clock.advance(kInterval);
  };
  round({series("a"), series("b")});
  round({series("a")});
  REQUIRE(n.batches.size() == 2);
  CHECK(n.batches[0].alerts.size() == 2);
  CHECK(n.batches[0].headers == headers);
  REQUIRE(n.batches[1].alerts.size() == 2);  // a still firing, b resolved
  size_t resolved = 0;
  for (const auto& a : n.batches[1].alerts) {
    if (a.labels.get("instance") == "b") {
      ++resolved;
      CHECK(a.ends_at == h.clock.now() - kInterval);
    }
  }
  CHECK(resolved == 1);
  CHECK(n.stats().sent == 4);
}

TEST_CASE("payload fragments: none for alerts whose blocks are their own JSON", "[rules][send]") {
  Harness h({.annotations = core::Labels{{"summary", "value {{ $value }}"}}});
  REQUIRE(h.step({series("a", 1), series("b", 1)}));
  const auto sent = h.rule.alerts_to_send(h.clock.now() + 5ms, 0s, 2min);
  REQUIRE(sent.size() == 2);
  for (const auto& na : sent) {
    CHECK_FALSE(na.json);
    CHECK(na.url_prefix_json == sent[0].url_prefix_json);  // one prefix for the rule's alerts
  }
  CHECK(*sent[0].url_prefix_json ==
        R"("generatorURL":"http://vm:8880/vmalert/alert?group_id=)" +
            std::to_string(h.rule.group_id()) + "&alert_id=");
  for (const auto& a : h.rule.alerts()) CHECK_FALSE(a.json);
}

TEST_CASE("payload fragments: rebuilt only when labels or annotations change", "[rules][send]") {
  // '<' is escaped in the payload (\u003c): these annotations are kept as text in the fragment.
  Harness h({.annotations = core::Labels{{"summary", "value < {{ $value }}"}, {"static", "s"}}});
  const auto resolve = 2min;
  auto send = [&] {
    auto sent = h.rule.alerts_to_send(h.clock.now() + 5ms, 0s, resolve);
    REQUIRE(sent.size() == 1);
    REQUIRE(sent[0].json);
    return sent[0];
  };
  REQUIRE(h.step({series("a", 1)}));
  const auto first = send();
  CHECK(first.json->labels_from(first.labels));
  CHECK(first.json->annotations_from(first.annotations));
  CHECK(first.json->labels_json() ==
        R"({"alertgroup":"grp","alertname":"HighLoad","instance":"a"})");
  CHECK_FALSE(first.json->labels_kept_as_text());
  CHECK(first.json->annotations_kept_as_text());
  CHECK(first.json->annotations_json() == R"({"static":"s","summary":"value \u003c 1"})");
  CHECK(h.only_alert().json == first.json);  // kept on the alert

  // Same value: the annotations render the same, the alert keeps its blocks and the fragment
  // is not rebuilt (the very same object goes out again).
  REQUIRE(h.step({series("a", 1)}));
  const auto same = send();
  CHECK(same.json == first.json);
  CHECK(same.annotations.shares_block_with(first.annotations));

  // A new value changes the rendered annotation: a new fragment with the new text, same labels.
  REQUIRE(h.step({series("a", 2)}));
  const auto changed = send();
  CHECK(changed.json != first.json);
  CHECK(changed.json->annotations_json() == R"({"static":"s","summary":"value \u003c 2"})");
  CHECK(changed.json->labels_json() == first.json->labels_json());
  CHECK(changed.json->generator_url_json() == first.json->generator_url_json());

  // And that one is kept while nothing changes again; a resolved alert keeps it too.
  REQUIRE(h.step({series("a", 2)}));
  CHECK(send().json == changed.json);
  REQUIRE(h.step({}));
  CHECK(send().json == changed.json);
}

TEST_CASE("payload fragments: a label that changes on the alert rebuilds them",
          "[rules][send]") {
  // An alert's labels are its identity, so they change only by assignment: a fragment built from
  // other label blocks is never taken as valid, even for equal labels.
  rules::Alert a;
  a.labels = core::Labels{{"alertname", "A"}, {"x", "1"}};
  a.annotations = core::Labels{{"k", "v"}};
  auto j = core::AlertJson::build(a.labels, a.annotations, "u");
  CHECK(j->labels_from(a.labels));
  CHECK_FALSE(j->labels_from(core::Labels{{"alertname", "A"}, {"x", "1"}}));
  a.labels.set("x", "2");
  CHECK_FALSE(j->labels_from(a.labels));
  CHECK(j->annotations_from(a.annotations));
  CHECK(j->generator_url_json() == R"("generatorURL":"u")");
}

TEST_CASE("external.alert.source: Grafana's explore link from the flag's help", "[rules][send]") {
  Harness h({.alert_source =
                 R"(explore?orgId=1&left={"datasource":"VictoriaMetrics","queries":[{"expr":)"
                 R"({{.Expr|jsonEscape|queryEscape}},"refId":"A"}],"range":{"from":)"
                 R"("{{ .ActiveAt.UnixMilli }}","to":"now"}})"});
  const auto t0 = h.clock.now();
  REQUIRE(h.step({series("a", 3)}));
  const auto sent = h.rule.alerts_to_send(h.clock.now(), 0s, 2min);
  REQUIRE(sent.size() == 1);
  const std::string ms = std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(t0.time_since_epoch()).count());
  const std::string want =
      R"(http://vm:8880/explore?orgId=1&left={"datasource":"VictoriaMetrics","queries":)"
      R"([{"expr":%22load+%3E+1%22,"refId":"A"}],"range":{"from":")" +
      ms + R"(","to":"now"}})";
  const auto& a = h.only_alert();
  CHECK(h.rule.source_url(a.id, a, h.clock.now()) == want);
  // In the payload the URL is a JSON string (qtpl escaping: `"` is `\"`).
  std::string escaped;
  for (char c : want) {
    if (c == '"') escaped += '\\';
    escaped += c;
  }
  CHECK(sent[0].json->generator_url_json() == "\"generatorURL\":\"" + escaped + "\"");
  // The API's "source" is the same link.
  const auto view = h.rule.describe();
  REQUIRE(view.alert_sources.size() == 1);
  CHECK(view.alert_sources[0] == want);
}

TEST_CASE("external.alert.source: the fragment follows a source that reads $value",
          "[rules][send]") {
  Harness h({.alert_source = "vmui/#/?g0.expr={{ $expr | queryEscape }}&v={{ $value }}"});
  auto send = [&] {
    auto sent = h.rule.alerts_to_send(h.clock.now() + 5ms, 0s, 2min);
    REQUIRE(sent.size() == 1);
    return sent[0].json;
  };
  REQUIRE(h.step({series("a", 1)}));
  const auto first = send();
  CHECK(first->generator_url_json() ==
        R"("generatorURL":"http://vm:8880/vmui/#/?g0.expr=load+%3E+1&v=1")");
  REQUIRE(h.step({series("a", 1)}));
  CHECK(send() == first);  // same text: the same fragment goes out again
  REQUIRE(h.step({series("a", 2)}));
  const auto second = send();
  CHECK(second != first);
  CHECK(second->generator_url_json() ==
        R"("generatorURL":"http://vm:8880/vmui/#/?g0.expr=load+%3E+1&v=2")");
}

TEST_CASE("external.alert.source: a bad template is a start-up error", "[rules][send]") {
  auto bad = rules::parse_alert_source("foo?{{invalid}}", true);
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message,
             Catch::StartsWith("error validating source template foo?{{invalid}}: "));
  CHECK_THAT(bad.error().message, Catch::Contains("invalid"));
  // Executed over empty data as well: a function given the wrong type fails at start-up.
  CHECK_FALSE(rules::parse_alert_source("x{{ humanize \"abc\" }}", true).has_value());
  // Empty: no template (the default vmalert/alert link).
  auto none = rules::parse_alert_source("", true);
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
  // -rule.validateTemplates=false: accepted; the link is then just `<external.url>/`.
  auto unchecked = rules::parse_alert_source("foo?{{invalid}}", false);
  REQUIRE(unchecked.has_value());
  REQUIRE(unchecked->has_value());
  std::string out;
  templates::TemplateData data;
  CHECK((*unchecked)->render(data, {}, out));
  CHECK(out.empty());
}
