// app::NotifierSet: the notifiers every group sends to, swappable at run time (reload of the
// notifier configuration) without stopping evaluation. Batches already handed to a notifier
// finish there; the next batch goes to the new set.
//
// Thread-safety: send() and set() run on the loop; targets() may be called from the HTTP thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "notifier/notifier.hpp"

namespace app {

class NotifierSet {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  void set(std::vector<std::shared_ptr<notifier::Notifier>> targets);
  [[nodiscard]] std::vector<std::shared_ptr<notifier::Notifier>> targets() const;
  [[nodiscard]] bool empty() const;

  // Sends `batch` to every target. A failure is logged with `where` (group and rule). Targets
  // with a delivery queue (notifier::DeliveryQueue) only queue it: see flush().
  void send(std::vector<notifier::Alert> batch, const Headers& headers, const std::string& where);
  // Lets every target send what it has queued (the end of a group's round).
  void flush();

 private:
  using Targets = std::vector<std::shared_ptr<notifier::Notifier>>;
  // The set, replaced whole by set(): send() and flush() hold it by a pointer copy, not a copy
  // of the list, once per rule and round.
  [[nodiscard]] std::shared_ptr<const Targets> snapshot() const;

  mutable std::mutex mu_;
  std::shared_ptr<const Targets> targets_ = std::make_shared<const Targets>();
};

}  // namespace app
