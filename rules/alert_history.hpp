// rules::RuleUpdate / UpdateHistory: the last N evaluations of a rule, as vmalert's ruleState
// keeps them for /api/v1/rule "updates" and the rule's lastError / lastSamples fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "core/time.hpp"

namespace rules {

// A text kept as a difference from an earlier, shared one: the curl command of one update
// differs from the previous update's only in the `time` parameter, so 20 entries x 1,000 rules
// need not hold 20,000 copies of a ~250-byte command (issue 12: 5 MB at 10k alerts). Holds
// `base`'s first `prefix` bytes, then `middle`, then its last `suffix` bytes.
class DeltaText {
 public:
  DeltaText() = default;
  DeltaText(std::string s)  // NOLINT(google-explicit-constructor): assigned like a string
      : base_(s.empty() ? nullptr : std::make_shared<const std::string>(std::move(s))),
        prefix_(base_ ? static_cast<uint32_t>(base_->size()) : 0) {}
  DeltaText(const char* s) : DeltaText(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  // `s`, sharing `earlier`'s base when they differ in a short middle part only.
  [[nodiscard]] static DeltaText against(const DeltaText& earlier, std::string s);

  [[nodiscard]] std::string str() const;
  [[nodiscard]] size_t size() const { return prefix_ + middle_.size() + suffix_; }
  [[nodiscard]] bool empty() const { return size() == 0; }
  // Whether this shares its base with `o` (tests).
  [[nodiscard]] bool shares_base_with(const DeltaText& o) const {
    return base_ != nullptr && base_ == o.base_;
  }

 private:
  std::shared_ptr<const std::string> base_;
  uint32_t prefix_ = 0;
  uint32_t suffix_ = 0;
  std::string middle_;
};

struct RuleUpdate {
  core::TimePoint time{};      // wall-clock start of the evaluation (API "time", lastEvaluation)
  core::TimePoint at{};        // evaluation timestamp the query used (API "at")
  core::Duration duration{};   // how long the evaluation took (API "duration", evaluationTime)
  std::string error;           // empty = success
  size_t samples = 0;          // series returned by the query
  std::optional<uint64_t> series_fetched;  // datasource stats; unset = unsupported
  DeltaText curl;              // the request as a curl command (secrets hidden), may be empty
};

// A ring buffer of the newest `capacity` updates (capacity >= 1). Entries are immutable and
// shared, so the API snapshot taken after every round copies pointers, not strings; an entry's
// curl shares the previous entry's text (DeltaText).
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
