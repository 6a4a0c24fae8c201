// AlertmanagerClient against a loopback fake Alertmanager (net::HttpServer on port 0).
#include <utility>  // before Asio: Boost 1.74 needs std::exchange

#include <boost/asio/io_context.hpp>

#include "notifier/alertmanager_client.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "net/url.hpp"
#include "notifier/alertmanager_payload.hpp"

namespace {

using namespace std::chrono_literals;

struct FakeAlertmanager {
  explicit FakeAlertmanager(boost::asio::io_context& ioc)
      : server(ioc, [this](const net::ServerRequest& r) {
          requests.push_back(r);
          return response;
        }) {
    auto ok = server.listen("127.0.0.1:0");
    REQUIRE(ok);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server.port()); }

  net::ServerResponse response;
  std::vector<net::ServerRequest> requests;
  net::HttpServer server;
};

std::optional<std::string> header(const net::ServerRequest& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k.size() == name.size() &&
        std::equal(k.begin(), k.end(), name.begin(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
      return v;
  }
  return std::nullopt;
}

std::vector<notifier::Alert> two_alerts() {
  notifier::Alert a;
  a.labels = core::Labels{{"alertname", "A"}, {"instance", "x"}};
  a.annotations = core::Labels{{"summary", "s"}};
  a.starts_at = core::from_unix_ms(1'700'000'000'000);
  a.ends_at = core::from_unix_ms(1'700'000'060'000);
  a.generator_url = "http://vm/vmalert/alert?group_id=1&alert_id=2";
  notifier::Alert b = a;
  b.labels.set("instance", "y");
  return {a, b};
}

// Sends and runs the io_context until the callback ran.
std::optional<core::Error> send_and_wait(boost::asio::io_context& ioc, notifier::Notifier& n,
                                         const std::vector<notifier::Alert>& alerts,
                                         const std::vector<std::pair<std::string, std::string>>& hdrs = {}) {
  bool done = false;
  std::optional<core::Error> result;
  n.send(alerts, hdrs, [&](std::optional<core::Error> e) {
    result = std::move(e);
    done = true;
  });
  ioc.restart();
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  while (!done && std::chrono::steady_clock::now() < deadline) ioc.run_for(50ms);
  REQUIRE(done);
  return result;
}

}  // namespace

TEST_CASE("client: POSTs the payload with headers and auth", "[notifier][client]") {
  boost::asio::io_context ioc;
  FakeAlertmanager am(ioc);
  net::HttpClient http(ioc, {});
  notifier::AlertmanagerTarget target;
  target.url = am.url() + "/";
  target.basic_auth_username = "user";
  target.basic_auth_password = "pass";
  target.headers = {{"X-Scope", "configured"}, {"X-Other", "o"}};
  notifier::AlertmanagerClient client(http, target);
  CHECK(client.addr() == am.url() + "/api/v2/alerts");

  const auto alerts = two_alerts();
  auto err = send_and_wait(ioc, client, alerts, {{"x-scope", "group"}});
  CHECK_FALSE(err);
  REQUIRE(am.requests.size() == 1);
  const auto& r = am.requests[0];
  CHECK(r.method == "POST");
  CHECK(r.target == "/api/v2/alerts");
  CHECK(header(r, "Content-Type") == "application/json");
  CHECK(header(r, "Authorization") == "Basic dXNlcjpwYXNz");
  CHECK(header(r, "X-Scope") == "group");  // group notifier_headers win
  CHECK(header(r, "X-Other") == "o");
  std::string want;
  notifier::encode_alerts(alerts, want);
  CHECK(r.body == want);
  auto st = client.stats();
  CHECK(st.sent == 2);
  CHECK(st.errors == 0);
  CHECK(st.last_error.empty());
  http.close();
  am.server.stop();
}

TEST_CASE("client: non-2xx is an error with the body, any 2xx is success",
          "[notifier][client]") {
  boost::asio::io_context ioc;
  FakeAlertmanager am(ioc);
  net::HttpClient http(ioc, {});
  notifier::AlertmanagerTarget target;
  target.url = am.url();
  target.bearer_token = "tok";
  notifier::AlertmanagerClient client(http, target);

  am.response.status = 500;
  am.response.body = "boom";
  auto err = send_and_wait(ioc, client, two_alerts());
  REQUIRE(err);
  const std::string addr = am.url() + "/api/v2/alerts";
  CHECK(err->message == "failed to send alerts to addr \"" + addr + "\": invalid SC 500 from \"" +
                            addr + "\"; response body: boom");
  REQUIRE(am.requests.size() == 1);
  CHECK(header(am.requests[0], "Authorization") == "Bearer tok");
  auto st = client.stats();
  CHECK(st.sent == 2);
  CHECK(st.errors == 2);
  CHECK(st.last_error == err->message);

  am.response.status = 202;
  am.response.body.clear();
  CHECK_FALSE(send_and_wait(ioc, client, two_alerts()));
  st = client.stats();
  CHECK(st.sent == 4);
  CHECK(st.errors == 2);
  CHECK(st.last_error.empty());
  http.close();
  am.server.stop();
}

TEST_CASE("client: a dead port gives the connection error", "[notifier][client]") {
  boost::asio::io_context ioc;
  std::string dead_url;
  {
    FakeAlertmanager am(ioc);  // bind, learn the port, close it again
    dead_url = am.url();
    am.server.stop();
  }
  ioc.restart();
  ioc.poll();
  net::HttpClient http(ioc, {});
  notifier::AlertmanagerTarget target;
  target.url = dead_url;
  target.timeout = 2s;
  notifier::AlertmanagerClient client(http, target);
  auto err = send_and_wait(ioc, client, two_alerts());
  REQUIRE(err);
  const std::string addr = dead_url + "/api/v2/alerts";
  const std::string prefix =
      "failed to send alerts to addr \"" + addr + "\": Post \"" + addr + "\": ";
  CHECK(err->message.rfind(prefix, 0) == 0);
  CHECK(err->message.find("Post", prefix.size()) == std::string::npos);  // no doubled prefix
  CHECK(client.stats().last_error == err->message);
  CHECK(client.stats().errors == 2);
  http.close();
}

TEST_CASE("client: an empty batch completes without a request", "[notifier][client]") {
  boost::asio::io_context ioc;
  net::HttpClient http(ioc, {});
  notifier::AlertmanagerClient client(http, {.url = "http://127.0.0.1:1"});
  bool called = false;
  client.send({}, {}, [&](std::optional<core::Error> e) {
    called = true;
    CHECK_FALSE(e);
  });
  CHECK(called);
  CHECK(client.stats().sent == 0);
}

TEST_CASE("blackhole counts and drops", "[notifier][client]") {
  notifier::BlackholeNotifier bh;
  bool called = false;
  const auto alerts = two_alerts();
  bh.send(alerts, {}, [&](std::optional<core::Error> e) {
    called = true;
    CHECK_FALSE(e);
  });
  CHECK(called);
  CHECK(bh.addr() == "blackhole");
  CHECK(bh.stats().sent == 2);
  CHECK(bh.stats().errors == 0);
}

TEST_CASE("alertmanager_post_url puts the path before the query string", "[notifier][client]") {
  struct Case {
    std::string base, want;
  };
  const std::vector<Case> cases = {
      {"http://am:9093", "http://am:9093/api/v2/alerts"},
      {"http://am:9093/", "http://am:9093/api/v2/alerts"},
      {"http://am:9093/prefix//", "http://am:9093/prefix/api/v2/alerts"},
      {"http://am/prefix?tenant=a&x=1", "http://am/prefix/api/v2/alerts?tenant=a&x=1"},
      {"http://am/?token=s", "http://am/api/v2/alerts?token=s"},
      {"http://am?token=s", "http://am/api/v2/alerts?token=s"},
      {"http://am/p#frag", "http://am/p/api/v2/alerts"},
      {"https://u:p@am/p?a=b#f", "https://u:p@am/p/api/v2/alerts?a=b"},
  };
  for (const auto& c : cases) {
    INFO(c.base);
    CHECK(notifier::alertmanager_post_url(c.base) == c.want);
  }
}

TEST_CASE("client: the URL's secrets stay out of addr, errors and lastError",
          "[notifier][client]") {
  boost::asio::io_context ioc;
  FakeAlertmanager am(ioc);
  am.response.status = 500;
  am.response.body = "boom";
  net::HttpClient http(ioc, {});
  const std::string hostport = am.url().substr(std::string("http://").size());
  notifier::AlertmanagerTarget target;
  target.url = "http://alice:s3cr%2Bt+x@" + hostport + "/am/?authKey=k1&tenant=t1";
  notifier::AlertmanagerClient client(http, target);
  const std::string shown = am.url() + "/am/api/v2/alerts?authKey=secret&tenant=t1";
  CHECK(client.addr() == shown);

  auto err = send_and_wait(ioc, client, two_alerts());
  REQUIRE(err);
  CHECK(err->message == "failed to send alerts to addr \"" + shown + "\": invalid SC 500 from \"" +
                            shown + "\"; response body: boom");
  CHECK(client.stats().last_error == err->message);
  for (const std::string& text : {err->message, client.addr()}) {
    CHECK(text.find("alice") == std::string::npos);
    CHECK(text.find("s3cr") == std::string::npos);
    CHECK(text.find("k1") == std::string::npos);
  }
  // What was sent: the real query string after the path, the userinfo as basic auth, decoded
  // as Go does ('+' stays '+', %2B is '+').
  REQUIRE(am.requests.size() == 1);
  CHECK(am.requests[0].target == "/am/api/v2/alerts?authKey=k1&tenant=t1");
  CHECK(header(am.requests[0], "Authorization") ==
        "Basic " + net::base64_encode("alice:s3cr+t+x"));
  http.close();
  am.server.stop();
}

TEST_CASE("client: -notifier.showURL shows the whole URL", "[notifier][client]") {
  boost::asio::io_context ioc;
  net::HttpClient http(ioc, {});
  notifier::AlertmanagerClient client(
      http, {.url = "http://u:p@am:9093/?token=t", .show_url = true});
  CHECK(client.addr() == "http://u:p@am:9093/api/v2/alerts?token=t");
}

TEST_CASE("client: a transport error names the redacted URL", "[notifier][client]") {
  boost::asio::io_context ioc;
  std::string dead_url;
  {
    FakeAlertmanager am(ioc);
    dead_url = am.url();
    am.server.stop();
  }
  ioc.restart();
  ioc.poll();
  net::HttpClient http(ioc, {});
  const std::string hostport = dead_url.substr(std::string("http://").size());
  notifier::AlertmanagerClient client(
      http, {.url = "http://u:pw@" + hostport + "?api_key=zz", .timeout = 2s});
  auto err = send_and_wait(ioc, client, two_alerts());
  REQUIRE(err);
  const std::string addr = dead_url + "/api/v2/alerts?api_key=secret";
  CHECK(err->message.rfind(
            "failed to send alerts to addr \"" + addr + "\": Post \"" + addr + "\": ", 0) == 0);
  CHECK(err->message.find("pw") == std::string::npos);
  CHECK(err->message.find("zz") == std::string::npos);
  http.close();
}

TEST_CASE("client: a huge error body is clipped", "[notifier][client]") {
  boost::asio::io_context ioc;
  FakeAlertmanager am(ioc);
  am.response.status = 503;
  am.response.body = std::string(100'000, 'x');
  net::HttpClient http(ioc, {});
  notifier::AlertmanagerClient client(http, {.url = am.url()});
  auto err = send_and_wait(ioc, client, two_alerts());
  REQUIRE(err);
  CHECK(err->message.size() < core::kMaxErrorBody + 300);
  CHECK(err->message.find("more bytes") != std::string::npos);
  http.close();
  am.server.stop();
}
