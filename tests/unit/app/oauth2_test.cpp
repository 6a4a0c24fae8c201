// OAuth2 client credentials in front of a transport: the token request, the header on every
// request, caching until expiry, one fetch for concurrent requests, Go's auth-style detection,
// named errors with their kinds; and the -*.oauth2.* flags.
#include "app/oauth2.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "net/url.hpp"
#include "tests/fakes/fake_transport.hpp"

namespace {

using namespace std::chrono_literals;

constexpr const char* kTokenUrl = "http://idp.example/oauth/token";

app::OAuth2Settings settings() {
  app::OAuth2Settings s;
  s.client_id = "alertd id";
  s.client_secret = "s3cret";
  s.token_url = kTokenUrl;
  s.scopes = {"read", "write"};
  s.endpoint_params = {{"audience", "am"}};
  return s;
}

std::string header(const net::Request& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

struct Harness {
  fakes::FakeTransport inner;
  std::chrono::steady_clock::time_point now{};
  app::OAuth2Transport oauth{inner, settings(), [this] { return now; }};
  int token_requests = 0;
  int token_counter = 0;
  // The token endpoint: answers each fetch with a new token "t1", "t2", ...
  std::function<core::Result<net::Response>(const net::Request&)> token_endpoint =
      [this](const net::Request&) -> core::Result<net::Response> {
    return net::Response{200, {{"Content-Type", "application/json"}},
                         R"({"access_token":"t)" + std::to_string(++token_counter) +
                             R"(","token_type":"bearer","expires_in":60})"};
  };
  Harness() {
    inner.respond_with([this](const net::Request& r) -> core::Result<net::Response> {
      if (r.url == kTokenUrl) {
        ++token_requests;
        return token_endpoint(r);
      }
      return net::Response{200, {}, "ok"};
    });
  }
  // Sends a request to the resource server; the result lands in `out`.
  void get(std::optional<core::Result<net::Response>>& out) {
    net::Request r;
    r.url = "http://am.example/api/v2/alerts";
    r.headers.emplace_back("Authorization", "Bearer stale");  // replaced
    oauth.send(std::move(r), [&out](core::Result<net::Response> res) { out = std::move(res); });
  }
  std::vector<net::Request> resource_requests() const {
    std::vector<net::Request> out;
    for (const auto& r : inner.requests) {
      if (r.url != kTokenUrl) out.push_back(r);
    }
    return out;
  }
};

}  // namespace

TEST_CASE("oauth2: the token is fetched once, sent as Bearer and cached", "[oauth2]") {
  Harness h;
  std::optional<core::Result<net::Response>> a, b, c;
  h.get(a);
  h.get(b);  // while the token is being fetched: waits for the same fetch
  REQUIRE(h.inner.requests.size() == 1);
  const auto& token_req = h.inner.requests[0];
  CHECK(token_req.method == "POST");
  CHECK(header(token_req, "Content-Type") == "application/x-www-form-urlencoded");
  // Client id and secret as basic auth, each query-escaped (Go's AuthStyleInHeader).
  CHECK(header(token_req, "Authorization") ==
        "Basic " + net::base64_encode("alertd+id:s3cret"));
  CHECK(token_req.body == "audience=am&grant_type=client_credentials&scope=read+write");
  h.inner.complete_all();
  REQUIRE(a.has_value());
  REQUIRE(a->has_value());
  REQUIRE(b.has_value());
  REQUIRE(b->has_value());
  CHECK(h.token_requests == 1);
  auto sent = h.resource_requests();
  REQUIRE(sent.size() == 2);
  for (const auto& r : sent) {
    CHECK(header(r, "Authorization") == "Bearer t1");
    CHECK(std::count_if(r.headers.begin(), r.headers.end(),
                        [](const auto& kv) { return kv.first == "Authorization"; }) == 1);
  }
  // Cached: 49 s later (expires_in 60, renewed 10 s early) no new fetch.
  h.now += 49s;
  h.get(c);
  h.inner.complete_all();
  CHECK(h.token_requests == 1);
  CHECK(header(h.resource_requests().back(), "Authorization") == "Bearer t1");
}

TEST_CASE("oauth2: an expiring token is fetched again", "[oauth2]") {
  Harness h;
  std::optional<core::Result<net::Response>> a, b;
  h.get(a);
  h.inner.complete_all();
  h.now += 51s;  // within 10 s of expires_in=60
  h.get(b);
  h.inner.complete_all();
  CHECK(h.token_requests == 2);
  REQUIRE(b.has_value());
  REQUIRE(b->has_value());
  CHECK(header(h.resource_requests().back(), "Authorization") == "Bearer t2");
}

TEST_CASE("oauth2: a token without expires_in never expires", "[oauth2]") {
  Harness h;
  h.token_endpoint = [](const net::Request&) -> core::Result<net::Response> {
    return net::Response{200, {}, R"({"access_token":"forever"})"};
  };
  std::optional<core::Result<net::Response>> a, b;
  h.get(a);
  h.inner.complete_all();
  h.now += 24h * 365;
  h.get(b);
  h.inner.complete_all();
  CHECK(h.token_requests == 1);
  CHECK(header(h.resource_requests().back(), "Authorization") == "Bearer forever");
}

TEST_CASE("oauth2: a server refusing basic auth gets the credentials in the form", "[oauth2]") {
  Harness h;
  std::vector<std::string> bodies;
  h.token_endpoint = [&](const net::Request& r) -> core::Result<net::Response> {
    bodies.push_back(r.body);
    if (!header(r, "Authorization").empty()) return net::Response{401, {}, "invalid_client"};
    return net::Response{200, {{"Content-Type", "application/x-www-form-urlencoded"}},
                         "access_token=form-token&token_type=mac&expires_in=5"};
  };
  std::optional<core::Result<net::Response>> a, b;
  h.get(a);
  h.inner.complete_all();
  REQUIRE(a.has_value());
  REQUIRE(a->has_value());
  REQUIRE(bodies.size() == 2);
  CHECK(bodies[1] ==
        "audience=am&client_id=alertd+id&client_secret=s3cret&grant_type=client_credentials&"
        "scope=read+write");
  CHECK(header(h.resource_requests().back(), "Authorization") == "MAC form-token");
  // Remembered: the next fetch (expires_in 5 < 10 s margin) goes straight to the form.
  h.get(b);
  h.inner.complete_all();
  CHECK(bodies.size() == 3);
  CHECK(bodies[2].find("client_secret=") != std::string::npos);
}

TEST_CASE("oauth2: failures are named and keep their kind", "[oauth2]") {
  Harness h;
  SECTION("the token endpoint answers 503 (both auth styles)") {
    h.token_endpoint = [](const net::Request&) -> core::Result<net::Response> {
      return net::Response{503, {}, "down"};
    };
    std::optional<core::Result<net::Response>> a;
    h.get(a);
    h.inner.complete_all();
    REQUIRE(a.has_value());
    REQUIRE_FALSE(a->has_value());
    CHECK(a->error().kind == core::ErrorKind::http_status);
    CHECK(a->error().http_status == 503);
    CHECK(a->error().message ==
          "oauth2: cannot fetch token from \"http://idp.example/oauth/token\": unexpected status "
          "503: down");
    CHECK(h.resource_requests().empty());
    // The next request tries again.
    h.token_endpoint = [](const net::Request&) -> core::Result<net::Response> {
      return net::Response{200, {}, R"({"access_token":"ok"})"};
    };
    std::optional<core::Result<net::Response>> b;
    h.get(b);
    h.inner.complete_all();
    REQUIRE(b.has_value());
    CHECK(b->has_value());
  }
  SECTION("the token endpoint cannot be reached") {
    h.token_endpoint = [](const net::Request&) -> core::Result<net::Response> {
      return core::fail("connection refused", core::ErrorKind::connection);
    };
    std::optional<core::Result<net::Response>> a;
    h.get(a);
    h.inner.complete_all();
    REQUIRE(a.has_value());
    REQUIRE_FALSE(a->has_value());
    CHECK(a->error().kind == core::ErrorKind::connection);
    CHECK(a->error().message.starts_with("oauth2: cannot fetch token from"));
  }
  SECTION("the answer has no access_token") {
    h.token_endpoint = [](const net::Request&) -> core::Result<net::Response> {
      return net::Response{200, {}, R"({"token_type":"bearer"})"};
    };
    std::optional<core::Result<net::Response>> a;
    h.get(a);
    h.inner.complete_all();
    REQUIRE(a.has_value());
    REQUIRE_FALSE(a->has_value());
    CHECK(a->error().kind == core::ErrorKind::bad_response);
    CHECK(a->error().message.ends_with("server response missing access_token"));
  }
  SECTION("close fails the requests waiting for a token") {
    std::optional<core::Result<net::Response>> a;
    h.get(a);
    h.oauth.close();
    REQUIRE(a.has_value());
    REQUIRE_FALSE(a->has_value());
    CHECK(a->error().kind == core::ErrorKind::canceled);
  }
}

TEST_CASE("oauth2: token answers", "[oauth2]") {
  auto t = app::parse_oauth2_token(R"({"access_token":"a","expires_in":"120"})", "");
  REQUIRE(t.has_value());
  CHECK(t->type == "Bearer");
  CHECK(t->expires_in == std::chrono::seconds(120));
  t = app::parse_oauth2_token(R"({"access_token":"a","token_type":"DPoP","expires_in":0})",
                              "application/json; charset=utf-8");
  REQUIRE(t.has_value());
  CHECK(t->type == "DPoP");
  CHECK_FALSE(t->expires_in);
  t = app::parse_oauth2_token("access_token=x%2By&token_type=bearer", "text/plain; charset=utf-8");
  REQUIRE(t.has_value());
  CHECK(t->access_token == "x+y");
  CHECK_FALSE(app::parse_oauth2_token("not json", "application/json").has_value());
}

TEST_CASE("oauth2: flags", "[oauth2]") {
  app::OAuth2Flags f;
  f.prefix = "-datasource.oauth2";
  auto none = app::oauth2_from_flags(f);
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());

  f.client_id = "id";
  f.client_secret = "s";
  f.token_url = kTokenUrl;
  f.scopes = "a;b;;c";
  f.endpoint_params = R"({"resource":"r","audience":"x"})";
  auto s = app::oauth2_from_flags(f);
  REQUIRE(s.has_value());
  REQUIRE(s->has_value());
  CHECK((*s)->scopes == std::vector<std::string>{"a", "b", "c"});
  CHECK((*s)->endpoint_params ==
        std::vector<std::pair<std::string, std::string>>{{"audience", "x"}, {"resource", "r"}});

  struct Case {
    std::function<void(app::OAuth2Flags&)> change;
    std::string error;
  };
  for (const auto& c : std::vector<Case>{
           {[](auto& g) { g.token_url.clear(); }, "-datasource.oauth2.tokenUrl is not set"},
           {[](auto& g) { g.client_id.clear(); }, "-datasource.oauth2.clientID is not set"},
           {[](auto& g) { g.client_secret_file = "/nonexistent"; },
            "-datasource.oauth2.clientSecret and -datasource.oauth2.clientSecretFile are both set"},
           {[](auto& g) { g.endpoint_params = "[1]"; },
            "-datasource.oauth2.endpointParams: want a JSON object of strings, e.g. "
            "{\"audience\":\"x\"}"},
           {[](auto& g) { g.endpoint_params = R"({"a":1})"; },
            "-datasource.oauth2.endpointParams: the value of \"a\" is not a string"},
       }) {
    app::OAuth2Flags g = f;
    c.change(g);
    auto r = app::oauth2_from_flags(g);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message == c.error);
    CHECK(r.error().kind == core::ErrorKind::bad_config);
  }
}
