// Discovered address + meta labels + relabel_configs -> the URL alerts go to, as vmalert's
// notifier/config.go builds it (scheme and path in the address, path_prefix, missing ports,
// relabeling on __address__/__scheme__/__alerts_path__, meta labels removed).
#include "notifier/target_labels.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using A = core::RelabelAction;

notifier::RelabelRules compile(const std::vector<core::RelabelConfig>& configs) {
  auto r = notifier::RelabelRules::compile(configs);
  REQUIRE(r.has_value());
  return std::move(*r);
}

std::string url_of(std::string_view address, const core::Labels& meta = {},
                   std::string_view scheme = "http", std::string_view prefix = "",
                   const notifier::RelabelRules& rules = notifier::RelabelRules{}) {
  auto t = notifier::build_target(address, meta, scheme, prefix, rules);
  REQUIRE(t.has_value());
  return *t ? (*t)->url : "<none>";
}

}  // namespace

TEST_CASE("target: URL from address, scheme and path prefix", "[notifier][target]") {
  CHECK(url_of("localhost:9093") == "http://localhost:9093/api/v2/alerts");
  CHECK(url_of("am", {}, "https") == "https://am:443/api/v2/alerts");
  CHECK(url_of("am") == "http://am:80/api/v2/alerts");
  CHECK(url_of("am:9093", {}, "http", "am/") == "http://am:9093/am/api/v2/alerts");
  CHECK(url_of("am:9093", {}, "http", "/a//b/./c/../") == "http://am:9093/a/b/api/v2/alerts");
  // A scheme and path in the address win over the config's.
  CHECK(url_of("https://am2.example.com/prefix", {}, "http", "ignored") ==
        "https://am2.example.com:443/prefix");
  CHECK(url_of("http://am:1234") == "http://am:1234/api/v2/alerts");
  CHECK(url_of("[::1]:9093") == "http://[::1]:9093/api/v2/alerts");
}

TEST_CASE("target: relabel_configs on discovered targets", "[notifier][target]") {
  core::RelabelConfig scheme_from_tags;
  scheme_from_tags.source_labels = {"__meta_consul_tags"};
  scheme_from_tags.regex = ".*,__scheme__=([^,]+),.*";
  scheme_from_tags.replacement = "${1}";
  scheme_from_tags.target_label = "__scheme__";
  core::RelabelConfig dns_name;
  dns_name.source_labels = {"__meta_dns_name"};
  dns_name.target_label = "dns_name";
  core::RelabelConfig drop_staging;
  drop_staging.action = A::drop;
  drop_staging.source_labels = {"__meta_consul_dc"};
  drop_staging.regex = "staging";
  core::RelabelConfig path;
  path.target_label = "__alerts_path__";
  path.replacement = "custom/alerts";
  const auto rules = compile({scheme_from_tags, dns_name, drop_staging, path});

  auto t = notifier::build_target(
      "10.0.0.5:9093",
      core::Labels{{"__meta_consul_tags", ",am,__scheme__=https,"},
                   {"__meta_dns_name", "am.service.consul"},
                   {"__meta_consul_dc", "eu"}},
      "http", "", rules);
  REQUIRE(t.has_value());
  REQUIRE(t->has_value());
  CHECK((*t)->url == "https://10.0.0.5:9093/custom/alerts");  // '/' added to the path
  CHECK((*t)->labels == core::Labels{{"__address__", "10.0.0.5:9093"},
                                     {"__alerts_path__", "custom/alerts"},
                                     {"__scheme__", "https"},
                                     {"dns_name", "am.service.consul"}});

  auto dropped = notifier::build_target(
      "10.0.0.6:9093", core::Labels{{"__meta_consul_dc", "staging"}}, "http", "", rules);
  REQUIRE(dropped.has_value());
  CHECK_FALSE(dropped->has_value());

  core::RelabelConfig no_address;
  no_address.action = A::labeldrop;
  no_address.regex = "__address__";
  CHECK(url_of("am:9093", {}, "http", "", compile({no_address})) == "<none>");

  core::RelabelConfig bad;
  bad.target_label = "__address__";
  bad.replacement = "a b";
  auto err = notifier::build_target("am:9093", {}, "http", "", compile({bad}));
  REQUIRE_FALSE(err.has_value());
  CHECK(err.error().message == "invalid address \"a b\" for scheme http (target am:9093)");
}

TEST_CASE("target: Go's path.Join for the alerts path", "[notifier][target]") {
  CHECK(notifier::join_url_path("", notifier::kAlertsPath) == "/api/v2/alerts");
  CHECK(notifier::join_url_path("/", "/api/v2/alerts") == "/api/v2/alerts");
  CHECK(notifier::join_url_path("../x", "y/") == "/x/y");
  CHECK(notifier::join_url_path("", "") == "/");
}
