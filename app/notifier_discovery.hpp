// -notifier.config wired: the config file (config/notifier_config.hpp) turned into Alertmanager
// targets (static_configs, file_sd_configs, dns_sd_configs, consul_sd_configs), each an AlertmanagerClient behind its own
// DeliveryQueue as for -notifier.url, fronted by a notifier that applies the global and the
// target group's alert_relabel_configs to every alert before it is queued.
//
//   NotifierConfigState  the parsed file with its relabel rules compiled (immutable, shared)
//   discover_targets     static targets + file_sd files read + DNS names and Consul queried now
//                        -> target list (blocking I/O)
//   NotifierPool         target list -> notifiers; a target whose URL and client settings did not
//                        change keeps its queue (and what it holds) across refreshes and reloads
//   NotifierDiscovery    a thread re-running discovery every refresh_interval and on reload,
//                        swapping the NotifierSet on the loop
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/notifier_set.hpp"
#include "config/notifier_config.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "net/http_client.hpp"
#include "notifier/delivery_queue.hpp"
#include "notifier/relabel.hpp"
#include "notifier/target_labels.hpp"

namespace app {

struct NotifierConfigState {
  config::NotifierConfig config;
  notifier::RelabelRules relabel;        // relabel_configs (targets)
  notifier::RelabelRules alert_relabel;  // global alert_relabel_configs
  std::vector<notifier::RelabelRules> static_alert_relabel;   // per static_configs entry
  std::vector<notifier::RelabelRules> file_sd_alert_relabel;  // per file_sd_configs entry
  std::vector<notifier::RelabelRules> dns_sd_alert_relabel;   // per dns_sd_configs entry
  std::vector<notifier::RelabelRules> consul_sd_alert_relabel;  // per consul_sd_configs entry
  std::string dns_server;  // -notifier.dnsServer: "" = the system resolver
  bool suppress_duplicate_target_errors = false;  // -notifier.suppressDuplicateTargetErrors
  // Per consul_sd_configs entry: its refresh_interval, else -promscrape.consulSDCheckInterval.
  std::vector<core::Duration> consul_refresh;
};

struct NotifierStateOptions {
  std::string dns_server;  // -notifier.dnsServer
  bool suppress_duplicate_target_errors = false;  // -notifier.suppressDuplicateTargetErrors
  core::Duration consul_sd_check_interval = std::chrono::seconds{30};  // -promscrape.consulSDCheckInterval
};

// Loads, checks and compiles `path` (errors file:line:column, one per line in the message).
// Relabeling hashes `hashmod` with xxhash64, as vmalert does.
// `dns_server` (-notifier.dnsServer) is where dns_sd_configs names are resolved.
[[nodiscard]] core::Result<std::shared_ptr<const NotifierConfigState>> load_notifier_state(
    const std::string& path, const NotifierStateOptions& options = {});

struct DiscoveredTarget {
  std::string kind;  // "static", "fileSD", "dnsSD", "consulSD"
  notifier::TargetSpec spec;
  const config::HttpClientConfig* http = nullptr;          // into the state's config
  const notifier::RelabelRules* alert_relabel = nullptr;   // the group's list, may be empty
};

// Last good content of each file_sd file (and of each DNS name, key "dns:TYPE:NAME", and of each
// consul_sd_configs entry, key "consul:INDEX:SERVER"): a file that cannot be read or parsed, a
// name whose query fails or a Consul server that fails keeps its previous targets (as
// Prometheus' file, DNS and Consul SD do).
using FileSdCache = std::map<std::string, std::vector<config::TargetGroup>>;

// The targets of `state` now: static_configs, every file_sd file (globs expanded), then every
// dns_sd_configs name (app::dns_lookup; meta labels __meta_dns_name and, for SRV,
// __meta_dns_srv_record_target and __meta_dns_srv_record_port, for MX
// __meta_dns_mx_record_target), then every consul_sd_configs entry (app::consul_discover).
// Problems (unreadable file, bad address) go to `errors` and skip only what they concern.
// Duplicate URLs are kept once (the first), with an error unless
// state.suppress_duplicate_target_errors, as vmalert does.
[[nodiscard]] std::vector<DiscoveredTarget> discover_targets(const NotifierConfigState& state,
                                                             FileSdCache& cache,
                                                             std::vector<std::string>& errors);

// A notifier that relabels each alert (global, then the group's list) and hands the rest to
// its delivery queue. An alert dropped by relabeling, or left without labels, is not sent.
class RelabelingNotifier final : public notifier::Notifier {
 public:
  RelabelingNotifier(std::shared_ptr<notifier::Notifier> next, std::string kind,
                     core::Labels labels, std::shared_ptr<const NotifierConfigState> state,
                     const notifier::RelabelRules* alert_relabel);

  void send(std::span<const notifier::Alert> alerts,
            const std::vector<std::pair<std::string, std::string>>& headers,
            notifier::SendDone done) override;
  void send_owned(std::vector<notifier::Alert> alerts,
                  const std::vector<std::pair<std::string, std::string>>& headers,
                  notifier::SendDone done) override;
  void flush() override { next_->flush(); }
  [[nodiscard]] std::string addr() const override { return next_->addr(); }
  [[nodiscard]] notifier::NotifierStats stats() const override { return next_->stats(); }
  [[nodiscard]] std::string kind() const override { return kind_; }
  [[nodiscard]] core::Labels target_labels() const override { return labels_; }
  [[nodiscard]] const std::shared_ptr<notifier::Notifier>& next() const { return next_; }

 private:
  std::shared_ptr<notifier::Notifier> next_;
  std::string kind_;
  core::Labels labels_;
  std::shared_ptr<const NotifierConfigState> state_;  // keeps the rule lists alive
  const notifier::RelabelRules* alert_relabel_;
};

// The clients and queues of the discovered targets. Runs on the loop.
class NotifierPool {
 public:
  // `make_transport` builds the HTTP client of one target (tests pass a fake).
  using TransportFactory =
      std::function<std::unique_ptr<net::Transport>(const net::TlsOptions& tls)>;
  NotifierPool(core::Clock& clock, notifier::DeliveryOptions delivery, bool show_url,
               TransportFactory make_transport);
  ~NotifierPool();

  // The notifiers for `found`. A target whose POST URL, client config and timeout are those of
  // a current one keeps that one's queue; the others get new ones; targets gone are closed
  // (their queued alerts dropped and counted). Errors (an unreadable secret file) skip the
  // target and are appended to `errors`.
  [[nodiscard]] std::vector<std::shared_ptr<notifier::Notifier>> update(
      const std::shared_ptr<const NotifierConfigState>& state,
      const std::vector<DiscoveredTarget>& found, std::vector<std::string>& errors);
  // Shutdown: drops what the queues hold and closes the connections.
  void close();
  // Targets removed but not freed yet: their sender still has a POST in flight.
  [[nodiscard]] size_t retired() const { return retired_.size(); }

 private:
  struct Entry;
  void free_retired(const Entry* entry);
  core::Clock& clock_;
  notifier::DeliveryOptions delivery_;
  bool show_url_;
  TransportFactory make_transport_;
  std::vector<std::unique_ptr<Entry>> live_;
  // Removed targets, closed, kept until their queue reports that no POST is in flight (the
  // transport may still complete one), then freed with their client and connections.
  std::vector<std::unique_ptr<Entry>> retired_;
  bool closed_ = false;
  // Lets a queue's "stopped" callback, posted to the loop, find out that the pool is gone.
  std::shared_ptr<NotifierPool*> alive_ = std::make_shared<NotifierPool*>(this);
};

// The discovery thread: discovery on the thread (file reads), the swap on the loop.
class NotifierDiscovery {
 public:
  // `loop` is where the pool and the set are updated (the evaluation loop).
  NotifierDiscovery(core::Clock& loop, NotifierPool& pool, NotifierSet& set);
  ~NotifierDiscovery();  // stop()

  // Runs the first discovery here, synchronously, then starts the thread.
  void start(std::shared_ptr<const NotifierConfigState> state);
  // A reload: the new state (or the same one) is discovered again at once.
  void reload(std::shared_ptr<const NotifierConfigState> state);
  [[nodiscard]] std::shared_ptr<const NotifierConfigState> state() const;
  void stop();

 private:
  void apply(const std::shared_ptr<const NotifierConfigState>& state,
             const std::vector<DiscoveredTarget>& found, std::vector<std::string> errors);
  void loop();

  core::Clock& loop_;
  NotifierPool& pool_;
  NotifierSet& set_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const NotifierConfigState> state_;
  bool wake_ = false;
  bool stop_ = false;
  FileSdCache cache_;  // the thread's
  std::thread thread_;
};

}  // namespace app
