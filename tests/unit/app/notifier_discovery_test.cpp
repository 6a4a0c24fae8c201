// -notifier.config wiring: targets from a config file and its file_sd files, relabeling per
// target, and a refresh that keeps the queues of targets that stay.
#include "app/notifier_discovery.hpp"

#include <catch2/catch.hpp>

#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fakes/fake_transport.hpp"
#include "tests/fakes/manual_loop.hpp"

namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() /
           ("alertd-nd-" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = (path / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path path;
};

notifier::Alert alert(core::Labels labels) {
  notifier::Alert a;
  a.labels = std::move(labels);
  a.starts_at = core::from_unix_ms(1'700'000'000'000);
  return a;
}

// The pool with one FakeTransport per target, kept here to look at the requests.
struct Rig {
  fakes::ManualLoop loop;
  std::vector<fakes::FakeTransport*> transports;
  app::NotifierPool pool{loop, notifier::DeliveryOptions{}, false,
                         [this](const net::TlsOptions&) {
                           auto t = std::make_unique<fakes::FakeTransport>();
                           transports.push_back(t.get());
                           return t;
                         }};
  ~Rig() { pool.close(); }
};

std::string body_of(const fakes::FakeTransport& t) {
  std::string all;
  for (const auto& r : t.requests) all += r.url + " " + r.body + "\n";
  return all;
}

}  // namespace

TEST_CASE("notifier config: static and file_sd targets with relabeling", "[app][notifier]") {
  TempDir dir;
  dir.write("am.json", R"([{"targets": ["am2:9093", "am3:9093"], "labels": {"dc": "east"}}])");
  const auto cfg = dir.write("notifier.yml", R"YML(
path_prefix: /prefix
static_configs:
  - targets: ["am1:9093"]
    alert_relabel_configs:
      - {target_label: to, replacement: am1}
file_sd_configs:
  - files: ["am.json"]
    alert_relabel_configs:
      - {source_labels: [severity], regex: debug, action: drop}
relabel_configs:
  - {source_labels: [__address__], regex: "am3:.*", action: drop}
  - {source_labels: [__meta_filepath], regex: ".*/(.*)", target_label: file}
alert_relabel_configs:
  - {target_label: via, replacement: alertd}
)YML");
  auto state = app::load_notifier_state(cfg);
  REQUIRE(state);
  app::FileSdCache cache;
  std::vector<std::string> errors;
  auto found = app::discover_targets(**state, cache, errors);
  CHECK(errors.empty());
  REQUIRE(found.size() == 2);  // am3 dropped by relabel_configs
  CHECK(found[0].kind == "static");
  CHECK(found[0].spec.url == "http://am1:9093/prefix/api/v2/alerts");
  CHECK(found[1].kind == "fileSD");
  CHECK(found[1].spec.url == "http://am2:9093/prefix/api/v2/alerts");
  CHECK(found[1].spec.labels.get("dc") == "east");
  CHECK(found[1].spec.labels.get("file") == "am.json");
  CHECK_FALSE(found[1].spec.labels.contains("__meta_filepath"));

  Rig rig;
  auto list = rig.pool.update(*state, found, errors);
  CHECK(errors.empty());
  REQUIRE(list.size() == 2);
  CHECK(list[0]->kind() == "static");
  CHECK(list[1]->kind() == "fileSD");
  CHECK(list[1]->target_labels().get("dc") == "east");
  CHECK(list[0]->addr() == "http://am1:9093/prefix/api/v2/alerts");

  for (const auto& n : list) {
    n->send_owned({alert({{"alertname", "A"}, {"severity", "debug"}}),
                   alert({{"alertname", "B"}, {"severity", "page"}})},
                  {}, nullptr);
    n->flush();
  }
  rig.loop.run_ready();
  REQUIRE(rig.transports.size() == 2);
  const auto am1 = body_of(*rig.transports[0]);
  const auto am2 = body_of(*rig.transports[1]);
  INFO(am1);
  INFO(am2);
  // am1: both alerts, each with the global and its group's label.
  CHECK(am1.find("http://am1:9093/prefix/api/v2/alerts ") == 0);
  CHECK(am1.find(R"("alertname":"A")") != std::string::npos);
  CHECK(am1.find(R"("alertname":"B")") != std::string::npos);
  CHECK(am1.find(R"("to":"am1")") != std::string::npos);
  CHECK(am1.find(R"("via":"alertd")") != std::string::npos);
  // am2: the debug alert dropped by the file_sd group's rules; no "to" label.
  CHECK(am2.find(R"("alertname":"A")") == std::string::npos);
  CHECK(am2.find(R"("alertname":"B")") != std::string::npos);
  CHECK(am2.find(R"("to":)") == std::string::npos);
  CHECK(am2.find(R"("via":"alertd")") != std::string::npos);
}

TEST_CASE("notifier config: a refresh keeps the queue of a target that stays",
          "[app][notifier]") {
  TempDir dir;
  const auto sd = dir.write("am.yml", "- targets: [am1:9093, am2:9093]\n");
  const auto cfg = dir.write("notifier.yml", "file_sd_configs:\n  - files: [am.yml]\n");
  auto state = app::load_notifier_state(cfg);
  REQUIRE(state);
  app::FileSdCache cache;
  std::vector<std::string> errors;
  Rig rig;
  auto first = rig.pool.update(*state, app::discover_targets(**state, cache, errors), errors);
  REQUIRE(first.size() == 2);
  // Queued (not flushed) on both.
  for (const auto& n : first) n->send_owned({alert({{"alertname", "Q"}})}, {}, nullptr);
  CHECK(first[0]->stats().queued == 1);

  // am2 goes, am3 comes; a broken file later keeps the last good targets.
  dir.write("am.yml", "- targets: [am1:9093, am3:9093]\n");
  auto second = rig.pool.update(*state, app::discover_targets(**state, cache, errors), errors);
  CHECK(errors.empty());
  REQUIRE(second.size() == 2);
  CHECK(second[0]->addr() == "http://am1:9093/api/v2/alerts");
  CHECK(second[1]->addr() == "http://am3:9093/api/v2/alerts");
  CHECK(second[0]->stats().queued == 1);  // the same queue: the alert is still there
  CHECK(second[1]->stats().queued == 0);
  CHECK(first[1]->stats().dropped == 1);  // am2's queue closed, its alert counted
  CHECK(rig.transports.size() == 3);      // only am3 got a new client

  dir.write("am.yml", "- targets: [am1:9093\n");
  auto third = rig.pool.update(*state, app::discover_targets(**state, cache, errors), errors);
  CHECK(errors.size() == 1);
  CHECK(third.size() == 2);
  CHECK(third[0]->stats().queued == 1);
}

namespace {

// A transport that tells when it is destroyed; the requests go to a FakeTransport the test owns.
class WatchedTransport final : public net::Transport {
 public:
  WatchedTransport(fakes::FakeTransport& inner, bool& destroyed)
      : inner_(inner), destroyed_(destroyed) {}
  ~WatchedTransport() override { destroyed_ = true; }
  void send(net::Request req, net::ResponseHandler done) override {
    inner_.send(std::move(req), std::move(done));
  }
  void close() override { inner_.close(); }

 private:
  fakes::FakeTransport& inner_;
  bool& destroyed_;
};

}  // namespace

TEST_CASE("notifier config: a removed target is freed once its sender has stopped",
          "[app][notifier]") {
  TempDir dir;
  const auto sd = dir.write("am.yml", "- targets: [am1:9093, am2:9093, am3:9093]\n");
  const auto cfg = dir.write("notifier.yml", "file_sd_configs:\n  - files: [am.yml]\n");
  auto state = app::load_notifier_state(cfg);
  REQUIRE(state);
  app::FileSdCache cache;
  std::vector<std::string> errors;
  fakes::ManualLoop loop;
  std::deque<fakes::FakeTransport> fakes_by_target;  // stable addresses
  std::deque<bool> destroyed;
  app::NotifierPool pool{loop, notifier::DeliveryOptions{}, false,
                         [&](const net::TlsOptions&) -> std::unique_ptr<net::Transport> {
                           auto& fake = fakes_by_target.emplace_back();
                           auto& flag = destroyed.emplace_back(false);
                           return std::make_unique<WatchedTransport>(fake, flag);
                         }};
  auto first = pool.update(*state, app::discover_targets(**state, cache, errors), errors);
  REQUIRE(first.size() == 3);
  // am1 and am2 have a POST in flight (not answered yet); am3 has nothing in flight.
  for (size_t i = 0; i < 2; ++i) {
    first[i]->send_owned({alert({{"alertname", "Q"}})}, {}, nullptr);
    first[i]->flush();
  }
  REQUIRE(fakes_by_target[0].pending() == 1);
  REQUIRE(fakes_by_target[1].pending() == 1);

  // am2 and am3 go.
  dir.write("am.yml", "- targets: [am1:9093]\n");
  auto second = pool.update(*state, app::discover_targets(**state, cache, errors), errors);
  first.clear();  // as the NotifierSet drops the old list
  REQUIRE(second.size() == 1);
  CHECK(pool.retired() == 2);
  loop.run_ready();
  // am3's sender had stopped: freed. am2's POST is still in flight: kept.
  CHECK(pool.retired() == 1);
  CHECK(destroyed[2]);
  CHECK_FALSE(destroyed[1]);
  CHECK_FALSE(destroyed[0]);

  // am2's transport answers (canceled, since it was closed): now it goes too.
  CHECK(fakes_by_target[1].complete_all() == 1);
  CHECK(pool.retired() == 1);  // freed on the loop, not inside the transport's callback
  loop.run_ready();
  CHECK(pool.retired() == 0);
  CHECK(destroyed[1]);
  CHECK_FALSE(destroyed[0]);  // am1 stays, its POST still in flight
  CHECK(second[0]->stats().in_flight == 1);
  fakes_by_target[0].complete_all();
  loop.run_ready();
  CHECK(second[0]->stats().in_flight == 0);
  pool.close();
}

TEST_CASE("notifier config: load errors name file, line and column", "[app][notifier]") {
  TempDir dir;
  const auto cfg = dir.write("notifier.yml",
                             "static_configs:\n  - targetz: [am1]\n"
                             "dns_sd_configs:\n  - names: [_am._tcp.example.com]\n");
  auto state = app::load_notifier_state(cfg);
  REQUIRE_FALSE(state);
  CHECK_THAT(state.error().message, Catch::Contains(cfg + ":2:5: "));
  CHECK_THAT(state.error().message, Catch::Contains("unknown field \"targetz\""));
}

TEST_CASE("notifier config: oauth2 puts the token on the target's POSTs", "[app][notifier]") {
  TempDir dir;
  dir.write("secret", "s3cret\n");
  const auto cfg = dir.write("notifier.yml", R"YML(
oauth2:
  client_id: alertd
  client_secret_file: secret
  token_url: http://idp:8080/token
  scopes: [alerts]
static_configs:
  - targets: ["am1:9093"]
)YML");
  auto state = app::load_notifier_state(cfg);
  REQUIRE(state);
  app::FileSdCache cache;
  std::vector<std::string> errors;
  Rig rig;
  auto list = rig.pool.update(*state, app::discover_targets(**state, cache, errors), errors);
  CHECK(errors.empty());
  REQUIRE(list.size() == 1);
  REQUIRE(rig.transports.size() == 1);
  auto& t = *rig.transports[0];
  t.respond_with([](const net::Request& r) -> core::Result<net::Response> {
    if (r.url == "http://idp:8080/token") {
      return net::Response{200, {}, R"({"access_token":"tok","expires_in":3600})"};
    }
    return net::Response{200, {}, ""};
  });
  list[0]->send_owned({alert({{"alertname", "A"}})}, {}, nullptr);
  list[0]->flush();
  rig.loop.run_ready();
  t.complete_all();
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[0].url == "http://idp:8080/token");
  CHECK(t.requests[0].body == "grant_type=client_credentials&scope=alerts");
  CHECK(t.requests[1].url == "http://am1:9093/api/v2/alerts");
  bool bearer = false;
  for (const auto& [k, v] : t.requests[1].headers) bearer = bearer || (k == "Authorization" && v == "Bearer tok");
  CHECK(bearer);
  CHECK(list[0]->stats().queued == 0);
}

TEST_CASE("notifier config: consul, MX and oauth2 load; the parts not supported are refused",
          "[app][notifier]") {
  TempDir dir;
  const auto good = dir.write("good.yml", R"YML(
consul_sd_configs:
  - server: consul:8500
    services: [alertmanager]
  - server: consul2:8500
    refresh_interval: 7s
    oauth2: {client_id: a, client_secret: b, token_url: "http://idp/token"}
dns_sd_configs:
  - names: [mail.example.com]
    type: MX
oauth2: {client_id: a, client_secret: b, token_url: "http://idp/token"}
)YML");
  app::NotifierStateOptions options;
  options.consul_sd_check_interval = std::chrono::seconds(5);
  auto state = app::load_notifier_state(good, options);
  REQUIRE(state);
  CHECK((*state)->consul_refresh ==
        std::vector<core::Duration>{std::chrono::seconds(5), std::chrono::seconds(7)});
  CHECK((*state)->consul_sd_alert_relabel.size() == 2);

  const auto bad = dir.write("bad.yml", R"YML(
consul_sd_configs:
  - server: consul:8500
    proxy_url: http://proxy:3128
    oauth2:
      client_id: a
      client_secret: b
      token_url: http://idp/token
      proxy_url: http://proxy:3128
oauth2:
  client_id: a
  client_secret: b
  token_url: http://idp/token
  tls_config: {insecure_skip_verify: true}
)YML");
  auto refused = app::load_notifier_state(bad);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains(bad + ": oauth2.tls_config is not supported"));
  CHECK_THAT(refused.error().message,
             Catch::Contains(bad + ":3:5: consul_sd_configs: oauth2.proxy_url is not supported"));
  CHECK_THAT(refused.error().message,
             Catch::Contains(bad + ":3:5: consul_sd_configs: proxy_url is not supported"));
}

TEST_CASE("notifier config: a duplicate target is skipped, its error suppressible",
          "[app][notifier]") {
  TempDir dir;
  dir.write("am.json", R"([{"targets": ["am1:9093", "am2:9093"]}])");
  const auto cfg = dir.write("notifier.yml", R"YML(
static_configs:
  - targets: ["am1:9093"]
file_sd_configs:
  - files: ["am.json"]
)YML");
  for (const bool suppress : {false, true}) {
    INFO("suppress " << suppress);
    app::NotifierStateOptions options;
    options.suppress_duplicate_target_errors = suppress;
    auto state = app::load_notifier_state(cfg, options);
    REQUIRE(state);
    app::FileSdCache cache;
    std::vector<std::string> errors;
    auto found = app::discover_targets(**state, cache, errors);
    REQUIRE(found.size() == 2);  // am1 once (the static one), am2
    CHECK(found[0].kind == "static");
    CHECK(found[1].spec.url == "http://am2:9093/api/v2/alerts");
    if (suppress) {
      CHECK(errors.empty());
    } else {
      REQUIRE(errors.size() == 1);
      CHECK(errors[0] ==
            R"(skipping duplicate target with identical address "http://am1:9093/api/v2/alerts")");
    }
  }
}
