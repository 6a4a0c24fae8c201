#include "app/daemon.hpp"

#include "net/asio.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "app/api.hpp"
#include "app/asio_clock.hpp"
#include "app/auth.hpp"
#include "app/memory.hpp"
#include "app/limits.hpp"
#include "app/logging.hpp"
#include "app/manager.hpp"
#include "app/notifier_set.hpp"
#include "app/notifier_discovery.hpp"
#include "app/oauth2.hpp"
#include "app/notifier_targets.hpp"
#include "app/pushmetrics.hpp"
#include "app/replay.hpp"
#include "app/secret_file.hpp"
#include "app/snapshot.hpp"
#include "app/state_file.hpp"
#include "config/glob.hpp"
#include "config/loader.hpp"
#include "core/duration.hpp"
#include "core/hash.hpp"
#include "datasource/http_querier.hpp"
#include "datasource/remote_write.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "notifier/alertmanager_client.hpp"
#include "rules/alerting_rule.hpp"
#include "templates/template.hpp"

namespace app {
namespace asio = boost::asio;

namespace {

// -rule.templates: every matching file's {{ define }} blocks, shared by all rules.
core::Result<templates::TemplateSet> load_template_files(const std::vector<std::string>& patterns,
                                                        uint64_t* checksum = nullptr) {
  std::vector<templates::TemplateSet::File> files;
  for (const auto& pattern : patterns) {
    std::vector<std::string> paths;
    if (config::has_glob_meta(pattern)) {
      auto matched = config::glob_files(pattern);
      if (!matched) return core::fail(matched.error().wrap("-rule.templates=" + pattern));
      paths = std::move(*matched);
    } else {
      paths.push_back(pattern);
    }
    for (const auto& path : paths) {
      std::ifstream in(path, std::ios::binary);
      if (!in) return core::fail("-rule.templates: cannot read " + path);
      std::stringstream ss;
      ss << in.rdbuf();
      const auto slash = path.rfind('/');
      files.push_back({slash == std::string::npos ? path : path.substr(slash + 1), ss.str()});
    }
  }
  if (checksum != nullptr) {
    core::Fnv1a64 h;
    for (const auto& f : files) {
      h.add(f.name);
      h.add_byte(0xFF);
      h.add(f.text);
      h.add_byte(0xFF);
    }
    *checksum = h.value();
  }
  if (files.empty()) return templates::TemplateSet{};
  return templates::TemplateSet::parse(files);
}

config::LoadOptions load_options(const Flags& flags, const templates::TemplateSet* templates) {
  config::LoadOptions lo;
  lo.paths = flags.rule;
  lo.default_interval = flags.evaluation_interval;
  lo.default_eval_delay = flags.rule_eval_delay;
  lo.default_rule_type = flags.rule_default_rule_type;
  lo.default_limit = flags.rule_results_limit;
  lo.validate_templates = flags.rule_validate_templates;
  lo.validate_expressions = flags.rule_validate_expressions;
  lo.check_template = [templates](std::string_view text) {
    return templates::check_template(text, templates);
  };
  lo.fetch = [](const std::string& url) -> core::Result<std::string> {
    net::Request req;
    req.method = "GET";
    req.url = url;
    req.timeout = std::chrono::seconds(30);
    req.max_response_bytes = config::kMaxRuleFileBytes;
    auto resp = net::fetch_blocking(std::move(req));
    if (!resp) return core::fail(resp.error());
    if (resp->status != 200) {
      return core::fail("unexpected status code " + std::to_string(resp->status) +
                        " when fetching " + url);
    }
    return std::move(resp->body);
  };
  return lo;
}

size_t count_rules(const std::vector<config::GroupSpec>& groups) {
  size_t n = 0;
  for (const auto& g : groups) n += g.rules.size();
  return n;
}

// vmalert's default -external.url: http(s)://<hostname>:<port of the first -httpListenAddr>,
// https when -tls is set for it.
std::string default_external_url(const Flags& flags) {
  const std::string listen_addr = listen_addrs(flags).front();
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  const auto colon = listen_addr.rfind(':');
  const std::string port = colon == std::string::npos ? "8880" : listen_addr.substr(colon + 1);
  const bool tls = optional_arg(flags.tls, 0);
  return std::string(tls ? "https" : "http") + "://" + std::string(host) + ":" + port;
}

// The HTTPS settings of the i-th -httpListenAddr, nullopt for plain HTTP; an error names the
// flag that is missing.
core::Result<std::optional<net::ServerTls>> listener_tls(const Flags& flags, size_t i) {
  if (!optional_arg(flags.tls, i)) return std::optional<net::ServerTls>();
  net::ServerTls tls;
  tls.cert_file = optional_arg(flags.tls_cert_file, i);
  tls.key_file = optional_arg(flags.tls_key_file, i);
  tls.min_version = optional_arg(flags.tls_min_version, i);
  tls.cipher_suites = flags.tls_cipher_suites;
  if (tls.cert_file.empty()) return core::fail("-tls is set but -tlsCertFile is empty");
  if (tls.key_file.empty()) return core::fail("-tls is set but -tlsKeyFile is empty");
  return std::optional<net::ServerTls>(std::move(tls));
}

// Everything a (re)load produces, built off the loop (files and URLs are read here).
struct LoadedConfig {
  std::shared_ptr<const templates::TemplateSet> templates;
  uint64_t templates_checksum = 0;  // of the -rule.templates files' names and text
  config::LoadResult rules;
};

core::Result<LoadedConfig> load_config(const Flags& flags) {
  LoadedConfig out;
  auto templates = load_template_files(flags.rule_templates, &out.templates_checksum);
  if (!templates) return core::fail(templates.error());
  out.templates = std::make_shared<const templates::TemplateSet>(std::move(*templates));
  out.rules = config::load_rules(load_options(flags, out.templates.get()));
  return out;
}

rules::GroupContext group_context(const Flags& flags) {
  rules::GroupContext ctx;
  ctx.external_labels = flags.external_labels;
  ctx.external_url =
      flags.external_url.empty() ? default_external_url(flags) : flags.external_url;
  while (!ctx.external_url.empty() && ctx.external_url.back() == '/') ctx.external_url.pop_back();
  ctx.disable_alertgroup_label = flags.disable_alertgroup_label;
  ctx.update_entries_limit = flags.rule_update_entries_limit;
  ctx.resend_delay = flags.rule_resend_delay;
  ctx.max_resolve_duration = flags.rule_max_resolve_duration;
  ctx.keep_firing_on_error = flags.rule_keep_firing_on_error;
  ctx.emit_series = !flags.remote_write_url.empty();  // series are built only to be written
  return ctx;
}

NotifierStateOptions notifier_state_options(const Flags& flags) {
  NotifierStateOptions o;
  o.dns_server = flags.notifier_dns_server;
  o.suppress_duplicate_target_errors = flags.notifier_suppress_duplicate_target_errors;
  // A zero or negative interval would poll Consul without pause.
  o.consul_sd_check_interval =
      std::max<core::Duration>(flags.promscrape_consul_sd_check_interval, std::chrono::seconds(1));
  return o;
}

// The flags one Prometheus-compatible endpoint is reached with (-datasource.*, -remoteRead.*).
struct EndpointFlags {
  std::string_view prefix;  // for error messages: "-datasource"
  const std::string& url;
  const std::string& basic_auth_username;
  const std::string& basic_auth_password;
  const std::string& basic_auth_password_file;
  const std::string& bearer_token;
  const std::string& bearer_token_file;
  const OAuth2FlagValues& oauth2;
  const std::string& headers;
  const std::string& tls_ca_file;
  const std::string& tls_cert_file;
  const std::string& tls_key_file;
  const std::string& tls_server_name;
  bool tls_insecure_skip_verify;
  bool show_url;
  // The client pool (-PREFIX.idleConnTimeout; the datasource's also -datasource.disableKeepAlive
  // and -datasource.maxIdleConnections).
  core::Duration idle_conn_timeout = std::chrono::seconds(50);
  bool disable_keep_alive = false;
  int max_idle_connections = 100;
};

EndpointFlags datasource_endpoint(const Flags& f) {
  return {"-datasource", f.datasource_url, f.datasource_basic_auth_username,
          f.datasource_basic_auth_password, f.datasource_basic_auth_password_file,
          f.datasource_bearer_token, f.datasource_bearer_token_file, f.datasource_oauth2,
          f.datasource_headers,
          f.datasource_tls_ca_file, f.datasource_tls_cert_file, f.datasource_tls_key_file,
          f.datasource_tls_server_name, f.datasource_tls_insecure_skip_verify,
          f.datasource_show_url, f.datasource_idle_conn_timeout,
          f.datasource_disable_keep_alive, f.datasource_max_idle_connections};
}

EndpointFlags remote_write_endpoint(const Flags& f) {
  return {"-remoteWrite", f.remote_write_url, f.remote_write_basic_auth_username,
          f.remote_write_basic_auth_password, f.remote_write_basic_auth_password_file,
          f.remote_write_bearer_token, f.remote_write_bearer_token_file, f.remote_write_oauth2,
          f.remote_write_headers,
          f.remote_write_tls_ca_file, f.remote_write_tls_cert_file, f.remote_write_tls_key_file,
          f.remote_write_tls_server_name, f.remote_write_tls_insecure_skip_verify,
          f.remote_write_show_url, f.remote_write_idle_conn_timeout};
}

EndpointFlags remote_read_endpoint(const Flags& f) {
  return {"-remoteRead", f.remote_read_url, f.remote_read_basic_auth_username,
          f.remote_read_basic_auth_password, f.remote_read_basic_auth_password_file,
          f.remote_read_bearer_token, f.remote_read_bearer_token_file, f.remote_read_oauth2,
          f.remote_read_headers,
          f.remote_read_tls_ca_file, f.remote_read_tls_cert_file, f.remote_read_tls_key_file,
          f.remote_read_tls_server_name, f.remote_read_tls_insecure_skip_verify,
          f.remote_read_show_url, f.remote_read_idle_conn_timeout};
}

// -PREFIX.oauth2.*: nullopt when none is set. With basic auth or a bearer token too: an error.
core::Result<std::optional<OAuth2Settings>> endpoint_oauth2(const EndpointFlags& e) {
  const std::string prefix = std::string(e.prefix) + ".oauth2";
  auto s = oauth2_from_flags(OAuth2Flags{prefix, e.oauth2.client_id, e.oauth2.client_secret,
                                         e.oauth2.client_secret_file, e.oauth2.scopes,
                                         e.oauth2.endpoint_params, e.oauth2.token_url, ""});
  if (!s) return core::fail(s.error());
  if (*s && (!e.basic_auth_username.empty() || !e.basic_auth_password.empty() ||
             !e.basic_auth_password_file.empty() || !e.bearer_token.empty() ||
             !e.bearer_token_file.empty())) {
    return core::fail(prefix + ".* cannot be used with " + std::string(e.prefix) +
                          ".basicAuth.* or " + std::string(e.prefix) + ".bearerToken(File)",
                      core::ErrorKind::bad_config);
  }
  return s;
}

// An OAuth2Transport in front of `http` when `oauth2` is set, else null.
std::unique_ptr<OAuth2Transport> oauth2_in_front(net::Transport& http,
                                                 const std::optional<OAuth2Settings>& oauth2) {
  if (!oauth2) return nullptr;
  return std::make_unique<OAuth2Transport>(http, *oauth2);
}

net::Transport& via(net::Transport& http, const std::unique_ptr<OAuth2Transport>& oauth2) {
  return oauth2 ? static_cast<net::Transport&>(*oauth2) : http;
}

core::Result<datasource::HttpQuerierOptions> querier_options(const Flags& flags,
                                                             const EndpointFlags& e) {
  datasource::HttpQuerierOptions ds;
  ds.url = e.url;
  ds.append_type_prefix = flags.datasource_append_type_prefix;
  ds.query_step = flags.datasource_query_step;
  ds.disable_step_param = flags.datasource_disable_step_param;
  ds.round_digits = flags.datasource_round_digits;
  ds.show_url = e.show_url;
  ds.headers = e.headers;
  ds.basic_auth_username = e.basic_auth_username;
  ds.basic_auth_password = e.basic_auth_password;
  if (!e.basic_auth_password_file.empty()) {
    auto secret = read_secret_file(std::string(e.prefix) + ".basicAuth.passwordFile",
                                   e.basic_auth_password_file);
    if (!secret) return core::fail(secret.error());
    ds.basic_auth_password = std::move(*secret);
  }
  ds.bearer_token = e.bearer_token;
  if (!e.bearer_token_file.empty()) {
    auto secret = read_secret_file(std::string(e.prefix) + ".bearerTokenFile", e.bearer_token_file);
    if (!secret) return core::fail(secret.error());
    ds.bearer_token = std::move(*secret);
  }
  ds.query_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.datasource_query_timeout);
  ds.max_response_size = flags.datasource_max_response_size;
  ds.max_concurrent_queries =
      static_cast<size_t>(std::max(0, flags.datasource_max_concurrent_queries));
  return ds;
}

// -remoteWrite.*: what the writer needs besides the transport (auth secrets read from files).
core::Result<datasource::RemoteWriteOptions> remote_write_options(const Flags& flags) {
  const EndpointFlags e = remote_write_endpoint(flags);
  datasource::RemoteWriteOptions o;
  o.url = e.url;
  o.disable_path_append = flags.remote_write_disable_path_append;
  o.headers = e.headers;
  o.show_url = e.show_url;
  o.basic_auth_username = e.basic_auth_username;
  o.basic_auth_password = e.basic_auth_password;
  if (!e.basic_auth_password_file.empty()) {
    auto secret = read_secret_file("-remoteWrite.basicAuth.passwordFile",
                                   e.basic_auth_password_file);
    if (!secret) return core::fail(secret.error());
    o.basic_auth_password = std::move(*secret);
  }
  o.bearer_token = e.bearer_token;
  if (!e.bearer_token_file.empty()) {
    auto secret = read_secret_file("-remoteWrite.bearerTokenFile", e.bearer_token_file);
    if (!secret) return core::fail(secret.error());
    o.bearer_token = std::move(*secret);
  }
  if (flags.remote_write_max_queue_size <= 0 || flags.remote_write_max_batch_size <= 0) {
    return core::fail("-remoteWrite.maxQueueSize and -remoteWrite.maxBatchSize must be positive");
  }
  o.max_queue_size = static_cast<size_t>(flags.remote_write_max_queue_size);
  o.max_batch_size = static_cast<size_t>(flags.remote_write_max_batch_size);
  o.flush_interval = flags.remote_write_flush_interval;
  o.concurrency = flags.remote_write_concurrency > 0
                      ? static_cast<size_t>(flags.remote_write_concurrency)
                      : 2 * std::max(1u, std::thread::hardware_concurrency());
  o.retry_min_interval = flags.remote_write_retry_min_interval;
  o.retry_max_time = flags.remote_write_retry_max_time;
  o.send_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.remote_write_send_timeout);
  o.log = [](bool error, std::string_view m) {
    if (error) {
      SPDLOG_ERROR("remote write: {}", m);
    } else {
      SPDLOG_WARN("remote write: {}", m);
    }
  };
  return o;
}

net::ClientOptions client_options(const Flags& flags, const EndpointFlags& e) {
  net::ClientOptions o;
  o.tls.ca_file = e.tls_ca_file;
  o.tls.cert_file = e.tls_cert_file;
  o.tls.key_file = e.tls_key_file;
  o.tls.server_name = e.tls_server_name;
  o.tls.insecure_skip_verify = e.tls_insecure_skip_verify;
  o.max_concurrent = static_cast<size_t>(std::max(0, flags.datasource_max_concurrent_queries));
  o.idle_timeout = std::max(std::chrono::milliseconds::zero(),
                            std::chrono::duration_cast<std::chrono::milliseconds>(e.idle_conn_timeout));
  o.keep_alive = !e.disable_keep_alive;
  // Go's MaxIdleConnsPerHost: 0 means its default of 2, a negative value keeps none.
  o.max_idle_per_host = e.max_idle_connections == 0
                            ? 2
                            : static_cast<size_t>(std::max(0, e.max_idle_connections));
  return o;
}

// Rule errors and warnings to the log; the error to return when the load failed.
std::optional<std::string> report_load(const Flags& flags, const config::LoadResult& loaded) {
  for (const auto& w : loaded.warnings) SPDLOG_WARN("{}", w);
  if (loaded.ok()) return std::nullopt;
  for (const auto& e : loaded.errors) SPDLOG_ERROR("{}", e.message);
  return fmt::format("cannot parse configuration file: {} error(s) in {}", loaded.errors.size(),
                     fmt::join(flags.rule, ", "));
}

bool has_rules(const std::vector<config::GroupSpec>& groups, config::RuleKind kind) {
  for (const auto& g : groups)
    for (const auto& r : g.rules)
      if (r.kind == kind) return true;
  return false;
}

// Recording rules need somewhere to write their results (vmalert refuses them too).
bool remote_write_configured(const Flags& flags) { return !flags.remote_write_url.empty(); }

// What keeps a valid configuration from running with these flags. The daemon refuses to start
// (or a reload fails) on any of them; -dryRun reports them too (and builds every group as the
// daemon does), so it never passes what the daemon would refuse.
std::vector<std::string> flag_problems(const std::vector<config::GroupSpec>& groups,
                                           const Flags& flags) {
  std::vector<std::string> out;
  if (has_rules(groups, config::RuleKind::alerting) && flags.notifier_url.empty() &&
      !flags.notifier_blackhole && flags.notifier_config.empty()) {
    out.emplace_back(
        "there are alerting rules but no -notifier.url, -notifier.config or -notifier.blackhole: "
        "alerts would go nowhere");
  }
  if (has_rules(groups, config::RuleKind::recording) && !remote_write_configured(flags)) {
    out.emplace_back("config contains recording rules but -remoteWrite.url isn't set");
  }
  return out;
}

// -notifier.url, -notifier.config and -notifier.blackhole are mutually exclusive (vmalert).
std::optional<std::string> notifier_mode_problem(const Flags& flags) {
  const int modes = (flags.notifier_url.empty() ? 0 : 1) + (flags.notifier_blackhole ? 1 : 0) +
                    (flags.notifier_config.empty() ? 0 : 1);
  if (modes <= 1) return std::nullopt;
  return std::string(
      "only one of -notifier.url, -notifier.config and -notifier.blackhole may be set");
}

// The logger from the -logger* flags, then one warning per vmalert flag alertd ignores.
bool start_logging(const Flags& flags) {
  if (auto err = setup_logging(flags.logger_level, flags.logger_format, flags.logger_output,
                               flags.logger_timezone, flags.logger_disable_timestamps,
                               flags.logger_json_fields,
                               LogRateLimits{static_cast<uint64_t>(flags.logger_errors_per_second_limit),
                                             static_cast<uint64_t>(flags.logger_warns_per_second_limit)},
                               flags.logger_max_arg_len)) {
    std::fprintf(stderr, "alertd: %s\n", err->c_str());
    return false;
  }
  for (const auto& w : flags.ignored_flag_warnings) SPDLOG_WARN("{}", w);
  return true;
}

int64_t unix_now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int dry_run(const Flags& flags) {
  for (const auto& w : flags.ignored_flag_warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (flags.rule.empty()) {
    std::fprintf(stderr, "-dryRun: no -rule given\n");
    return 1;
  }
  auto templates = load_template_files(flags.rule_templates);
  if (!templates) {
    std::fprintf(stderr, "%s\n", templates.error().message.c_str());
    return 1;
  }
  const auto loaded = config::load_rules(load_options(flags, &*templates));
  for (const auto& w : loaded.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const auto& e : loaded.errors) std::fprintf(stderr, "%s\n", e.message.c_str());
  if (!loaded.ok()) {
    std::fprintf(stderr, "-dryRun: %zu error(s) found\n", loaded.errors.size());
    return 1;
  }
  if (loaded.groups.empty()) {
    std::fprintf(stderr, "-dryRun: no groups found in %s\n",
                 flags.rule.size() == 1 ? flags.rule.front().c_str() : "the -rule paths");
    return 1;
  }
  if (auto err = notifier_mode_problem(flags)) {
    std::fprintf(stderr, "%s\n", err->c_str());
    return 1;
  }
  if (!flags.notifier_config.empty()) {
    if (auto state = load_notifier_state(flags.notifier_config, notifier_state_options(flags)); !state) {
      std::fprintf(stderr, "%s\n-dryRun: notifier config is invalid\n",
                   state.error().message.c_str());
      return 1;
    }
  }
  // Problems that depend on the other flags (no notifier, recording rules without remote
  // write) are errors when the command line is the daemon's (it names a datasource), warnings
  // when it only names rule files (a CI check).
  const bool full_command_line = !flags.datasource_url.empty();
  size_t errors = 0;
  for (const auto& p : flag_problems(loaded.groups, flags)) {
    std::fprintf(stderr, "%s%s\n", full_command_line ? "" : "warning: ", p.c_str());
    if (full_command_line) ++errors;
  }
  // Everything the daemon builds from the groups (templates against -rule.templates, labels).
  for (const auto& g : loaded.groups) {
    if (auto built = rules::Group::create(g, group_context(flags)); !built) {
      std::fprintf(stderr, "%s\n", built.error().message.c_str());
      ++errors;
    }
  }
  if (errors > 0) {
    std::fprintf(stderr, "-dryRun: %zu error(s) found\n", errors);
    return 1;
  }
  std::fprintf(stdout, "-dryRun: %zu group(s) with %zu rule(s) in %zu file(s) are valid\n",
               loaded.groups.size(), count_rules(loaded.groups), loaded.files.size());
  return 0;
}

namespace {

// By when every group has run its first two rounds (its first comes within one interval):
// three of the longest interval, from 5 s to 15 minutes.
std::chrono::steady_clock::duration first_rounds_within(
    const std::vector<config::GroupSpec>& groups) {
  core::Duration longest{};
  for (const auto& g : groups) longest = std::max(longest, g.effective_interval);
  return std::clamp<core::Duration>(3 * longest, std::chrono::seconds(5), std::chrono::minutes(15));
}

}  // namespace

int run(const Flags& flags) {
  tune_malloc();
  if (!start_logging(flags)) return 2;
  // As Go programs do: the soft fd limit up to the hard one, so HTTP clients cannot starve
  // the datasource and Alertmanager connections of descriptors.
  if (auto fd = raise_fd_limit(); !fd) {
    SPDLOG_WARN("cannot raise the open files limit: {}", fd.error().message);
  } else if (fd->after != fd->before) {
    spdlog::info("raised the open files limit from {} to {}", fd->before, fd->after);
  }
  GlobalCounters counters;
  counters.start_time_seconds = unix_now_seconds();

  if (flags.rule.empty()) {
    spdlog::critical("no -rule given: pass at least one rule file, glob or URL");
    return 1;
  }
  if (flags.datasource_url.empty()) {
    spdlog::critical("-datasource.url is empty: alertd needs a Prometheus-compatible datasource");
    return 1;
  }
  if (auto err = notifier_mode_problem(flags)) {
    spdlog::critical("{}", *err);
    return 1;
  }
  std::shared_ptr<const NotifierConfigState> notifier_state;
  if (!flags.notifier_config.empty()) {
    auto state = load_notifier_state(flags.notifier_config, notifier_state_options(flags));
    if (!state) {
      spdlog::critical("{}", state.error().message);
      return 1;
    }
    notifier_state = std::move(*state);
  }
  auto initial = load_config(flags);
  if (!initial) {
    spdlog::critical("{}", initial.error().message);
    return 1;
  }
  if (auto err = report_load(flags, initial->rules)) {
    spdlog::critical("{}", *err);
    return 1;
  }
  if (initial->rules.groups.empty()) SPDLOG_WARN("no groups found in {}", fmt::join(flags.rule, ", "));
  if (const auto problems = flag_problems(initial->rules.groups, flags); !problems.empty()) {
    for (const auto& p : problems) spdlog::critical("{}", p);
    return 1;
  }
  auto ds_options = querier_options(flags, datasource_endpoint(flags));
  if (!ds_options) {
    spdlog::critical("{}", ds_options.error().message);
    return 1;
  }
  auto ds_oauth2 = endpoint_oauth2(datasource_endpoint(flags));
  if (!ds_oauth2) {
    spdlog::critical("{}", ds_oauth2.error().message);
    return 1;
  }

  // The evaluation loop: groups, datasource and notifier clients.
  asio::io_context io(1);
  AsioClock clock(io);
  net::HttpClient ds_http(io, client_options(flags, datasource_endpoint(flags)));
  auto ds_oauth2_http = oauth2_in_front(ds_http, *ds_oauth2);
  auto factory = datasource::HttpQuerierFactory::create(via(ds_http, ds_oauth2_http), *ds_options);
  if (!factory) {
    spdlog::critical("-datasource.url: {}", factory.error().message);
    return 1;
  }
  auto notifier_clients = NotifierClients::create(io, clock, flags);
  if (!notifier_clients) {
    spdlog::critical("{}", notifier_clients.error().message);
    return 1;
  }
  NotifierSet notifiers;
  notifiers.set((*notifier_clients)->notifiers());
  // -notifier.config: targets from the file and its discovery, swapped in by a thread of its own.
  std::unique_ptr<NotifierPool> notifier_pool;
  std::unique_ptr<NotifierDiscovery> discovery;
  if (notifier_state) {
    auto delivery = delivery_options(flags);
    if (!delivery) {
      spdlog::critical("{}", delivery.error().message);
      return 1;
    }
    notifier_pool = std::make_unique<NotifierPool>(
        clock, std::move(*delivery), flags.notifier_show_url, [&io](const net::TlsOptions& tls) {
          net::ClientOptions o;
          o.tls = tls;
          return std::make_unique<net::HttpClient>(io, o);
        });
    discovery = std::make_unique<NotifierDiscovery>(clock, *notifier_pool, notifiers);
    discovery->start(notifier_state);
  }
  // -remoteWrite.url: recording results and ALERTS / ALERTS_FOR_STATE; otherwise series are not
  // even built (GroupContext::emit_series) and the null writer stands in.
  datasource::NullSeriesWriter null_series;
  std::unique_ptr<net::HttpClient> rw_http;
  std::unique_ptr<OAuth2Transport> rw_oauth2_http;
  std::unique_ptr<datasource::RemoteWriter> remote_writer;
  if (remote_write_configured(flags)) {
    auto rw_options = remote_write_options(flags);
    if (!rw_options) {
      spdlog::critical("{}", rw_options.error().message);
      return 1;
    }
    auto rw_oauth2 = endpoint_oauth2(remote_write_endpoint(flags));
    if (!rw_oauth2) {
      spdlog::critical("{}", rw_oauth2.error().message);
      return 1;
    }
    auto rw_client = client_options(flags, remote_write_endpoint(flags));
    rw_client.max_concurrent = rw_options->concurrency;
    rw_http = std::make_unique<net::HttpClient>(io, rw_client);
    rw_oauth2_http = oauth2_in_front(*rw_http, *rw_oauth2);
    auto rw = datasource::RemoteWriter::create(via(*rw_http, rw_oauth2_http), clock,
                                               std::move(*rw_options));
    if (!rw) {
      spdlog::critical("{}", rw.error().message);
      return 1;
    }
    remote_writer = std::move(*rw);
    spdlog::info("remote write to {}", remote_writer->display_url());
  }
  datasource::SeriesWriter& series =
      remote_writer ? static_cast<datasource::SeriesWriter&>(*remote_writer) : null_series;
  SnapshotStore store;

  // -state.path: read once before the first round; a bad file is reported and ignored.
  std::unique_ptr<StateFile> state_file;
  std::optional<SavedState> saved;
  if (!flags.state_path.empty()) {
    if (auto read = StateFile::read(flags.state_path); read) {
      saved = std::move(*read);
    } else {
      SPDLOG_ERROR("{}; starting without the saved alert state", read.error().message);
    }
    state_file = std::make_unique<StateFile>(flags.state_path);
  }

  SchedulerOptions sched;
  sched.max_start_delay = flags.group_max_start_delay;
  sched.query_timeout = flags.datasource_query_timeout;
  // -remoteRead.url: alert state restore before the first rounds.
  std::unique_ptr<net::HttpClient> rr_http;
  std::unique_ptr<OAuth2Transport> rr_oauth2_http;
  std::unique_ptr<datasource::HttpQuerierFactory> rr_factory;
  if (!flags.remote_read_url.empty()) {
    auto rr_options = querier_options(flags, remote_read_endpoint(flags));
    if (!rr_options) {
      spdlog::critical("{}", rr_options.error().message);
      return 1;
    }
    rr_options->disable_path_append = flags.remote_read_disable_path_append;
    auto rr_oauth2 = endpoint_oauth2(remote_read_endpoint(flags));
    if (!rr_oauth2) {
      spdlog::critical("{}", rr_oauth2.error().message);
      return 1;
    }
    rr_http = std::make_unique<net::HttpClient>(io, client_options(flags, remote_read_endpoint(flags)));
    rr_oauth2_http = oauth2_in_front(*rr_http, *rr_oauth2);
    auto f = datasource::HttpQuerierFactory::create(via(*rr_http, rr_oauth2_http), *rr_options);
    if (!f) {
      spdlog::critical("-remoteRead.url: {}", f.error().message);
      return 1;
    }
    rr_factory = std::move(*f);
  }
  Manager manager(
      ManagerDeps{clock, notifiers, series, store, counters, **factory,
                  [](const std::string& name) { return std::make_unique<ThreadWorker>(name); },
                  state_file.get(), rr_factory.get(), flags.remote_read_lookback},
      sched);
  if (saved) manager.restore_on_next_apply(std::move(*saved));
  auto ctx = group_context(flags);
  // vmalert: after -dryRun, before the first rules are started; -rule.templates' defines are
  // available to the source (the set loaded at start-up).
  if (auto source = rules::parse_alert_source(flags.external_alert_source,
                                              flags.rule_validate_templates,
                                              initial->templates.get());
      !source) {
    spdlog::critical("failed to init `-external.alert.source`: {}", source.error().message);
    return 1;
  } else {
    ctx.alert_source = std::move(*source);
  }
  const auto first_rounds = first_rounds_within(initial->rules.groups);
  if (auto applied = manager.apply(std::move(initial->rules.groups), ctx,
                                   std::move(initial->templates), initial->templates_checksum);
      !applied) {
    spdlog::critical("cannot start: {}", applied.error().message);
    return 1;
  } else if (applied->restored > 0) {
    spdlog::info("restored {} pending or firing alert(s) from {}", applied->restored,
                 flags.state_path);
  }
  counters.config_last_reload_success_timestamp_seconds = counters.start_time_seconds.load();

  ReloadStatus reload_status;  // the last reload's error, for the UI
  // Reload (SIGHUP, /-/reload): files are read on a thread of their own, the result is applied
  // on the loop. One reload at a time; a request during one runs once it ends.
  std::thread reload_thread;
  bool reload_running = false;
  bool reload_again = false;
  bool shutting_down = false;
  std::function<void(bool)> start_reload;  // argument: a periodic -configCheckInterval check
  start_reload = [&](bool periodic) {
    if (shutting_down) return;
    if (reload_running) {
      reload_again = reload_again || !periodic;
      return;
    }
    reload_running = true;
    if (!periodic) counters.config_last_reload_total.fetch_add(1);
    if (reload_thread.joinable()) reload_thread.join();
    reload_thread = std::thread([&, periodic] {
      auto loaded = std::make_shared<core::Result<LoadedConfig>>(load_config(flags));
      auto notifier_loaded =
          std::make_shared<core::Result<std::shared_ptr<const NotifierConfigState>>>(
              std::shared_ptr<const NotifierConfigState>());
      if (!flags.notifier_config.empty()) {
        *notifier_loaded = load_notifier_state(flags.notifier_config, notifier_state_options(flags));
      }
      asio::post(io, [&, loaded, notifier_loaded, periodic] {
        reload_running = false;
        std::optional<std::string> err;
        if (!*loaded) {
          err = loaded->error().message;
        } else if (!*notifier_loaded) {
          err = notifier_loaded->error().message;
        } else {
          err = report_load(flags, (*loaded)->rules);
          if (!err) {
            const auto problems = flag_problems((*loaded)->rules.groups, flags);
            if (!problems.empty()) err = fmt::format("{}", fmt::join(problems, "; "));
          }
        }
        bool changed = !periodic;
        if (!err && !shutting_down) {
          const auto reloaded_rounds = first_rounds_within((*loaded)->rules.groups);
          auto applied = manager.apply(std::move((*loaded)->rules.groups), ctx,
                                       std::move((*loaded)->templates),
                                       (*loaded)->templates_checksum);
          if (!applied) {
            err = applied.error().message;
          } else {
            changed = changed || applied->started + applied->updated + applied->stopped > 0;
            // The notifier config: a changed file replaces the state; either way the targets
            // are discovered again (file_sd files re-read); unchanged targets keep their queue.
            if (discovery && **notifier_loaded) {
              auto current = discovery->state();
              if ((**notifier_loaded)->config.checksum != current->config.checksum) {
                spdlog::info("-notifier.config={} changed: applying it", flags.notifier_config);
                discovery->reload(std::move(**notifier_loaded));
                changed = true;
              } else {
                discovery->reload(std::move(current));
              }
            }
            if (changed) {
              spdlog::info(
                  "configuration reloaded: {} group(s) started, {} updated, {} unchanged, {} "
                  "stopped",
                  applied->started, applied->updated, applied->unchanged, applied->stopped);
              memory_releaser().after_startup(reloaded_rounds);
            }
          }
        }
        if (err) {
          if (periodic) counters.config_last_reload_total.fetch_add(1);
          counters.config_last_reload_successful = 0;
          counters.config_last_reload_errors_total.fetch_add(1);
          SPDLOG_ERROR("configuration reload failed, the previous configuration keeps running: {}",
                        *err);
          reload_status.set_error(*err);
        } else {
          reload_status.set_error("");
        }
        if (!err && !shutting_down && changed) {
          if (periodic) counters.config_last_reload_total.fetch_add(1);
          counters.config_last_reload_successful = 1;
          counters.config_last_reload_success_timestamp_seconds = unix_now_seconds();
        }
        if (reload_again) {
          reload_again = false;
          start_reload(false);
        }
      });
    });
  };
  // -configCheckInterval: the same reload, quietly, when something changed.
  asio::steady_timer config_check(io);
  std::function<void()> arm_config_check = [&] {
    if (flags.config_check_interval <= core::Duration::zero() || shutting_down) return;
    config_check.expires_after(flags.config_check_interval);
    config_check.async_wait([&](const boost::system::error_code& ec) {
      if (ec || shutting_down) return;
      start_reload(true);
      arm_config_check();
    });
  };
  arm_config_check();

  // The HTTP server has a loop and a thread of its own: serving never waits on evaluation.
  asio::io_context http_io(1);
  std::atomic<bool> ready{false};
  ApiContext api;
  api.store = &store;
  api.counters = &counters;
  api.notifiers = &notifiers;
  api.remote_write = remote_writer ? &remote_writer->stats() : nullptr;
  api.ready = &ready;
  api.reload = [&] { asio::post(io, [&] { start_reload(false); }); };
  api.reload_auth_key = flags.reload_auth_key;
  api.reload_status = &reload_status;
  // -pushmetrics.url: the /metrics page pushed from the HTTP thread's loop, which renders it
  // for scrapes too (app/pushmetrics.hpp); evaluation and its queries never wait on it.
  AsioClock http_clock(http_io);
  std::unique_ptr<net::HttpClient> push_http;
  std::unique_ptr<MetricsPusher> pusher;
  if (!flags.pushmetrics_url.empty()) {
    push_http = std::make_unique<net::HttpClient>(http_io, net::ClientOptions{});
    PushOptions push_options;
    push_options.urls = flags.pushmetrics_url;
    push_options.interval = flags.pushmetrics_interval;
    push_options.extra_labels = flags.pushmetrics_extra_label;
    push_options.headers = flags.pushmetrics_header;
    push_options.disable_compression = flags.pushmetrics_disable_compression;
    pusher = std::make_unique<MetricsPusher>(http_clock, *push_http, std::move(push_options),
                                             [&api] { return metrics_page(api); });
    api.push = pusher->stats();
    std::vector<std::string> shown;
    for (const auto* st : api.push) shown.push_back(st->url);
    spdlog::info("pushing /metrics to {} every {}", fmt::join(shown, ", "),
                 core::format_go_duration(flags.pushmetrics_interval));
    asio::post(http_io, [&pusher] { pusher->start(); });
  }
  net::ServerOptions http_options;
  http_options.log_error = [](std::string_view m) { SPDLOG_ERROR("{}", m); };
  http_options.log_info = [](std::string_view m) { spdlog::info("{}", m); };
  http_options.idle_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.http_idle_conn_timeout);
  http_options.conn_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.http_conn_timeout);
  http_options.compress_responses = !flags.http_disable_response_compression;
  ServerGuard guard;
  guard.path_prefix = flags.http_path_prefix;
  guard.username = flags.http_auth_username;
  guard.password = flags.http_auth_password;
  guard.metrics_auth_key = flags.metrics_auth_key;
  guard.flags_auth_key = flags.flags_auth_key;
  guard.pprof_auth_key = flags.pprof_auth_key;
  guard.reload_auth_key = flags.reload_auth_key;
  guard.flags_lines = flags.set_flags;
  guard.header_csp = flags.http_header_csp;
  guard.header_frame_options = flags.http_header_frame_options;
  guard.header_hsts = flags.http_header_hsts;
  std::atomic<bool> delayed_shutdown{false};
  guard.delayed_shutdown = &delayed_shutdown;
  const net::RequestHandler api_handler = [&api](const net::ServerRequest& req) {
    return handle_request(api, req);
  };
  net::HttpServer server(
      http_io,
      [&guard, &api_handler](const net::ServerRequest& req) {
        auto resp = guarded_request(guard, req, api_handler);
        // What building a big answer freed goes back (the body itself is one mmap'd block).
        memory_releaser().after_work();
        return resp;
      },
      std::move(http_options));
  const auto addrs = listen_addrs(flags);
  std::vector<std::string> listening;
  for (size_t i = 0; i < addrs.size(); ++i) {
    auto tls = listener_tls(flags, i);
    net::ListenOptions listen_options;
    listen_options.proxy_protocol = optional_arg(flags.http_listen_addr_use_proxy_protocol, i);
    if (tls && *tls) listen_options.tls = **tls;
    core::Result<void> r =
        tls ? server.listen(addrs[i], listen_options) : core::Result<void>(core::fail(tls.error()));
    if (!r) {
      spdlog::critical("-httpListenAddr={}: {}", addrs[i], r.error().message);
      return 1;
    }
    listening.push_back(fmt::format("{}://{} (port {}{})", *tls ? "https" : "http", addrs[i],
                                    server.ports()[i],
                                    listen_options.proxy_protocol ? ", PROXY protocol" : ""));
  }
  spdlog::info("alertd started: {} group(s) from {} file(s); listening on {}", manager.size(),
               initial->rules.files.size(), fmt::join(listening, ", "));
  // What only startup used (option parsing, yaml-cpp, the loader's tables) leaves RSS.
  memory_releaser().after_startup(first_rounds);
  // Set when the HTTP thread's loop has run out of work (after shutdown(): every connection
  // done), so that the exit waits for requests in progress at most
  // -http.maxGracefulShutdownDuration.
  std::mutex http_mu;
  std::condition_variable http_cv;
  bool http_done = false;
  std::thread http_thread([&] {
    http_io.run();
    std::lock_guard lock(http_mu);
    http_done = true;
    http_cv.notify_all();
  });
  const auto http_grace =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.http_max_graceful_shutdown_duration);
  std::chrono::steady_clock::time_point http_shutdown_at{};

  asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  // Started on SIGTERM: stops the loop if in-flight work has not drained within 4 s. A thread,
  // not a timer, so that it does not itself keep io.run() busy.
  std::mutex watchdog_mu;
  std::condition_variable watchdog_cv;
  bool loop_done = false;
  std::thread watchdog;
  std::function<void(const boost::system::error_code&, int)> on_signal;
  asio::steady_timer shutdown_delay(io);
  on_signal = [&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      spdlog::info("SIGHUP received: reloading the configuration");
      start_reload(false);
      signals.async_wait(on_signal);
      return;
    }
    const char* name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    // -http.shutdownDelay: keep evaluating with /health and /-/ready failing, as vmalert's
    // httpserver.Stop; a second signal cuts the wait short.
    if (flags.http_shutdown_delay > core::Duration::zero() && !delayed_shutdown.exchange(true)) {
      spdlog::info("received signal {}; shutting down in {} (-http.shutdownDelay)", name,
                   core::format_go_duration(flags.http_shutdown_delay));
      ready = false;
      shutdown_delay.expires_after(flags.http_shutdown_delay);
      shutdown_delay.async_wait([&, sig](const boost::system::error_code& wait_ec) {
        if (!wait_ec) on_signal({}, sig);
      });
      signals.async_wait(on_signal);
      return;
    }
    if (shutting_down) return;
    shutdown_delay.cancel();
    spdlog::info("received signal {}; shutting down", name);
    ready = false;
    shutting_down = true;
    // Once every group has stopped (its last series written), remote write sends what is
    // queued, bounded so that the 4 s watchdog below is not reached (vmalert waits up to 30 s).
    manager.stop([&] {
      if (!remote_writer) return;
      remote_writer->drain(std::chrono::seconds(3), [&] {
        const auto& st = remote_writer->stats();
        spdlog::info("remote write stopped: {} row(s) sent, {} dropped", st.sent_rows_total.load(),
                     st.dropped_rows_total.load());
        rw_http->close();
      });
    });
    config_check.cancel();
    // Go's http.Server.Shutdown: no new connections, idle ones closed, requests in progress
    // get -http.maxGracefulShutdownDuration to finish.
    http_shutdown_at = std::chrono::steady_clock::now();
    server.shutdown(http_grace);
    if (pusher) {
      asio::post(http_io, [&pusher, &push_http] {
        pusher->stop();
        push_http->close();
      });
    }
    ds_http.close();
    (*notifier_clients)->close();
    if (discovery) discovery->stop();
    if (notifier_pool) notifier_pool->close();
    if (rr_http) rr_http->close();
    signals.cancel();
    // Anything still in flight gets 4 s, then the loop is stopped: exit within 5 s.
    if (!watchdog.joinable()) {
      watchdog = std::thread([&] {
        std::unique_lock lock(watchdog_mu);
        if (!watchdog_cv.wait_for(lock, std::chrono::seconds(4), [&] { return loop_done; })) {
          io.stop();
        }
      });
    }
  };
  signals.async_wait(on_signal);

  ready = true;
  io.run();
  {
    std::lock_guard lock(watchdog_mu);
    loop_done = true;
  }
  watchdog_cv.notify_all();
  if (watchdog.joinable()) watchdog.join();
  if (http_shutdown_at != std::chrono::steady_clock::time_point{}) {
    std::unique_lock lock(http_mu);
    const auto until = http_shutdown_at + http_grace + std::chrono::milliseconds(100);
    if (!http_cv.wait_until(lock, until, [&] { return http_done; })) {
      SPDLOG_WARN("-http.maxGracefulShutdownDuration={} passed with requests still in "
                   "progress; closing their connections",
                   core::format_go_duration(flags.http_max_graceful_shutdown_duration));
    }
  }
  http_io.stop();
  http_thread.join();
  if (reload_thread.joinable()) reload_thread.join();
  spdlog::info("alertd stopped");
  return 0;
}

int replay(const Flags& flags) {
  if (!start_logging(flags)) return 2;
  ReplayOptions options;
  if (!core::parse_rfc3339(flags.replay_time_from, options.from)) {
    spdlog::critical("replay failed: failed to parse replay.timeFrom=\"{}\": want RFC3339, e.g. "
                     "2020-01-01T20:07:00Z",
                     flags.replay_time_from);
    return 1;
  }
  if (flags.replay_time_to.empty()) {
    options.to = std::chrono::time_point_cast<core::Duration>(std::chrono::system_clock::now());
  } else if (!core::parse_rfc3339(flags.replay_time_to, options.to)) {
    spdlog::critical("replay failed: failed to parse replay.timeTo=\"{}\": want RFC3339, e.g. "
                     "2020-01-01T20:07:00Z",
                     flags.replay_time_to);
    return 1;
  }
  // Range queries take whole seconds (RFC 3339 without a fraction): the grid starts there.
  options.from = std::chrono::floor<std::chrono::seconds>(options.from);
  options.to = std::chrono::floor<std::chrono::seconds>(options.to);
  options.rules_delay = flags.replay_rules_delay;
  options.max_datapoints = flags.replay_max_datapoints;
  options.retry_attempts = flags.replay_rule_retry_attempts;
  options.rule_concurrency = flags.replay_rule_evaluation_concurrency;
  options.continue_on_error = flags.replay_continue_with_execution_err;
  if (auto ok = check_replay_options(options); !ok) {
    spdlog::critical("replay failed: {}", ok.error().message);
    return 1;
  }
  if (flags.rule.empty()) {
    spdlog::critical("no -rule given: pass at least one rule file, glob or URL");
    return 1;
  }
  if (flags.datasource_url.empty()) {
    spdlog::critical("-datasource.url is empty: replay reads the rules' data from it");
    return 1;
  }
  if (!remote_write_configured(flags)) {
    spdlog::critical("remoteWrite.url can't be empty in replay mode");
    return 1;
  }
  auto loaded = load_config(flags);
  if (!loaded) {
    spdlog::critical("{}", loaded.error().message);
    return 1;
  }
  if (auto err = report_load(flags, loaded->rules)) {
    spdlog::critical("{}", *err);
    return 1;
  }
  for (const auto& g : loaded->rules.groups) {
    if (g.type != "prometheus") {
      spdlog::critical("group \"{}\": replay supports only datasource type \"prometheus\", not "
                       "\"{}\"",
                       g.name, g.type);
      return 1;
    }
  }
  auto ds_options = querier_options(flags, datasource_endpoint(flags));
  if (!ds_options) {
    spdlog::critical("{}", ds_options.error().message);
    return 1;
  }

  auto ds_oauth2 = endpoint_oauth2(datasource_endpoint(flags));
  if (!ds_oauth2) {
    spdlog::critical("{}", ds_oauth2.error().message);
    return 1;
  }
  auto rw_oauth2 = endpoint_oauth2(remote_write_endpoint(flags));
  if (!rw_oauth2) {
    spdlog::critical("{}", rw_oauth2.error().message);
    return 1;
  }

  asio::io_context io(1);
  AsioClock clock(io);
  net::HttpClient ds_http(io, client_options(flags, datasource_endpoint(flags)));
  auto ds_oauth2_http = oauth2_in_front(ds_http, *ds_oauth2);
  auto factory = datasource::HttpQuerierFactory::create(via(ds_http, ds_oauth2_http), *ds_options);
  if (!factory) {
    spdlog::critical("-datasource.url: {}", factory.error().message);
    return 1;
  }
  // Remote write with backpressure: replay waits for room in the queue instead of dropping.
  auto rw_options = remote_write_options(flags);
  if (!rw_options) {
    spdlog::critical("{}", rw_options.error().message);
    return 1;
  }
  auto rw_client = client_options(flags, remote_write_endpoint(flags));
  rw_client.max_concurrent = rw_options->concurrency;
  net::HttpClient rw_http(io, rw_client);
  auto rw_oauth2_http = oauth2_in_front(rw_http, *rw_oauth2);
  const size_t max_write_rows =
      std::max<size_t>(1, std::min(rw_options->max_batch_size, rw_options->max_queue_size / 2));
  auto rw = datasource::RemoteWriter::create(via(rw_http, rw_oauth2_http), clock,
                                             std::move(*rw_options));
  if (!rw) {
    spdlog::critical("{}", rw.error().message);
    return 1;
  }
  datasource::RemoteWriter& writer = **rw;
  std::function<void(std::function<void()>)> wait_for_room =
      [&writer, max_write_rows](std::function<void()> next) {
        writer.when_room(max_write_rows, std::move(next));
      };
  // Everything written is sent before exit (retries included), bounded like vmalert's 30 s.
  std::function<void(std::function<void()>)> drain = [&](std::function<void()> done) {
    writer.drain(std::chrono::seconds(30), [&, done = std::move(done)] {
      rw_http.close();
      done();
    });
  };
  auto dropped_rows = [&writer]() -> uint64_t { return writer.stats().dropped_rows_total.load(); };

  std::printf("Replay mode:\nfrom: \t%s \nto: \t%s \nmax data points per request: %d\n",
              core::format_rfc3339_seconds(options.from).c_str(),
              core::format_rfc3339_seconds(options.to).c_str(), options.max_datapoints);
  std::fflush(stdout);
  auto progress = make_console_progress(stdout, stderr, !flags.replay_disable_progress_bar);
  Replayer replayer(ReplayDeps{clock, **factory, writer, wait_for_room, max_write_rows,
                               progress.get(),
                               [](std::string_view m) { SPDLOG_ERROR("{}", m); }},
                    options);
  ReplaySummary summary;
  replayer.run(std::move(loaded->rules.groups), group_context(flags), [&](ReplaySummary s) {
    summary = std::move(s);
    drain([&] {
      ds_http.close();
      io.stop();
    });
  });
  io.run();

  const uint64_t dropped = dropped_rows();
  for (const auto& e : summary.errors) SPDLOG_ERROR("skipped: {}", e);
  if (summary.fatal) {
    spdlog::critical("replay failed: {}", summary.fatal->message);
    return 1;
  }
  spdlog::info("replay evaluation finished: {} group(s), {} rule(s), {} range request(s), "
               "generated {} samples",
               summary.groups, summary.rules, summary.requests, summary.rows);
  if (dropped > 0) {
    spdlog::critical("failed to push all generated samples to remote write url, dropped {} "
                     "samples out of {}",
                     dropped, summary.rows);
    return 1;
  }
  if (summary.failed_ranges > 0) {
    SPDLOG_ERROR("replay finished with {} failed range(s) skipped "
                  "(-replay.continueWithExecutionErr)",
                  summary.failed_ranges);
    return 1;
  }
  spdlog::info("replay succeeded: {} rows flushed", summary.rows);
  return 0;
}

}  // namespace app
