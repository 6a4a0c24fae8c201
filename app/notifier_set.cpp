#include "app/notifier_set.hpp"

#include <spdlog/spdlog.h>

namespace app {

void NotifierSet::set(std::vector<std::shared_ptr<notifier::Notifier>> targets) {
  auto next = std::make_shared<const Targets>(std::move(targets));
  std::lock_guard lock(mu_);
  targets_ = std::move(next);
}

std::shared_ptr<const NotifierSet::Targets> NotifierSet::snapshot() const {
  std::lock_guard lock(mu_);
  return targets_;
}

std::vector<std::shared_ptr<notifier::Notifier>> NotifierSet::targets() const {
  return *snapshot();
}

bool NotifierSet::empty() const { return snapshot()->empty(); }

void NotifierSet::send(std::vector<notifier::Alert> batch, const Headers& headers,
                       const std::string& where) {
  if (batch.empty()) return;
  const auto held = snapshot();
  const Targets& targets = *held;
  if (targets.empty()) return;
  // Each target owns its batch (a queue keeps the alerts without copying them again): every
  // target but the last gets a copy, the last one the batch itself.
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& n = targets[i];
    auto done = [n, where](std::optional<core::Error> e) {
      if (e) SPDLOG_ERROR("{}: {}", where, e->message);
    };
    if (i + 1 < targets.size()) {
      n->send_owned(batch, headers, std::move(done));
    } else {
      n->send_owned(std::move(batch), headers, std::move(done));
    }
  }
}

void NotifierSet::flush() {
  for (const auto& n : *snapshot()) n->flush();
}

}  // namespace app
