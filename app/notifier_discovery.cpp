#include "app/notifier_discovery.hpp"

#include <chrono>
#include <random>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "app/consul_sd.hpp"
#include "app/dns_lookup.hpp"
#include "app/oauth2.hpp"
#include "app/secret_file.hpp"
#include "config/glob.hpp"
#include "notifier/alertmanager_client.hpp"

namespace app {
namespace {

constexpr notifier::RelabelOptions kRelabelOptions{.hashmod = notifier::HashmodHash::xxhash64};

std::string where(const config::SourcePos& pos, const std::string& what) {
  return pos.file + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) + ": " +
         what;
}

core::Result<notifier::RelabelRules> compile(const std::vector<core::RelabelConfig>& c) {
  return notifier::RelabelRules::compile(c, kRelabelOptions);
}

// Reads `value` or the file `file` (trailing newline dropped).
core::Result<std::string> value_or_file(const std::string& what, const std::string& value,
                                        const std::string& file) {
  if (file.empty()) return value;
  return read_secret_file(what, file);
}

// The client settings of one target from its HttpClientConfig.
core::Result<std::pair<notifier::AlertmanagerTarget, net::TlsOptions>> client_settings(
    const config::HttpClientConfig& http) {
  notifier::AlertmanagerTarget t;
  net::TlsOptions tls;
  if (http.basic_auth) {
    auto u = value_or_file("basic_auth.username_file", http.basic_auth->username,
                           http.basic_auth->username_file);
    if (!u) return core::fail(u.error());
    auto p = value_or_file("basic_auth.password_file", http.basic_auth->password,
                           http.basic_auth->password_file);
    if (!p) return core::fail(p.error());
    t.basic_auth_username = std::move(*u);
    t.basic_auth_password = std::move(*p);
  }
  if (!http.bearer_token.empty() || !http.bearer_token_file.empty()) {
    auto b = value_or_file("bearer_token_file", http.bearer_token, http.bearer_token_file);
    if (!b) return core::fail(b.error());
    t.bearer_token = std::move(*b);
  }
  if (http.authorization) {
    auto c = value_or_file("authorization.credentials_file", http.authorization->credentials,
                           http.authorization->credentials_file);
    if (!c) return core::fail(c.error());
    if (http.authorization->type == "Bearer") {
      t.bearer_token = std::move(*c);
    } else {
      t.headers.emplace_back("Authorization", http.authorization->type + " " + *c);
    }
  }
  for (const auto& h : http.headers) t.headers.push_back(h);
  if (http.tls_config) {
    tls.ca_file = http.tls_config->ca_file;
    tls.cert_file = http.tls_config->cert_file;
    tls.key_file = http.tls_config->key_file;
    tls.server_name = http.tls_config->server_name;
    tls.insecure_skip_verify = http.tls_config->insecure_skip_verify;
  }
  return std::pair{std::move(t), std::move(tls)};
}

// oauth2's own tls_config and proxy_url: the token is fetched through the target's client.
std::optional<std::string> unsupported(const config::HttpClientConfig& http,
                                       const std::string& at) {
  if (http.oauth2 && http.oauth2->tls_config) return at + "oauth2.tls_config is not supported";
  if (http.oauth2 && !http.oauth2->proxy_url.empty()) {
    return at + "oauth2.proxy_url is not supported";
  }
  return std::nullopt;
}

}  // namespace

core::Result<std::shared_ptr<const NotifierConfigState>> load_notifier_state(
    const std::string& path, const NotifierStateOptions& state_options) {
  config::NotifierConfigOptions options;
  options.check_relabel = [](const core::RelabelConfig& c) {
    return notifier::check_relabel_config(c);
  };
  auto loaded = config::load_notifier_config(path, options);
  std::vector<std::string> errors;
  for (const auto& e : loaded.errors) errors.push_back(e.message);
  auto state = std::make_shared<NotifierConfigState>();
  if (loaded.config) {
    auto& c = *loaded.config;
    if (auto u = unsupported(c.http, path + ": ")) errors.push_back(*u);
    for (const auto& s : c.static_configs) {
      if (auto u = unsupported(s.http, where(s.pos, "static_configs: "))) errors.push_back(*u);
    }
    for (const auto& d : c.consul_sd_configs) {
      if (auto u = unsupported(d.http, where(d.pos, "consul_sd_configs: "))) errors.push_back(*u);
      if (!d.proxy_url.empty()) {
        errors.push_back(where(d.pos, "consul_sd_configs: proxy_url is not supported"));
      }
      state->consul_refresh.push_back(
          d.refresh_interval.value_or(state_options.consul_sd_check_interval));
    }
    // Rules were checked by the loader; compile() cannot fail on them, but is checked anyway.
    auto add = [&](const std::vector<core::RelabelConfig>& rules, notifier::RelabelRules& out) {
      auto r = compile(rules);
      if (!r) {
        errors.push_back(path + ": " + r.error().message);
      } else {
        out = std::move(*r);
      }
    };
    add(c.relabel_configs, state->relabel);
    add(c.alert_relabel_configs, state->alert_relabel);
    for (const auto& s : c.static_configs) add(s.alert_relabel_configs, state->static_alert_relabel.emplace_back());
    for (const auto& f : c.file_sd_configs) add(f.alert_relabel_configs, state->file_sd_alert_relabel.emplace_back());
    for (const auto& d : c.dns_sd_configs) add(d.alert_relabel_configs, state->dns_sd_alert_relabel.emplace_back());
    for (const auto& d : c.consul_sd_configs) add(d.alert_relabel_configs, state->consul_sd_alert_relabel.emplace_back());
    state->dns_server = state_options.dns_server;
    state->suppress_duplicate_target_errors = state_options.suppress_duplicate_target_errors;
    state->config = std::move(c);
  }
  if (!errors.empty()) {
    std::string msg = "-notifier.config=" + path + ": " + std::to_string(errors.size()) +
                      " error(s):";
    for (const auto& e : errors) msg += "\n" + e;
    return core::fail(std::move(msg), core::ErrorKind::bad_config);
  }
  return std::shared_ptr<const NotifierConfigState>(std::move(state));
}

std::vector<DiscoveredTarget> discover_targets(const NotifierConfigState& state,
                                               FileSdCache& cache,
                                               std::vector<std::string>& errors) {
  const auto& c = state.config;
  std::vector<DiscoveredTarget> out;
  std::set<std::string> urls;
  auto add = [&](const std::string& kind, const std::string& address, const core::Labels& meta,
                 const config::HttpClientConfig* http, const notifier::RelabelRules* rules) {
    auto built = notifier::build_target(address, meta, c.scheme, c.path_prefix, state.relabel);
    if (!built) {
      errors.push_back(built.error().message);
      return;
    }
    if (!*built) return;  // dropped by relabel_configs
    if (!urls.insert((*built)->url).second) {
      if (state.suppress_duplicate_target_errors) return;
      errors.push_back("skipping duplicate target with identical address \"" + (*built)->url +
                       "\"");
      return;
    }
    out.push_back(DiscoveredTarget{kind, std::move(**built), http, rules});
  };
  for (size_t i = 0; i < c.static_configs.size(); ++i) {
    const auto& s = c.static_configs[i];
    const auto* http = s.http.empty() ? &c.http : &s.http;
    for (const auto& t : s.targets) add("static", t, {}, http, &state.static_alert_relabel[i]);
  }
  std::set<std::string> seen_files;
  for (size_t i = 0; i < c.file_sd_configs.size(); ++i) {
    const auto& f = c.file_sd_configs[i];
    for (const auto& pattern : f.files) {
      std::vector<std::string> files;
      if (config::has_glob_meta(pattern)) {
        auto g = config::glob_files(pattern);
        if (!g) {
          errors.push_back(g.error().message);
          continue;
        }
        files = std::move(*g);
      } else {
        files.push_back(pattern);
      }
      for (const auto& file : files) {
        seen_files.insert(file);
        auto groups = config::load_file_sd(file);
        if (groups) {
          cache[file] = std::move(*groups);
        } else {
          errors.push_back(groups.error().message);
          if (!cache.contains(file)) continue;
        }
        for (const auto& g : cache[file]) {
          core::Labels meta = g.labels;
          meta.set("__meta_filepath", file);
          for (const auto& t : g.targets) {
            add("fileSD", t, meta, &c.http, &state.file_sd_alert_relabel[i]);
          }
        }
      }
    }
  }
  for (size_t i = 0; i < c.dns_sd_configs.size(); ++i) {
    const auto& d = c.dns_sd_configs[i];
    for (const auto& name : d.names) {
      const std::string key = "dns:" + std::string(config::to_string(d.type)) + ":" + name;
      seen_files.insert(key);
      // MX without a port: 25, as vmalert (Prometheus requires a port).
      const int port = d.port.value_or(d.type == config::DnsRecordType::mx ? 25 : 0);
      auto found = dns_lookup(name, d.type, port, state.dns_server);
      if (found) {
        std::vector<config::TargetGroup> groups;
        for (const auto& t : *found) {
          config::TargetGroup g;
          g.targets.push_back(t.host + ":" + std::to_string(t.port));
          g.labels.set("__meta_dns_name", name);
          if (d.type == config::DnsRecordType::srv) {
            g.labels.set("__meta_dns_srv_record_target", t.host);
            g.labels.set("__meta_dns_srv_record_port", std::to_string(t.port));
          } else if (d.type == config::DnsRecordType::mx) {
            g.labels.set("__meta_dns_mx_record_target", t.host);
          }
          groups.push_back(std::move(g));
        }
        cache[key] = std::move(groups);
      } else {
        errors.push_back(found.error().message);
        if (!cache.contains(key)) continue;
      }
      for (const auto& g : cache[key]) {
        for (const auto& t : g.targets) {
          add("dnsSD", t, g.labels, &c.http, &state.dns_sd_alert_relabel[i]);
        }
      }
    }
  }
  for (size_t i = 0; i < c.consul_sd_configs.size(); ++i) {
    const auto& d = c.consul_sd_configs[i];
    const std::string key = "consul:" + std::to_string(i) + ":" + d.server;
    seen_files.insert(key);
    auto fetch = consul_http_fetch(d);
    auto found = fetch ? consul_discover(d, *fetch) : core::fail(fetch.error());
    if (found) {
      cache[key] = std::move(*found);
    } else {
      errors.push_back(where(d.pos, "consul_sd_configs: " + found.error().message +
                                        (cache.contains(key) ? "; keeping the last targets" : "")));
      if (!cache.contains(key)) continue;
    }
    for (const auto& g : cache[key]) {
      for (const auto& t : g.targets) {
        add("consulSD", t, g.labels, &c.http, &state.consul_sd_alert_relabel[i]);
      }
    }
  }
  std::erase_if(cache, [&](const auto& kv) { return !seen_files.contains(kv.first); });
  return out;
}

// --- RelabelingNotifier ---

RelabelingNotifier::RelabelingNotifier(std::shared_ptr<notifier::Notifier> next, std::string kind,
                                       core::Labels labels,
                                       std::shared_ptr<const NotifierConfigState> state,
                                       const notifier::RelabelRules* alert_relabel)
    : next_(std::move(next)),
      kind_(std::move(kind)),
      labels_(std::move(labels)),
      state_(std::move(state)),
      alert_relabel_(alert_relabel) {}

void RelabelingNotifier::send(std::span<const notifier::Alert> alerts,
                              const std::vector<std::pair<std::string, std::string>>& headers,
                              notifier::SendDone done) {
  send_owned(std::vector<notifier::Alert>(alerts.begin(), alerts.end()), headers,
             std::move(done));
}

void RelabelingNotifier::send_owned(std::vector<notifier::Alert> alerts,
                                    const std::vector<std::pair<std::string, std::string>>& headers,
                                    notifier::SendDone done) {
  std::erase_if(alerts, [&](notifier::Alert& a) {
    return !notifier::relabel_alert(a.labels, {&state_->alert_relabel, alert_relabel_});
  });
  if (alerts.empty()) {
    if (done) done(std::nullopt);
    return;
  }
  next_->send_owned(std::move(alerts), headers, std::move(done));
}

// --- NotifierPool ---

struct NotifierPool::Entry {
  std::string url;
  config::HttpClientConfig http;
  core::Duration timeout{};
  std::unique_ptr<net::Transport> transport;
  std::unique_ptr<OAuth2Transport> oauth2;  // in front of `transport` when configured
  std::shared_ptr<notifier::DeliveryQueue> queue;
};

NotifierPool::NotifierPool(core::Clock& clock, notifier::DeliveryOptions delivery, bool show_url,
                           TransportFactory make_transport)
    : clock_(clock),
      delivery_(std::move(delivery)),
      show_url_(show_url),
      make_transport_(std::move(make_transport)) {}

NotifierPool::~NotifierPool() = default;

std::vector<std::shared_ptr<notifier::Notifier>> NotifierPool::update(
    const std::shared_ptr<const NotifierConfigState>& state,
    const std::vector<DiscoveredTarget>& found, std::vector<std::string>& errors) {
  if (closed_) return {};
  std::vector<std::unique_ptr<Entry>> next;
  std::vector<std::shared_ptr<notifier::Notifier>> out;
  std::random_device seed;
  const auto timeout = state->config.timeout;
  for (const auto& t : found) {
    std::unique_ptr<Entry> entry;
    for (auto& e : live_) {
      if (e && e->url == t.spec.url && e->http == *t.http && e->timeout == timeout) {
        entry = std::move(e);
        break;
      }
    }
    if (!entry) {
      auto settings = client_settings(*t.http);
      if (!settings) {
        errors.push_back("target \"" + t.spec.url + "\": " + settings.error().message);
        continue;
      }
      std::optional<OAuth2Settings> oauth2;
      if (t.http->oauth2) {
        auto o = oauth2_settings(*t.http->oauth2);
        if (!o) {
          errors.push_back("target \"" + t.spec.url + "\": " + o.error().message);
          continue;
        }
        oauth2 = std::move(*o);
      }
      auto& [target, tls] = *settings;
      target.url = t.spec.url;
      target.full_url = true;
      target.show_url = show_url_;
      target.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
      entry = std::make_unique<Entry>();
      entry->url = t.spec.url;
      entry->http = *t.http;
      entry->timeout = timeout;
      entry->transport = make_transport_(tls);
      net::Transport* http = entry->transport.get();
      if (oauth2) {
        entry->oauth2 = std::make_unique<OAuth2Transport>(*http, std::move(*oauth2));
        http = entry->oauth2.get();
      }
      auto client = std::make_shared<notifier::AlertmanagerClient>(*http, std::move(target));
      notifier::DeliveryOptions o = delivery_;
      o.seed = (static_cast<uint64_t>(seed()) << 32) ^ seed();
      entry->queue = std::make_shared<notifier::DeliveryQueue>(clock_, std::move(client), o);
    }
    out.push_back(std::make_shared<RelabelingNotifier>(entry->queue, t.kind, t.spec.labels, state,
                                                       t.alert_relabel));
    next.push_back(std::move(entry));
  }
  for (auto& e : live_) {
    if (!e) continue;
    e->queue->close([weak = std::weak_ptr<NotifierPool*>(alive_), entry = e.get()] {
      if (auto pool = weak.lock()) (*pool)->free_retired(entry);
    });
    e->transport->close();
    retired_.push_back(std::move(e));
  }
  live_ = std::move(next);
  return out;
}

void NotifierPool::free_retired(const Entry* entry) {
  // The queue no longer calls its client, nor the client its transport: free both. The queue
  // object itself may live on in a notifier list still held elsewhere; closed, it only counts.
  std::erase_if(retired_, [entry](const auto& e) { return e.get() == entry; });
}

void NotifierPool::close() {
  closed_ = true;
  for (auto& e : live_) {
    e->queue->close();
    e->transport->close();
  }
}

// --- NotifierDiscovery ---

NotifierDiscovery::NotifierDiscovery(core::Clock& loop, NotifierPool& pool, NotifierSet& set)
    : loop_(loop), pool_(pool), set_(set) {}

NotifierDiscovery::~NotifierDiscovery() { stop(); }

void NotifierDiscovery::apply(const std::shared_ptr<const NotifierConfigState>& state,
                              const std::vector<DiscoveredTarget>& found,
                              std::vector<std::string> errors) {
  auto list = pool_.update(state, found, errors);
  for (const auto& e : errors) SPDLOG_ERROR("notifier discovery: {}", e);
  set_.set(std::move(list));
}

void NotifierDiscovery::start(std::shared_ptr<const NotifierConfigState> state) {
  {
    std::lock_guard lock(mu_);
    state_ = state;
  }
  std::vector<std::string> errors;
  const auto found = discover_targets(*state, cache_, errors);
  apply(state, found, std::move(errors));
  spdlog::info("-notifier.config: {} target(s)", found.size());
  thread_ = std::thread([this] { loop(); });
}

void NotifierDiscovery::reload(std::shared_ptr<const NotifierConfigState> state) {
  {
    std::lock_guard lock(mu_);
    state_ = std::move(state);
    wake_ = true;
  }
  cv_.notify_all();
}

std::shared_ptr<const NotifierConfigState> NotifierDiscovery::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

void NotifierDiscovery::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NotifierDiscovery::loop() {
  for (;;) {
    std::shared_ptr<const NotifierConfigState> state;
    {
      std::unique_lock lock(mu_);
      // The shortest refresh_interval of the file_sd configs (nothing to refresh: reload only).
      core::Duration interval = std::chrono::hours(24);
      for (const auto& f : state_->config.file_sd_configs) {
        interval = std::min(interval, f.refresh_interval);
      }
      for (const auto& d : state_->config.dns_sd_configs) {
        interval = std::min(interval, d.refresh_interval);
      }
      for (const auto& r : state_->consul_refresh) interval = std::min(interval, r);
      cv_.wait_for(lock, interval, [&] { return stop_ || wake_; });
      if (stop_) return;
      wake_ = false;
      state = state_;
    }
    std::vector<std::string> errors;
    auto found = std::make_shared<std::vector<DiscoveredTarget>>(
        discover_targets(*state, cache_, errors));
    loop_.post([this, state, found, errors = std::move(errors)]() mutable {
      apply(state, *found, std::move(errors));
    });
  }
}

}  // namespace app
