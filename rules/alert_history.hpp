// rules::RuleUpdate / UpdateHistory: the last N evaluations of a rule, as vmalert's ruleState
// keeps them for /api/v1/rule "updates" and the rule's lastError / lastSamples fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"

namespace rules {

// A text kept as a difference from an earlier, shared one: the curl command of one update
// differs from the previous update's only in the `time` parameter, so 20 entries x 1,000 rules
// need not hold 20,000 copies of a ~250-byte command (issue 12: 5 MB at 10k alerts). Holds
// `base`'s first `prefix` bytes, then a middle of at most kMaxMiddle bytes kept inline, then its
// last `suffix` bytes: 40 bytes beside the shared base.
class DeltaText {
 public:
  static constexpr size_t kMaxMiddle = 15;

  DeltaText() = default;
  DeltaText(std::string s)  // NOLINT(google-explicit-constructor): assigned like a string
      : base_(s.empty() ? nullptr : std::make_shared<const std::string>(std::move(s))),
        prefix_(base_ ? static_cast<uint32_t>(base_->size()) : 0) {}
  DeltaText(const char* s) : DeltaText(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  // `s`, sharing `earlier`'s base when they differ in a short middle part only.
  [[nodiscard]] static DeltaText against(const DeltaText& earlier, std::string_view s);

  [[nodiscard]] std::string str() const;
  [[nodiscard]] size_t size() const { return prefix_ + middle_size_ + suffix_; }
  [[nodiscard]] bool empty() const { return size() == 0; }
  // Whether this shares its base with `o` (tests).
  [[nodiscard]] bool shares_base_with(const DeltaText& o) const {
    return base_ != nullptr && base_ == o.base_;
  }

 private:
  friend class UpdateHistory;  // keeps the parts without the pointer (UpdateHistory::Entry)

  std::shared_ptr<const std::string> base_;
  uint32_t prefix_ = 0;
  uint32_t suffix_ = 0;
  char middle_[kMaxMiddle] = {};
  uint8_t middle_size_ = 0;
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

// The newest `capacity` updates of one rule (capacity >= 1), as a ring of compact entries (64
// bytes; an error text is shared with the previous entry when equal, a curl is a DeltaText's
// parts against a shared base).
//
// Why a lock instead of immutable shared entries: every round's API snapshot copied 20 entry
// pointers per rule and every entry was its own 160-byte allocation: 3.7 kB a rule, 3.7 MB of
// a 1,000-rule daemon (issue 12). The rule's thread adds; a snapshot keeps a pointer to this
// object and how many entries had been added (added()), and the HTTP thread reads with
// newest_first(that count), so a snapshot shows what was there when it was taken and never
// a newer entry.
class UpdateHistory {
 public:
  explicit UpdateHistory(size_t capacity = 20);
  UpdateHistory(const UpdateHistory&) = delete;
  UpdateHistory& operator=(const UpdateHistory&) = delete;

  // ---- the owning rule's thread ----
  void add(RuleUpdate u);
  // The newest update whole; a default RuleUpdate before the first evaluation.
  [[nodiscard]] const RuleUpdate& last() const { return last_; }
  [[nodiscard]] bool empty() const { return added_ == 0; }
  // How many updates add() has taken (never decreases).
  [[nodiscard]] uint64_t added() const { return added_; }

  // ---- any thread ----
  // Newest first, of the updates among the first `added_until` ever added that are still kept.
  [[nodiscard]] std::vector<RuleUpdate> newest_first(uint64_t added_until = UINT64_MAX) const;
  [[nodiscard]] size_t capacity() const { return capacity_; }
  // Distinct texts (errors, curl bases) the entries hold (tests: at most two per entry).
  [[nodiscard]] size_t texts_kept() const;

 private:
  static constexpr uint32_t kNoText = UINT32_MAX;
  // 64 bytes. With a DeltaText and an error pointer of its own an entry was 96: 1.9 kB a rule
  // once the ring is full, the largest part of a rule (issue 12). The texts an entry uses (its
  // error, its curl's base) are kept once in texts_, counted by the entries using them.
  struct Entry {
    int64_t time_ns = 0;
    int64_t at_ns = 0;
    int64_t duration_ns = 0;
    uint32_t samples = 0;          // saturates at UINT32_MAX
    uint32_t series_fetched = 0;   // 0 = unset, else the value + 1 (saturates)
    uint32_t error = kNoText;      // texts_ index; kNoText = success
    uint32_t curl_base = kNoText;  // texts_ index; kNoText = no curl
    uint32_t curl_prefix = 0;      // DeltaText's parts against the base
    uint32_t curl_suffix = 0;
    char curl_middle[DeltaText::kMaxMiddle] = {};
    uint8_t curl_middle_size = 0;
  };
  static_assert(sizeof(Entry) == 64);
  struct Text {
    std::shared_ptr<const std::string> text;
    uint32_t uses = 0;  // entries using it; 0 = a free slot
  };
  // Under mu_: a slot for `text` (used once); one more or one fewer use.
  uint32_t keep(std::shared_ptr<const std::string> text);
  void use(uint32_t i) {
    if (i != kNoText) ++texts_[i].uses;
  }
  void drop(uint32_t i);
  [[nodiscard]] DeltaText curl_of(const Entry& e) const;

  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // ring; grows to capacity_ entries, never more
  std::vector<Text> texts_;     // at most two per entry
  std::vector<uint32_t> free_texts_;
  size_t capacity_;
  size_t next_ = 0;  // where the next entry goes once the ring is full
  uint64_t added_ = 0;
  RuleUpdate last_;
};

}  // namespace rules
