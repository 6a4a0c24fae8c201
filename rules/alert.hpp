// rules::Alert: one alert instance of an alerting rule, as vmalert's notifier.Alert keeps it.
// Plain data owned by rules::AlertingRule; the HTTP API and the notifier read it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/alert_json.hpp"
#include "core/labels.hpp"
#include "core/series.hpp"
#include "core/time.hpp"

namespace rules {

enum class AlertState { inactive, pending, firing };

// "inactive", "pending", "firing" (API, ALERTS{alertstate=...}).
[[nodiscard]] std::string_view to_string(AlertState s);

struct Alert {
  uint64_t id = 0;  // FNV-1a of the processed labels (core::Labels::hash_without_name)
  AlertState state = AlertState::pending;
  bool restored = false;  // active_at came from ALERTS_FOR_STATE
  // AlertingRule::apply's own mark, within one round only: a series of this round updated it.
  bool seen = false;
  // AlertingRule::apply's: the annotations were rendered, without a template error, from origin
  // labels that were the processed ones plus __name__ (its `merged` case), so those that read
  // labels only can be kept while the alert is the same.
  bool rendered_merged = false;
  core::Labels labels;       // processed labels: identity, notifications, ALERTS series
  core::Labels annotations;  // rendered
  double value = 0;
  core::TimePoint active_at{};          // first active ts (pending since)
  core::TimePoint start{};              // ts it became firing; sent as startsAt
  core::TimePoint resolved_at{};        // ts it became inactive
  core::TimePoint last_sent{};          // wall time of the last notification attempt
  core::TimePoint end{};                // endsAt of the last notification
  core::TimePoint keep_firing_since{};  // zero unless a firing alert is held by keep_firing_for
  // The payload's pre-built JSON (generator URL, labels, annotations), built when the alert is
  // first sent and again only when its labels or annotations block changed (or on reload); the
  // notifications of every round and every queue share it. Null until the alert is sent, and
  // null for an alert whose blocks are their own JSON and whose URL is the default link
  // (AlertingRule::set_payload): nothing per alert is needed then.
  std::shared_ptr<const core::AlertJson> json;

  // The API's "stabilizing": firing only because of keep_firing_for.
  [[nodiscard]] bool stabilizing() const {
    return state == AlertState::firing && keep_firing_since != core::TimePoint{};
  }
};

// One series for remote write: ALERTS / ALERTS_FOR_STATE, a recording result or a staleness
// marker (core/series.hpp).
using Series = core::Series;
using core::is_stale_nan;
using core::stale_nan;

}  // namespace rules
