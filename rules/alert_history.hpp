// rules::RuleUpdate / UpdateHistory: the last N evaluations of a rule, as vmalert's ruleState
// keeps them for /api/v1/rule "updates" and the rule's lastError / lastSamples fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/time.hpp"

namespace rules {

struct RuleUpdate {
  core::TimePoint time{};      // wall-clock start of the evaluation (API "time", lastEvaluation)
  core::TimePoint at{};        // evaluation timestamp the query used (API "at")
  core::Duration duration{};   // how long the evaluation took (API "duration", evaluationTime)
  std::string error;           // empty = success
  size_t samples = 0;          // series returned by the query
  std::optional<uint64_t> series_fetched;  // datasource stats; unset = unsupported
  std::string curl;            // the request as a curl command (secrets hidden), may be empty
};

// A ring buffer of the newest `capacity` updates (capacity >= 1). Entries are immutable and
// shared, so the API snapshot taken after every round copies pointers, not strings.
class UpdateHistory {
 public:
  explicit UpdateHistory(size_t capacity = 20);

  void add(RuleUpdate u);
  // The newest update; a default RuleUpdate before the first evaluation.
  [[nodiscard]] const RuleUpdate& last() const;
  [[nodiscard]] bool empty() const { return count_ == 0; }
  // Newest first.
  [[nodiscard]] std::vector<RuleUpdate> newest_first() const;
  [[nodiscard]] std::vector<std::shared_ptr<const RuleUpdate>> shared_newest_first() const;
  [[nodiscard]] size_t capacity() const { return entries_.size(); }
  void clear();

 private:
  std::vector<std::shared_ptr<const RuleUpdate>> entries_;
  size_t next_ = 0;
  size_t count_ = 0;
};

}  // namespace rules
