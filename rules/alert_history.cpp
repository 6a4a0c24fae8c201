#include "rules/alert_history.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>

namespace rules {

UpdateHistory::UpdateHistory(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

DeltaText DeltaText::against(const DeltaText& earlier, std::string_view n) {
  const std::string* base = earlier.base_.get();
  if (base == nullptr || n.size() > UINT32_MAX) return DeltaText(std::string(n));
  const std::string_view b = *base;
  size_t pre = 0;
  const size_t common = std::min(b.size(), n.size());
  while (pre < common && b[pre] == n[pre]) ++pre;
  size_t suf = 0;
  while (suf < common - pre && b[b.size() - 1 - suf] == n[n.size() - 1 - suf]) ++suf;
  const size_t mid = n.size() - pre - suf;
  if (mid > kMaxMiddle) return DeltaText(std::string(n));
  DeltaText d;
  d.base_ = earlier.base_;
  d.prefix_ = static_cast<uint32_t>(pre);
  d.suffix_ = static_cast<uint32_t>(suf);
  if (mid > 0) std::memcpy(d.middle_, n.data() + pre, mid);
  d.middle_size_ = static_cast<uint8_t>(mid);
  return d;
}

std::string DeltaText::str() const {
  std::string out;
  if (base_ == nullptr) return out;
  out.reserve(size());
  out.append(*base_, 0, prefix_);
  out.append(middle_, middle_size_);
  out.append(*base_, base_->size() - suffix_, suffix_);
  return out;
}

void UpdateHistory::add(RuleUpdate u) {
  Entry e;
  e.time = u.time;
  e.at = u.at;
  e.duration = u.duration;
  e.samples = u.samples;
  e.series_fetched = u.series_fetched ? static_cast<int64_t>(*u.series_fetched) : -1;
  std::lock_guard lock(mu_);
  const Entry* prev =
      entries_.empty() ? nullptr : &entries_[(next_ + entries_.size() - 1) % entries_.size()];
  if (prev != nullptr && !u.curl.empty()) u.curl = DeltaText::against(prev->curl, u.curl.str());
  if (!u.error.empty()) {
    const bool same = prev != nullptr && prev->error != nullptr && *prev->error == u.error;
    e.error = same ? prev->error : std::make_shared<const std::string>(u.error);
  }
  e.curl = u.curl;
  if (entries_.size() < capacity_) {
    // Grown by doubling but never past the capacity (a vector would go from 16 to 32 for 20).
    if (entries_.size() == entries_.capacity()) {
      entries_.reserve(std::min(capacity_, std::max<size_t>(4, 2 * entries_.size())));
    }
    entries_.push_back(std::move(e));
    next_ = entries_.size() % capacity_;
  } else {
    entries_[next_] = std::move(e);
    next_ = (next_ + 1) % capacity_;
  }
  ++added_;
  last_ = std::move(u);
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
    u.time = e.time;
    u.at = e.at;
    u.duration = e.duration;
    if (e.error) u.error = *e.error;
    u.samples = e.samples;
    if (e.series_fetched >= 0) u.series_fetched = static_cast<uint64_t>(e.series_fetched);
    u.curl = e.curl;
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace rules
