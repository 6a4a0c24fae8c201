// RecordingNotifier: a notifier::Notifier that keeps every batch and completes at once, with
// an optional forced error.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "notifier/notifier.hpp"

namespace fakes {

class RecordingNotifier final : public notifier::Notifier {
 public:
  struct Batch {
    std::vector<notifier::Alert> alerts;
    std::vector<std::pair<std::string, std::string>> headers;
  };

  // Notifier
  void send(std::span<const notifier::Alert> alerts,
            const std::vector<std::pair<std::string, std::string>>& headers,
            notifier::SendDone done) override {
    batches.push_back({{alerts.begin(), alerts.end()}, headers});
    stats_.sent += alerts.size();
    if (fail_with) {
      stats_.errors += alerts.size();
      stats_.last_error = fail_with->message;
    } else {
      stats_.last_error.clear();
    }
    done(fail_with);
  }
  [[nodiscard]] std::string addr() const override { return "recording"; }
  [[nodiscard]] notifier::NotifierStats stats() const override { return stats_; }

  std::vector<Batch> batches;
  std::optional<core::Error> fail_with;

 private:
  notifier::NotifierStats stats_;
};

}  // namespace fakes
