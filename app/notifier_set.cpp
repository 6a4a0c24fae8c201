#include "app/notifier_set.hpp"

#include <spdlog/spdlog.h>

namespace app {

void NotifierSet::set(std::vector<std::shared_ptr<notifier::Notifier>> targets) {
  std::lock_guard lock(mu_);
  targets_ = std::move(targets);
}

std::vector<std::shared_ptr<notifier::Notifier>> NotifierSet::targets() const {
  std::lock_guard lock(mu_);
  return targets_;
}

bool NotifierSet::empty() const {
  std::lock_guard lock(mu_);
  return targets_.empty();
}

void NotifierSet::send(std::vector<notifier::Alert> batch, const Headers& headers,
                       const std::string& where) {
  if (batch.empty()) return;
  const auto targets = this->targets();
  if (targets.empty()) return;
  // The batch must outlive every send; the notifiers keep the targets alive themselves.
  auto shared = std::make_shared<const std::vector<notifier::Alert>>(std::move(batch));
  for (const auto& n : targets) {
    n->send(*shared, headers, [shared, n, where](std::optional<core::Error> e) {
      if (e) spdlog::error("{}: {}", where, e->message);
    });
  }
}

void NotifierSet::flush() {
  for (const auto& n : targets()) n->flush();
}

}  // namespace app
