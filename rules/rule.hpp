// rules::Rule: what a group holds, alerting and recording rules behind one interface (vmalert's
// rule.Rule: exec, updateWith, close). Pure: no I/O, no clock, no logging; every time is an
// argument, so a test drives a rule with a manual clock.
//
// One evaluation is either
//   apply(result, ts, env, info)   the query of expr() at ts answered with `result`, or
//   record_error(err, ts, info)    the query failed; state stays as it was.
// then alerts_to_send(now, ...) hands out the notifications that are due. rules::Group
// (rules/group.hpp) runs exactly that sequence: read it there.
//
// Not thread-safe: the group's scheduler owns its rules; readers get copies (describe()).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/query_result.hpp"
#include "core/time.hpp"
#include "notifier/notifier.hpp"
#include "rules/alert.hpp"
#include "rules/alert_history.hpp"
#include "templates/template.hpp"

namespace rules {

enum class RuleType { alerting, recording };

// "alerting" | "recording" (API `type`).
[[nodiscard]] std::string_view to_string(RuleType t);

// Bookkeeping for the update history (API "updates"); none of it changes the state machine.
struct EvalInfo {
  core::TimePoint started{};  // wall clock when the evaluation began
  core::Duration duration{};  // wall time the evaluation took
  std::shared_ptr<const CurlMaker> curl;  // the datasource request as curl; null = none
  bool emit_series = true;    // false: skip building series nobody writes (no remote write)
};

struct ExecStats {
  size_t samples = 0;                     // series returned by the query
  std::optional<uint64_t> series_fetched; // from QueryResult
  uint64_t fired = 0;                     // alerts that became firing (vmalert_alerts_fired_total)
  // Series to remote-write: recording results, or ALERTS / ALERTS_FOR_STATE for every pending
  // or firing alert at ts; then staleness markers for series emitted last round and gone now.
  // Empty when EvalInfo::emit_series is false.
  std::vector<Series> series;
  // Set when a template failed to render (the round still succeeded).
  std::optional<core::Error> template_error;
};

// The update-history entry of one evaluation at ts (both rule kinds): when it ran, how long it
// took, the request; with the query's result counted, or failed with err.
[[nodiscard]] inline RuleUpdate make_update(core::TimePoint ts, const EvalInfo& info) {
  RuleUpdate u;
  u.time = info.started;
  u.at = ts;
  u.duration = info.duration;
  u.curl = info.curl;
  return u;
}
[[nodiscard]] inline RuleUpdate make_update(core::TimePoint ts, const EvalInfo& info,
                                            const core::QueryResult& result) {
  RuleUpdate u = make_update(ts, info);
  u.samples = result.size();
  u.series_fetched = result.series_fetched;
  return u;
}
[[nodiscard]] inline RuleUpdate make_update(core::TimePoint ts, const EvalInfo& info,
                                            const core::Error& err) {
  RuleUpdate u = make_update(ts, info);
  u.error = err.message.empty() ? std::string("unknown error") : err.message;
  return u;
}

// A copy of one alert for the API and /metrics. Labels and annotations share the alert's blocks
// (core::Labels), so a snapshot costs a few dozen bytes per alert; its generatorURL is
// RuleView::alert_source_prefix + id, or RuleView::alert_sources[i] when that is filled.
struct AlertView {
  uint64_t id = 0;
  AlertState state = AlertState::pending;
  bool restored = false;  // beside `state`, in what would be padding: 48 bytes, not 56
  bool stabilizing = false;
  core::Labels labels;
  core::Labels annotations;
  double value = 0;
  core::TimePoint active_at{};
};

// A copy of one rule's state for the API and /metrics.
struct RuleView {
  RuleType type = RuleType::alerting;
  uint64_t id = 0;
  std::string name;
  std::string expr;
  core::Duration for_{};
  core::Duration keep_firing_for{};
  core::Labels labels;
  core::Labels annotations;
  AlertState state = AlertState::inactive;
  std::string last_error;
  core::TimePoint last_evaluation{};
  core::Duration evaluation_time{};
  uint64_t last_samples = 0;
  int64_t last_series_fetched = -1;
  uint64_t errors_total = 0;
  size_t pending = 0;
  size_t firing = 0;
  bool debug = false;
  int update_entries_limit = 20;
  std::vector<AlertView> alerts;  // pending and firing, by ID
  // An alert's generatorURL ("source") is this followed by its ID:
  // `<external_url>/vmalert/alert?group_id=G&alert_id=`.
  std::string alert_source_prefix;
  // With -external.alert.source: each alert's generatorURL, parallel to `alerts` (empty
  // otherwise, so the default costs nothing per alert).
  std::vector<std::string> alert_sources;
  // The rule's update history (API /api/v1/rule "updates"), shared with the rule, and how many
  // entries it had taken when this view was made: updates() shows those still kept.
  std::shared_ptr<const UpdateHistory> history;
  uint64_t history_added = 0;

  // Newest first; empty without a history.
  [[nodiscard]] std::vector<RuleUpdate> updates() const {
    return history ? history->newest_first(history_added) : std::vector<RuleUpdate>{};
  }
};

class Rule {
 public:
  virtual ~Rule() = default;

  [[nodiscard]] virtual RuleType type() const = 0;
  // vmalert's rule ID (config::RuleSpec::id): stable across reloads while the rule is the same.
  [[nodiscard]] virtual uint64_t id() const = 0;
  [[nodiscard]] virtual const std::string& name() const = 0;
  [[nodiscard]] virtual const std::string& expr() const = 0;
  // Some template calls `query`: apply() may block on the datasource (run it off the loop).
  [[nodiscard]] virtual bool uses_query() const = 0;

  // The query of expr() at `ts` answered with `result`. Fails (the round counts as an error)
  // on a duplicate label set or when the rule's limit is exceeded.
  [[nodiscard]] virtual core::Result<ExecStats> apply(const core::QueryResult& result,
                                                      core::TimePoint ts,
                                                      const templates::TemplateEnv& env,
                                                      const EvalInfo& info) = 0;
  // The query failed: records the error (history, errors_total); state stays as it is.
  virtual void record_error(const core::Error& err, core::TimePoint ts, const EvalInfo& info) = 0;
  // Notifications due at wall time `now`, marked as sent (recording rules: none).
  [[nodiscard]] virtual std::vector<notifier::Alert> alerts_to_send(
      core::TimePoint now, core::Duration resend_delay, core::Duration resolve_duration) = 0;

  // Reload with the same ID and type: takes every setting of `newer`, keeps the state.
  virtual void update_from(Rule&& newer) = 0;
  // The rule is removed (reload): its active alerts become resolved at `now` (returned as the
  // last notifications to send) and every series it wrote gets a staleness marker.
  struct Closed {
    std::vector<notifier::Alert> alerts;
    std::vector<Series> series;
  };
  [[nodiscard]] virtual Closed close(core::TimePoint now) = 0;

  // Alert state that outlives the process (-state.path): copies of the pending and firing
  // alerts, and putting them back into a rule that has none yet (start-up, before the first
  // round). An alert already present is left alone. Returns how many were taken.
  [[nodiscard]] virtual std::vector<Alert> active_alerts() const { return {}; }
  // Every alert the rule holds, by ID, inactive ones kept for their resolve notification
  // included; no copies. Empty for recording rules.
  [[nodiscard]] virtual std::span<const Alert> alerts() const { return {}; }
  virtual size_t restore_alerts(std::span<const Alert> alerts) {
    (void)alerts;
    return 0;
  }

  // Remote-read restore (vmalert.md §6): the query for the rule's ALERTS_FOR_STATE series over
  // `lookback` (empty: nothing to restore, e.g. recording rules or `for: 0`), and applying its
  // answer: activeAt of the alerts the next round creates. Returns how many series matched.
  [[nodiscard]] virtual std::string restore_query(core::Duration lookback) const {
    (void)lookback;
    return {};
  }
  virtual size_t restore(const core::QueryResult& result) {
    (void)result;
    return 0;
  }

  [[nodiscard]] virtual RuleView describe() const = 0;
  [[nodiscard]] virtual const UpdateHistory& history() const = 0;
};

}  // namespace rules
