// consul_sd_configs: Consul's catalog/health JSON -> target groups and meta labels, the request
// paths, and discovery through an injected fetch (no sockets).
#include "app/consul_sd.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace {

// Consul's documented /v1/health/service/<name> shape (trimmed to the fields read).
constexpr const char* kNodes = R"([
  {"Node": {"ID": "a1", "Node": "node-a", "Address": "10.0.0.1", "Datacenter": "dc1",
            "TaggedAddresses": {"lan": "10.0.0.1", "wan": "198.51.100.1"},
            "Meta": {"rack": "r1", "os-name": "linux"}},
   "Service": {"ID": "am-1", "Service": "alertmanager", "Tags": ["prod", "team=infra", "x.y"],
               "Address": "192.0.2.10", "Port": 9093, "Meta": {"version": "0.27"},
               "Namespace": "ns1"},
   "Checks": [{"CheckID": "serfHealth", "Status": "passing"},
              {"CheckID": "service:am-1", "Status": "warning"}]},
  {"Node": {"Node": "node-b", "Address": "2001:db8::2", "Datacenter": "dc1"},
   "Service": {"ID": "am-2", "Service": "alertmanager", "Tags": [], "Address": "", "Port": 9094},
   "Checks": []}
])";

std::map<std::string, std::string> labels_of(const config::TargetGroup& g) {
  std::map<std::string, std::string> out;
  for (const auto& l : g.labels) out.emplace(std::string(l.name), std::string(l.value));
  return out;
}

}  // namespace

TEST_CASE("consul: service nodes map to addresses and Prometheus' meta labels", "[consul]") {
  config::ConsulSdConfig c;
  auto groups = app::parse_consul_service_nodes(kNodes, c);
  REQUIRE(groups.has_value());
  REQUIRE(groups->size() == 2);
  // ServiceAddress when set, else the node's Address (IPv6 in brackets).
  CHECK((*groups)[0].targets == std::vector<std::string>{"192.0.2.10:9093"});
  CHECK((*groups)[1].targets == std::vector<std::string>{"[2001:db8::2]:9094"});

  const auto a = labels_of((*groups)[0]);
  const std::map<std::string, std::string> want = {
      {"__meta_consul_address", "10.0.0.1"},
      {"__meta_consul_dc", "dc1"},
      {"__meta_consul_health", "warning"},
      {"__meta_consul_metadata_os_name", "linux"},
      {"__meta_consul_metadata_rack", "r1"},
      {"__meta_consul_namespace", "ns1"},
      {"__meta_consul_node", "node-a"},
      {"__meta_consul_partition", ""},
      {"__meta_consul_service", "alertmanager"},
      {"__meta_consul_service_address", "192.0.2.10"},
      {"__meta_consul_service_id", "am-1"},
      {"__meta_consul_service_metadata_version", "0.27"},
      {"__meta_consul_service_port", "9093"},
      {"__meta_consul_tag_prod", ""},
      {"__meta_consul_tag_team", "infra"},
      {"__meta_consul_tag_x_y", ""},
      {"__meta_consul_tagged_address_lan", "10.0.0.1"},
      {"__meta_consul_tagged_address_wan", "198.51.100.1"},
      {"__meta_consul_tagpresent_prod", "true"},
      {"__meta_consul_tagpresent_team", "true"},
      {"__meta_consul_tagpresent_x_y", "true"},
      {"__meta_consul_tags", ",prod,team=infra,x.y,"},
  };
  // Labels with an empty value may or may not be stored; compare the non-empty ones exactly.
  std::map<std::string, std::string> got_non_empty, want_non_empty;
  for (const auto& [k, v] : a) if (!v.empty()) got_non_empty.emplace(k, v);
  for (const auto& [k, v] : want) if (!v.empty()) want_non_empty.emplace(k, v);
  CHECK(got_non_empty == want_non_empty);

  const auto b = labels_of((*groups)[1]);
  CHECK(b.at("__meta_consul_tags") == ",,");
  CHECK(b.at("__meta_consul_health") == "passing");  // no checks: passing, as Consul
  CHECK(b.at("__meta_consul_service_port") == "9094");
  CHECK((!b.contains("__meta_consul_service_address") || b.at("__meta_consul_service_address").empty()));
}

TEST_CASE("consul: tag_separator, required tags and health aggregation", "[consul]") {
  config::ConsulSdConfig c;
  c.tag_separator = ";";
  c.tags = {"prod"};
  auto groups = app::parse_consul_service_nodes(kNodes, c);
  REQUIRE(groups.has_value());
  REQUIRE(groups->size() == 1);  // node-b lacks "prod"
  CHECK(labels_of((*groups)[0]).at("__meta_consul_tags") == ";prod;team=infra;x.y;");

  struct Case {
    const char* checks;
    const char* health;
  };
  for (const auto& [checks, health] : std::vector<Case>{
           {R"([{"CheckID":"a","Status":"passing"}])", "passing"},
           {R"([{"CheckID":"a","Status":"passing"},{"CheckID":"b","Status":"critical"}])",
            "critical"},
           {R"([{"CheckID":"_node_maintenance","Status":"critical"}])", "maintenance"},
           {R"([{"CheckID":"_service_maintenance:x","Status":"passing"},{"CheckID":"b","Status":"warning"}])",
            "maintenance"},
           {R"([{"CheckID":"a","Status":"weird"}])", ""},
       }) {
    const std::string body = std::string(R"([{"Node":{"Node":"n","Address":"h"},)") +
                             R"("Service":{"Service":"s","Port":1},"Checks":)" + checks + "}]";
    auto g = app::parse_consul_service_nodes(body, config::ConsulSdConfig{});
    REQUIRE(g.has_value());
    REQUIRE(g->size() == 1);
    const auto l = labels_of((*g)[0]);
    const std::string got = l.contains("__meta_consul_health") ? l.at("__meta_consul_health") : "";
    CHECK(got == health);
  }
}

TEST_CASE("consul: the service list selects by name and tags", "[consul]") {
  const char* body = R"({"consul": [], "alertmanager": ["prod", "eu"], "am-staging": ["eu"],
                         "web": ["prod"]})";
  config::ConsulSdConfig c;
  CHECK(*app::parse_consul_services(body, c) ==
        std::vector<std::string>{"alertmanager", "am-staging", "consul", "web"});
  c.tags = {"prod"};
  CHECK(*app::parse_consul_services(body, c) == std::vector<std::string>{"alertmanager", "web"});
  c.services = {"alertmanager", "am-staging"};
  CHECK(*app::parse_consul_services(body, c) == std::vector<std::string>{"alertmanager"});
  c.tags = {"prod", "eu"};
  c.services.clear();
  CHECK(*app::parse_consul_services(body, c) == std::vector<std::string>{"alertmanager"});
}

TEST_CASE("consul: malformed answers are errors of kind bad_response", "[consul]") {
  config::ConsulSdConfig c;
  for (const char* body : {"", "{", "[1]", R"({"a": 1})", R"([{"Node": {}}])"}) {
    auto r = app::parse_consul_service_nodes(body, c);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == core::ErrorKind::bad_response);
  }
  auto s = app::parse_consul_services("[]", c);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().kind == core::ErrorKind::bad_response);
}

TEST_CASE("consul: request paths carry dc, stale, node-meta, namespace, filter and tags",
          "[consul]") {
  config::ConsulSdConfig c;
  CHECK(app::consul_services_path(c) == "/v1/catalog/services?stale");
  c.allow_stale = false;
  CHECK(app::consul_services_path(c) == "/v1/catalog/services");
  CHECK(app::consul_service_path(c, "a m/1") == "/v1/health/service/a%20m%2F1");
  c.datacenter = "dc 1";
  c.allow_stale = true;
  c.node_meta = {{"rack", "r1"}};
  c.namespace_ = "ns";
  c.partition = "p";
  c.filter = R"(Service.Meta.x == "y")";
  c.tags = {"prod", "a&b"};
  CHECK(app::consul_services_path(c) ==
        "/v1/catalog/services?dc=dc+1&stale&node-meta=rack%3Ar1&ns=ns&partition=p"
        "&filter=Service.Meta.x+%3D%3D+%22y%22");
  CHECK(app::consul_service_path(c, "am") ==
        "/v1/health/service/am?dc=dc+1&stale&node-meta=rack%3Ar1&ns=ns&partition=p"
        "&filter=Service.Meta.x+%3D%3D+%22y%22&tag=prod&tag=a%26b");
}

TEST_CASE("consul: discovery lists the services, then each one's nodes", "[consul]") {
  config::ConsulSdConfig c;
  c.allow_stale = false;
  c.services = {"alertmanager"};
  std::vector<std::string> asked;
  app::ConsulFetch fetch = [&](const std::string& path) -> core::Result<std::string> {
    asked.push_back(path);
    if (path == "/v1/catalog/services") return R"({"alertmanager": ["prod"], "web": []})";
    if (path == "/v1/health/service/alertmanager") return kNodes;
    return core::fail("unexpected " + path);
  };
  auto groups = app::consul_discover(c, fetch);
  REQUIRE(groups.has_value());
  CHECK(groups->size() == 2);
  CHECK(asked == std::vector<std::string>{"/v1/catalog/services", "/v1/health/service/alertmanager"});

  // A failed request fails the whole discovery (the caller keeps the last targets).
  app::ConsulFetch failing = [](const std::string&) -> core::Result<std::string> {
    return core::fail(core::Error{"consul: GET: unexpected status 500", core::ErrorKind::http_status, 500});
  };
  auto failed = app::consul_discover(c, failing);
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().http_status == 500);
}
