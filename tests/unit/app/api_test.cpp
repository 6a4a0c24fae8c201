#include "app/api.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

std::shared_ptr<app::GroupSnapshot> sample_group() {
  auto g = std::make_shared<app::GroupSnapshot>();
  g->id = 42;
  g->name = "g1";
  g->file = "rules.yml";
  g->type = "prometheus";
  g->interval = std::chrono::seconds(30);
  g->iterations_total = 3;
  app::RuleSnapshot r;
  r.id = 7;
  r.name = "HighCPU";
  r.expr = "cpu > 0.9";
  r.for_ = std::chrono::minutes(5);
  r.state = rules::AlertState::firing;
  r.firing = 1;
  r.last_samples = 1;
  app::AlertSnapshot a;
  a.id = 99;
  a.state = rules::AlertState::firing;
  a.labels = core::Labels{{"alertname", "HighCPU"}, {"instance", "a\"b"}};
  a.annotations = core::Labels{{"summary", "line1\nline2"}};
  a.value = 104.5;
  a.active_at = core::from_unix_ms(1700000000000);
  r.alert_source_prefix = "http://x/vmalert/alert?group_id=42&alert_id=";
  r.alerts.push_back(a);
  g->rules.push_back(r);
  return g;
}

}  // namespace

TEST_CASE("/api/v1/alerts has vmalert's shape", "[app]") {
  app::SnapshotStore store;
  store.publish(sample_group());
  const auto body = app::alerts_json(store);
  CHECK(body ==
        R"({"status":"success","data":{"alerts":[{"state":"firing","name":"HighCPU","value":"104.5",)"
        R"("labels":{"alertname":"HighCPU","instance":"a\"b"},"annotations":{"summary":"line1\nline2"},)"
        R"("activeAt":"2023-11-14T22:13:20Z","id":"99","rule_id":"7","group_id":"42",)"
        R"("expression":"cpu \u003e 0.9","source":"http://x/vmalert/alert?group_id=42\u0026alert_id=99",)"
        R"("restored":false,"stabilizing":false}]}})");
}

TEST_CASE("/api/v1/rules reports health, type and durations in seconds", "[app]") {
  app::SnapshotStore store;
  store.publish(sample_group());
  const auto body = app::rules_json(store);
  CHECK_THAT(body, Catch::Contains(R"("duration":300)"));
  CHECK_THAT(body, Catch::Contains(R"("health":"ok","type":"alerting","datasourceType":"prometheus")"));
  CHECK_THAT(body, Catch::Contains(R"("interval":30)"));
  // Go's encoding/json, as vmalert's API: ">" is written \u003e.
  CHECK_THAT(body, Catch::Contains(R"("state":"firing","name":"HighCPU","query":"cpu \u003e 0.9")"));
}

TEST_CASE("routes: health, metrics, 404", "[app]") {
  app::SnapshotStore store;
  store.publish(sample_group());
  app::GlobalCounters counters;
  counters.execution_total = 5;
  std::atomic<bool> ready{false};
  app::ApiContext ctx;
  ctx.store = &store;
  ctx.counters = &counters;
  ctx.ready = &ready;
  auto get = [&](std::string target) {
    net::ServerRequest req;
    req.method = "GET";
    req.target = std::move(target);
    auto resp = app::handle_request(ctx, req);
    net::collect_body(resp);  // /api/v1/rules and /api/v1/alerts are streamed
    return resp;
  };
  CHECK(get("/-/healthy").status == 200);
  CHECK(get("/-/ready").status == 503);
  ready = true;
  CHECK(get("/-/ready").status == 200);
  const auto metrics = get("/metrics");
  CHECK(metrics.status == 200);
  CHECK_THAT(metrics.body, Catch::Contains("vmalert_execution_total 5\n"));
  CHECK_THAT(metrics.body,
             Catch::Contains(
                 "vmalert_alerts_firing{alertname=\"HighCPU\",file=\"rules.yml\",group=\"g1\",id=\"7\"} 1\n"));
  CHECK_THAT(metrics.body,
             Catch::Contains("vmalert_iteration_total{file=\"rules.yml\",group=\"g1\"} 3\n"));
  CHECK(get("/vmalert/api/v1/alerts?x=1").status == 200);
  const auto missing = get("/nope");
  CHECK(missing.status == 404);
  CHECK_THAT(missing.body, Catch::Contains(R"("errorType":"not_found")"));
}

TEST_CASE("metric values print like Prometheus", "[app]") {
  std::string out;
  app::append_metric_value(out, 0.5);
  out += ' ';
  app::append_metric_value(out, std::nan(""));
  out += ' ';
  app::append_metric_value(out, -INFINITY);
  CHECK(out == "0.5 NaN -Inf");
}

namespace {

// A group of `rules` rules with `alerts` alerts each, every alert with a distinct instance.
std::shared_ptr<app::GroupSnapshot> big_group(uint64_t id, int rules, int alerts) {
  auto g = sample_group();
  g->id = id;
  g->name = "big" + std::to_string(id);
  const app::RuleSnapshot proto = g->rules.front();
  g->rules.clear();
  for (int r = 0; r < rules; ++r) {
    app::RuleSnapshot rule = proto;
    rule.id = static_cast<uint64_t>(r);
    rule.alerts.clear();
    for (int a = 0; a < alerts; ++a) {
      app::AlertSnapshot al = proto.alerts.front();
      al.id = id * 1'000'000 + static_cast<uint64_t>(r * alerts + a);
      al.labels = core::Labels{{"alertname", "HighCPU"}, {"instance", "host-" + std::to_string(a)}};
      rule.alerts.push_back(al);
    }
    g->rules.push_back(std::move(rule));
  }
  return g;
}

// Pulls every piece of a streamed answer.
std::vector<std::string> pieces_of(net::ServerResponse& resp) {
  std::vector<std::string> out;
  REQUIRE(resp.stream);
  for (bool more = true; more;) {
    std::string piece;
    more = resp.stream(piece);
    out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace

TEST_CASE("/api/v1/rules and /api/v1/alerts are streamed in bounded pieces of one snapshot",
          "[app][api]") {
  app::SnapshotStore store;
  store.publish(big_group(1, 30, 40));
  store.publish(big_group(2, 1, 3000));  // one rule bigger than a piece
  store.publish(big_group(3, 0, 0));     // a group without rules
  app::GlobalCounters counters;
  app::ApiContext ctx;
  ctx.store = &store;
  ctx.counters = &counters;
  for (const std::string path : {"/api/v1/rules", "/api/v1/alerts"}) {
    INFO(path);
    net::ServerRequest req;
    req.method = "GET";
    req.target = path;
    auto resp = app::handle_request(ctx, req);
    CHECK(resp.status == 200);
    CHECK(resp.content_type == "application/json");
    CHECK(resp.body.empty());
    // A new round publishes while the answer is being sent: the answer is the old view.
    const std::string expected =
        path == "/api/v1/rules" ? app::rules_json(store) : app::alerts_json(store);
    store.publish(big_group(1, 1, 1));
    store.remove(2);
    const auto pieces = pieces_of(resp);
    std::string whole;
    for (const auto& p : pieces) whole += p;
    CHECK(whole == expected);
    CHECK(whole.size() > 1'000'000);
    CHECK(pieces.size() > 5);
    // A piece ends with the first item past 64 KiB: /api/v1/alerts' items are alerts (under
    // 1 kB), /api/v1/rules' are rules (the 40-alert ones under 20 kB; the 3,000-alert rule is
    // the one big piece there).
    const size_t item = path == "/api/v1/rules" ? 20 * 1024 : 1024;
    size_t big = 0;
    for (const auto& p : pieces) {
      if (p.size() >= 64 * 1024 + item) ++big;
    }
    CHECK(big == (path == "/api/v1/rules" ? 1u : 0u));
    store.publish(big_group(1, 30, 40));
    store.publish(big_group(2, 1, 3000));
  }
}

TEST_CASE("/api/v1/alerts writes plain label sets from their blocks, others escaped", "[app]") {
  auto g = sample_group();
  auto& a = g->rules[0].alerts[0];
  a.labels = core::Labels{{"alertname", "HighCPU"}, {"job", "node"}};  // copied as they are
  a.annotations = core::Labels{{"d", "a > b & c"}, {"e", "it's"}};    // Go escapes '>' '&'
  app::SnapshotStore store;
  store.publish(g);
  const auto body = app::alerts_json(store);
  CHECK_THAT(body, Catch::Contains(R"("labels":{"alertname":"HighCPU","job":"node"},)"
                                   R"("annotations":{"d":"a \u003e b \u0026 c","e":"it's"},)"));
}
