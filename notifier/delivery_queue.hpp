// notifier::DeliveryQueue: one Alertmanager's bounded queue and sender (issue 10, item 3), in
// front of the client that does one POST (AlertmanagerClient). vmalert has none: it POSTs each
// rule's alerts to every Alertmanager at once and forgets them on failure.
//
// Contract:
//   - send() only queues (any number of calls per round, `done` runs at once with no error);
//     flush() starts the POSTs; the scheduler calls it when a round ends, so the alerts of a
//     round leave together, in POSTs of at most `max_batch_size` alerts (same group headers in
//     one POST). A queue holding a full batch starts it without waiting for flush(). What a
//     flush() could not start at once (POSTs in flight, a backoff wait) goes as POSTs are
//     answered; alerts queued after it wait for the next flush() (or a full batch), so a round
//     is not sent in pieces as other POSTs are answered.
//   - Alerts are keyed by their label set (Alertmanager's identity of an alert), through a
//     64-bit hash of it (Labels::content_hash): a newer state of a queued alert replaces
//     the older one and queues as the newest entry. An alert in a POST not answered yet is not
//     sent again until that POST is answered, so a newer state never overtakes an older one.
//   - At most `concurrency` POSTs in flight; the queue holds at most `max_queue_size` alerts
//     waiting, and when full drops the OLDEST, counted in stats().dropped.
//   - 2xx: accepted. 429, 5xx and transport errors (error kinds timeout/connection and
//     http_status, never message text): every alert of the POST goes back to the queue in its
//     old place unless a newer state of it arrived meanwhile, and nothing more is sent to this
//     Alertmanager until a backoff wait (retry_min_interval doubling up to retry_max_interval,
//     with jitter) has passed. Other statuses (400, 404, ...) and a canceled POST drop the
//     alerts, counted.
//   - An alert is kept until the Alertmanager accepts it or a newer state replaces it, and is
//     given up (dropped, counted) only once it has waited `retry_max_time` AND its endsAt has
//     passed: a firing alert's endsAt lies 4 resend delays ahead, by which time the rule has
//     produced a newer state, so -rule.resendDelay never hides a failed send.
//   - Everything but stats() runs on the clock's loop, and the poster must complete there.
//     stats() may be called from any thread.
//   - A slow or dead Alertmanager delays nothing but its own queue: send() never waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "core/time.hpp"
#include "notifier/notifier.hpp"

namespace notifier {

struct DeliveryOptions {
  size_t max_queue_size = 10'000;  // -notifier.maxQueueSize: alerts waiting, per Alertmanager
  size_t max_batch_size = 1'000;   // -notifier.maxBatchSize: alerts per POST
  size_t concurrency = 1;          // -notifier.concurrency: POSTs in flight
  core::Duration retry_min_interval = std::chrono::seconds(1);   // -notifier.retryMinInterval
  core::Duration retry_max_interval = std::chrono::seconds(10);  // -notifier.retryMaxInterval
  core::Duration retry_max_time = std::chrono::minutes(1);       // -notifier.retryMaxTime
  double jitter = 0.5;  // a wait is drawn from [w * (1 - jitter), w]
  uint64_t seed = 0;    // of the jitter's random source
  // Where failures are reported (`error` false: the alerts are kept and retried); may be empty.
  std::function<void(bool error, std::string_view message)> log;
  // Runs on the clock's loop when an answered POST leaves nothing queued and nothing in flight
  // (the app gives the burst's memory back then); `backlog`: a POST failed since the last time
  // (alerts were held for a retry, perhaps for long). May be empty.
  std::function<void(bool backlog)> on_drained;
};

class DeliveryQueue final : public Notifier {
 public:
  // `poster` does one POST per send() and completes on `clock`'s loop; `clock` must outlive
  // the queue.
  DeliveryQueue(core::Clock& clock, std::shared_ptr<Notifier> poster, DeliveryOptions options);
  ~DeliveryQueue() override;
  DeliveryQueue(const DeliveryQueue&) = delete;
  DeliveryQueue& operator=(const DeliveryQueue&) = delete;

  // Notifier
  void send(std::span<const Alert> alerts,
            const std::vector<std::pair<std::string, std::string>>& headers,
            SendDone done) override;
  void send_owned(std::vector<Alert> alerts,
                  const std::vector<std::pair<std::string, std::string>>& headers,
                  SendDone done) override;
  void flush() override;
  [[nodiscard]] std::string addr() const override;
  // The poster's counters (sent, errors, last_error) and the queue's.
  [[nodiscard]] NotifierStats stats() const override;
  [[nodiscard]] std::string kind() const override;
  [[nodiscard]] core::Labels target_labels() const override;

  // Shutdown: cancels the retry wait, drops (and counts) what is queued and refuses what comes
  // later. POSTs in flight finish (or are canceled by the transport). `on_stopped`, if given,
  // runs on the clock's loop (posted, never inline) once no POST is in flight any more: from
  // then on the poster is never called again, so its transport may be freed.
  void close(std::function<void()> on_stopped = {});

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace notifier
