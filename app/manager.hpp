// app::Manager: owns every group's scheduler by group ID and applies loaded configurations
// (vmalert's manager.update), on the loop:
//   - every new group is built first; if one fails, nothing changes and the error is returned
//     (the old configuration keeps running);
//   - a new ID starts a group; a known ID with a new checksum (or new shared templates) is
//     updated in place, its matching rules keep their alerts; a known ID with the same
//     checksum is left alone;
//   - an ID that is gone is stopped: its alerts are resolved and sent, its series get
//     staleness markers (vmalert drops them silently), and `applied` runs only once every
//     removed group has stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/scheduler.hpp"
#include "config/model.hpp"
#include "core/error.hpp"
#include "datasource/querier.hpp"
#include "rules/group.hpp"
#include "templates/template.hpp"

namespace app {

// The query settings of a group (type, interval, params, headers, debug), for the daemon's
// queriers and replay's range queriers alike.
[[nodiscard]] datasource::QuerierParams querier_params(const config::GroupSpec& spec);

struct ManagerDeps {
  Clock& clock;
  NotifierSet& notifiers;
  datasource::SeriesWriter& series;
  SnapshotStore& store;
  GlobalCounters& counters;
  datasource::QuerierFactory& queriers;
  // Makes the worker thread of a group whose templates call `query`.
  std::function<std::unique_ptr<Worker>(const std::string& group_name)> make_worker;
  StateSink* state = nullptr;  // -state.path
  // -remoteRead.url: groups started by the first apply() restore from it (once per process,
  // as vmalert); null: no restore.
  datasource::QuerierFactory* remote_read = nullptr;
  core::Duration remote_read_lookback = std::chrono::hours(1);
};

struct ApplyStats {
  size_t started = 0;
  size_t updated = 0;
  size_t unchanged = 0;
  size_t stopped = 0;
  size_t restored = 0;  // alerts put back from the state file
};

class Manager {
 public:
  Manager(ManagerDeps deps, SchedulerOptions options);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // `ctx.templates` is ignored: the set is passed owned, so it outlives every group using it;
  // `templates_checksum` tells whether it differs from the running one (then every group is
  // rebuilt).
  [[nodiscard]] core::Result<ApplyStats> apply(
      std::vector<config::GroupSpec> groups, rules::GroupContext ctx,
      std::shared_ptr<const templates::TemplateSet> templates, uint64_t templates_checksum = 0,
      std::function<void()> applied = {});
  // Alerts to put back into the groups the next apply() starts (once: -state.path at start-up).
  void restore_on_next_apply(SavedState state) { restore_ = std::move(state); }
  // Stops every group (nothing resolved, as vmalert); `stopped` runs once all have stopped.
  void stop(std::function<void()> stopped);

  [[nodiscard]] size_t size() const { return groups_.size(); }
  [[nodiscard]] bool contains(uint64_t group_id) const { return groups_.contains(group_id); }

 private:
  [[nodiscard]] std::unique_ptr<datasource::Querier> querier_for(const config::GroupSpec& spec);
  [[nodiscard]] std::unique_ptr<Worker> worker_for(const rules::Group& g);

  ManagerDeps deps_;
  SchedulerOptions options_;
  std::map<uint64_t, std::shared_ptr<GroupScheduler>> groups_;
  std::shared_ptr<const templates::TemplateSet> templates_;
  uint64_t templates_checksum_ = 0;
  // Templates of earlier configurations, kept while a stopping group may still use them.
  std::vector<std::shared_ptr<const templates::TemplateSet>> retired_templates_;
  std::map<uint64_t, uint64_t> checksums_;
  std::optional<SavedState> restore_;
  bool first_apply_ = true;
};

}  // namespace app
