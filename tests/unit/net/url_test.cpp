#include "net/url.hpp"

#include <catch2/catch.hpp>

TEST_CASE("parse_url splits scheme, host, port and target", "[net][url]") {
  struct Case {
    const char* url;
    const char* scheme;
    const char* host;
    uint16_t port;
    const char* target;
    const char* userinfo;
  };
  const std::vector<Case> cases = {
      {"http://127.0.0.1:8428", "http", "127.0.0.1", 8428, "/", ""},
      {"http://vm/api/v1/query?query=up", "http", "vm", 80, "/api/v1/query?query=up", ""},
      {"https://vm.example.com/x", "https", "vm.example.com", 443, "/x", ""},
      {"HTTPS://vm:8443?a=b#frag", "https", "vm", 8443, "/?a=b", ""},
      {"http://[::1]:9090/p", "http", "::1", 9090, "/p", ""},
      {"http://[::1]/p", "http", "::1", 80, "/p", ""},
      {"http://user:p%40ss@h:1/", "http", "h", 1, "/", "user:p%40ss"},
  };
  for (const auto& c : cases) {
    INFO(c.url);
    auto u = net::parse_url(c.url);
    REQUIRE(u.has_value());
    CHECK(u->scheme == c.scheme);
    CHECK(u->host == c.host);
    CHECK(u->port == c.port);
    CHECK(u->target == c.target);
    CHECK(u->userinfo == c.userinfo);
  }
}

TEST_CASE("parse_url rejects bad URLs without printing credentials", "[net][url]") {
  struct Case {
    const char* url;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"127.0.0.1:8428", "missing scheme"},
      {"ftp://h/", "unsupported scheme \"ftp\""},
      {"http://user:secret@:80/", "missing host"},
      {"http://user:secret@h:99999/", "invalid port \"99999\""},
      {"http://[::1:80/", "missing ']'"},
  };
  for (const auto& c : cases) {
    INFO(c.url);
    auto u = net::parse_url(c.url);
    REQUIRE_FALSE(u.has_value());
    CHECK_THAT(u.error().message, Catch::Contains(c.error));
    CHECK_THAT(u.error().message, !Catch::Contains("secret"));
  }
}

TEST_CASE("redact_url drops userinfo only", "[net][url]") {
  CHECK(net::redact_url("http://u:p@h:1/x?y=1") == "http://h:1/x?y=1");
  CHECK(net::redact_url("https://h/x?a=u:p@b") == "https://h/x?a=u:p@b");
  CHECK(net::redact_url("http://h") == "http://h");
}

TEST_CASE("query_escape matches Go's url.QueryEscape", "[net][url]") {
  CHECK(net::query_escape("sum(rate(x{a=\"b c\"}[5m]))") ==
        "sum%28rate%28x%7Ba%3D%22b+c%22%7D%5B5m%5D%29%29");
  CHECK(net::query_escape("2026-12-02T10:46:15Z") == "2026-12-02T10%3A46%3A15Z");
  CHECK(net::query_unescape("a+b%3Dc%zz") == "a b=c%zz");
}

TEST_CASE("base64_encode pads like RFC 4648", "[net][url]") {
  CHECK(net::base64_encode("") == "");
  CHECK(net::base64_encode("f") == "Zg==");
  CHECK(net::base64_encode("fo") == "Zm8=");
  CHECK(net::base64_encode("foo") == "Zm9v");
  CHECK(net::base64_encode("user:pass") == "dXNlcjpwYXNz");
}
