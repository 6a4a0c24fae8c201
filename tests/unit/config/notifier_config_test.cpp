// Notifier config file (-notifier.config) and file_sd target files: every field, defaults,
// vmalert's testdata shapes, every validation with its file:line:column, env expansion.
#include "config/notifier_config.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

using namespace std::chrono_literals;

namespace {

config::NotifierConfigOptions options(std::map<std::string, std::string> env = {}) {
  config::NotifierConfigOptions o;
  o.env = [env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  // Stands in for notifier::check_relabel_config: rejects an unbalanced '('.
  o.check_relabel = [](const core::RelabelConfig& c) -> std::optional<core::Error> {
    const auto re = c.regex_or_default();
    if (std::count(re.begin(), re.end(), '(') != std::count(re.begin(), re.end(), ')')) {
      return core::Error{"error parsing regexp: missing closing )", core::ErrorKind::bad_config};
    }
    return std::nullopt;
  };
  return o;
}

config::NotifierConfigResult parse(const std::string& text,
                                   const config::NotifierConfigOptions& o = options()) {
  return config::parse_notifier_config_text(text, "/etc/alertd/notifier.yml", o);
}

std::string all_errors(const config::NotifierConfigResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e.message + "\n";
  return out;
}

}  // namespace

TEST_CASE("notifier config: every field is read", "[config][notifier_config]") {
  const auto r = parse(R"(scheme: https
path_prefix: /am
timeout: 5s
basic_auth:
  username: alice
  password_file: secrets/am-pass
tls_config:
  ca_file: /etc/ssl/ca.pem
  cert_file: client.pem
  key_file: client.key
  server_name: am.example.com
  insecure_skip_verify: true
  min_version: TLS12
headers:
  - "X-Scope-OrgID: team-a"
  - "X-Extra:  spaced value "
static_configs:
  - targets: [am1:9093, "https://am2.example.com/prefix"]
    bearer_token: s3cret
    alert_relabel_configs:
      - source_labels: [env]
        regex: static
        action: keep
  - targets: [am3:9093]
file_sd_configs:
  - files: [targets/*.json, /abs/am.yml]
    refresh_interval: 1m
dns_sd_configs:
  - names: [_alertmanager._tcp.example.com]
  - names: [am.example.com]
    type: a
    port: 9093
    refresh_interval: 10s
    alert_relabel_configs:
      - target_label: via
        replacement: dns
consul_sd_configs:
  - server: consul:8500
    token: tok
    datacenter: dc1
    namespace: ns
    partition: p1
    scheme: https
    services: [alertmanager]
    tags: [prod, eu]
    node_meta:
      rack: r1
    tag_separator: ";"
    allow_stale: false
    filter: 'Service.Tags contains "x"'
    username: cu
    password: cp
    proxy_url: http://proxy:3128
    authorization:
      credentials: abc
    tls_config:
      insecure_skip_verify: true
relabel_configs:
  - source_labels: [__meta_consul_tags]
    regex: .*,__scheme__=([^,]+),.*
    replacement: '${1}'
    target_label: __scheme__
alert_relabel_configs:
  - action: labeldrop
    regex: "tmp_.*"
  - action: HashMod
    source_labels: [alertname]
    modulus: 4
    target_label: shard
)");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  const config::NotifierConfig& c = *r.config;
  CHECK(c.file == "/etc/alertd/notifier.yml");
  CHECK(c.scheme == "https");
  CHECK(c.path_prefix == "/am");
  CHECK(c.timeout == 5s);
  REQUIRE(c.http.basic_auth);
  CHECK(c.http.basic_auth->username == "alice");
  CHECK(c.http.basic_auth->password_file == "/etc/alertd/secrets/am-pass");  // relative to the file
  REQUIRE(c.http.tls_config);
  CHECK(c.http.tls_config->ca_file == "/etc/ssl/ca.pem");
  CHECK(c.http.tls_config->cert_file == "/etc/alertd/client.pem");
  CHECK(c.http.tls_config->key_file == "/etc/alertd/client.key");
  CHECK(c.http.tls_config->server_name == "am.example.com");
  CHECK(c.http.tls_config->insecure_skip_verify);
  CHECK(c.http.tls_config->min_version == "TLS12");
  using H = std::vector<std::pair<std::string, std::string>>;
  CHECK(c.http.headers == H{{"X-Scope-OrgID", "team-a"}, {"X-Extra", "spaced value"}});

  REQUIRE(c.static_configs.size() == 2);
  CHECK(c.static_configs[0].targets ==
        std::vector<std::string>{"am1:9093", "https://am2.example.com/prefix"});
  CHECK(c.static_configs[0].http.bearer_token == "s3cret");
  REQUIRE(c.static_configs[0].alert_relabel_configs.size() == 1);
  CHECK(c.static_configs[0].alert_relabel_configs[0].action == core::RelabelAction::keep);
  CHECK(c.static_configs[0].alert_relabel_configs[0].regex == "static");
  CHECK(c.static_configs[0].pos.line == 18);
  CHECK(c.static_configs[1].http.empty());  // falls back to the top-level auth

  REQUIRE(c.file_sd_configs.size() == 1);
  CHECK(c.file_sd_configs[0].files ==
        std::vector<std::string>{"/etc/alertd/targets/*.json", "/abs/am.yml"});
  CHECK(c.file_sd_configs[0].refresh_interval == 1min);

  REQUIRE(c.dns_sd_configs.size() == 2);
  CHECK(c.dns_sd_configs[0].type == config::DnsRecordType::srv);
  CHECK_FALSE(c.dns_sd_configs[0].port);
  CHECK(c.dns_sd_configs[0].refresh_interval == 30s);
  CHECK(c.dns_sd_configs[1].type == config::DnsRecordType::a);
  CHECK(c.dns_sd_configs[1].port == 9093);
  CHECK(c.dns_sd_configs[1].refresh_interval == 10s);
  REQUIRE(c.dns_sd_configs[1].alert_relabel_configs.size() == 1);
  CHECK(c.dns_sd_configs[1].alert_relabel_configs[0].target_label == "via");

  REQUIRE(c.consul_sd_configs.size() == 1);
  const auto& cs = c.consul_sd_configs[0];
  CHECK(cs.server == "consul:8500");
  CHECK(cs.token == "tok");
  CHECK(cs.datacenter == "dc1");
  CHECK(cs.namespace_ == "ns");
  CHECK(cs.partition == "p1");
  CHECK(cs.scheme == "https");
  CHECK(cs.services == std::vector<std::string>{"alertmanager"});
  CHECK(cs.tags == std::vector<std::string>{"prod", "eu"});
  CHECK(cs.node_meta == H{{"rack", "r1"}});
  CHECK(cs.tag_separator == ";");
  CHECK_FALSE(cs.allow_stale);
  CHECK(cs.filter == "Service.Tags contains \"x\"");
  CHECK(cs.username == "cu");
  CHECK(cs.password == "cp");
  CHECK(cs.proxy_url == "http://proxy:3128");
  REQUIRE(cs.http.authorization);
  CHECK(cs.http.authorization->type == "Bearer");
  CHECK(cs.http.authorization->credentials == "abc");
  REQUIRE(cs.http.tls_config);
  CHECK(cs.http.tls_config->insecure_skip_verify);

  REQUIRE(c.relabel_configs.size() == 1);
  CHECK(c.relabel_configs[0].source_labels == std::vector<std::string>{"__meta_consul_tags"});
  CHECK(c.relabel_configs[0].replacement == "${1}");
  CHECK(c.relabel_configs[0].target_label == "__scheme__");
  REQUIRE(c.alert_relabel_configs.size() == 2);
  CHECK(c.alert_relabel_configs[0].action == core::RelabelAction::labeldrop);
  CHECK(c.alert_relabel_configs[1].action == core::RelabelAction::hashmod);
  CHECK(c.alert_relabel_configs[1].modulus == 4);
}

TEST_CASE("notifier config: defaults", "[config][notifier_config]") {
  const auto r = parse("static_configs:\n  - targets: [localhost:9093]\n");
  REQUIRE(r.ok());
  const auto& c = *r.config;
  CHECK(c.scheme == "http");
  CHECK(c.path_prefix.empty());
  CHECK(c.timeout == 10s);
  CHECK(c.http.empty());
  CHECK(c.relabel_configs.empty());
  CHECK(c.alert_relabel_configs.empty());
  // `timeout: 0s` means the default, as in vmalert.
  CHECK(parse("timeout: 0s\n").config->timeout == 10s);
  // An empty file is a valid config with no targets.
  const auto empty = parse("");
  REQUIRE(empty.ok());
  CHECK(empty.config->static_configs.empty());
  // Relabel defaults.
  const auto rl = parse("alert_relabel_configs:\n  - target_label: x\n");
  REQUIRE(rl.ok());
  const auto& rc = rl.config->alert_relabel_configs.at(0);
  CHECK(rc.action == core::RelabelAction::replace);
  CHECK(rc.separator == ";");
  CHECK_FALSE(rc.regex.has_value());
  CHECK(rc.regex_or_default() == "(.*)");
  CHECK(rc.replacement == "$1");
  CHECK_FALSE(rc.source_labels_set);
  // `regex:` with no value is the empty regex (Go's yaml leaves it nil, then Prometheus uses ""),
  // `source_labels:` with no value is unset (labeldrop accepts it).
  const auto nulls = parse(
      "alert_relabel_configs:\n  - action: labeldrop\n    source_labels:\n    regex:\n");
  INFO(all_errors(nulls));
  REQUIRE(nulls.ok());
  CHECK(nulls.config->alert_relabel_configs.at(0).regex == std::optional<std::string>(""));
  CHECK_FALSE(nulls.config->alert_relabel_configs.at(0).source_labels_set);
}

TEST_CASE("notifier config: vmalert's testdata files parse", "[config][notifier_config]") {
  // Shapes of app/vmalert/notifier/testdata/{mixed,consul}.good.yaml.
  const auto r = parse(R"(static_configs:
  - targets:
      - localhost:9093
      - localhost:9095
    alert_relabel_configs:
      - action: keep
        source_labels: [env]
        regex: "static"
consul_sd_configs:
  - server: localhost:8500
    scheme: http
    services:
      - alertmanager
    alert_relabel_configs:
      - action: keep
        source_labels: [env]
        regex: "consul"
  - server: localhost:8500
    services:
      - consul

dns_sd_configs:
  - names:
      - cloudflare.com
    type: 'A'
    port: 9093
    alert_relabel_configs:
      - action: keep
        source_labels: [env]
        regex: "dns"

relabel_configs:
  - source_labels: [__meta_consul_tags]
    regex: .*,__scheme__=([^,]+),.*
    replacement: '${1}'
    target_label: __scheme__
  - source_labels: [__meta_dns_name]
    replacement: '${1}'
    target_label: dns_name
)");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  CHECK(r.config->static_configs.at(0).targets.size() == 2);
  CHECK(r.config->consul_sd_configs.size() == 2);
  CHECK(r.config->consul_sd_configs[1].server == "localhost:8500");
  CHECK(r.config->dns_sd_configs.at(0).port == 9093);
  CHECK(r.config->relabel_configs.size() == 2);
}

TEST_CASE("notifier config: errors carry file:line:column", "[config][notifier_config]") {
  struct Case {
    std::string text;
    std::string error;  // the first error, exactly
  };
  const std::vector<Case> cases = {
      {"static_configs:\n  - targets: [a:1]\n    targetz: [b]\n",
       "/etc/alertd/notifier.yml:3:5: static_configs[0]: unknown field \"targetz\""},
      {"foo: 1\n", "/etc/alertd/notifier.yml:1:1: unknown field \"foo\""},
      {"scheme: ftp\n",
       "/etc/alertd/notifier.yml:1:9: field \"scheme\": unsupported scheme \"ftp\"; want http or "
       "https"},
      {"timeout: 5 seconds\n",
       "/etc/alertd/notifier.yml:1:10: field \"timeout\": "},
      {"static_configs: {a: 1}\n",
       "/etc/alertd/notifier.yml:1:17: field \"static_configs\": expected a list"},
      {"basic_auth:\n  username: u\n  password: p\n  password_file: f\n",
       "/etc/alertd/notifier.yml:2:3: basic_auth: at most one of password and password_file must "
       "be configured"},
      {"bearer_token: a\nbearer_token_file: b\n",
       "/etc/alertd/notifier.yml:1:1: at most one of bearer_token & bearer_token_file must be "
       "configured"},
      {"basic_auth: {username: u}\nbearer_token: t\n",
       "/etc/alertd/notifier.yml:1:1: at most one of basic_auth, authorization, oauth2, "
       "bearer_token & bearer_token_file must be configured"},
      {"authorization:\n  type: Basic\n  credentials: x\n",
       "/etc/alertd/notifier.yml:2:3: authorization: authorization type cannot be set to "
       "\"basic\", use \"basic_auth\" instead"},
      {"tls_config:\n  cert_file: c.pem\n",
       "/etc/alertd/notifier.yml:2:3: tls_config: cert_file and key_file must be set together"},
      {"tls_config:\n  min_version: SSL3\n",
       "/etc/alertd/notifier.yml:2:16: tls_config: field \"min_version\": unknown TLS version "
       "\"SSL3\"; want TLS10, TLS11, TLS12 or TLS13"},
      {"tls_config:\n  verify: false\n",
       "/etc/alertd/notifier.yml:2:3: tls_config: unknown field \"verify\""},
      {"oauth2:\n  client_id: id\n  client_secret: s\n",
       "/etc/alertd/notifier.yml:2:3: oauth2: missing `token_url` option"},
      {"headers: [\"NoColon\"]\n",
       "/etc/alertd/notifier.yml:1:11: field \"headers\": missing ':' in header \"NoColon\"; want "
       "\"Name: value\""},
      {"dns_sd_configs:\n  - names: [x]\n    type: A\n",
       "/etc/alertd/notifier.yml:3:11: dns_sd_configs[0]: a port is required in DNS-SD configs for "
       "all record types except SRV and MX"},
      {"dns_sd_configs:\n  - names: [x]\n    type: TXT\n",
       "/etc/alertd/notifier.yml:3:11: dns_sd_configs[0]: invalid DNS-SD records type \"TXT\"; "
       "want SRV, A, AAAA or MX"},
      {"dns_sd_configs:\n  - type: SRV\n",
       "/etc/alertd/notifier.yml:2:5: dns_sd_configs[0]: DNS-SD config must contain at least one "
       "SRV record name"},
      {"dns_sd_configs:\n  - names: [x]\n    type: A\n    port: 70000\n",
       "/etc/alertd/notifier.yml:3:11: dns_sd_configs[0]: a port is required in DNS-SD configs "
       "for all record types except SRV and MX"},
      {"file_sd_configs:\n  - files: [targets.txt]\n",
       "/etc/alertd/notifier.yml:2:12: file_sd_configs[0]: path name \"targets.txt\" is not valid "
       "for file discovery (want .json, .yml or .yaml)"},
      {"file_sd_configs:\n  - refresh_interval: 1m\n",
       "/etc/alertd/notifier.yml:2:5: file_sd_configs[0]: file service discovery config must "
       "contain at least one path name"},
      {"consul_sd_configs:\n  - server: c:8500\n    scheme: gopher\n",
       "/etc/alertd/notifier.yml:3:13: consul_sd_configs[0]: field \"scheme\": unsupported scheme "
       "\"gopher\"; want http or https"},
      {"consul_sd_configs:\n  - services: [a]\n    tokn: x\n",
       "/etc/alertd/notifier.yml:3:5: consul_sd_configs[0]: unknown field \"tokn\""},
      {"alert_relabel_configs:\n  - action: replace\n    source_labels: [a]\n",
       "/etc/alertd/notifier.yml:2:5: alert_relabel_configs[0]: relabel configuration for replace "
       "action requires 'target_label' value"},
      {"alert_relabel_configs:\n  - action: replace_all\n",
       "/etc/alertd/notifier.yml:2:13: alert_relabel_configs[0]: unknown relabel action "
       "\"replace_all\""},
      {"alert_relabel_configs:\n  - action: drop\n    if: '{a=\"b\"}'\n",
       "/etc/alertd/notifier.yml:3:5: alert_relabel_configs[0]: unknown field \"if\""},
      {"alert_relabel_configs:\n  - action: hashmod\n    target_label: h\n    modulus: -1\n",
       "/etc/alertd/notifier.yml:4:14: alert_relabel_configs[0]: field \"modulus\": cannot parse "
       "\"-1\" as an integer"},
      {"static_configs:\n  - targets: [a]\n    alert_relabel_configs:\n      - action: keep\n"
       "        regex: '(open'\n",
       "/etc/alertd/notifier.yml:5:16: static_configs[0].alert_relabel_configs[0]: error parsing "
       "regexp: missing closing )"},
      {"relabel_configs:\n  - action: labeldrop\n    regex: x\n    source_labels: [a]\n",
       "/etc/alertd/notifier.yml:2:5: relabel_configs[0]: labeldrop action requires only 'regex', "
       "and no other fields"},
      {"scheme: http\nscheme: https\n",
       "/etc/alertd/notifier.yml:2:1: field \"scheme\" is set twice"},
      {"static_configs:\n  - targets: [a\n", "/etc/alertd/notifier.yml:"},  // YAML syntax
      {"- a\n- b\n", "/etc/alertd/notifier.yml:1:1: expected a map"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const auto r = parse(c.text);
    REQUIRE_FALSE(r.ok());
    CHECK_FALSE(r.config.has_value());
    CHECK_THAT(r.errors.front().message, Catch::StartsWith(c.error));
    CHECK(r.errors.front().kind == core::ErrorKind::bad_config);
  }
}

TEST_CASE("notifier config: every error is reported, in file order", "[config][notifier_config]") {
  const auto r = parse(R"(alert_relabel_configs:
  - action: bogus
static_configs:
  - targets: [a:1]
    whatever: 1
scheme: ftp
)");
  REQUIRE(r.errors.size() == 3);
  CHECK_THAT(r.errors[0].message, Catch::StartsWith("/etc/alertd/notifier.yml:2:"));
  CHECK_THAT(r.errors[1].message, Catch::StartsWith("/etc/alertd/notifier.yml:5:"));
  CHECK_THAT(r.errors[2].message, Catch::StartsWith("/etc/alertd/notifier.yml:6:"));
}

TEST_CASE("notifier config: %{ENV} expansion, merge keys, checksum", "[config][notifier_config]") {
  const auto r = parse(R"(x-auth: &auth
  username: "%{AM_USER}"
  password: "%{AM_PASS}"
static_configs:
  - targets: ["%{AM_HOST}:9093"]
    basic_auth:
      <<: *auth
)",
                       options({{"AM_USER", "alice"}, {"AM_PASS", "pw"}, {"AM_HOST", "am1"}}));
  // `x-auth` is not a field: vmalert rejects it too.
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.errors.front().message, Catch::Contains("unknown field \"x-auth\""));

  const auto ok = parse(R"(static_configs:
  - targets: ["%{AM_HOST}:9093"]
    basic_auth: &auth
      username: "%{AM_USER}"
      password: "%{AM_PASS}"
  - targets: [am2:9093]
    basic_auth:
      <<: *auth
      username: bob
)",
                        options({{"AM_USER", "alice"}, {"AM_PASS", "pw"}, {"AM_HOST", "am1"}}));
  INFO(all_errors(ok));
  REQUIRE(ok.ok());
  const auto& sc = ok.config->static_configs;
  CHECK(sc.at(0).targets == std::vector<std::string>{"am1:9093"});
  CHECK(sc.at(0).http.basic_auth->username == "alice");
  CHECK(sc.at(1).http.basic_auth->username == "bob");  // explicit key wins over the merge
  CHECK(sc.at(1).http.basic_auth->password == "pw");

  const auto a = parse("timeout: 1s\n");
  const auto b = parse("timeout: 2s\n");
  CHECK(a.config->checksum != 0);
  CHECK(a.config->checksum == parse("timeout: 1s\n").config->checksum);
  CHECK(a.config->checksum != b.config->checksum);
}

TEST_CASE("notifier config: load from disk", "[config][notifier_config]") {
  const auto dir = std::filesystem::temp_directory_path() / "alertd_notifier_config_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "n.yml").string();
  {
    std::ofstream(path) << "static_configs:\n  - targets: [a:1]\n    bearer_token_file: tok\n";
  }
  const auto r = config::load_notifier_config(path, options());
  INFO(all_errors(r));
  REQUIRE(r.ok());
  CHECK(r.config->static_configs.at(0).http.bearer_token_file == (dir / "tok").string());

  const auto missing = config::load_notifier_config((dir / "nope.yml").string(), options());
  REQUIRE(missing.errors.size() == 1);
  CHECK(missing.errors[0].kind == core::ErrorKind::io);
  CHECK_THAT(missing.errors[0].message, Catch::EndsWith("nope.yml: cannot read: no such file"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("file_sd: JSON and YAML target files", "[config][file_sd]") {
  using TG = config::TargetGroup;
  const auto json = config::parse_file_sd(R"([
  {"targets": ["am1:9093", "am2:9093"], "labels": {"dc": "eu", "team": "sre"}},
  {"targets": ["am3:9093"], "extra": "ignored in JSON, as Prometheus does"}
])",
                                          "targets.json");
  REQUIRE(json.has_value());
  REQUIRE(json->size() == 2);
  CHECK((*json)[0] == TG{{"am1:9093", "am2:9093"}, core::Labels{{"dc", "eu"}, {"team", "sre"}}});
  CHECK((*json)[1] == TG{{"am3:9093"}, {}});

  const auto yaml = config::parse_file_sd("- targets: [am1:9093]\n  labels:\n    dc: us\n",
                                          "targets.yml");
  REQUIRE(yaml.has_value());
  REQUIRE(yaml->size() == 1);
  CHECK((*yaml)[0] == TG{{"am1:9093"}, core::Labels{{"dc", "us"}}});

  const auto empty = config::parse_file_sd("", "targets.yml");
  REQUIRE(empty.has_value());
  CHECK(empty->empty());

  const auto unknown = config::parse_file_sd("- targets: [a]\n  lables: {}\n", "t.yaml");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message == "t.yaml:2:3: [0]: unknown field \"lables\"");

  const auto bad_name = config::parse_file_sd(R"([{"targets": ["a"], "labels": {"a-b": "x"}}])",
                                              "t.json");
  REQUIRE_FALSE(bad_name.has_value());
  CHECK(bad_name.error().message == "t.json:1:31: [0]: \"a-b\" is not a valid label name");

  const auto not_list = config::parse_file_sd(R"({"targets": ["a"]})", "t.json");
  REQUIRE_FALSE(not_list.has_value());
  CHECK(not_list.error().message == "t.json:1:1: expected a list of {targets, labels}");

  const auto syntax = config::parse_file_sd("[{\"targets\": [\"a\"]", "t.json");
  REQUIRE_FALSE(syntax.has_value());
  CHECK_THAT(syntax.error().message, Catch::StartsWith("t.json:"));
  CHECK_THAT(syntax.error().message, Catch::Contains("cannot parse JSON"));
}
