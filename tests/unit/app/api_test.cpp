#include "app/api.hpp"

#include <catch2/catch.hpp>

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
    return app::handle_request(ctx, req);
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
