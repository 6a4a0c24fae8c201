// The scheduler and the manager on a manual loop: hours of rounds in milliseconds, with fake
// datasources (answering at once or when released) and a recording notifier.
#include "app/manager.hpp"
#include "app/scheduler.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/loader.hpp"
#include "notifier/alertmanager_client.hpp"
#include "notifier/delivery_queue.hpp"
#include "tests/fakes/fake_transport.hpp"
#include "tests/fakes/fake_querier.hpp"
#include "tests/fakes/holding_querier.hpp"
#include "tests/fakes/manual_loop.hpp"
#include "tests/fakes/recording_notifier.hpp"

namespace {

using namespace std::chrono_literals;

std::vector<config::GroupSpec> load(const std::string& yaml,
                                    core::Duration default_interval = 1min) {
  config::LoadOptions lo;
  lo.default_interval = default_interval;
  lo.default_eval_delay = 0s;
  auto r = config::parse_rules_text(yaml, "rules.yml", lo);
  for (const auto& e : r.errors) FAIL(e.message);
  return std::move(r.groups);
}

// Hands out one querier kind for every group.
template <class Q>
class SharedQuerierFactory final : public datasource::QuerierFactory {
 public:
  explicit SharedQuerierFactory(Q& q) : q_(q) {}
  // QuerierFactory
  std::unique_ptr<datasource::Querier> build(const datasource::QuerierParams&) override {
    return std::make_unique<Forward>(q_);
  }

 private:
  class Forward final : public datasource::Querier {
   public:
    explicit Forward(Q& q) : q_(q) {}
    void query(std::string_view expr, core::TimePoint ts, core::QueryResult& out,
               datasource::QueryDone done) override {
      q_.query(expr, ts, out, std::move(done));
    }

   private:
    Q& q_;
  };
  Q& q_;
};

// Throws from query() on a marked expression, answers the rest through a FakeQuerier.
class ThrowingQuerier final : public datasource::Querier {
 public:
  void query(std::string_view expr, core::TimePoint ts, core::QueryResult& out,
             datasource::QueryDone done) override {
    if (expr == "throw") throw std::runtime_error("boom");
    inner.query(expr, ts, out, std::move(done));
  }
  fakes::FakeQuerier inner;
};

template <class Q>
struct Harness {
  fakes::ManualLoop loop;
  Q querier;
  SharedQuerierFactory<Q> factory{querier};
  std::shared_ptr<fakes::RecordingNotifier> notifier = std::make_shared<fakes::RecordingNotifier>();
  app::NotifierSet notifiers;
  datasource::NullSeriesWriter series;
  app::SnapshotStore store;
  app::GlobalCounters counters;
  app::SchedulerOptions options;
  std::unique_ptr<app::Manager> manager;
  std::shared_ptr<const templates::TemplateSet> templates =
      std::make_shared<const templates::TemplateSet>();

  Harness() {
    notifiers.set({notifier});
    options.skip_start_delay = true;
    manager = std::make_unique<app::Manager>(
        app::ManagerDeps{loop, notifiers, series, store, counters, factory, nullptr}, options);
  }
  ~Harness() {
    manager->stop([] {});
    // A query still held keeps its round, and so its group, alive: answer it so the stop ends.
    if constexpr (requires { querier.release_all(); }) querier.release_all();
    loop.run_ready();
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  core::Result<app::ApplyStats> apply(const std::string& yaml, core::Duration def = 1min) {
    rules::GroupContext ctx;
    ctx.external_url = "http://alertd:8880";
    return manager->apply(load(yaml, def), ctx, templates);
  }
  std::shared_ptr<const app::GroupSnapshot> group(size_t i = 0) {
    auto all = store.all();
    REQUIRE(i < all.size());
    return all[i];
  }
};

const char* kOneRule = R"(
groups:
  - name: g
    interval: 1m
    rules:
      - alert: Up
        expr: up
        annotations:
          summary: "{{ $labels.instance }} is up"
)";

}  // namespace

TEST_CASE("a group runs one round per interval for an hour of simulated time", "[app][scheduler]") {
  Harness<fakes::FakeQuerier> h;
  h.querier.answers["up"] = {{core::Labels{{"instance", "a"}}, 1}};
  REQUIRE(h.apply(kOneRule));
  h.loop.advance(60min);
  // Rounds at 0, 1m, ..., 60m.
  CHECK(h.querier.calls.size() == 61);
  CHECK(h.group()->iterations_total == 61);
  CHECK(h.group()->iterations_missed_total == 0);
  for (size_t i = 1; i < h.querier.calls.size(); ++i) {
    CHECK(h.querier.calls[i].second - h.querier.calls[i - 1].second == 1min);
  }
  // for: 0 fires at once; with resendDelay 0 it is re-sent every round.
  REQUIRE(h.notifier->batches.size() == 61);
  CHECK(h.notifier->batches.back().alerts.at(0).annotations.get("summary") == "a is up");
  CHECK(h.counters.alerts_fired_total == 1);
  CHECK(h.counters.execution_total == 61);
}

TEST_CASE("interval 0s means -evaluationInterval and never a hot loop", "[app][scheduler]") {
  Harness<fakes::FakeQuerier> h;
  REQUIRE(h.apply(R"(
groups:
  - name: g
    interval: 0s
    rules:
      - alert: A
        expr: vector(1)
)",
                  30s));
  REQUIRE(h.group()->interval == 30s);
  h.loop.advance(10min);
  CHECK(h.querier.calls.size() == 21);
}

TEST_CASE("a tick missed by a slow round is counted when it passes", "[app][scheduler]") {
  Harness<fakes::HoldingQuerier> h;
  REQUIRE(h.apply(kOneRule));
  h.loop.advance(0s);
  REQUIRE(h.querier.held.size() == 1);
  // The round started at 0 is still running at 1m (the tick the next round will use) ...
  h.loop.advance(90s);
  CHECK(h.group()->iterations_missed_total == 0);
  // ... and at 2m the 1m tick is definitely missed: counted now, before the round ends.
  h.loop.advance(40s);
  CHECK(h.group()->iterations_missed_total == 1);
  h.loop.advance(60s);
  CHECK(h.group()->iterations_missed_total == 2);
  CHECK(h.group()->iterations_total == 0);
  // The answer arrives at 3m10s: the next round runs on the 3m tick at once.
  h.querier.release_all();
  h.loop.advance(0s);
  CHECK(h.group()->iterations_total == 1);
  CHECK(h.group()->iterations_missed_total == 2);
  REQUIRE(h.querier.held.size() == 1);
  CHECK(h.querier.held.front().ts - h.loop.start_time() == 3min);
}

TEST_CASE("concurrency bounds the queries in flight", "[app][scheduler]") {
  Harness<fakes::HoldingQuerier> h;
  REQUIRE(h.apply(R"(
groups:
  - name: g
    concurrency: 2
    rules:
      - alert: A
        expr: a
      - alert: B
        expr: b
      - alert: C
        expr: c
      - alert: D
        expr: d
      - alert: E
        expr: e
)"));
  h.loop.advance(0s);
  CHECK(h.querier.held.size() == 2);
  while (!h.querier.held.empty()) {
    h.querier.release_one();
    h.loop.advance(0s);
  }
  CHECK(h.querier.total == 5);
  CHECK(h.querier.max_held == 2);
  CHECK(h.group()->iterations_total == 1);
}

TEST_CASE("stop during a round waits for the query in flight", "[app][scheduler]") {
  Harness<fakes::HoldingQuerier> h;
  REQUIRE(h.apply(kOneRule));
  h.loop.advance(0s);
  REQUIRE(h.querier.held.size() == 1);
  bool stopped = false;
  h.manager->stop([&] { stopped = true; });
  h.loop.advance(1s);
  CHECK_FALSE(stopped);
  h.querier.release_all({{core::Labels{{"instance", "a"}}, 1}});
  h.loop.advance(0s);
  CHECK(stopped);
  // Nothing was evaluated or sent after the stop, and no round follows.
  CHECK(h.notifier->batches.empty());
  h.loop.advance(10min);
  CHECK(h.querier.total == 1);
  CHECK(h.loop.armed_timers() == 0);
}

TEST_CASE("a datasource call that throws fails only its rule", "[app][scheduler]") {
  Harness<ThrowingQuerier> h;
  h.querier.inner.answers["ok"] = {{core::Labels{{"instance", "a"}}, 1}};
  REQUIRE(h.apply(R"(
groups:
  - name: g
    rules:
      - alert: Bad
        expr: throw
      - alert: Good
        expr: ok
)"));
  h.loop.advance(2min);
  const auto g = h.group();
  CHECK(g->iterations_total == 3);
  REQUIRE(g->rules.size() == 2);
  CHECK(g->rules[0].last_error.find("boom") != std::string::npos);
  CHECK(g->rules[1].last_error.empty());
  CHECK(g->rules[1].firing == 1);
  CHECK(h.counters.execution_errors_total == 3);
}

TEST_CASE("reload keeps state of unchanged rules, resolves removed ones", "[app][manager]") {
  Harness<fakes::FakeQuerier> h;
  h.querier.answers["up"] = {{core::Labels{{"instance", "a"}}, 1}};
  h.querier.answers["down"] = {{core::Labels{{"instance", "b"}}, 1}};
  REQUIRE(h.apply(R"(
groups:
  - name: g
    rules:
      - alert: Up
        expr: up
        for: 1m
        annotations: {summary: old}
      - alert: Down
        expr: down
)"));
  h.loop.advance(2min);
  auto before = h.group();
  REQUIRE(before->rules.size() == 2);
  REQUIRE(before->rules[0].firing == 1);
  const auto active_at = before->rules[0].alerts.at(0).active_at;
  h.notifier->batches.clear();

  // An annotation changes (same rule ID), the second rule goes.
  auto st = h.apply(R"(
groups:
  - name: g
    rules:
      - alert: Up
        expr: up
        for: 1m
        annotations: {summary: new}
)");
  REQUIRE(st);
  CHECK(st->updated == 1);
  h.loop.advance(0s);
  // The removed rule's firing alert is resolved at once (endsAt = now).
  REQUIRE(h.notifier->batches.size() == 1);
  const auto& resolved = h.notifier->batches[0].alerts.at(0);
  CHECK(resolved.labels.get("alertname") == "Down");
  REQUIRE(resolved.ends_at);
  CHECK(*resolved.ends_at == h.loop.now());

  h.loop.advance(1min);
  auto after = h.group();
  REQUIRE(after->rules.size() == 1);
  REQUIRE(after->rules[0].firing == 1);
  CHECK(after->rules[0].alerts.at(0).active_at == active_at);
  CHECK(after->rules[0].alerts.at(0).annotations.get("summary") == "new");
}

TEST_CASE("a configuration that cannot be built changes nothing", "[app][manager]") {
  Harness<fakes::FakeQuerier> h;
  REQUIRE(h.apply(kOneRule));
  h.loop.advance(1min);
  auto broken = h.apply(R"(
groups:
  - name: other
    rules:
      - alert: B
        expr: up
        annotations:
          summary: "{{ nosuchfunc }}"
)");
  REQUIRE_FALSE(broken);
  CHECK(broken.error().message.find("nosuchfunc") != std::string::npos);
  CHECK(h.manager->size() == 1);
  h.loop.advance(1min);
  CHECK(h.group()->name == "g");
  CHECK(h.group()->iterations_total == 3);
}

TEST_CASE("a removed group stops and a new one starts", "[app][manager]") {
  Harness<fakes::FakeQuerier> h;
  REQUIRE(h.apply(kOneRule));
  h.loop.advance(1min);
  bool applied = false;
  rules::GroupContext ctx;
  auto st = h.manager->apply(load(R"(
groups:
  - name: h
    rules:
      - alert: X
        expr: x
)"),
                             ctx, h.templates, 0, [&] { applied = true; });
  REQUIRE(st);
  CHECK(st->started == 1);
  CHECK(st->stopped == 1);
  h.loop.advance(0s);
  CHECK(applied);
  REQUIRE(h.store.all().size() == 1);
  CHECK(h.group()->name == "h");
}

TEST_CASE("effective group settings come from config once", "[app][manager]") {
  config::LoadOptions lo;
  lo.default_interval = 45s;
  lo.default_limit = 7;
  auto r = config::parse_rules_text(R"(
groups:
  - name: a
    interval: 0s
    concurrency: 0
    rules: [{alert: A, expr: up}]
  - name: b
    limit: 3
    concurrency: 4
    eval_alignment: false
    rules: [{alert: B, expr: up}]
)",
                                    "rules.yml", lo);
  REQUIRE(r.ok());
  REQUIRE(r.groups.size() == 2);
  const auto& a = r.groups[0];
  CHECK(a.effective_interval == 45s);  // 0s means the default, never a hot loop
  CHECK(a.effective_limit == 7);       // -rule.resultsLimit
  CHECK(a.effective_concurrency == 1);
  CHECK(a.effective_eval_alignment);
  const auto& b = r.groups[1];
  CHECK(b.effective_limit == 3);
  CHECK(b.effective_concurrency == 4);
  CHECK_FALSE(b.effective_eval_alignment);
}

TEST_CASE("the alerts of a round leave in one POST per Alertmanager", "[app][scheduler]") {
  Harness<fakes::FakeQuerier> h;
  fakes::FakeTransport am1;
  fakes::FakeTransport am2;
  auto queue = [&h](fakes::FakeTransport& t, const char* url) {
    notifier::AlertmanagerTarget target;
    target.url = url;
    return std::make_shared<notifier::DeliveryQueue>(
        h.loop, std::make_shared<notifier::AlertmanagerClient>(t, target),
        notifier::DeliveryOptions{});
  };
  auto q1 = queue(am1, "http://am1:9093");
  auto q2 = queue(am2, "http://am2:9093");
  h.notifiers.set({q1, q2, h.notifier});
  h.querier.answers["up"] = {{core::Labels{{"instance", "a"}}, 1},
                             {core::Labels{{"instance", "b"}}, 1}};
  h.querier.answers["down"] = {{core::Labels{{"instance", "c"}}, 1}};
  REQUIRE(h.apply(R"(
groups:
  - name: g
    interval: 1m
    rules:
      - alert: Up
        expr: up
      - alert: Down
        expr: down
)"));
  h.loop.advance(1s);
  // Two rules, three alerts: one POST to each Alertmanager; the plain notifier got each rule's
  // batch as it came.
  REQUIRE(am1.requests.size() == 1);
  REQUIRE(am2.requests.size() == 1);
  CHECK(am1.requests[0].body == am2.requests[0].body);
  for (const char* inst : {"\"a\"", "\"b\"", "\"c\""}) {
    CHECK(am1.requests[0].body.find(std::string("\"instance\":") + inst) != std::string::npos);
  }
  CHECK(h.notifier->batches.size() == 2);
  // AM2 fails: AM1 still gets the next round at once, AM2 after its backoff.
  am1.complete_all();
  am2.respond_with(503, "");
  am2.complete_all();
  h.loop.advance(60s);
  CHECK(am1.requests.size() == 2);
  CHECK(am2.requests.size() == 2);  // the retry, a second after the failure, not answered yet
  CHECK(q2->stats().in_flight == 3);
  CHECK(q2->stats().queued == 3);  // the next round's states wait behind it
  am2.respond_with(200, "");
  am2.complete_all();
  REQUIRE(am2.requests.size() == 3);
  CHECK(am2.requests[2].body == am1.requests[1].body);
  CHECK(q2->stats().queued == 0);
}
