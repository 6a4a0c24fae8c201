#include "rules/alert_history.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>

namespace rules {

UpdateHistory::UpdateHistory(size_t capacity) : entries_(capacity < 1 ? 1 : capacity) {}

DeltaText DeltaText::against(const DeltaText& earlier, std::string s) {
  // A middle this short (a changed timestamp) is stored inline (std::string's small buffer).
  constexpr size_t kMaxMiddle = 15;
  const std::string* base = earlier.base_.get();
  if (base == nullptr || s.size() > UINT32_MAX) return DeltaText(std::move(s));
  const std::string_view b = *base;
  const std::string_view n = s;
  size_t pre = 0;
  const size_t common = std::min(b.size(), n.size());
  while (pre < common && b[pre] == n[pre]) ++pre;
  size_t suf = 0;
  while (suf < common - pre && b[b.size() - 1 - suf] == n[n.size() - 1 - suf]) ++suf;
  const size_t mid = n.size() - pre - suf;
  if (mid > kMaxMiddle) return DeltaText(std::move(s));
  DeltaText d;
  d.base_ = earlier.base_;
  d.prefix_ = static_cast<uint32_t>(pre);
  d.suffix_ = static_cast<uint32_t>(suf);
  d.middle_.assign(n.substr(pre, mid));
  return d;
}

std::string DeltaText::str() const {
  std::string out;
  if (base_ == nullptr) return out;
  out.reserve(size());
  out.append(*base_, 0, prefix_);
  out += middle_;
  out.append(*base_, base_->size() - suffix_, suffix_);
  return out;
}

void UpdateHistory::add(RuleUpdate u) {
  if (count_ > 0) {
    const RuleUpdate& prev = last();
    if (!u.curl.empty()) u.curl = DeltaText::against(prev.curl, u.curl.str());
  }
  entries_[next_] = std::make_shared<const RuleUpdate>(std::move(u));
  next_ = (next_ + 1) % entries_.size();
  if (count_ < entries_.size()) ++count_;
}

const RuleUpdate& UpdateHistory::last() const {
  static const RuleUpdate kEmpty{};
  if (count_ == 0) return kEmpty;
  return *entries_[(next_ + entries_.size() - 1) % entries_.size()];
}

std::vector<RuleUpdate> UpdateHistory::newest_first() const {
  std::vector<RuleUpdate> out;
  out.reserve(count_);
  for (size_t i = 0; i < count_; ++i) {
    out.push_back(*entries_[(next_ + entries_.size() - 1 - i) % entries_.size()]);
  }
  return out;
}

std::vector<std::shared_ptr<const RuleUpdate>> UpdateHistory::shared_newest_first() const {
  std::vector<std::shared_ptr<const RuleUpdate>> out;
  out.reserve(count_);
  for (size_t i = 0; i < count_; ++i) {
    out.push_back(entries_[(next_ + entries_.size() - 1 - i) % entries_.size()]);
  }
  return out;
}

void UpdateHistory::clear() {
  for (auto& e : entries_) e.reset();
  next_ = 0;
  count_ = 0;
}

}  // namespace rules
