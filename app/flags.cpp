#include "app/flags.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>

#include "app/pushmetrics.hpp"
#include "core/duration.hpp"
#include "net/url.hpp"
#include "templates/go_fmt.hpp"

namespace app {
namespace po = boost::program_options;

namespace {

enum class Kind { string, boolean, duration, integer, size, floating, array, bool_array, labels };

struct FlagDef {
  const char* name;
  Kind kind;
  const char* default_text;  // shown in -help
  const char* help;
  // Applies one value; returns an error text (without the flag name) or "".
  std::function<std::string(Flags&, const std::string&)> apply;
};

std::string parse_bool(const std::string& v, bool& out) {
  // Go's strconv.ParseBool.
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") {
    out = true;
  } else if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") {
    out = false;
  } else {
    return "not a boolean";
  }
  return "";
}

std::string parse_int(const std::string& v, int& out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc{} || p != v.data() + v.size()) return "not an integer";
  return "";
}

// vmalert's size flags accept plain bytes and KB/MB/GB (x1000) or KiB/MiB/GiB (x1024).
std::string parse_size(const std::string& v, size_t& out) {
  size_t i = 0;
  while (i < v.size() && (std::isdigit(static_cast<unsigned char>(v[i])) || v[i] == '.')) ++i;
  double n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + i, n);
  if (i == 0 || ec != std::errc{} || p != v.data() + i) return "not a size";
  const std::string unit = v.substr(i);
  double mul = 1;
  if (unit.empty() || unit == "B") {
    mul = 1;
  } else if (unit == "KB") {
    mul = 1e3;
  } else if (unit == "MB") {
    mul = 1e6;
  } else if (unit == "GB") {
    mul = 1e9;
  } else if (unit == "KiB") {
    mul = 1024;
  } else if (unit == "MiB") {
    mul = 1024.0 * 1024;
  } else if (unit == "GiB") {
    mul = 1024.0 * 1024 * 1024;
  } else {
    return "unknown size unit \"" + unit + "\"";
  }
  out = static_cast<size_t>(n * mul);
  return "";
}

std::string parse_dur(const std::string& v, core::Duration& out) {
  auto d = core::parse_duration(v);
  if (!d) return d.error().message;
  out = *d;
  return "";
}

#define STR(field) [](Flags& f, const std::string& v) { f.field = v; return std::string(); }
#define BOOL(field) [](Flags& f, const std::string& v) { return parse_bool(v, f.field); }
#define DUR(field) [](Flags& f, const std::string& v) { return parse_dur(v, f.field); }
#define INT(field) [](Flags& f, const std::string& v) { return parse_int(v, f.field); }
#define ARRAY(field)                                                  \
  [](Flags& f, const std::string& v) {                                \
    for (auto& item : split_array_flag(v)) f.field.push_back(item);   \
    return std::string();                                             \
  }
// An array flag whose every item `check` must accept (it returns an error text or ""). Empty
// items are skipped: `-pushmetrics.url=` from an empty environment variable sets nothing.
#define CHECKED_ARRAY(field, check)                                 \
  [](Flags& f, const std::string& v) {                              \
    for (auto& item : split_array_flag(v)) {                        \
      if (item.empty()) continue;                                   \
      if (auto err = check(item); !err.empty()) return err;         \
      f.field.push_back(item);                                      \
    }                                                               \
    return std::string();                                           \
  }
#define BOOL_ARRAY(field)                                            \
  [](Flags& f, const std::string& v) {                               \
    for (auto& item : split_array_flag(v)) {                         \
      bool b = false;                                                \
      if (auto err = parse_bool(item, b); !err.empty()) return err;  \
      f.field.push_back(b);                                          \
    }                                                                \
    return std::string();                                            \
  }

const std::vector<FlagDef>& flag_defs() {
  static const std::vector<FlagDef> defs = {
      {"rule", Kind::array, "",
       "Path to a rule file, a glob (doublestar ** supported), an fs:// path or an http(s):// "
       "URL. Repeatable.",
       ARRAY(rule)},
      {"rule.templates", Kind::array, "",
       "Path or glob of files with {{ define }} template blocks shared by all rules. Repeatable.",
       ARRAY(rule_templates)},
      {"rule.validateTemplates", Kind::boolean, "true", "Check template syntax when rules load.",
       BOOL(rule_validate_templates)},
      {"rule.validateExpressions", Kind::boolean, "true",
       "Check PromQL/MetricsQL syntax of expr when rules load.", BOOL(rule_validate_expressions)},
      {"evaluationInterval", Kind::duration, "1m", "Default evaluation interval of groups.",
       DUR(evaluation_interval)},
      {"rule.evalDelay", Kind::duration, "30s",
       "Moves the query time back by this amount (group eval_delay overrides).",
       DUR(rule_eval_delay)},
      {"rule.resendDelay", Kind::duration, "0s",
       "Minimum time between sending the same firing alert again.", DUR(rule_resend_delay)},
      {"rule.maxResolveDuration", Kind::duration, "0s",
       "Cap on endsAt - now for firing alerts (0 = no cap).", DUR(rule_max_resolve_duration)},
      {"rule.resultsLimit", Kind::integer, "0",
       "Maximum alerts or series per rule (0 = no limit); group limit overrides.",
       INT(rule_results_limit)},
      {"rule.updateEntriesLimit", Kind::integer, "20", "State-change history kept per rule.",
       INT(rule_update_entries_limit)},
      {"rule.defaultRuleType", Kind::string, "prometheus",
       "Default group type: prometheus, graphite or vlogs.", STR(rule_default_rule_type)},
      {"disableAlertgroupLabel", Kind::boolean, "false",
       "Do not add the alertgroup label to alerts.", BOOL(disable_alertgroup_label)},
      {"group.maxStartDelay", Kind::duration, "5m",
       "Upper bound of the start jitter of a group.", DUR(group_max_start_delay)},
      {"rule.keepFiringOnError", Kind::duration, "0s",
       "alertd: while a rule's query fails, keep re-sending its firing alerts with a fresh "
       "endsAt for at most this long, so a datasource outage does not resolve them in "
       "Alertmanager (0 = vmalert's behaviour: they resolve once endsAt passes).",
       DUR(rule_keep_firing_on_error)},
      {"state.path", Kind::string, "",
       "alertd: file keeping the state of pending and firing alerts across restarts, written "
       "atomically after every round that changed it, at most once a minute when only the "
       "times of notifications changed (empty = off).",
       STR(state_path)},
      {"configCheckInterval", Kind::duration, "0s",
       "Re-read rule and template files this often and apply changes (0 = off).",
       DUR(config_check_interval)},

      {"datasource.url", Kind::string, "",
       "Prometheus-compatible datasource URL, e.g. http://127.0.0.1:9090.", STR(datasource_url)},
      {"datasource.appendTypePrefix", Kind::boolean, "false",
       "Append /prometheus to the datasource URL path.", BOOL(datasource_append_type_prefix)},
      {"datasource.queryStep", Kind::duration, "5m", "The step parameter of instant queries.",
       DUR(datasource_query_step)},
      {"datasource.disableStepParam", Kind::boolean, "false",
       "Do not send the step parameter.", BOOL(datasource_disable_step_param)},
      {"datasource.roundDigits", Kind::integer, "0",
       "Send round_digits=N to the datasource when N > 0.", INT(datasource_round_digits)},
      {"datasource.showURL", Kind::boolean, "false",
       "Show the full datasource URL in logs and errors.", BOOL(datasource_show_url)},
      {"datasource.basicAuth.username", Kind::string, "", "Basic auth user for the datasource.",
       STR(datasource_basic_auth_username)},
      {"datasource.basicAuth.password", Kind::string, "", "Basic auth password.",
       STR(datasource_basic_auth_password)},
      {"datasource.basicAuth.passwordFile", Kind::string, "", "File with the basic auth password.",
       STR(datasource_basic_auth_password_file)},
      {"datasource.bearerToken", Kind::string, "", "Bearer token for the datasource.",
       STR(datasource_bearer_token)},
      {"datasource.bearerTokenFile", Kind::string, "", "File with the bearer token.",
       STR(datasource_bearer_token_file)},
      {"datasource.oauth2.clientID", Kind::string, "",
       "Optional OAuth2 clientID to use for -datasource.url.",
       STR(datasource_oauth2.client_id)},
      {"datasource.oauth2.clientSecret", Kind::string, "",
       "Optional OAuth2 clientSecret to use for -datasource.url.",
       STR(datasource_oauth2.client_secret)},
      {"datasource.oauth2.clientSecretFile", Kind::string, "",
       "Optional OAuth2 clientSecretFile to use for -datasource.url.",
       STR(datasource_oauth2.client_secret_file)},
      {"datasource.oauth2.endpointParams", Kind::string, "",
       "Optional OAuth2 endpoint parameters to use for -datasource.url, "
       "as a JSON object: {\"param1\":\"value1\",...}.",
       STR(datasource_oauth2.endpoint_params)},
      {"datasource.oauth2.scopes", Kind::string, "",
       "Optional OAuth2 scopes to use for -datasource.url, separated by ';'.",
       STR(datasource_oauth2.scopes)},
      {"datasource.oauth2.tokenUrl", Kind::string, "",
       "Optional OAuth2 tokenURL to use for -datasource.url.",
       STR(datasource_oauth2.token_url)},
      {"datasource.headers", Kind::string, "",
       "Extra request headers, \"Name: value\" separated by ^^.", STR(datasource_headers)},
      {"datasource.tlsCAFile", Kind::string, "", "CA file to verify the datasource.",
       STR(datasource_tls_ca_file)},
      {"datasource.tlsCertFile", Kind::string, "", "Client certificate file.",
       STR(datasource_tls_cert_file)},
      {"datasource.tlsKeyFile", Kind::string, "", "Client key file.", STR(datasource_tls_key_file)},
      {"datasource.tlsServerName", Kind::string, "", "Server name to verify (SNI).",
       STR(datasource_tls_server_name)},
      {"datasource.tlsInsecureSkipVerify", Kind::boolean, "false",
       "Do not verify the datasource's certificate.", BOOL(datasource_tls_insecure_skip_verify)},
      {"remoteRead.url", Kind::string, "",
       "Prometheus-compatible URL to restore alert state from at start "
       "(ALERTS_FOR_STATE written by remote write).",
       STR(remote_read_url)},
      {"remoteRead.lookback", Kind::duration, "1h",
       "How far back to look for alert state at start.", DUR(remote_read_lookback)},
      {"remoteRead.basicAuth.username", Kind::string, "", "Basic auth username for remote read.",
       STR(remote_read_basic_auth_username)},
      {"remoteRead.basicAuth.password", Kind::string, "", "Basic auth password for remote read.",
       STR(remote_read_basic_auth_password)},
      {"remoteRead.basicAuth.passwordFile", Kind::string, "",
       "File with the basic auth password for remote read.",
       STR(remote_read_basic_auth_password_file)},
      {"remoteRead.bearerToken", Kind::string, "", "Bearer token for remote read.",
       STR(remote_read_bearer_token)},
      {"remoteRead.bearerTokenFile", Kind::string, "", "File with the remote read bearer token.",
       STR(remote_read_bearer_token_file)},
      {"remoteRead.oauth2.clientID", Kind::string, "",
       "Optional OAuth2 clientID to use for -remoteRead.url.",
       STR(remote_read_oauth2.client_id)},
      {"remoteRead.oauth2.clientSecret", Kind::string, "",
       "Optional OAuth2 clientSecret to use for -remoteRead.url.",
       STR(remote_read_oauth2.client_secret)},
      {"remoteRead.oauth2.clientSecretFile", Kind::string, "",
       "Optional OAuth2 clientSecretFile to use for -remoteRead.url.",
       STR(remote_read_oauth2.client_secret_file)},
      {"remoteRead.oauth2.endpointParams", Kind::string, "",
       "Optional OAuth2 endpoint parameters to use for -remoteRead.url, "
       "as a JSON object: {\"param1\":\"value1\",...}.",
       STR(remote_read_oauth2.endpoint_params)},
      {"remoteRead.oauth2.scopes", Kind::string, "",
       "Optional OAuth2 scopes to use for -remoteRead.url, separated by ';'.",
       STR(remote_read_oauth2.scopes)},
      {"remoteRead.oauth2.tokenUrl", Kind::string, "",
       "Optional OAuth2 tokenURL to use for -remoteRead.url.",
       STR(remote_read_oauth2.token_url)},
      {"remoteRead.headers", Kind::string, "",
       "Extra remote read request headers, \"Name: value\" separated by ^^.",
       STR(remote_read_headers)},
      {"remoteRead.tlsCAFile", Kind::string, "", "CA file to verify the remote read URL.",
       STR(remote_read_tls_ca_file)},
      {"remoteRead.tlsCertFile", Kind::string, "", "Client certificate file for remote read.",
       STR(remote_read_tls_cert_file)},
      {"remoteRead.tlsKeyFile", Kind::string, "", "Client key file for remote read.",
       STR(remote_read_tls_key_file)},
      {"remoteRead.tlsServerName", Kind::string, "", "Server name to verify for remote read.",
       STR(remote_read_tls_server_name)},
      {"remoteRead.tlsInsecureSkipVerify", Kind::boolean, "false",
       "Do not verify the remote read URL's certificate.",
       BOOL(remote_read_tls_insecure_skip_verify)},
      {"remoteRead.showURL", Kind::boolean, "false",
       "Show the full remote read URL in logs and errors.", BOOL(remote_read_show_url)},
      {"datasource.queryTimeout", Kind::duration, "30s",
       "Deadline of one datasource query (alertd; vmalert has none).",
       DUR(datasource_query_timeout)},
      {"datasource.maxResponseSize", Kind::size, "256MiB",
       "Largest datasource response body accepted.",
       [](Flags& f, const std::string& v) { return parse_size(v, f.datasource_max_response_size); }},
      {"datasource.maxConcurrentQueries", Kind::integer, "0",
       "Queries in flight at once per datasource (0 = no cap).",
       INT(datasource_max_concurrent_queries)},
      {"datasource.disableKeepAlive", Kind::boolean, "false",
       "Whether to close each connection to the datasource after one request instead of "
       "keeping it open for the next.",
       BOOL(datasource_disable_keep_alive)},
      {"datasource.idleConnTimeout", Kind::duration, "50s",
       "How long an idle keep-alive connection to -datasource.url is kept (0 = until the "
       "server closes it). Keep it below the idle timeout of any load balancer in between.",
       DUR(datasource_idle_conn_timeout)},
      {"datasource.maxIdleConnections", Kind::integer, "100",
       "Idle keep-alive connections kept per datasource host; about the number of groups "
       "times their concurrency avoids sockets piling up in TIME_WAIT. 0 keeps 2, as Go does.",
       INT(datasource_max_idle_connections)},
      {"remoteRead.idleConnTimeout", Kind::duration, "50s",
       "How long an idle keep-alive connection to -remoteRead.url is kept (0 = until the "
       "server closes it).",
       DUR(remote_read_idle_conn_timeout)},
      {"remoteWrite.idleConnTimeout", Kind::duration, "50s",
       "How long an idle keep-alive connection to -remoteWrite.url is kept (0 = until the "
       "server closes it).",
       DUR(remote_write_idle_conn_timeout)},

      {"remoteWrite.url", Kind::string, "",
       "Prometheus remote write endpoint for recording results and ALERTS / ALERTS_FOR_STATE; "
       "/api/v1/write is appended. Needed by recording rules.",
       STR(remote_write_url)},
      {"remoteWrite.disablePathAppend", Kind::boolean, "false",
       "Do not append /api/v1/write to -remoteWrite.url.", BOOL(remote_write_disable_path_append)},
      {"remoteWrite.basicAuth.username", Kind::string, "", "Basic auth username for remote write.",
       STR(remote_write_basic_auth_username)},
      {"remoteWrite.basicAuth.password", Kind::string, "", "Basic auth password for remote write.",
       STR(remote_write_basic_auth_password)},
      {"remoteWrite.basicAuth.passwordFile", Kind::string, "",
       "File with the basic auth password for remote write.",
       STR(remote_write_basic_auth_password_file)},
      {"remoteWrite.bearerToken", Kind::string, "", "Bearer token for remote write.",
       STR(remote_write_bearer_token)},
      {"remoteWrite.bearerTokenFile", Kind::string, "", "File with the remote write bearer token.",
       STR(remote_write_bearer_token_file)},
      {"remoteWrite.oauth2.clientID", Kind::string, "",
       "Optional OAuth2 clientID to use for -remoteWrite.url.",
       STR(remote_write_oauth2.client_id)},
      {"remoteWrite.oauth2.clientSecret", Kind::string, "",
       "Optional OAuth2 clientSecret to use for -remoteWrite.url.",
       STR(remote_write_oauth2.client_secret)},
      {"remoteWrite.oauth2.clientSecretFile", Kind::string, "",
       "Optional OAuth2 clientSecretFile to use for -remoteWrite.url.",
       STR(remote_write_oauth2.client_secret_file)},
      {"remoteWrite.oauth2.endpointParams", Kind::string, "",
       "Optional OAuth2 endpoint parameters to use for -remoteWrite.url, "
       "as a JSON object: {\"param1\":\"value1\",...}.",
       STR(remote_write_oauth2.endpoint_params)},
      {"remoteWrite.oauth2.scopes", Kind::string, "",
       "Optional OAuth2 scopes to use for -remoteWrite.url, separated by ';'.",
       STR(remote_write_oauth2.scopes)},
      {"remoteWrite.oauth2.tokenUrl", Kind::string, "",
       "Optional OAuth2 tokenURL to use for -remoteWrite.url.",
       STR(remote_write_oauth2.token_url)},
      {"remoteWrite.headers", Kind::string, "",
       "Extra remote write request headers, \"Name: value\" separated by ^^.",
       STR(remote_write_headers)},
      {"remoteWrite.tlsCAFile", Kind::string, "", "CA file to verify the remote write URL.",
       STR(remote_write_tls_ca_file)},
      {"remoteWrite.tlsCertFile", Kind::string, "", "Client certificate file for remote write.",
       STR(remote_write_tls_cert_file)},
      {"remoteWrite.tlsKeyFile", Kind::string, "", "Client key file for remote write.",
       STR(remote_write_tls_key_file)},
      {"remoteWrite.tlsServerName", Kind::string, "", "Server name to verify for remote write.",
       STR(remote_write_tls_server_name)},
      {"remoteWrite.tlsInsecureSkipVerify", Kind::boolean, "false",
       "Do not verify the remote write URL's certificate.",
       BOOL(remote_write_tls_insecure_skip_verify)},
      {"remoteWrite.showURL", Kind::boolean, "false",
       "Show the full remote write URL in logs and errors.", BOOL(remote_write_show_url)},
      {"remoteWrite.maxQueueSize", Kind::integer, "100000",
       "Rows held for remote write; when full, the oldest are dropped.",
       INT(remote_write_max_queue_size)},
      {"remoteWrite.maxBatchSize", Kind::integer, "10000", "Rows per remote write request.",
       INT(remote_write_max_batch_size)},
      {"remoteWrite.flushInterval", Kind::duration, "2s",
       "A partial remote write batch is sent at least this often.",
       DUR(remote_write_flush_interval)},
      {"remoteWrite.concurrency", Kind::integer, "0",
       "Remote write requests in flight (0 = 2 x CPUs).", INT(remote_write_concurrency)},
      {"remoteWrite.retryMinInterval", Kind::duration, "1s",
       "First delay before retrying a failed remote write request; doubles each attempt.",
       DUR(remote_write_retry_min_interval)},
      {"remoteWrite.retryMaxTime", Kind::duration, "30s",
       "How long a failed remote write request is retried before its rows are dropped.",
       DUR(remote_write_retry_max_time)},
      {"remoteWrite.sendTimeout", Kind::duration, "30s", "Deadline of one remote write request.",
       DUR(remote_write_send_timeout)},

      {"notifier.url", Kind::array, "",
       "Prometheus Alertmanager URL, e.g. http://127.0.0.1:9093; /api/v2/alerts is appended to "
       "its path. Repeatable.",
       ARRAY(notifier_url)},
      {"notifier.blackhole", Kind::boolean, "false",
       "Evaluate and count alerts but send them nowhere.", BOOL(notifier_blackhole)},
      {"notifier.config", Kind::string, "",
       "Path to a notifier config file (static_configs, file_sd_configs, dns_sd_configs, "
       "consul_sd_configs, relabeling), reloaded "
       "with the rules. Excludes -notifier.url and -notifier.blackhole.",
       STR(notifier_config)},
      {"notifier.dnsServer", Kind::string, "",
       "alertd only: IPv4:port of the DNS server dns_sd_configs names are resolved with; empty "
       "means the system resolver (/etc/resolv.conf).",
       STR(notifier_dns_server)},
      {"notifier.suppressDuplicateTargetErrors", Kind::boolean, "false",
       "Whether to leave out the error logged when -notifier.config's discovery finds the "
       "same Alertmanager URL twice (the duplicate is skipped either way).",
       BOOL(notifier_suppress_duplicate_target_errors)},
      {"promscrape.consulSDCheckInterval", Kind::duration, "30s",
       "Interval for checking for changes in Consul (consul_sd_configs of -notifier.config).",
       DUR(promscrape_consul_sd_check_interval)},
      {"notifier.sendTimeout", Kind::duration, "10s", "Deadline of one notification request.",
       DUR(notifier_send_timeout)},
      {"notifier.maxQueueSize", Kind::integer, "100000",
       "Alerts queued per Alertmanager; when full, the oldest are dropped.",
       INT(notifier_max_queue_size)},
      {"notifier.maxBatchSize", Kind::integer, "1000", "Alerts per request to an Alertmanager.",
       INT(notifier_max_batch_size)},
      {"notifier.concurrency", Kind::integer, "1", "Requests in flight per Alertmanager.",
       INT(notifier_concurrency)},
      {"notifier.retryMinInterval", Kind::duration, "1s",
       "First wait before retrying a failed notification (429, 5xx, network); doubles each "
       "attempt, with jitter.",
       DUR(notifier_retry_min_interval)},
      {"notifier.retryMaxInterval", Kind::duration, "10s",
       "Longest wait between notification retries.", DUR(notifier_retry_max_interval)},
      {"notifier.retryMaxTime", Kind::duration, "1m",
       "An alert an Alertmanager has not accepted is given up once it waited this long (at least "
       "twice -rule.resendDelay) and its endsAt has passed.",
       DUR(notifier_retry_max_time)},
      {"notifier.basicAuth.username", Kind::array, "",
       "Optional basic auth username for -notifier.url.", ARRAY(notifier_basic_auth_username)},
      {"notifier.basicAuth.password", Kind::array, "",
       "Optional basic auth password for -notifier.url.", ARRAY(notifier_basic_auth_password)},
      {"notifier.basicAuth.passwordFile", Kind::array, "",
       "Optional path to basic auth password file for -notifier.url.",
       ARRAY(notifier_basic_auth_password_file)},
      {"notifier.bearerToken", Kind::array, "", "Optional bearer token for -notifier.url.",
       ARRAY(notifier_bearer_token)},
      {"notifier.bearerTokenFile", Kind::array, "",
       "Optional path to bearer token file for -notifier.url.", ARRAY(notifier_bearer_token_file)},
      {"notifier.oauth2.clientID", Kind::array, "",
       "Optional OAuth2 clientID to use for the corresponding -notifier.url.",
       ARRAY(notifier_oauth2_client_id)},
      {"notifier.oauth2.clientSecret", Kind::array, "",
       "Optional OAuth2 clientSecret to use for the corresponding -notifier.url.",
       ARRAY(notifier_oauth2_client_secret)},
      {"notifier.oauth2.clientSecretFile", Kind::array, "",
       "Optional OAuth2 clientSecretFile to use for the corresponding -notifier.url.",
       ARRAY(notifier_oauth2_client_secret_file)},
      {"notifier.oauth2.endpointParams", Kind::array, "",
       "Optional OAuth2 endpoint parameters to use for the corresponding -notifier.url, "
       "as a JSON object: {\"param1\":\"value1\",...}.",
       ARRAY(notifier_oauth2_endpoint_params)},
      {"notifier.oauth2.scopes", Kind::array, "",
       "Optional OAuth2 scopes to use for the corresponding -notifier.url, separated by ';'.",
       ARRAY(notifier_oauth2_scopes)},
      {"notifier.oauth2.tokenUrl", Kind::array, "",
       "Optional OAuth2 tokenURL to use for the corresponding -notifier.url.",
       ARRAY(notifier_oauth2_token_url)},
      {"notifier.headers", Kind::array, "",
       "Optional HTTP headers to send with each request to the corresponding -notifier.url, "
       "\"Name: value\" separated by ^^.",
       ARRAY(notifier_headers)},
      {"notifier.tlsCAFile", Kind::array, "",
       "Optional path to TLS CA file to use for verifying connections to -notifier.url. By "
       "default, system CA is used.",
       ARRAY(notifier_tls_ca_file)},
      {"notifier.tlsCertFile", Kind::array, "",
       "Optional path to client-side TLS certificate file to use when connecting to "
       "-notifier.url.",
       ARRAY(notifier_tls_cert_file)},
      {"notifier.tlsKeyFile", Kind::array, "",
       "Optional path to client-side TLS certificate key to use when connecting to "
       "-notifier.url.",
       ARRAY(notifier_tls_key_file)},
      {"notifier.tlsServerName", Kind::array, "",
       "Optional TLS server name to use for connections to -notifier.url. By default, the "
       "server name from -notifier.url is used.",
       ARRAY(notifier_tls_server_name)},
      {"notifier.tlsInsecureSkipVerify", Kind::bool_array, "",
       "Whether to skip tls verification when connecting to -notifier.url.",
       BOOL_ARRAY(notifier_tls_insecure_skip_verify)},
      {"notifier.showURL", Kind::boolean, "false",
       "Whether to avoid stripping sensitive information such as passwords from URL in log "
       "messages or UI for -notifier.url.",
       BOOL(notifier_show_url)},

      {"httpListenAddr", Kind::array, ":8880",
       "Address to listen for HTTP requests on, e.g. :8880 or 127.0.0.1:8880. Repeatable: "
       "every address is served (see -tls, per address).",
       ARRAY(http_listen_addr)},
      {"external.url", Kind::string, "",
       "URL of this alertd as users reach it; used in generatorURL and templates.",
       STR(external_url)},
      {"external.alert.source", Kind::string, "",
       "Overrides the generatorURL (\"source\") of alerts: `<-external.url>/<this>`, a template "
       "over the same data as annotations (`query` unavailable), e.g. "
       "'vmui/#/?g0.expr={{.Expr|queryEscape}}' or Grafana's 'explore?orgId=1&left=...'. Checked "
       "at start-up with -rule.validateTemplates. Empty: "
       "'vmalert/alert?group_id={{.GroupID}}&alert_id={{.AlertID}}'.",
       STR(external_alert_source)},
      {"external.label", Kind::labels, "",
       "name=value label added to every alert and series. Repeatable.",
       [](Flags& f, const std::string& v) {
         for (auto& item : split_array_flag(v)) {
           const auto eq = item.find('=');
           if (eq == std::string::npos || eq == 0) return "missing '=' in \"" + item + "\"";
           f.external_labels.set(item.substr(0, eq), item.substr(eq + 1));
         }
         return std::string();
       }},
      {"loggerLevel", Kind::string, "INFO", "INFO, WARN, ERROR, FATAL or PANIC.",
       [](Flags& f, const std::string& v) {
         if (v != "INFO" && v != "WARN" && v != "ERROR" && v != "FATAL" && v != "PANIC" &&
             v != "DEBUG")
           return std::string("must be one of INFO, WARN, ERROR, FATAL, PANIC");
         f.logger_level = v;
         return std::string();
       }},
      {"loggerOutput", Kind::string, "stderr", "Output for the logs: stderr or stdout.",
       [](Flags& f, const std::string& v) {
         if (v != "stderr" && v != "stdout") return std::string("must be stderr or stdout");
         f.logger_output = v;
         return std::string();
       }},
      {"reloadAuthKey", Kind::string, "",
       "Auth key for /-/reload: when set, the authKey query arg must match it.",
       STR(reload_auth_key)},
      {"loggerFormat", Kind::string, "default", "default or json.",
       [](Flags& f, const std::string& v) {
         if (v != "default" && v != "json") return std::string("must be default or json");
         f.logger_format = v;
         return std::string();
       }},
      {"replay.timeFrom", Kind::string, "",
       "The time filter in RFC3339 format to start the replay from, e.g. "
       "'2020-01-01T20:07:00Z'. Setting it runs the replay (backfill) mode instead of the daemon.",
       STR(replay_time_from)},
      {"replay.timeTo", Kind::string, "",
       "The time filter in RFC3339 format to finish the replay by, e.g. '2020-01-01T20:07:00Z'. "
       "By default, is set to the current time.",
       STR(replay_time_to)},
      {"replay.rulesDelay", Kind::duration, "1s",
       "Delay after each rule within the group during the replay, so chained rules read what "
       "the previous one wrote. Keep it equal or bigger than -remoteWrite.flushInterval.",
       DUR(replay_rules_delay)},
      {"replay.maxDatapointsPerQuery", Kind::integer, "1000",
       "Max number of data points expected in one request: each /query_range request of the "
       "replay covers at most this many group intervals.",
       INT(replay_max_datapoints)},
      {"replay.ruleRetryAttempts", Kind::integer, "5",
       "How many attempts to make for one range request before giving up on the rule.",
       INT(replay_rule_retry_attempts)},
      {"replay.ruleEvaluationConcurrency", Kind::integer, "1",
       "The maximum number of concurrent /query_range requests when replaying a recording rule "
       "(alerting rules always run one range at a time).",
       INT(replay_rule_evaluation_concurrency)},
      {"replay.continueWithExecutionErr", Kind::boolean, "false",
       "Skip a range whose every attempt failed and go on with the replay (the summary lists "
       "them and the exit code is non-zero) instead of stopping.",
       BOOL(replay_continue_with_execution_err)},
      {"replay.disableProgressBar", Kind::boolean, "false",
       "Whether to disable rendering progress bars during the replay.",
       BOOL(replay_disable_progress_bar)},
      {"rule.configCheckInterval", Kind::duration, "0s",
       "Deprecated alias of -configCheckInterval (vmalert before v1.70).",
       DUR(config_check_interval)},
      {"httpAuth.username", Kind::string, "",
       "Username for the HTTP server's basic auth; every path but /health, /-/healthy and "
       "/-/ready then needs it. Off when empty.",
       STR(http_auth_username)},
      {"httpAuth.password", Kind::string, "", "Password for the HTTP server's basic auth.",
       STR(http_auth_password)},
      {"metricsAuthKey", Kind::string, "",
       "Auth key for /metrics: when set, the authKey query arg must match it (it overrides "
       "-httpAuth.* for /metrics).",
       STR(metrics_auth_key)},
      {"flagsAuthKey", Kind::string, "",
       "Auth key for /flags: when set, the authKey query arg must match it (it overrides "
       "-httpAuth.* for /flags).",
       STR(flags_auth_key)},
      {"http.pathPrefix", Kind::string, "",
       "Prefix of every path the HTTP server handles, e.g. /foo/bar serves /foo/bar/metrics "
       "(for proxies).",
       [](Flags& f, const std::string& v) {
         std::string p = v;
         while (!p.empty() && p.back() == '/') p.pop_back();
         if (!p.empty() && p.front() != '/') p.insert(p.begin(), '/');
         f.http_path_prefix = p;
         return std::string();
       }},
      {"loggerTimezone", Kind::string, "UTC",
       "IANA time zone of log timestamps, e.g. Europe/Berlin, or Local.",
       [](Flags& f, const std::string& v) {
         if (v.empty() || v.find("..") != std::string::npos) return std::string("bad time zone");
         f.logger_timezone = v;
         return std::string();
       }},
      {"loggerDisableTimestamps", Kind::boolean, "false", "Write log lines without a timestamp.",
       BOOL(logger_disable_timestamps)},
      {"envflag.enable", Kind::boolean, "false",
       "Also read flags from environment variables: -envflag.prefix + the flag name with dots "
       "replaced by underscores (e.g. datasource_url). The command line wins. Read from the "
       "command line only.",
       BOOL(envflag_enable)},
      {"envflag.prefix", Kind::string, "", "Prefix of the environment variables of -envflag.enable.",
       STR(envflag_prefix)},
      {"http.header.csp", Kind::string, "",
       "Value of the Content-Security-Policy header of every response, e.g. \"default-src "
       "'self'\" (none when empty).",
       STR(http_header_csp)},
      {"http.header.frameOptions", Kind::string, "",
       "Value of the X-Frame-Options header of every response (none when empty).",
       STR(http_header_frame_options)},
      {"http.header.hsts", Kind::string, "",
       "Value of the Strict-Transport-Security header of every response (none when empty).",
       STR(http_header_hsts)},
      {"loggerMaxArgLen", Kind::integer, "1000",
       "The maximum length of a logged message: a longer one is written as its first and last "
       "-loggerMaxArgLen/2-1 bytes joined by '..' (VictoriaMetrics shortens each argument so; "
       "alertd's one long argument, a response body, query or URL, is the long message).",
       [](Flags& f, const std::string& v) { return parse_int(v, f.logger_max_arg_len); }},
      {"loggerErrorsPerSecondLimit", Kind::integer, "0",
       "Per-second limit on ERROR messages from one place in the code: past it they are "
       "suppressed until the next second (the first suppressed one says so). 0 = no limit.",
       [](Flags& f, const std::string& v) {
         if (auto err = parse_int(v, f.logger_errors_per_second_limit); !err.empty()) return err;
         return f.logger_errors_per_second_limit < 0 ? std::string("must not be negative")
                                                     : std::string();
       }},
      {"loggerWarnsPerSecondLimit", Kind::integer, "0",
       "Per-second limit on WARN messages from one place in the code, as "
       "-loggerErrorsPerSecondLimit. 0 = no limit.",
       [](Flags& f, const std::string& v) {
         if (auto err = parse_int(v, f.logger_warns_per_second_limit); !err.empty()) return err;
         return f.logger_warns_per_second_limit < 0 ? std::string("must not be negative")
                                                    : std::string();
       }},
      {"httpListenAddr.useProxyProtocol", Kind::bool_array, "",
       "Whether connections to the corresponding -httpListenAddr start with a PROXY protocol "
       "v2 header (sent by HAProxy, AWS NLB, ...); connections without it are closed, so "
       "probes must come through the proxy too.",
       BOOL_ARRAY(http_listen_addr_use_proxy_protocol)},
      {"remoteRead.disablePathAppend", Kind::boolean, "false",
       "Whether to disable automatic appending of '/api/v1/query' path to the configured "
       "-remoteRead.url.",
       BOOL(remote_read_disable_path_append)},
      {"tls", Kind::bool_array, "",
       "Whether to serve HTTPS at the corresponding -httpListenAddr (one value for every "
       "address when given once). -tlsCertFile and -tlsKeyFile must be set with it.",
       BOOL_ARRAY(tls)},
      {"tlsCertFile", Kind::array, "",
       "Path to the PEM certificate (chain) for the corresponding -httpListenAddr if -tls is "
       "set. Checked every second and reloaded when it changes.",
       ARRAY(tls_cert_file)},
      {"tlsKeyFile", Kind::array, "",
       "Path to the PEM key for the corresponding -httpListenAddr if -tls is set. Checked every "
       "second and reloaded when it changes.",
       ARRAY(tls_key_file)},
      {"tlsMinVersion", Kind::array, "",
       "Minimum TLS version for the corresponding -httpListenAddr if -tls is set: TLS10, TLS11, "
       "TLS12 (the default) or TLS13.",
       ARRAY(tls_min_version)},
      {"tlsCipherSuites", Kind::array, "",
       "TLS cipher suites (Go's names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) allowed "
       "for TLS 1.2 and older on every -tls address; TLS 1.3 suites are not configurable.",
       ARRAY(tls_cipher_suites)},
      {"pprofAuthKey", Kind::string, "",
       "Auth key for /debug/pprof/*: when set, the authKey query arg must match it (it "
       "overrides -httpAuth.* for those paths).",
       STR(pprof_auth_key)},
      {"http.maxGracefulShutdownDuration", Kind::duration, "7s",
       "On shutdown, how long requests in progress may take to finish before their connections "
       "are closed.",
       DUR(http_max_graceful_shutdown_duration)},
      {"http.idleConnTimeout", Kind::duration, "1m",
       "Keep-alive connections to -httpListenAddr idle for longer than this are closed.",
       DUR(http_idle_conn_timeout)},
      {"http.connTimeout", Kind::duration, "2m",
       "Incoming connections to -httpListenAddr are closed after this age (plus up to 10% "
       "jitter), after the response in progress (Connection: close), so clients behind a "
       "TCP load balancer spread evenly. 0 keeps them open.",
       DUR(http_conn_timeout)},
      {"http.disableResponseCompression", Kind::boolean, "false",
       "Disable gzip compression of HTTP responses to save CPU. By default responses of 1 KiB "
       "and more are compressed for clients that send Accept-Encoding: gzip.",
       BOOL(http_disable_response_compression)},
      {"http.shutdownDelay", Kind::duration, "0s",
       "On SIGTERM, keep running this long with /health and /-/ready answering 503 before "
       "shutting down, so load balancers stop sending requests first. A second signal ends the "
       "wait.",
       DUR(http_shutdown_delay)},
      {"loggerJSONFields", Kind::string, "",
       "Renames fields of JSON logs, e.g. \"ts:timestamp,msg:message\". Fields: ts, level, "
       "caller, msg.",
       [](Flags& f, const std::string& v) {
         for (const auto& item : split_array_flag(v)) {
           const auto colon = item.find(':');
           const std::string field = item.substr(0, colon);
           if (colon == std::string::npos || colon + 1 == item.size() ||
               (field != "ts" && field != "level" && field != "caller" && field != "msg")) {
             return "want field:name pairs with field one of ts, level, caller, msg, not \"" +
                    item + "\"";
           }
         }
         f.logger_json_fields = v;
         return std::string();
       }},
      {"pushmetrics.url", Kind::array, "",
       "Optional URL to push metrics exposed at /metrics page to, every "
       "-pushmetrics.interval (e.g. VictoriaMetrics' /api/v1/import/prometheus). http or https; "
       "user:password@ in the URL is sent as basic auth (the value is hidden in /flags). By "
       "default, metrics exposed at /metrics page aren't pushed to any remote storage.",
       CHECKED_ARRAY(pushmetrics_url, check_push_url)},
      {"pushmetrics.interval", Kind::duration, "10s",
       "Interval for pushing metrics to every -pushmetrics.url; also the deadline of one push.",
       [](Flags& f, const std::string& v) {
         if (auto err = parse_dur(v, f.pushmetrics_interval); !err.empty()) return err;
         return f.pushmetrics_interval <= core::Duration::zero()
                    ? std::string("interval must be positive")
                    : std::string();
       }},
      {"pushmetrics.extraLabel", Kind::array, "",
       "Optional labels to add to metrics pushed to every -pushmetrics.url. For example, "
       "-pushmetrics.extraLabel='instance=\"foo\"' adds instance=\"foo\" label to all the "
       "metrics pushed to every -pushmetrics.url.",
       CHECKED_ARRAY(pushmetrics_extra_label, check_extra_labels)},
      {"pushmetrics.header", Kind::array, "",
       "Optional HTTP request header to send to every -pushmetrics.url. For example, "
       "-pushmetrics.header='Authorization: Basic foobar' adds 'Authorization: Basic foobar' "
       "header to every request to every -pushmetrics.url.",
       CHECKED_ARRAY(pushmetrics_header, check_push_header)},
      {"pushmetrics.disableCompression", Kind::boolean, "false",
       "Whether to disable request body compression when pushing metrics to every "
       "-pushmetrics.url.",
       BOOL(pushmetrics_disable_compression)},
      {"printFlagsMarkdown", Kind::boolean, "false", "", BOOL(print_flags_markdown)},
      {"dryRun", Kind::boolean, "false",
       "Load and validate the rules, print every error and exit (non-zero on errors).",
       BOOL(dry_run)},
      {"version", Kind::boolean, "false", "Print the version and exit.", BOOL(version)},
      // -h and -help are not listed, as in Go's flag package.
      {"help", Kind::boolean, "false", "", BOOL(help)},
      {"h", Kind::boolean, "false", "", BOOL(help)},
  };
  return defs;
}

// vmalert flags alertd accepts without implementing them (vmalert v1.93 and later): `warn`
// ones only tune Go's runtime, caches or connection pools, are Enterprise-only, or mean nothing
// here; setting one logs one warning at start. `refuse` ones would change what alertd does
// (serve HTTPS, authenticate with OAuth2, ...): rather than silently doing something else,
// alertd exits with status 2 when one is set to anything but its default.
enum class Support { warn, refuse };

struct PassiveFlag {
  const char* name;
  Kind kind;
  const char* default_text;
  Support support;
  const char* reason;
};

constexpr const char* kGoRuntime = "tunes Go's runtime or VictoriaMetrics' caches; alertd has neither";
constexpr const char* kEnterprise = "a vmalert Enterprise feature";

const std::vector<PassiveFlag>& passive_flag_defs() {
  static const std::vector<PassiveFlag> defs = {
      {"blockcache.missesBeforeCaching", Kind::integer, "2", Support::warn, kGoRuntime},
      {"clusterMode", Kind::boolean, "false", Support::refuse,
       "vmalert Enterprise's per-tenant URLs are not supported"},
      {"datasource.lookback", Kind::duration, "0s", Support::warn,
       "deprecated in vmalert; use -rule.evalDelay, which moves the query time back the same way"},
      {"datasource.queryTimeAlignment", Kind::boolean, "true", Support::warn,
       "deprecated in vmalert; groups' eval_alignment decides"},
      {"defaultTenant.graphite", Kind::string, "", Support::warn, kEnterprise},
      {"defaultTenant.prometheus", Kind::string, "", Support::warn, kEnterprise},
      {"enableTCP6", Kind::boolean, "false", Support::warn,
       "alertd listens and dials IPv6 whenever an address is IPv6"},
      {"eula", Kind::boolean, "false", Support::warn, kEnterprise},
      {"filestream.disableFadvise", Kind::boolean, "false", Support::warn, kGoRuntime},
      {"fs.disableMmap", Kind::boolean, "false", Support::warn, kGoRuntime},
      {"internStringCacheExpireDuration", Kind::duration, "6m", Support::warn, kGoRuntime},
      {"internStringDisableCache", Kind::boolean, "false", Support::warn, kGoRuntime},
      {"internStringMaxLen", Kind::integer, "500", Support::warn, kGoRuntime},
      {"license", Kind::string, "", Support::warn, kEnterprise},
      {"license.forceOffline", Kind::boolean, "false", Support::warn, kEnterprise},
      {"licenseFile", Kind::string, "", Support::warn, kEnterprise},
      {"memory.allowedBytes", Kind::size, "0", Support::warn, kGoRuntime},
      {"memory.allowedPercent", Kind::floating, "60", Support::warn, kGoRuntime},
      {"metrics.exposeMetadata", Kind::boolean, "false", Support::warn,
       "alertd always writes # HELP and # TYPE"},
      {"mtls", Kind::bool_array, "", Support::refuse,
       "client certificate verification (a vmalert Enterprise feature) is not supported"},
      {"mtlsCAFile", Kind::array, "", Support::warn, kEnterprise},
      {"promscrape.consul.waitTime", Kind::duration, "0s", Support::warn,
       "alertd polls Consul every -promscrape.consulSDCheckInterval instead of blocking queries"},
      {"promscrape.discovery.concurrency", Kind::integer, "100", Support::warn,
       "alertd discovers notifier targets on one thread"},
      {"promscrape.discovery.concurrentWaitTime", Kind::duration, "1m", Support::warn,
       "alertd discovers notifier targets on one thread"},
      {"promscrape.dnsSDCheckInterval", Kind::duration, "30s", Support::warn,
       "alertd refreshes each dns_sd_configs entry every refresh_interval"},
      {"remoteRead.ignoreRestoreErrors", Kind::boolean, "true", Support::warn,
       "deprecated in vmalert, without effect: a failed restore is logged and alertd goes on"},
      {"rule.stripFilePath", Kind::boolean, "false", Support::warn, kEnterprise},
      {"s3.configFilePath", Kind::string, "", Support::warn, kEnterprise},
      {"s3.configProfile", Kind::string, "", Support::warn, kEnterprise},
      {"s3.credsFilePath", Kind::string, "", Support::warn, kEnterprise},
      {"s3.customEndpoint", Kind::string, "", Support::warn, kEnterprise},
      {"s3.forcePathStyle", Kind::boolean, "true", Support::warn, kEnterprise},
      {"tlsAutocertCacheDir", Kind::string, "", Support::warn, kEnterprise},
      {"tlsAutocertEmail", Kind::string, "", Support::warn, kEnterprise},
      {"tlsAutocertHosts", Kind::array, "", Support::warn, kEnterprise},
  };
  return defs;
}

// True when `value` leaves the flag at its default (then setting it needs no warning).
bool is_noop_value(Kind kind, std::string_view default_text, const std::string& value) {
  switch (kind) {
    case Kind::boolean:
    case Kind::bool_array: {
      bool b = false;
      bool d = false;
      if (!parse_bool(value, b).empty()) return false;
      if (!default_text.empty()) (void)parse_bool(std::string(default_text), d);
      return b == d;
    }
    case Kind::string:
    case Kind::array:
    case Kind::labels: return value == default_text;
    case Kind::duration: {
      core::Duration v{};
      core::Duration d{};
      return parse_dur(value, v).empty() && parse_dur(std::string(default_text), d).empty() &&
             v == d;
    }
    case Kind::integer:
    case Kind::size:
    case Kind::floating: return value == default_text;
  }
  return false;
}

// Checks the syntax of a passive flag's value; returns an error text or "".
std::string check_value(Kind kind, const std::string& v) {
  switch (kind) {
    case Kind::boolean:
    case Kind::bool_array: {
      bool b = false;
      return parse_bool(v, b);
    }
    case Kind::duration: {
      core::Duration d{};
      return parse_dur(v, d);
    }
    case Kind::integer: {
      int i = 0;
      return parse_int(v, i);
    }
    case Kind::size: {
      size_t n = 0;
      return parse_size(v, n);
    }
    case Kind::floating: {
      double d = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
      if (ec != std::errc{} || p != v.data() + v.size()) return "not a number";
      return "";
    }
    case Kind::string:
    case Kind::array:
    case Kind::labels: return "";
  }
  return "";
}

// vmalert hides these flags' values in /flags and its start-up log (lib/flagutil IsSecretFlag;
// -pushmetrics.url is registered as secret by lib/pushmetrics: it may hold user:password@).
bool is_secret_flag(std::string_view name) {
  if (name == "pushmetrics.url") return true;
  std::string lower(name);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"pass", "key", "secret", "token"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

// Go's %q (strconv.Quote), as vmalert's /flags writes values.
std::string go_quote(std::string_view v) {
  std::string out;
  templates::gofmt::append_quote(out, v);
  return out;
}

std::string_view type_name(Kind kind) {
  switch (kind) {
    case Kind::string: return "string";
    case Kind::boolean: return "";
    case Kind::duration: return "duration";
    case Kind::integer: return "int";
    case Kind::size: return "size";
    case Kind::floating: return "float";
    case Kind::array:
    case Kind::bool_array:
    case Kind::labels: return "array";
  }
  return "";
}

bool is_array(Kind kind) {
  return kind == Kind::array || kind == Kind::bool_array || kind == Kind::labels;
}

#undef STR
#undef BOOL
#undef DUR
#undef INT
#undef ARRAY
#undef BOOL_ARRAY
#undef CHECKED_ARRAY

// One row of -help and docs/flags.md, from either table.
struct FlagDoc {
  std::string_view name;
  Kind kind;
  std::string_view default_text;
  std::string help;
  std::string_view status;  // docs/flags.md's "alertd" column
};

// Flags vmalert does not have (docs/flags.md says "alertd only").
bool is_alertd_only(std::string_view name, std::string_view help) {
  static constexpr std::string_view kNames[] = {
      "datasource.queryTimeout",    "datasource.maxResponseSize", "datasource.maxConcurrentQueries",
      "notifier.maxQueueSize",      "notifier.maxBatchSize",      "notifier.concurrency",
      "notifier.retryMinInterval",  "notifier.retryMaxInterval",  "notifier.retryMaxTime",
  };
  return help.starts_with("alertd:") ||
         std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

std::vector<FlagDoc> flag_docs() {
  std::vector<FlagDoc> docs;
  for (const auto& d : flag_defs()) {
    if (*d.help == '\0') continue;  // -h, -help and hidden options
    const std::string_view help = d.help;
    docs.push_back({d.name, d.kind, d.default_text, std::string(help),
                    is_alertd_only(d.name, help) ? "alertd only" : "implemented"});
  }
  for (const auto& p : passive_flag_defs()) {
    const bool warn = p.support == Support::warn;
    docs.push_back({p.name, p.kind, p.default_text,
                    std::string(warn ? "Accepted and ignored with a warning: "
                                     : "Refused (exit 2) when set: ") +
                        p.reason + ".",
                    warn ? "ignored (warning)" : "refused when set"});
  }
  std::sort(docs.begin(), docs.end(),
            [](const FlagDoc& a, const FlagDoc& b) { return a.name < b.name; });
  return docs;
}

bool is_zero_default(std::string_view def) {
  return def.empty() || def == "false" || def == "0" || def == "0s";
}

// Go's flag.PrintDefaults, after vmalert's description: flags sorted by name, each as
//   -name type
//     \tusage (default value)
// with no type for booleans and the default left out when it is the zero value.
std::string help_text() {
  std::ostringstream out;
  out << "\nalertd evaluates vmalert/Prometheus alerting rules against a Prometheus-compatible "
         "datasource\nand sends alerts to Alertmanager (a drop-in replacement for vmalert).\n\n"
         "See the docs at https://docs.victoriametrics.com/vmalert/ and README.md.\n\n";
  for (const FlagDoc& d : flag_docs()) {
    out << "  -" << d.name;
    if (const auto type = type_name(d.kind); !type.empty()) out << " " << type;
    out << "\n    \t" << d.help;
    if (is_array(d.kind)) {
      out << "\n    \tSupports an array of values separated by comma or specified via multiple "
             "flags.";
    }
    if (!is_zero_default(d.default_text)) {
      if (d.kind == Kind::string) {
        out << " (default \"" << d.default_text << "\")";
      } else {
        out << " (default " << d.default_text << ")";
      }
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace

std::vector<std::string> listen_addrs(const Flags& flags) {
  if (flags.http_listen_addr.empty()) return {":8880"};
  return flags.http_listen_addr;
}

std::vector<std::string> split_array_flag(const std::string& value) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : value) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      cur += c;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  // "a," is {"a", ""} as in Go's flagutil: index-matched arrays (-notifier.*) need the empty
  // value to say "nothing for the second URL".
  out.push_back(cur);
  return out;
}

core::Result<ParseFlagsResult> parse_flags(int argc, const char* const* argv,
                                           const std::function<const char*(const char*)>& getenv) {
  po::options_description desc;
  auto add = [&desc](const char* name, Kind kind) {
    if (kind == Kind::boolean) {
      desc.add_options()(name, po::value<std::string>()->implicit_value("true"));
    } else if (kind == Kind::bool_array) {
      // Go's flagutil.ArrayBool is a boolean flag: bare "-name" means true.
      desc.add_options()(name, po::value<std::vector<std::string>>()->composing()->implicit_value(
                                   std::vector<std::string>{"true"}, "true"));
    } else if (is_array(kind)) {
      desc.add_options()(name, po::value<std::vector<std::string>>()->composing());
    } else {
      desc.add_options()(name, po::value<std::string>());
    }
  };
  for (const auto& d : flag_defs()) add(d.name, d.kind);
  for (const auto& p : passive_flag_defs()) add(p.name, p.kind);
  // Go flags: a single or double dash, a value after '=' or as the next argument; no
  // abbreviations (allow_guessing off), no short options.
  const int style = po::command_line_style::allow_long |
                    po::command_line_style::long_allow_adjacent |
                    po::command_line_style::long_allow_next |
                    po::command_line_style::allow_long_disguise;
  po::variables_map vm;
  try {
    // Go takes "-name=" as an empty value; Boost wants something after '=': "-name" "".
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.size() > 2 && a.front() == '-' && a.back() == '=' &&
          a.find('=') == a.size() - 1) {
        a.pop_back();
        args.push_back(std::move(a));
        args.emplace_back();
      } else {
        args.push_back(std::move(a));
      }
    }
    auto parsed = po::command_line_parser(args).options(desc).style(style).run();
    // Tokens that match no flag come back as positional: Go's flag package refuses them.
    for (const auto& tok : po::collect_unrecognized(parsed.options, po::include_positional)) {
      std::string name = tok.substr(0, tok.find('='));
      if (name.empty() || name.front() != '-') {
        return core::fail("unexpected argument \"" + tok + "\": flags look like -name=value");
      }
      while (!name.empty() && name.front() == '-') name.erase(0, 1);
      return core::fail("flag provided but not defined: -" + name);
    }
    po::store(parsed, vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    while (!name.empty() && name.front() == '-') name.erase(0, 1);
    return core::fail("flag provided but not defined: -" + name);
  } catch (const po::error_with_option_name& e) {
    std::string name = e.get_option_name();
    while (!name.empty() && name.front() == '-') name.erase(0, 1);
    return core::fail("bad flag -" + name + ": " + e.what());
  } catch (const po::error& e) {
    return core::fail(std::string("bad command line: ") + e.what());
  }

  // The values of one flag: from the command line, else (with -envflag.enable) from the
  // environment, as vmalert's envflag.Parse does.
  bool env_enabled = false;
  std::string env_prefix;
  if (vm.count("envflag.enable")) {
    if (!parse_bool(vm["envflag.enable"].as<std::string>(), env_enabled).empty()) {
      return core::fail("invalid value \"" + vm["envflag.enable"].as<std::string>() +
                        "\" for flag -envflag.enable: not a boolean");
    }
  }
  if (vm.count("envflag.prefix")) env_prefix = vm["envflag.prefix"].as<std::string>();
  auto values_of = [&](const char* name, Kind kind) -> std::optional<std::vector<std::string>> {
    if (vm.count(name)) {
      if (is_array(kind)) return vm[name].as<std::vector<std::string>>();
      return std::vector<std::string>{vm[name].as<std::string>()};
    }
    if (!env_enabled || !getenv) return std::nullopt;
    const std::string_view n = name;
    if (n == "envflag.enable" || n == "envflag.prefix") return std::nullopt;
    std::string env = env_prefix + std::string(n);
    for (auto& c : env) {
      if (c == '.' || c == '-') c = '_';
    }
    const char* v = getenv(env.c_str());
    if (v == nullptr) return std::nullopt;
    return std::vector<std::string>{v};
  };
  std::vector<std::pair<std::string, std::string>> given;  // for /flags
  auto remember = [&given](const char* name, const std::vector<std::string>& values) {
    std::string joined;
    for (const auto& v : values) {
      if (!joined.empty()) joined += ',';
      joined += v;
    }
    given.emplace_back(name, std::move(joined));
  };

  ParseFlagsResult result;
  for (const auto& d : flag_defs()) {
    auto values = values_of(d.name, d.kind);
    if (!values) continue;
    for (const auto& v : *values) {
      if (auto err = d.apply(result.flags, v); !err.empty()) {
        // A URL flag's password stays out of the message.
        const std::string shown = is_secret_flag(d.name) ? net::redact_url(v) : v;
        return core::fail("invalid value \"" + shown + "\" for flag -" + d.name + ": " + err);
      }
    }
    remember(d.name, *values);
  }
  for (const auto& p : passive_flag_defs()) {
    auto values = values_of(p.name, p.kind);
    if (!values) continue;
    bool noop = true;
    for (const auto& v : *values) {
      const std::vector<std::string> items =
          p.kind == Kind::bool_array ? split_array_flag(v) : std::vector<std::string>{v};
      for (const auto& item : items) {
        if (p.kind == Kind::bool_array && item.empty()) continue;  // empty = false, as Go's
        if (auto err = check_value(p.kind, item); !err.empty()) {
          return core::fail("invalid value \"" + item + "\" for flag -" + p.name + ": " + err);
        }
        noop = noop && is_noop_value(p.kind, p.default_text, item);
      }
    }
    remember(p.name, *values);
    if (noop) continue;
    switch (p.support) {
      case Support::refuse:
        return core::fail("flag -" + std::string(p.name) + " is refused: " +
                          p.reason);
      case Support::warn:
        result.flags.ignored_flag_warnings.push_back("flag -" + std::string(p.name) +
                                                     " is accepted but ignored: " + p.reason);
        break;
    }
  }
  std::sort(given.begin(), given.end());
  for (const auto& [name, value] : given) {
    result.flags.set_flags.push_back("-" + name + "=" +
                                     go_quote(is_secret_flag(name) ? "secret" : value));
  }
  result.help_text = help_text();
  return result;
}

std::string flags_markdown() {
  std::string out =
      "# Flags\n\n"
      "<!-- Generated by `alertd -printFlagsMarkdown` from app/flags.cpp; the CTest test\n"
      "     docs.flags_md_up_to_date fails when this file differs. Do not edit by hand. -->\n\n"
      "Every flag of vmalert v1.93 (and the later ones a current vmalert command line may hold)\n"
      "is accepted. The `alertd` column says what alertd does with it:\n\n"
      "- **implemented**: as vmalert does (see the description for any difference);\n"
      "- **alertd only**: a flag vmalert does not have;\n"
      "- **ignored (warning)**: accepted, and alertd logs one warning at start naming the flag\n"
      "  and why, when it is set to anything but its default (it tunes Go's runtime, caches or\n"
      "  connection pools, is an Enterprise feature, or means nothing for alertd);\n"
      "- **refused when set**: set to anything but its default, alertd exits with status 2 and\n"
      "  says why, rather than silently doing something else (e.g. serving plain HTTP when\n"
      "  `-tls` asks for HTTPS).\n\n"
      "Flags take `-name=value`, `--name=value` or `-name value`; booleans also take a bare\n"
      "`-name`; array flags repeat or take comma-separated values. With `-envflag.enable`, a\n"
      "flag missing from the command line is read from the environment variable named\n"
      "`-envflag.prefix` + the flag name with `.` replaced by `_` (e.g. `datasource_url`).\n\n"
      "| flag | type | default | alertd | description |\n"
      "|---|---|---|---|---|\n";
  auto cell = [](std::string_view v) {
    std::string c;
    for (char ch : v) {
      if (ch == '|') {
        c += "\\|";
      } else if (ch == '\n') {
        c += ' ';
      } else {
        c += ch;
      }
    }
    return c;
  };
  for (const FlagDoc& d : flag_docs()) {
    const auto type = type_name(d.kind);
    out.append("| `-").append(d.name).append("` | ").append(type.empty() ? "bool" : type);
    out.append(" | ");
    if (!d.default_text.empty()) out.append("`").append(cell(d.default_text)).append("`");
    out.append(" | ").append(d.status).append(" | ").append(cell(d.help)).append(" |\n");
  }
  return out;
}

}  // namespace app
