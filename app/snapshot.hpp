// Read-only snapshots of the groups' state for the HTTP API and /metrics.
//
// A group runner publishes a fresh GroupSnapshot after every evaluation round; readers take a
// shared_ptr to an immutable snapshot, so they never touch a rule while its round runs (some
// rounds run templates that call `query` on a worker thread). Publishing is a pointer swap
// under a short lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/labels.hpp"
#include "core/time.hpp"
#include "rules/alert.hpp"

namespace app {

struct AlertSnapshot {
  uint64_t id = 0;
  rules::AlertState state = rules::AlertState::pending;
  core::Labels labels;
  core::Labels annotations;
  double value = 0;
  core::TimePoint active_at{};
  bool restored = false;
  bool stabilizing = false;
  std::string source;  // generatorURL
};

struct RuleSnapshot {
  uint64_t id = 0;
  std::string name;
  std::string expr;
  core::Duration for_{};
  core::Duration keep_firing_for{};
  core::Labels labels;
  core::Labels annotations;
  rules::AlertState state = rules::AlertState::inactive;
  std::string last_error;
  core::TimePoint last_evaluation{};
  core::Duration evaluation_time{};
  uint64_t last_samples = 0;
  int64_t last_series_fetched = -1;
  uint64_t errors_total = 0;
  size_t pending = 0;
  size_t firing = 0;
  bool debug = false;
  int update_entries_limit = 20;
  std::vector<AlertSnapshot> alerts;  // pending and firing, by ID
};

struct GroupSnapshot {
  uint64_t id = 0;
  std::string name;
  std::string file;
  std::string type;
  core::Duration interval{};
  std::optional<core::Duration> eval_offset;
  std::optional<core::Duration> eval_delay;
  int concurrency = 1;
  core::Labels labels;
  core::TimePoint last_evaluation{};
  uint64_t iterations_total = 0;
  uint64_t iterations_missed_total = 0;
  uint64_t iterations_reset_total = 0;
  double iteration_seconds_sum = 0;
  std::vector<RuleSnapshot> rules;
};

// Holds the latest snapshot of every group, keyed by group ID.
class SnapshotStore {
 public:
  void publish(std::shared_ptr<const GroupSnapshot> snap) {
    std::lock_guard lock(mu_);
    groups_[snap->id] = std::move(snap);
  }
  void remove(uint64_t group_id) {
    std::lock_guard lock(mu_);
    groups_.erase(group_id);
  }
  // Every group, sorted by name then file (vmalert's order).
  [[nodiscard]] std::vector<std::shared_ptr<const GroupSnapshot>> all() const;

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<const GroupSnapshot>> groups_;
};

}  // namespace app
