#include "app/daemon.hpp"

#include "net/asio.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "app/api.hpp"
#include "app/group_runner.hpp"
#include "app/logging.hpp"
#include "app/snapshot.hpp"
#include "config/glob.hpp"
#include "config/loader.hpp"
#include "datasource/http_querier.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "notifier/alertmanager_client.hpp"
#include "rules/template.hpp"

namespace app {
namespace asio = boost::asio;

namespace {

// -rule.templates: every matching file's {{ define }} blocks, shared by all rules.
core::Result<rules::TemplateSet> load_template_files(const std::vector<std::string>& patterns) {
  std::vector<rules::TemplateSet::File> files;
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
  if (files.empty()) return rules::TemplateSet{};
  return rules::TemplateSet::parse(files);
}

config::LoadOptions load_options(const Flags& flags, const rules::TemplateSet* templates) {
  config::LoadOptions lo;
  lo.paths = flags.rule;
  lo.default_interval = flags.evaluation_interval;
  lo.default_eval_delay = flags.rule_eval_delay;
  lo.default_rule_type = flags.rule_default_rule_type;
  lo.validate_templates = flags.rule_validate_templates;
  lo.validate_expressions = flags.rule_validate_expressions;
  lo.check_template = [templates](std::string_view text) {
    return rules::check_template(text, templates);
  };
  lo.fetch = [](const std::string& url) -> core::Result<std::string> {
    net::Request req;
    req.method = "GET";
    req.url = url;
    req.timeout = std::chrono::seconds(30);
    req.max_response_bytes = 64u << 20;
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

// vmalert's default -external.url: http://<hostname>:<port of -httpListenAddr>.
std::string default_external_url(const std::string& listen_addr) {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  const auto colon = listen_addr.rfind(':');
  const std::string port = colon == std::string::npos ? "8880" : listen_addr.substr(colon + 1);
  return "http://" + std::string(host) + ":" + port;
}

std::string read_secret_file(const std::string& path, std::string& err) {
  std::ifstream in(path);
  if (!in) {
    err = "cannot read " + path;
    return {};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

int dry_run(const Flags& flags) {
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
  std::fprintf(stderr, "-dryRun: %zu group(s) with %zu rule(s) in %zu file(s) are valid\n",
               loaded.groups.size(), count_rules(loaded.groups), loaded.files.size());
  return 0;
}

int run(const Flags& flags) {
  setup_logging(flags.logger_level, flags.logger_format);
  GlobalCounters counters;
  counters.start_time_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();

  if (flags.rule.empty()) {
    spdlog::critical("no -rule given: pass at least one rule file, glob or URL");
    return 1;
  }
  if (flags.datasource_url.empty()) {
    spdlog::critical("-datasource.url is empty: alertd needs a Prometheus-compatible datasource");
    return 1;
  }

  auto templates = load_template_files(flags.rule_templates);
  if (!templates) {
    spdlog::critical("{}", templates.error().message);
    return 1;
  }
  const auto loaded = config::load_rules(load_options(flags, &*templates));
  for (const auto& w : loaded.warnings) spdlog::warn("{}", w);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) spdlog::error("{}", e.message);
    spdlog::critical("cannot parse configuration file: {} error(s) in {}", loaded.errors.size(),
                     fmt::join(flags.rule, ", "));
    return 1;
  }
  if (loaded.groups.empty()) spdlog::warn("no groups found in {}", fmt::join(flags.rule, ", "));
  size_t alerting = 0;
  for (const auto& g : loaded.groups)
    for (const auto& r : g.rules) alerting += r.kind == config::RuleKind::alerting ? 1 : 0;
  if (alerting > 0 && flags.notifier_url.empty() && !flags.notifier_blackhole) {
    spdlog::critical(
        "there are alerting rules but no -notifier.url or -notifier.blackhole: alerts would go "
        "nowhere");
    return 1;
  }

  asio::io_context io(1);
  asio::thread_pool pool(2);

  // Datasource.
  datasource::HttpQuerierOptions ds;
  ds.url = flags.datasource_url;
  ds.append_type_prefix = flags.datasource_append_type_prefix;
  ds.query_step = flags.datasource_query_step;
  ds.disable_step_param = flags.datasource_disable_step_param;
  ds.round_digits = flags.datasource_round_digits;
  ds.show_url = flags.datasource_show_url;
  ds.headers = flags.datasource_headers;
  ds.basic_auth_username = flags.datasource_basic_auth_username;
  ds.basic_auth_password = flags.datasource_basic_auth_password;
  if (!flags.datasource_basic_auth_password_file.empty()) {
    std::string err;
    ds.basic_auth_password = read_secret_file(flags.datasource_basic_auth_password_file, err);
    if (!err.empty()) {
      spdlog::critical("-datasource.basicAuth.passwordFile: {}", err);
      return 1;
    }
  }
  ds.bearer_token = flags.datasource_bearer_token;
  if (!flags.datasource_bearer_token_file.empty()) {
    std::string err;
    ds.bearer_token = read_secret_file(flags.datasource_bearer_token_file, err);
    if (!err.empty()) {
      spdlog::critical("-datasource.bearerTokenFile: {}", err);
      return 1;
    }
  }
  ds.query_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(flags.datasource_query_timeout);
  ds.max_response_size = flags.datasource_max_response_size;
  ds.max_concurrent_queries = static_cast<size_t>(std::max(0, flags.datasource_max_concurrent_queries));
  net::ClientOptions ds_client;
  ds_client.tls.ca_file = flags.datasource_tls_ca_file;
  ds_client.tls.cert_file = flags.datasource_tls_cert_file;
  ds_client.tls.key_file = flags.datasource_tls_key_file;
  ds_client.tls.server_name = flags.datasource_tls_server_name;
  ds_client.tls.insecure_skip_verify = flags.datasource_tls_insecure_skip_verify;
  ds_client.max_concurrent = ds.max_concurrent_queries;
  net::HttpClient ds_http(io, ds_client);
  auto factory = datasource::HttpQuerierFactory::create(ds_http, ds);
  if (!factory) {
    spdlog::critical("-datasource.url: {}", factory.error().message);
    return 1;
  }

  // Notifiers.
  net::HttpClient am_http(io, net::ClientOptions{});
  std::vector<std::unique_ptr<notifier::Notifier>> notifiers;
  if (flags.notifier_blackhole) {
    notifiers.push_back(std::make_unique<notifier::BlackholeNotifier>());
  } else {
    for (const auto& url : flags.notifier_url) {
      notifier::AlertmanagerTarget t;
      t.url = url;
      t.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(flags.notifier_send_timeout);
      t.basic_auth_username = flags.notifier_basic_auth_username;
      t.basic_auth_password = flags.notifier_basic_auth_password;
      t.bearer_token = flags.notifier_bearer_token;
      notifiers.push_back(std::make_unique<notifier::AlertmanagerClient>(am_http, std::move(t)));
    }
  }
  std::vector<notifier::Notifier*> notifier_ptrs;
  std::vector<const notifier::Notifier*> notifier_views;
  for (auto& n : notifiers) {
    notifier_ptrs.push_back(n.get());
    notifier_views.push_back(n.get());
  }

  // Groups.
  SnapshotStore store;
  RunnerSettings settings;
  settings.default_interval = flags.evaluation_interval;
  settings.default_eval_delay = flags.rule_eval_delay;
  settings.resend_delay = flags.rule_resend_delay;
  settings.max_resolve_duration = flags.rule_max_resolve_duration;
  settings.max_start_delay = flags.group_max_start_delay;
  settings.query_timeout = flags.datasource_query_timeout;
  settings.results_limit = flags.rule_results_limit;
  settings.update_entries_limit = flags.rule_update_entries_limit;
  settings.disable_alertgroup_label = flags.disable_alertgroup_label;
  settings.external_labels = flags.external_labels;
  settings.templates = &*templates;
  settings.external_url =
      flags.external_url.empty() ? default_external_url(flags.http_listen_addr) : flags.external_url;
  while (!settings.external_url.empty() && settings.external_url.back() == '/')
    settings.external_url.pop_back();

  std::vector<std::shared_ptr<GroupRunner>> runners;
  for (const auto& g : loaded.groups) {
    auto runner = GroupRunner::create(
        g, settings, RunnerDeps{io, pool, **factory, notifier_ptrs, store, counters});
    if (!runner) {
      spdlog::critical("cannot start: {}", runner.error().message);
      return 1;
    }
    runners.push_back(std::move(*runner));
  }
  counters.config_last_reload_success_timestamp_seconds = counters.start_time_seconds.load();

  // HTTP server.
  std::atomic<bool> ready{false};
  ApiContext api;
  api.store = &store;
  api.counters = &counters;
  api.notifiers = notifier_views;
  api.ready = &ready;
  api.reload = [] { std::raise(SIGHUP); };
  net::HttpServer server(io, [&api](const net::ServerRequest& req) {
    return handle_request(api, req);
  });
  if (auto r = server.listen(flags.http_listen_addr); !r) {
    spdlog::critical("-httpListenAddr={}: {}", flags.http_listen_addr, r.error().message);
    return 1;
  }
  spdlog::info("alertd started: {} group(s), {} rule(s) from {} file(s); listening on {} (port {})",
               loaded.groups.size(), count_rules(loaded.groups), loaded.files.size(),
               flags.http_listen_addr, server.port());

  // Signals: TERM/INT stop, HUP is acknowledged (reload lands with the reload issue).
  asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  // Started on SIGTERM: stops the loop if in-flight work has not drained within 4 s. A thread,
  // not a timer, so that it does not itself keep io.run() busy.
  std::mutex watchdog_mu;
  std::condition_variable watchdog_cv;
  bool loop_done = false;
  std::thread watchdog;
  std::function<void(const boost::system::error_code&, int)> on_signal;
  on_signal = [&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      counters.config_last_reload_total.fetch_add(1);
      spdlog::warn("SIGHUP received: rule reload is not supported yet; restart alertd to apply "
                   "rule changes");
      signals.async_wait(on_signal);
      return;
    }
    spdlog::info("received signal {}; shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    ready = false;
    for (auto& r : runners) r->stop();
    server.stop();
    ds_http.close();
    am_http.close();
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

  for (auto& r : runners) r->start();
  ready = true;
  io.run();
  {
    std::lock_guard lock(watchdog_mu);
    loop_done = true;
  }
  watchdog_cv.notify_all();
  if (watchdog.joinable()) watchdog.join();
  pool.stop();
  pool.join();
  spdlog::info("alertd stopped");
  return 0;
}

}  // namespace app
