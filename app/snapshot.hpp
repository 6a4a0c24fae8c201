// Read-only snapshots of the groups' state for the HTTP API and /metrics.
//
// A group's scheduler publishes a fresh GroupSnapshot after every evaluation round; readers (the
// HTTP thread) take a shared_ptr to an immutable snapshot, so they never touch a rule while its
// round runs. Publishing is a pointer swap under a short lock.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/labels.hpp"
#include "core/time.hpp"
#include "rules/rule.hpp"

namespace app {

// Copies of a rule and its alerts (rules::Rule::describe()).
using AlertSnapshot = rules::AlertView;
using RuleSnapshot = rules::RuleView;

struct GroupSnapshot {
  uint64_t id = 0;
  std::string name;
  std::string file;
  std::string type;
  core::Duration interval{};
  std::optional<core::Duration> eval_offset;
  std::optional<core::Duration> eval_delay;
  int concurrency = 1;
  int limit = 0;  // effective: the group's `limit`, else -rule.resultsLimit; 0 = none
  core::Labels labels;
  // As vmalert's API shows them: "name=value" per query parameter, "Name: value" per header,
  // sorted by name (values of secret-looking headers hidden).
  std::vector<std::string> params;
  std::vector<std::string> headers;
  std::vector<std::string> notifier_headers;
  core::TimePoint last_evaluation{};
  uint64_t iterations_total = 0;
  uint64_t iterations_missed_total = 0;
  uint64_t iterations_reset_total = 0;
  double iteration_seconds_sum = 0;
  // vmalert_iteration_duration_seconds{quantile=0.5,0.9,0.97,0.99,1} over the last 5 minutes.
  std::optional<std::array<double, 5>> iteration_quantiles;
  std::vector<RuleSnapshot> rules;
};

// GroupSnapshot::params and headers from a group's spec (implemented in app/api.cpp).
[[nodiscard]] std::vector<std::string> api_params(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& params);
[[nodiscard]] std::vector<std::string> api_headers(
    const std::vector<std::pair<std::string, std::string>>& headers);

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
  // The group with this ID, or null.
  [[nodiscard]] std::shared_ptr<const GroupSnapshot> get(uint64_t group_id) const {
    std::lock_guard lock(mu_);
    auto it = groups_.find(group_id);
    return it == groups_.end() ? nullptr : it->second;
  }
  // Every group, sorted by name then file (vmalert's order).
  [[nodiscard]] std::vector<std::shared_ptr<const GroupSnapshot>> all() const;

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<const GroupSnapshot>> groups_;
};

}  // namespace app
