// rules::RuleUpdate / UpdateHistory: the last N evaluations of a rule, as vmalert's ruleState
// keeps them for /api/v1/rule "updates" and the rule's lastError / lastSamples fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace rules {

// Makes a rule's datasource request, as a curl command with secrets hidden, for an evaluation
// timestamp (datasource::Querier::curl_maker for the rule's expression). Why a maker and not
// the text: the command differs from round to round only in its time, so a rule's updates share
// one maker instead of holding 20 texts of ~250 bytes, and a round builds no text at all; the
// API makes the text when it shows an update. Holds what it needs (not the querier): a history
// can outlive its rule's querier.
using CurlMaker = std::function<std::string(core::TimePoint)>;

struct RuleUpdate {
  core::TimePoint time{};      // wall-clock start of the evaluation (API "time", lastEvaluation)
  core::TimePoint at{};        // evaluation timestamp the query used (API "at")
  core::Duration duration{};   // how long the evaluation took (API "duration", evaluationTime)
  std::string error;           // empty = success
  size_t samples = 0;          // series returned by the query
  std::optional<uint64_t> series_fetched;  // datasource stats; unset = unsupported
  std::shared_ptr<const CurlMaker> curl;   // the request, made for `at`; null = none

  // The request as a curl command ("" without one).
  [[nodiscard]] std::string curl_text() const {
    return curl != nullptr && *curl ? (*curl)(at) : std::string();
  }
};

// The newest `capacity` updates of one rule (capacity >= 1), as a ring of compact entries (40
// bytes; an error text is shared with the previous entry when equal, a curl maker with the
// previous entry when the same).
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
  // Distinct errors and curl makers the entries hold (tests: at most two per entry).
  [[nodiscard]] size_t texts_kept() const;

 private:
  static constexpr uint32_t kNoText = UINT32_MAX;
  // 40 bytes. With a curl kept as a difference from the previous entry's text an entry was 64,
  // and the texts ~170 bytes a rule more: 1.5 kB a rule once the ring is full, the largest part
  // of a rule (issue 12). What an entry refers to (its error, its curl maker) is kept once in
  // texts_, counted by the entries using it.
  struct Entry {
    int64_t time_ns = 0;
    int64_t at_ns = 0;
    int64_t duration_ns = 0;
    uint32_t samples = 0;         // saturates at UINT32_MAX
    uint32_t series_fetched = 0;  // 0 = unset, else the value + 1 (saturates)
    uint32_t error = kNoText;     // texts_ index; kNoText = success
    uint32_t curl = kNoText;      // texts_ index; kNoText = no curl
  };
  static_assert(sizeof(Entry) == 40);
  struct Text {
    std::shared_ptr<const std::string> error;  // one of the two
    std::shared_ptr<const CurlMaker> curl;
    uint32_t uses = 0;  // entries using it; 0 = a free slot
  };
  // Under mu_: a slot for `t` (used once); one more or one fewer use.
  uint32_t keep(Text t);
  void use(uint32_t i) {
    if (i != kNoText) ++texts_[i].uses;
  }
  void drop(uint32_t i);

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
