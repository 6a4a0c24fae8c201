// The notifier config file (`-notifier.config`, vmalert's notifier/config.go) and file_sd target
// files: YAML -> plain model. Nothing here connects, resolves or reads secrets; app/ and
// notifier/ turn the model into targets (a later step).
//
// Contract: parsing never throws and reports every problem it finds, each as one core::Error
// (kind bad_config, or io for an unreadable file) whose message reads `file:line:column: where:
// what` (`where` is e.g. `static_configs[0].basic_auth`). Unknown fields are errors, as vmalert's
// strict decoding makes them. `%{NAME}` is expanded before parsing, as in rule files. Relative
// file paths (password_file, bearer_token_file, credentials_file, tls_config files,
// file_sd_configs files) are made relative to the config file's directory, as vmalert does.
// Relabel rules are checked with core::validate_relabel_config; regex syntax through the
// check_relabel callback (app/ passes notifier::check_relabel_config; config/ has no regex
// engine).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/loader.hpp"
#include "config/model.hpp"
#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/relabel_config.hpp"
#include "core/time.hpp"

namespace config {

struct BasicAuthConfig {
  std::string username;
  std::string username_file;
  std::string password;
  std::string password_file;
  friend bool operator==(const BasicAuthConfig&, const BasicAuthConfig&) = default;
};

struct AuthorizationConfig {
  std::string type = "Bearer";
  std::string credentials;
  std::string credentials_file;
  friend bool operator==(const AuthorizationConfig&, const AuthorizationConfig&) = default;
};

struct TlsConfig {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string server_name;
  bool insecure_skip_verify = false;
  std::string min_version;  // TLS10..TLS13, empty = library default
  friend bool operator==(const TlsConfig&, const TlsConfig&) = default;
};

struct OAuth2Config {
  std::string client_id;
  std::string client_secret;
  std::string client_secret_file;
  std::vector<std::string> scopes;
  std::string token_url;
  std::vector<std::pair<std::string, std::string>> endpoint_params;  // sorted by name
  std::optional<TlsConfig> tls_config;
  std::string proxy_url;
  friend bool operator==(const OAuth2Config&, const OAuth2Config&) = default;
};

// Prometheus/vmalert's HTTP client config (promauth.HTTPClientConfig), inlined in the top level,
// in each static config and in each consul_sd config.
struct HttpClientConfig {
  std::optional<BasicAuthConfig> basic_auth;
  std::optional<AuthorizationConfig> authorization;
  std::string bearer_token;
  std::string bearer_token_file;
  std::optional<TlsConfig> tls_config;
  std::vector<std::pair<std::string, std::string>> headers;  // "Name: value" entries, in order
  std::optional<OAuth2Config> oauth2;

  // Nothing set: a static config without its own auth uses the top-level one.
  [[nodiscard]] bool empty() const { return *this == HttpClientConfig{}; }
  friend bool operator==(const HttpClientConfig&, const HttpClientConfig&) = default;
};

struct StaticConfig {
  std::vector<std::string> targets;  // host:port or a full URL
  HttpClientConfig http;
  std::vector<core::RelabelConfig> alert_relabel_configs;
  SourcePos pos;
};

struct FileSdConfig {
  std::vector<std::string> files;  // paths or globs (last element only), .json/.yml/.yaml
  core::Duration refresh_interval = std::chrono::minutes{5};
  std::vector<core::RelabelConfig> alert_relabel_configs;
  SourcePos pos;
};

enum class DnsRecordType { srv, a, aaaa, mx };
[[nodiscard]] std::string_view to_string(DnsRecordType t);

struct DnsSdConfig {
  std::vector<std::string> names;
  DnsRecordType type = DnsRecordType::srv;
  std::optional<int> port;  // required for A and AAAA; MX: 25 when unset (vmalert)
  core::Duration refresh_interval = std::chrono::seconds{30};
  std::vector<core::RelabelConfig> alert_relabel_configs;
  SourcePos pos;
};

struct ConsulSdConfig {
  std::string server = "localhost:8500";
  std::string token;
  std::string token_file;
  std::string datacenter;
  std::string namespace_;  // `namespace`
  std::string partition;
  std::string scheme = "http";
  std::string path_prefix;
  std::vector<std::string> services;  // empty: every service
  std::vector<std::string> tags;      // a service must carry all of them
  std::vector<std::pair<std::string, std::string>> node_meta;  // sorted by name
  std::string tag_separator = ",";
  bool allow_stale = true;
  std::string filter;
  std::string username;  // Consul's own basic auth fields (vmalert accepts them too)
  std::string password;
  std::string proxy_url;
  // Unset: -promscrape.consulSDCheckInterval (vmalert has no per-config interval).
  std::optional<core::Duration> refresh_interval;
  HttpClientConfig http;  // for the requests to Consul
  std::vector<core::RelabelConfig> alert_relabel_configs;
  SourcePos pos;
};

struct NotifierConfig {
  std::string file;
  std::string scheme = "http";
  std::string path_prefix;  // put before /api/v2/alerts
  core::Duration timeout = std::chrono::seconds{10};
  HttpClientConfig http;
  std::vector<StaticConfig> static_configs;
  std::vector<FileSdConfig> file_sd_configs;
  std::vector<DnsSdConfig> dns_sd_configs;
  std::vector<ConsulSdConfig> consul_sd_configs;
  std::vector<core::RelabelConfig> relabel_configs;        // on discovered targets
  std::vector<core::RelabelConfig> alert_relabel_configs;  // on every alert, before per-target
  // FNV-1a 64 of the expanded file text: reload compares it to skip an unchanged file.
  uint64_t checksum = 0;
};

// Checks one relabel rule beyond core::validate_relabel_config (the regex syntax).
using RelabelCheck = std::function<std::optional<core::Error>(const core::RelabelConfig&)>;

struct NotifierConfigOptions {
  EnvLookup env;               // empty: the process environment
  RelabelCheck check_relabel;  // empty: regexes are not checked here
};

struct NotifierConfigResult {
  std::optional<NotifierConfig> config;  // set exactly when errors is empty
  std::vector<core::Error> errors;
  [[nodiscard]] bool ok() const { return errors.empty(); }
};

// Largest notifier config or file_sd file read.
inline constexpr size_t kMaxNotifierConfigBytes = size_t{16} << 20;

[[nodiscard]] NotifierConfigResult parse_notifier_config_text(std::string_view text,
                                                              const std::string& file,
                                                              const NotifierConfigOptions& options);
[[nodiscard]] NotifierConfigResult load_notifier_config(const std::string& path,
                                                        const NotifierConfigOptions& options);

// One entry of a file_sd file: `{targets: [...], labels: {...}}`.
struct TargetGroup {
  std::vector<std::string> targets;
  core::Labels labels;
  friend bool operator==(const TargetGroup&, const TargetGroup&) = default;
};

// A file_sd file's text; the format follows the name's extension (.json, else YAML). An empty
// file is an empty list. Errors read `file:line:column: what`.
[[nodiscard]] core::Result<std::vector<TargetGroup>> parse_file_sd(std::string_view text,
                                                                   const std::string& file);
[[nodiscard]] core::Result<std::vector<TargetGroup>> load_file_sd(const std::string& path);

}  // namespace config
