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

uint32_t UpdateHistory::keep(std::shared_ptr<const std::string> text) {
  if (!free_texts_.empty()) {
    const uint32_t i = free_texts_.back();
    free_texts_.pop_back();
    texts_[i] = Text{std::move(text), 1};
    return i;
  }
  texts_.push_back(Text{std::move(text), 1});
  return static_cast<uint32_t>(texts_.size() - 1);
}

void UpdateHistory::drop(uint32_t i) {
  if (i == kNoText || --texts_[i].uses > 0) return;
  texts_[i].text.reset();
  free_texts_.push_back(i);
}

DeltaText UpdateHistory::curl_of(const Entry& e) const {
  DeltaText d;
  if (e.curl_base == kNoText) return d;
  d.base_ = texts_[e.curl_base].text;
  d.prefix_ = e.curl_prefix;
  d.suffix_ = e.curl_suffix;
  std::memcpy(d.middle_, e.curl_middle, e.curl_middle_size);
  d.middle_size_ = e.curl_middle_size;
  return d;
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
  if (!u.curl.empty()) {
    if (prev != nullptr && prev->curl_base != kNoText) {
      u.curl = DeltaText::against(curl_of(*prev), u.curl.str());
    }
    if (prev != nullptr && prev->curl_base != kNoText &&
        u.curl.base_ == texts_[prev->curl_base].text) {
      e.curl_base = prev->curl_base;
      use(e.curl_base);
    } else {
      e.curl_base = keep(u.curl.base_);
    }
    e.curl_prefix = u.curl.prefix_;
    e.curl_suffix = u.curl.suffix_;
    std::memcpy(e.curl_middle, u.curl.middle_, u.curl.middle_size_);
    e.curl_middle_size = u.curl.middle_size_;
  }
  if (!u.error.empty()) {
    if (prev != nullptr && prev->error != kNoText && *texts_[prev->error].text == u.error) {
      e.error = prev->error;
      use(e.error);
    } else {
      e.error = keep(std::make_shared<const std::string>(u.error));
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
    drop(entries_[next_].curl_base);
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
    if (e.error != kNoText) u.error = *texts_[e.error].text;
    u.samples = e.samples;
    if (e.series_fetched > 0) u.series_fetched = e.series_fetched - 1;
    u.curl = curl_of(e);
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace rules
