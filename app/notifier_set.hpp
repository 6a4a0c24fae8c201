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
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<notifier::Notifier>> targets_;
};

}  // namespace app
