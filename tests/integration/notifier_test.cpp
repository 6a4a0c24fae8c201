// Integration: notifier::AlertmanagerClient against a real Alertmanager 0.25 started by
// notifier.sh (URLs in ALERTD_IT_AM_*). Sends alerts, reads them back from GET /api/v2/alerts.
#include <utility>  // before Asio: Boost 1.74 needs std::exchange

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.hpp"
#include "notifier/alertmanager_client.hpp"

namespace {

using namespace std::chrono_literals;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  INFO("environment variable " << name << " (run through tests/integration/notifier.sh)");
  REQUIRE(v != nullptr);
  return v;
}

// Wall clock rounded to whole milliseconds: Alertmanager prints times with millisecond precision.
core::TimePoint now_ms() {
  return core::from_unix_ms(core::unix_ms(std::chrono::time_point_cast<core::Duration>(
      std::chrono::system_clock::now())));
}

// Alertmanager's time format: RFC 3339 with exactly three fraction digits.
std::string am_time(core::TimePoint t) {
  std::string s = core::format_rfc3339_seconds(t);
  s.pop_back();  // 'Z'
  const auto ms = core::unix_ms(t) % 1000;
  s += '.';
  s += static_cast<char>('0' + ms / 100);
  s += static_cast<char>('0' + ms / 10 % 10);
  s += static_cast<char>('0' + ms % 10);
  s += 'Z';
  return s;
}

struct Sender {
  explicit Sender(notifier::AlertmanagerTarget t) : http(ioc, {}), client(http, std::move(t)) {}

  std::optional<core::Error> send(const std::vector<notifier::Alert>& alerts) {
    std::optional<std::optional<core::Error>> got;
    client.send(alerts, {}, [&](std::optional<core::Error> e) { got = std::move(e); });
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (!got && std::chrono::steady_clock::now() < end) {
      if (ioc.stopped()) ioc.restart();
      ioc.run_one_for(10ms);
    }
    REQUIRE(got.has_value());
    return *got;
  }

  boost::asio::io_context ioc;
  net::HttpClient http;
  notifier::AlertmanagerClient client;
};

struct StoredAlert {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string starts_at;
  std::string ends_at;
  std::string state;
};

// GET /api/v2/alerts, keeping the alerts whose alertname is `alertname`, keyed by instance.
std::map<std::string, StoredAlert> stored(const std::string& base, const std::string& alertname,
                                          const std::string& auth = {}) {
  net::Request req;
  req.url = base + "/api/v2/alerts";
  if (!auth.empty()) req.headers.emplace_back("Authorization", auth);
  auto resp = net::fetch_blocking(std::move(req));
  REQUIRE(resp.has_value());
  REQUIRE(resp->status == 200);
  rapidjson::Document doc;
  doc.Parse(resp->body.data(), resp->body.size());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc.IsArray());
  std::map<std::string, StoredAlert> out;
  for (const auto& a : doc.GetArray()) {
    StoredAlert s;
    for (const auto& m : a["labels"].GetObject()) {
      s.labels[m.name.GetString()] = std::string(m.value.GetString(), m.value.GetStringLength());
    }
    if (s.labels["alertname"] != alertname) continue;
    for (const auto& m : a["annotations"].GetObject()) {
      s.annotations[m.name.GetString()] =
          std::string(m.value.GetString(), m.value.GetStringLength());
    }
    s.starts_at = a["startsAt"].GetString();
    s.ends_at = a["endsAt"].GetString();
    s.state = a["status"]["state"].GetString();
    out[s.labels["instance"]] = std::move(s);
  }
  return out;
}

notifier::Alert alert(const std::string& alertname, const std::string& instance,
                      core::TimePoint starts, core::TimePoint ends) {
  notifier::Alert a;
  a.labels = core::Labels{{"alertname", alertname}, {"instance", instance}, {"severity", "page"}};
  a.annotations = core::Labels{{"summary", instance + " is \"hot\" <100°C>\nsecond line"},
                               {"empty", ""}};
  a.starts_at = starts;
  a.ends_at = ends;
  a.generator_url = "http://alertd:8880/vmalert/alert?group_id=1&alert_id=2";
  return a;
}

std::string run_id() {
  return std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

TEST_CASE("Alertmanager stores what the client sends, and drops a resolved alert",
          "[integration][notifier]") {
  const std::string base = env("ALERTD_IT_AM_URL");
  const std::string name = "AlertdNotifierIT" + run_id();
  Sender s({.url = base});
  const auto t0 = now_ms();
  REQUIRE_FALSE(s.send({alert(name, "a:9100", t0 - 1min, t0 + 5min),
                        alert(name, "b:9100", t0 - 2min, t0 + 5min)}));
  CHECK(s.client.stats().sent == 2);
  CHECK(s.client.stats().errors == 0);

  auto got = stored(base, name);
  REQUIRE(got.size() == 2);
  const auto& a = got["a:9100"];
  CHECK(a.labels == std::map<std::string, std::string>{
                        {"alertname", name}, {"instance", "a:9100"}, {"severity", "page"}});
  CHECK(a.annotations.at("summary") == "a:9100 is \"hot\" <100°C>\nsecond line");
  CHECK(a.state == "active");
  CHECK(a.starts_at == am_time(t0 - 1min));
  CHECK(got["b:9100"].starts_at == am_time(t0 - 2min));

  // Resolve b: endsAt in the past. Alertmanager stops listing it.
  REQUIRE_FALSE(s.send({alert(name, "b:9100", t0 - 2min, t0 - 1s)}));
  std::map<std::string, StoredAlert> after;
  for (int i = 0; i < 50; ++i) {
    after = stored(base, name);
    if (after.size() == 1) break;
    std::this_thread::sleep_for(100ms);
  }
  REQUIRE(after.size() == 1);
  CHECK(after.count("a:9100") == 1);
  CHECK(s.client.stats().sent == 3);
}

TEST_CASE("Alertmanager behind basic auth: 401 without, stored with", "[integration][notifier]") {
  const std::string base = env("ALERTD_IT_AM_AUTH_URL");
  const std::string name = "AlertdNotifierAuthIT" + run_id();
  const auto t0 = now_ms();
  {
    Sender anonymous({.url = base});
    auto err = anonymous.send({alert(name, "a:9100", t0, t0 + 5min)});
    REQUIRE(err);
    const std::string addr = base + "/api/v2/alerts";
    CHECK(err->message.rfind("failed to send alerts to addr \"" + addr + "\": invalid SC 401 from \"" +
                                 addr + "\"; response body: ",
                             0) == 0);
    CHECK(anonymous.client.stats().errors == 1);
  }
  Sender s({.url = base,
            .basic_auth_username = env("ALERTD_IT_USER"),
            .basic_auth_password = env("ALERTD_IT_PASSWORD")});
  REQUIRE_FALSE(s.send({alert(name, "a:9100", t0, t0 + 5min)}));
  // "alertd:alertd-it-pass"
  auto got = stored(base, name, "Basic YWxlcnRkOmFsZXJ0ZC1pdC1wYXNz");
  REQUIRE(got.size() == 1);
  CHECK(got.begin()->second.annotations.at("empty").empty());
}

TEST_CASE("a dead Alertmanager port gives the connection error", "[integration][notifier]") {
  Sender s({.url = "http://127.0.0.1:9", .timeout = 3000ms});  // discard port: nothing listens
  auto err = s.send({alert("Dead", "x", now_ms(), now_ms() + 1min)});
  REQUIRE(err);
  CHECK(err->message.rfind(
            "failed to send alerts to addr \"http://127.0.0.1:9/api/v2/alerts\": Post "
            "\"http://127.0.0.1:9/api/v2/alerts\": ",
            0) == 0);
  CHECK(s.client.stats().last_error == err->message);
  CHECK(s.client.stats().errors == 1);
  CHECK(s.client.stats().sent == 1);
}

TEST_CASE("a URL with a query string: the path goes before it, secrets stay hidden",
          "[integration][notifier]") {
  const std::string base = env("ALERTD_IT_AM_URL");
  const std::string name = "AlertdNotifierQueryIT" + run_id();
  // Before: ".../?tenant=a&token=t1/api/v2/alerts" POSTed to "/" and Alertmanager refused it.
  Sender s({.url = base + "/?tenant=a&token=t1"});
  CHECK(s.client.addr() == base + "/api/v2/alerts?tenant=a&token=secret");
  const auto t0 = now_ms();
  REQUIRE_FALSE(s.send({alert(name, "q:9100", t0, t0 + 5min)}));
  CHECK(stored(base, name).size() == 1);
}

TEST_CASE("Alertmanager behind basic auth, credentials in the URL: stored, never shown",
          "[integration][notifier]") {
  const std::string base = env("ALERTD_IT_AM_AUTH_URL");
  const std::string user = env("ALERTD_IT_USER");
  const std::string password = env("ALERTD_IT_PASSWORD");
  const std::string name = "AlertdNotifierUserinfoIT" + run_id();
  const std::string hostport = base.substr(std::string("http://").size());
  const auto t0 = now_ms();
  {
    Sender wrong({.url = "http://" + user + ":wrong-" + password + "@" + hostport});
    auto err = wrong.send({alert(name, "a:9100", t0, t0 + 5min)});
    REQUIRE(err);
    CHECK(err->message.rfind("failed to send alerts to addr \"" + base +
                                 "/api/v2/alerts\": invalid SC 401 from \"" + base +
                                 "/api/v2/alerts\"",
                             0) == 0);
    CHECK(err->message.find(password) == std::string::npos);
    CHECK(wrong.client.stats().last_error.find(password) == std::string::npos);
  }
  Sender s({.url = "http://" + user + ":" + password + "@" + hostport});
  CHECK(s.client.addr() == base + "/api/v2/alerts");
  REQUIRE_FALSE(s.send({alert(name, "a:9100", t0, t0 + 5min)}));
  CHECK(stored(base, name, "Basic YWxlcnRkOmFsZXJ0ZC1pdC1wYXNz").size() == 1);
}
