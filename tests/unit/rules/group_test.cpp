// rules::Group: one round per rule, reload matching by rule ID, and -rule.keepFiringOnError.
#include "rules/group.hpp"

#include <catch2/catch.hpp>

#include <chrono>

#include "tests/fakes/fake_querier.hpp"

namespace {

using namespace std::chrono_literals;

const core::TimePoint kT0 = core::from_unix_ms(1'700'000'040'000);

config::GroupSpec one_alert_group(core::Duration for_ = 0s) {
  config::GroupSpec g;
  g.name = "g";
  g.file = "f.yml";
  g.id = 9;
  g.effective_interval = 1min;
  config::RuleSpec r;
  r.name = "Down";
  r.expr = "up == 0";
  r.for_ = for_;
  r.id = 1;
  g.rules = {r};
  return g;
}

rules::RoundTimes at(core::TimePoint t) { return rules::RoundTimes{t, t, t}; }

}  // namespace

TEST_CASE("a group keeps its settings but not a second copy of its rules' specs",
          "[rules][group]") {
  const auto spec = one_alert_group();
  REQUIRE(spec.rules.size() == 1);
  auto g = rules::Group::create(spec, rules::GroupContext{});
  REQUIRE(g);
  CHECK((*g)->spec().rules.empty());
  CHECK((*g)->spec().name == spec.name);
  CHECK((*g)->spec().id == spec.id);
  REQUIRE((*g)->size() == 1);
  CHECK((*g)->rule(0).name() == spec.rules[0].name);
  CHECK((*g)->rule(0).expr() == spec.rules[0].expr);
}

TEST_CASE("without keepFiringOnError a failing query sends nothing", "[rules][group]") {
  auto g = rules::Group::create(one_alert_group(), rules::GroupContext{});
  REQUIRE(g);
  auto firing = fakes::make_result({{core::Labels{{"instance", "a"}}, 0}});
  auto r = (*g)->on_result(0, firing, at(kT0), {}, {});
  REQUIRE(r.alerts.size() == 1);
  auto failed = (*g)->on_error(0, core::Error{"connection refused", core::ErrorKind::connection},
                               at(kT0 + 1min), {});
  CHECK(failed.error);
  CHECK(failed.alerts.empty());
  CHECK((*g)->rule(0).describe().firing == 1);
  CHECK((*g)->rule(0).describe().last_error == "connection refused");
}

TEST_CASE("keepFiringOnError re-sends firing alerts while the query fails, up to its limit",
          "[rules][group]") {
  rules::GroupContext ctx;
  ctx.keep_firing_on_error = 5min;
  auto g = rules::Group::create(one_alert_group(), ctx);
  REQUIRE(g);
  auto firing = fakes::make_result({{core::Labels{{"instance", "a"}}, 0}});
  REQUIRE((*g)->on_result(0, firing, at(kT0), {}, {}).alerts.size() == 1);
  const core::Error down{"connection refused", core::ErrorKind::connection};
  for (int m = 1; m <= 6; ++m) {
    const auto now = kT0 + std::chrono::minutes(m);
    auto out = (*g)->on_error(0, down, at(now), {});
    CHECK(out.error);
    // The first failure is at +1m: held until +6m, each time with endsAt = now + 4 intervals.
    REQUIRE(out.alerts.size() == 1);
    CHECK(*out.alerts[0].ends_at == now + 4min);
    CHECK(out.alerts[0].starts_at == kT0);
  }
  CHECK((*g)->on_error(0, down, at(kT0 + 7min), {}).alerts.empty());
  // The datasource is back: the alert is still firing, and a later outage gets the full time.
  REQUIRE((*g)->on_result(0, firing, at(kT0 + 8min), {}, {}).alerts.size() == 1);
  CHECK((*g)->on_error(0, down, at(kT0 + 9min), {}).alerts.size() == 1);
}

TEST_CASE("reload keeps the alerts of a rule whose ID stays", "[rules][group]") {
  auto g = rules::Group::create(one_alert_group(1min), rules::GroupContext{});
  REQUIRE(g);
  auto firing = fakes::make_result({{core::Labels{{"instance", "a"}}, 0}});
  (void)(*g)->on_result(0, firing, at(kT0), {}, {});
  CHECK((*g)->rule(0).describe().pending == 1);
  auto spec = one_alert_group(1min);
  spec.rules[0].annotations = core::Labels{{"summary", "new"}};
  auto newer = rules::Group::create(spec, rules::GroupContext{});
  REQUIRE(newer);
  auto closed = (*g)->update_from(std::move(**newer), kT0 + 30s);
  CHECK(closed.alerts.empty());
  CHECK((*g)->rule(0).describe().annotations.get("summary") == "new");
  auto r = (*g)->on_result(0, firing, at(kT0 + 1min), {}, {});
  CHECK(r.fired == 1);  // pending since kT0: `for` elapsed across the reload
}
