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
      // Go's url.Parse: a bad escape or a character outside RFC 3986 in the userinfo.
      {"http://user:secret%zz@h/", "invalid userinfo"},
      {"http://user:secret%4@h/", "invalid userinfo"},
      {"http://user:se cret@h/", "invalid userinfo"},
  };
  for (const auto& c : cases) {
    INFO(c.url);
    auto u = net::parse_url(c.url);
    REQUIRE_FALSE(u.has_value());
    CHECK_THAT(u.error().message, Catch::Contains(c.error));
    CHECK_THAT(u.error().message, !Catch::Contains("secret"));
    CHECK(u.error().kind == core::ErrorKind::bad_config);
  }
}

TEST_CASE("userinfo decodes as Go's url.User: '+' stays, %XX decoded, first ':' splits",
          "[net][url]") {
  struct Case {
    const char* userinfo;
    const char* plain;  // what is base64-encoded
  };
  const std::vector<Case> cases = {
      {"user:pass", "user:pass"},
      {"user:p+ss", "user:p+ss"},
      {"user:p%40ss%2Bx", "user:p@ss+x"},
      {"us%3Aer:a:b", "us:er:a:b"},
      {"user", "user:"},
      {"user:", "user:"},
      {":pass", ":pass"},
  };
  for (const auto& c : cases) {
    INFO(c.userinfo);
    CHECK(net::basic_auth_from_userinfo(c.userinfo) == "Basic " + net::base64_encode(c.plain));
  }
}

TEST_CASE("redact_url_secrets hides userinfo and secret-looking query values", "[net][url]") {
  struct Case {
    const char* url;
    const char* shown;
  };
  const std::vector<Case> cases = {
      {"http://u:p@am:9093/api/v2/alerts", "http://am:9093/api/v2/alerts"},
      {"http://am/x?token=abc&a=1", "http://am/x?token=secret&a=1"},
      {"http://am/x?a=1&X-Auth-Key=k1&apiKey&PASSWORD=p#frag",
       "http://am/x?a=1&X-Auth-Key=secret&apiKey&PASSWORD=secret#frag"},
      {"http://am/x?p%61ss=abc", "http://am/x?p%61ss=secret"},
      {"http://am/x?", "http://am/x?"},
      {"http://am/x#a?token=1", "http://am/x#a?token=1"},
      {"http://am", "http://am"},
  };
  for (const auto& c : cases) {
    INFO(c.url);
    CHECK(net::redact_url_secrets(c.url) == c.shown);
  }
  CHECK(net::looks_secret("X-Api-KEY"));
  CHECK(net::looks_secret("bearer_token"));
  CHECK_FALSE(net::looks_secret("extra_label"));
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
