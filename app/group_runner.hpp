// app::GroupRunner: runs one rule group on the event loop, on its own interval (vmalert's
// group.Start): start jitter or eval_offset, then a round every interval. A round queries
// every rule (up to `concurrency` at once), applies the result to the rule's state machine,
// sends the due alerts to every notifier, and publishes a snapshot for the API.
//
// Rules whose templates call `query` are applied on the worker pool: the template's query
// waits there for the datasource while the event loop keeps running.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/metrics.hpp"
#include "app/snapshot.hpp"
#include "config/model.hpp"
#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/time.hpp"
#include "datasource/querier.hpp"
#include "notifier/notifier.hpp"
#include "rules/template.hpp"

namespace boost::asio {
class io_context;
class thread_pool;
}  // namespace boost::asio

namespace app {

struct RunnerSettings {
  core::Duration default_interval = std::chrono::minutes(1);
  core::Duration default_eval_delay = std::chrono::seconds(30);
  core::Duration resend_delay{0};
  core::Duration max_resolve_duration{0};
  core::Duration max_start_delay = std::chrono::minutes(5);
  core::Duration query_timeout = std::chrono::seconds(30);
  int results_limit = 0;
  int update_entries_limit = 20;
  bool disable_alertgroup_label = false;
  core::Labels external_labels;
  std::string external_url;
  const rules::TemplateSet* templates = nullptr;
};

struct RunnerDeps {
  boost::asio::io_context& io;
  boost::asio::thread_pool& pool;
  datasource::QuerierFactory& queriers;
  std::vector<notifier::Notifier*> notifiers;
  SnapshotStore& store;
  GlobalCounters& counters;
};

class GroupRunner : public std::enable_shared_from_this<GroupRunner> {
 public:
  // Builds the group's rules (templates parsed, labels merged). Errors name group and rule.
  [[nodiscard]] static core::Result<std::shared_ptr<GroupRunner>> create(
      const config::GroupSpec& spec, const RunnerSettings& settings, RunnerDeps deps);
  ~GroupRunner();

  // Starts the evaluation loop on the io_context.
  void start();
  // Stops after the current step; no alerts are resolved (vmalert does not either).
  void stop();

  [[nodiscard]] const config::GroupSpec& spec() const;

 private:
  struct Impl;
  explicit GroupRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace app
