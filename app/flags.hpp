// The command line, with vmalert's flag names and defaults (vmalert.md §8). Both "-flag=value"
// and "--flag=value" work, "-flag value" too; Go-style booleans: "-dryRun", "-dryRun=true",
// "-dryRun=false". Repeatable flags also take comma-separated lists, as vmalert's do.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/time.hpp"

namespace app {

// -PREFIX.oauth2.* of one endpoint (app/oauth2.hpp reads them).
struct OAuth2FlagValues {
  std::string client_id;
  std::string client_secret;
  std::string client_secret_file;
  std::string scopes;           // ';'-separated
  std::string endpoint_params;  // JSON object
  std::string token_url;
};

struct Flags {
  std::vector<std::string> rule;
  std::vector<std::string> rule_templates;
  bool rule_validate_templates = true;
  bool rule_validate_expressions = true;
  core::Duration evaluation_interval = std::chrono::minutes(1);
  core::Duration rule_eval_delay = std::chrono::seconds(30);
  core::Duration rule_resend_delay{0};
  core::Duration rule_max_resolve_duration{0};
  int rule_results_limit = 0;
  int rule_update_entries_limit = 20;
  std::string rule_default_rule_type = "prometheus";
  bool disable_alertgroup_label = false;
  core::Duration group_max_start_delay = std::chrono::minutes(5);
  core::Duration rule_keep_firing_on_error{0};  // alertd: hold firing alerts while queries fail
  std::string state_path;                       // alertd: local alert state file
  core::Duration config_check_interval{0};

  // Datasource.
  std::string datasource_url;
  bool datasource_append_type_prefix = false;
  core::Duration datasource_query_step = std::chrono::minutes(5);
  bool datasource_disable_step_param = false;
  int datasource_round_digits = 0;
  bool datasource_show_url = false;
  std::string datasource_basic_auth_username;
  std::string datasource_basic_auth_password;
  std::string datasource_basic_auth_password_file;
  std::string datasource_bearer_token;
  std::string datasource_bearer_token_file;
  OAuth2FlagValues datasource_oauth2;
  std::string datasource_headers;  // "K: v^^K2: v2"
  std::string datasource_tls_ca_file;
  std::string datasource_tls_cert_file;
  std::string datasource_tls_key_file;
  std::string datasource_tls_server_name;
  bool datasource_tls_insecure_skip_verify = false;
  core::Duration datasource_query_timeout = std::chrono::seconds(30);
  size_t datasource_max_response_size = 256u << 20;
  int datasource_max_concurrent_queries = 0;
  bool datasource_disable_keep_alive = false;
  core::Duration datasource_idle_conn_timeout = std::chrono::seconds(50);
  int datasource_max_idle_connections = 100;

  // Remote read: alert state restore at start (vmalert.md §6).
  std::string remote_read_url;
  core::Duration remote_read_lookback = std::chrono::hours(1);
  std::string remote_read_basic_auth_username;
  std::string remote_read_basic_auth_password;
  std::string remote_read_basic_auth_password_file;
  std::string remote_read_bearer_token;
  std::string remote_read_bearer_token_file;
  OAuth2FlagValues remote_read_oauth2;
  std::string remote_read_headers;
  std::string remote_read_tls_ca_file;
  std::string remote_read_tls_cert_file;
  std::string remote_read_tls_key_file;
  std::string remote_read_tls_server_name;
  bool remote_read_tls_insecure_skip_verify = false;
  bool remote_read_show_url = false;
  bool remote_read_disable_path_append = false;  // -remoteRead.url used as the query endpoint
  core::Duration remote_read_idle_conn_timeout = std::chrono::seconds(50);

  // Remote write: recording results, ALERTS and ALERTS_FOR_STATE (vmalert.md §6).
  std::string remote_write_url;
  bool remote_write_disable_path_append = false;
  core::Duration remote_write_idle_conn_timeout = std::chrono::seconds(50);
  std::string remote_write_basic_auth_username;
  std::string remote_write_basic_auth_password;
  std::string remote_write_basic_auth_password_file;
  std::string remote_write_bearer_token;
  std::string remote_write_bearer_token_file;
  OAuth2FlagValues remote_write_oauth2;
  std::string remote_write_headers;
  std::string remote_write_tls_ca_file;
  std::string remote_write_tls_cert_file;
  std::string remote_write_tls_key_file;
  std::string remote_write_tls_server_name;
  bool remote_write_tls_insecure_skip_verify = false;
  bool remote_write_show_url = false;
  int remote_write_max_queue_size = 100'000;
  int remote_write_max_batch_size = 10'000;
  core::Duration remote_write_flush_interval = std::chrono::seconds(2);
  int remote_write_concurrency = 0;  // 0 = 2 x CPUs, as vmalert
  core::Duration remote_write_retry_min_interval = std::chrono::seconds(1);
  core::Duration remote_write_retry_max_time = std::chrono::seconds(30);
  core::Duration remote_write_send_timeout = std::chrono::seconds(30);

  // Notifier.
  std::vector<std::string> notifier_url;
  bool notifier_blackhole = false;
  std::string notifier_config;  // -notifier.config: targets from a file (app/notifier_discovery)
  std::string notifier_dns_server;  // -notifier.dnsServer (alertd): IPv4:port for dns_sd_configs
  bool notifier_suppress_duplicate_target_errors = false;
  core::Duration promscrape_consul_sd_check_interval = std::chrono::seconds(30);
  core::Duration notifier_send_timeout = std::chrono::seconds(10);
  // Delivery queue per Alertmanager (notifier/delivery_queue.hpp); new in alertd.
  int notifier_max_queue_size = 100'000;
  int notifier_max_batch_size = 1'000;
  int notifier_concurrency = 1;
  core::Duration notifier_retry_min_interval = std::chrono::seconds(1);
  core::Duration notifier_retry_max_interval = std::chrono::seconds(10);
  core::Duration notifier_retry_max_time = std::chrono::minutes(1);
  // Per -notifier.url, index-matched as vmalert's array flags (see optional_arg).
  std::vector<std::string> notifier_basic_auth_username;
  std::vector<std::string> notifier_basic_auth_password;
  std::vector<std::string> notifier_basic_auth_password_file;
  std::vector<std::string> notifier_bearer_token;
  std::vector<std::string> notifier_bearer_token_file;
  std::vector<std::string> notifier_oauth2_client_id;
  std::vector<std::string> notifier_oauth2_client_secret;
  std::vector<std::string> notifier_oauth2_client_secret_file;
  std::vector<std::string> notifier_oauth2_scopes;
  std::vector<std::string> notifier_oauth2_endpoint_params;
  std::vector<std::string> notifier_oauth2_token_url;
  std::vector<std::string> notifier_headers;  // each "K: v^^K2: v2"
  std::vector<std::string> notifier_tls_ca_file;
  std::vector<std::string> notifier_tls_cert_file;
  std::vector<std::string> notifier_tls_key_file;
  std::vector<std::string> notifier_tls_server_name;
  std::vector<bool> notifier_tls_insecure_skip_verify;
  bool notifier_show_url = false;

  // HTTP server and identity.
  // -httpListenAddr, repeatable; empty = ":8880" (see listen_addrs()).
  std::vector<std::string> http_listen_addr;
  std::vector<bool> http_listen_addr_use_proxy_protocol;  // per -httpListenAddr
  std::string external_url;
  std::string external_alert_source;  // -external.alert.source (a template)
  core::Labels external_labels;

  std::string logger_level = "INFO";
  std::string logger_format = "default";
  std::string logger_output = "stderr";
  // -reloadAuthKey: when set, /-/reload needs ?authKey=<it> (see app/auth.hpp).
  std::string reload_auth_key;
  // Replay (backfill) mode, vmalert.md §8.
  std::string replay_time_from;  // RFC 3339; set = replay mode
  std::string replay_time_to;    // RFC 3339; empty = now
  core::Duration replay_rules_delay = std::chrono::seconds(1);
  int replay_max_datapoints = 1000;
  int replay_rule_retry_attempts = 5;
  int replay_rule_evaluation_concurrency = 1;
  bool replay_continue_with_execution_err = false;
  bool replay_disable_progress_bar = false;

  // -pushmetrics.*: /metrics pushed to URLs (app/pushmetrics.hpp). Values checked at parse.
  std::vector<std::string> pushmetrics_url;
  core::Duration pushmetrics_interval = std::chrono::seconds(10);
  std::vector<std::string> pushmetrics_extra_label;  // each `name="value"[,...]`
  std::vector<std::string> pushmetrics_header;       // each "Name: value"
  bool pushmetrics_disable_compression = false;

  bool dry_run = false;
  bool version = false;
  bool help = false;
  bool print_flags_markdown = false;  // hidden: docs/flags.md on stdout

  // HTTP server options (vmalert's lib/httpserver).
  std::string http_auth_username;  // -httpAuth.*: basic auth on everything but health checks
  std::string http_auth_password;
  std::string metrics_auth_key;  // -metricsAuthKey: /metrics needs ?authKey=<it> when set
  std::string flags_auth_key;    // -flagsAuthKey: the same for /flags
  std::string http_path_prefix;  // -http.pathPrefix: every path is served under it
  core::Duration http_max_graceful_shutdown_duration = std::chrono::seconds(7);
  core::Duration http_idle_conn_timeout = std::chrono::minutes(1);  // -http.idleConnTimeout
  core::Duration http_conn_timeout = std::chrono::minutes(2);       // -http.connTimeout
  bool http_disable_response_compression = false;  // -http.disableResponseCompression
  // -tls, -tlsCertFile, -tlsKeyFile, -tlsMinVersion: per -httpListenAddr (optional_arg);
  // -tlsCipherSuites: for every HTTPS address.
  std::vector<bool> tls;
  std::vector<std::string> tls_cert_file;
  std::vector<std::string> tls_key_file;
  std::vector<std::string> tls_min_version;
  std::vector<std::string> tls_cipher_suites;
  std::string pprof_auth_key;  // -pprofAuthKey: /debug/pprof/* needs ?authKey=<it> when set
  core::Duration http_shutdown_delay{0};
  std::string http_header_csp;  // -http.header.*: added to every response when set
  std::string http_header_frame_options;
  std::string http_header_hsts;
  std::string logger_json_fields;  // -loggerJSONFields: "ts:timestamp,msg:message"
  std::string logger_timezone = "UTC";
  bool logger_disable_timestamps = false;
  int logger_errors_per_second_limit = 0;  // -loggerErrorsPerSecondLimit (0 = none)
  int logger_warns_per_second_limit = 0;   // -loggerWarnsPerSecondLimit
  int logger_max_arg_len = 1000;           // -loggerMaxArgLen
  bool envflag_enable = false;
  std::string envflag_prefix;

  // Every flag given, in flag-name order, as "-name=\"value\"" lines the way vmalert's /flags
  // shows them (values of secret flags replaced by "secret").
  std::vector<std::string> set_flags;
  // One line per accepted-but-ignored flag that was set: logged as a warning at start.
  std::vector<std::string> ignored_flag_warnings;
};

struct ParseFlagsResult {
  Flags flags;
  // Go's usage text (flags.help is set by -h and -help): main prints it on stderr and exits 0,
  // as Go's flag package does.
  std::string help_text;
};

// Parses argv. An unknown flag or a bad value is an error whose message names the flag; so is a
// vmalert flag alertd cannot honour yet (-tls, OAuth2, ...) when it is set.
// With -envflag.enable, flags not on the command line are read from the environment through
// `getenv` (vmalert's envflag: -envflag.prefix + the name with '.' and '-' replaced by '_').
[[nodiscard]] core::Result<ParseFlagsResult> parse_flags(
    int argc, const char* const* argv,
    const std::function<const char*(const char*)>& getenv = nullptr);

// docs/flags.md: every flag alertd accepts with its type, default, and whether alertd
// implements it, ignores it with a warning, or refuses it when set. Generated from the same
// definitions the parser uses (`alertd -printFlagsMarkdown`).
[[nodiscard]] std::string flags_markdown();

// The value of an array flag for the i-th -notifier.url, as vmalert's GetOptionalArg: the i-th
// value; past the end, the only value when exactly one was given (it applies to every URL),
// else the zero value.
template <typename T>
[[nodiscard]] T optional_arg(const std::vector<T>& values, size_t i) {
  if (i < values.size()) return values[i];
  if (values.size() == 1) return values.front();
  return T{};
}

// The addresses to serve HTTP on: -httpListenAddr's values, or vmalert's default ":8880".
[[nodiscard]] std::vector<std::string> listen_addrs(const Flags& flags);

// Splits a vmalert array flag value at top-level commas (not inside quotes, [] or {}). Empty
// items are kept ("a,,b" and "a," have three and two items), as Go's flagutil keeps them.
[[nodiscard]] std::vector<std::string> split_array_flag(const std::string& value);

}  // namespace app
