// notifier::Notifier: what rules/ sees of an alert receiver. One call sends one batch (one
// rule's due alerts), or queues it (DeliveryQueue, then `done` runs at once); the callback runs
// on the event loop's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/alert_json.hpp"
#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/time.hpp"
#include "core/vm_histogram.hpp"

namespace notifier {

// An alert as Alertmanager's v2 API receives it.
//
// The generator URL comes from one of three places, first set wins: `json` (a pre-built
// fragment, core/alert_json.hpp), `url_prefix_json` + `url_id` (the URL up to the alert ID, as
// JSON, shared by a rule's alerts, then the ID), or `generator_url`. rules/ sets one of the
// first two, so a queued alert holds shared pointers rather than its own strings.
// Labels and annotations are copied from the fragment when the alert still holds the very
// blocks it was built from, else straight from the block when it is its own JSON
// (core::Labels::append_verbatim_json), else escaped afresh (alert relabeling builds new labels
// per Alertmanager).
struct Alert {
  core::Labels labels;
  core::Labels annotations;  // sorted name -> rendered text
  core::TimePoint starts_at{};
  std::optional<core::TimePoint> ends_at;
  std::string generator_url;                     // used without `json` and `url_prefix_json`
  std::shared_ptr<const core::AlertJson> json;  // may be null
  // `"generatorURL":"<url up to the ID>` (no closing quote); may be null.
  std::shared_ptr<const std::string> url_prefix_json;
  uint64_t url_id = 0;
};

using SendDone = std::function<void(std::optional<core::Error>)>;

// Per-notifier counters for /metrics and the API. They count alerts, not POSTs: `sent` counts
// every alert in every POST attempt, retries included (vmalert_alerts_sent_total{addr}),
// `errors` those in failed POSTs (vmalert_alerts_send_errors_total{addr}). The rest is kept by
// a delivery queue (notifier/delivery_queue.hpp) only.
struct NotifierStats {
  uint64_t sent = 0;
  uint64_t errors = 0;
  std::string last_error;  // empty = last send succeeded or none yet
  uint64_t dropped = 0;    // alerts given up on: full queue, retry deadline, refused (4xx)
  uint64_t queued = 0;     // alerts waiting to be sent (in flight not included)
  uint64_t in_flight = 0;  // alerts in POSTs not answered yet
  uint64_t posts = 0;      // POSTs answered
  double send_seconds = 0;  // their total duration
  // Their durations as vmalert's histogram (vmalert_alerts_send_duration_seconds{addr}).
  core::VmHistogram send_duration;
};

class Notifier {
 public:
  virtual ~Notifier() = default;
  // `headers` are the group's notifier_headers (override configured headers).
  virtual void send(std::span<const Alert> alerts,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    SendDone done) = 0;
  // The same, handing the batch over: a queue keeps the alerts without copying them. Default:
  // send() with the batch kept alive until `done`.
  virtual void send_owned(std::vector<Alert> alerts,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          SendDone done) {
    auto kept = std::make_shared<const std::vector<Alert>>(std::move(alerts));
    send(*kept, headers, [kept, done = std::move(done)](std::optional<core::Error> e) {
      if (done) done(std::move(e));
    });
  }
  // A notifier that queues (DeliveryQueue) sends what is queued now; the scheduler calls it at
  // the end of a round, so that the alerts of a round leave together. Default: nothing queued.
  virtual void flush() {}
  // The address as shown in metrics and logs (no credentials).
  [[nodiscard]] virtual std::string addr() const = 0;
  // Counters so far (a copy). Default: none kept.
  [[nodiscard]] virtual NotifierStats stats() const { return {}; }
  // How the target was found, as /api/v1/notifiers groups them: "static" (-notifier.url,
  // static_configs), "consulSD", "dnsSD"; and its labels after relabeling (none for flags).
  [[nodiscard]] virtual std::string kind() const { return "static"; }
  [[nodiscard]] virtual core::Labels target_labels() const { return {}; }
};

}  // namespace notifier
