#include "rules/alert_history.hpp"

#include <utility>

namespace rules {

UpdateHistory::UpdateHistory(size_t capacity) : entries_(capacity < 1 ? 1 : capacity) {}

void UpdateHistory::add(RuleUpdate u) {
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
