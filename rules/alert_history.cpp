#include "rules/alert_history.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace rules {

UpdateHistory::UpdateHistory(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

uint32_t UpdateHistory::keep(Text t) {
  t.uses = 1;
  if (!free_texts_.empty()) {
    const uint32_t i = free_texts_.back();
    free_texts_.pop_back();
    texts_[i] = std::move(t);
    return i;
  }
  texts_.push_back(std::move(t));
  return static_cast<uint32_t>(texts_.size() - 1);
}

void UpdateHistory::drop(uint32_t i) {
  if (i == kNoText || --texts_[i].uses > 0) return;
  texts_[i] = Text{};
  free_texts_.push_back(i);
}

void UpdateHistory::add(RuleUpdate u) {
  Entry e;
  e.time_ns = u.time.time_since_epoch().count();
  e.at_ns = u.at.time_since_epoch().count();
  e.duration_ns = u.duration.count();
  e.samples = static_cast<uint32_t>(std::min<uint64_t>(u.samples, UINT32_MAX));
  if (u.series_fetched) {
    e.series_fetched =
        static_cast<uint32_t>(std::min<uint64_t>(*u.series_fetched, UINT32_MAX - 1) + 1);
  }
  std::lock_guard lock(mu_);
  const Entry* prev =
      entries_.empty() ? nullptr : &entries_[(next_ + entries_.size() - 1) % entries_.size()];
  // The new entry's texts are counted before the entry it replaces lets go of its own (with a
  // capacity of 1 they are the same entry).
  if (u.curl != nullptr) {
    if (prev != nullptr && prev->curl != kNoText && texts_[prev->curl].curl == u.curl) {
      e.curl = prev->curl;
      use(e.curl);
    } else {
      e.curl = keep(Text{.error = nullptr, .curl = u.curl});
    }
  }
  if (!u.error.empty()) {
    if (prev != nullptr && prev->error != kNoText && *texts_[prev->error].error == u.error) {
      e.error = prev->error;
      use(e.error);
    } else {
      e.error = keep(Text{.error = std::make_shared<const std::string>(u.error), .curl = nullptr});
    }
  }
  if (entries_.size() < capacity_) {
    // Grown by doubling but never past the capacity (a vector would go from 16 to 32 for 20).
    if (entries_.size() == entries_.capacity()) {
      entries_.reserve(std::min(capacity_, std::max<size_t>(4, 2 * entries_.size())));
    }
    entries_.push_back(e);
    next_ = entries_.size() % capacity_;
  } else {
    drop(entries_[next_].error);
    drop(entries_[next_].curl);
    entries_[next_] = e;
    next_ = (next_ + 1) % capacity_;
  }
  ++added_;
  last_ = std::move(u);
}

size_t UpdateHistory::texts_kept() const {
  std::lock_guard lock(mu_);
  return texts_.size() - free_texts_.size();
}

std::vector<RuleUpdate> UpdateHistory::newest_first(uint64_t added_until) const {
  std::vector<RuleUpdate> out;
  std::lock_guard lock(mu_);
  const size_t n = entries_.size();
  // Entries added after `added_until` are skipped: they are the newest ones.
  const uint64_t newer = added_ - std::min(added_until, added_);
  if (newer >= n) return out;
  out.reserve(n - newer);
  for (size_t i = newer; i < n; ++i) {
    const Entry& e = entries_[(next_ + n - 1 - i) % n];
    RuleUpdate u;
    u.time = core::TimePoint(core::TimePoint::duration(e.time_ns));
    u.at = core::TimePoint(core::TimePoint::duration(e.at_ns));
    u.duration = core::Duration(e.duration_ns);
    if (e.error != kNoText) u.error = *texts_[e.error].error;
    u.samples = e.samples;
    if (e.series_fetched > 0) u.series_fetched = e.series_fetched - 1;
    if (e.curl != kNoText) u.curl = texts_[e.curl].curl;
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace rules
