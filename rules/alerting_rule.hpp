// rules::AlertingRule: vmalert's alert state machine (app/vmalert/rule/alerting.go), pure.
//
// The caller (app's group runner) runs the query and hands the result in with the evaluation
// timestamp; the rule expands templates, updates its alerts and returns the series to write.
// No I/O, no clock, no logging: every time is an argument, so a test drives it with a manual
// clock. Templates are parsed once in create(); an unparsable template is a construction error.
//
// Round, per vmalert.md §2:
//   ok = rule.apply(result, query_ts, env, info)      // or rule.record_error(err, ts, info)
//   if (ok) notifier batch = rule.alerts_to_send(wall_now, resend_delay, resolve_duration)
// apply() fails (state left as the failure leaves it, like vmalert) on a duplicate label set
// or when `limit` is exceeded; the query's own failure goes to record_error(), which leaves
// the alerts untouched. A template render error does not fail the round: the rule error is set
// (last_error(), errors_total()) and the failing label/annotation value becomes the error text.
//
// Not thread-safe: one group strand owns the rule; API readers must run on that strand too
// (or copy under the caller's own lock).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/model.hpp"
#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/query_result.hpp"
#include "core/time.hpp"
#include "notifier/notifier.hpp"
#include "rules/alert.hpp"
#include "rules/alert_history.hpp"
#include "rules/rule.hpp"
#include "templates/template.hpp"

namespace rules {

// What the rule needs from the process and the group, resolved by the caller.
struct RuleContext {
  core::Labels external_labels;          // -external.label
  std::string external_url;              // -external.url, used for generatorURL
  bool disable_alertgroup_label = false; // -disableAlertgroupLabel
  core::Duration group_interval{};       // the group's effective interval
  int limit = 0;                         // group limit, else -rule.resultsLimit; 0 = none
  int update_entries_limit = 20;         // -rule.updateEntriesLimit (the rule's own wins)
  // -rule.templates {{define}} blocks, may be null
  const templates::TemplateSet* templates = nullptr;
  // -external.alert.source, parsed: the generatorURL is `<external_url>/<rendered source>`
  // (vmalert's AlertURLGenerator). Unset: `<external_url>/vmalert/alert?group_id=G&alert_id=A`.
  std::optional<templates::Template> alert_source;
};

class AlertingRule final : public Rule {
 public:
  // Merges labels external < group < rule (vmalert NewGroup), parses every label and annotation
  // template. Errors name group, rule and the template: `group "g": rule "r": annotation
  // "summary": template: :1: unclosed action`.
  [[nodiscard]] static core::Result<AlertingRule> create(const config::RuleSpec& rule,
                                                        const config::GroupSpec& group,
                                                        const RuleContext& ctx);

  AlertingRule(AlertingRule&&) noexcept;
  AlertingRule& operator=(AlertingRule&&) noexcept;
  ~AlertingRule() override;

  // Steps 2-8 of an exec round (vmalert.md §2) for the query result at `ts`. `env` supplies the
  // template `query` function and the external labels/URL for templates; it may block.
  [[nodiscard]] core::Result<ExecStats> apply(const core::QueryResult& result, core::TimePoint ts,
                                              const templates::TemplateEnv& env,
                                              const EvalInfo& info) override;
  [[nodiscard]] core::Result<ExecStats> apply(const core::QueryResult& result, core::TimePoint ts,
                                              const templates::TemplateEnv& env) {
    return apply(result, ts, env, EvalInfo{});
  }
  // The query failed: records the error (history, errors_total); alerts stay as they are.
  void record_error(const core::Error& err, core::TimePoint ts, const EvalInfo& info) override;
  void record_error(const core::Error& err, core::TimePoint ts) { record_error(err, ts, {}); }

  // The alerts due for notification at wall time `now` (vmalert alertsToSend). Marks them sent
  // (LastSent=now) before returning, so a failed POST is not retried before the resend delay.
  // Order: by alert ID.
  [[nodiscard]] std::vector<notifier::Alert> alerts_to_send(
      core::TimePoint now, core::Duration resend_delay,
      core::Duration resolve_duration) override;

  // State restore (vmalert.md §6): the query to run at ts-1s against -remoteRead.url ...
  // Empty when the rule has no `for` (vmalert restores only those).
  [[nodiscard]] std::string restore_query(core::Duration lookback) const override;
  // ... and applying its result: a matching pending, not yet restored alert gets
  // active_at = sample value (unix seconds) and restored = true. Returns how many.
  size_t restore(const core::QueryResult& result) override;

  // Reload with the same rule ID: takes for, keep_firing_for, labels, annotations, templates,
  // debug, context and a fresh history from `newer`; keeps the alerts.
  void update_from(AlertingRule&& newer);
  void update_from(Rule&& newer) override;  // `newer` must be an AlertingRule
  // Removal: pending and firing alerts become inactive at `now` and are returned for a last
  // notification (endsAt = now); the ALERTS series written last round get staleness markers.
  [[nodiscard]] Closed close(core::TimePoint now) override;
  [[nodiscard]] RuleView describe() const override;
  [[nodiscard]] std::vector<Alert> active_alerts() const override;
  size_t restore_alerts(std::span<const Alert> alerts) override;
  [[nodiscard]] RuleType type() const override { return RuleType::alerting; }

  // --- read accessors (API, /metrics) ---
  [[nodiscard]] uint64_t id() const override;
  [[nodiscard]] const std::string& name() const override;
  [[nodiscard]] const std::string& expr() const override;
  [[nodiscard]] core::Duration for_duration() const;
  [[nodiscard]] core::Duration keep_firing_for() const;
  [[nodiscard]] const core::Labels& labels() const;       // merged, templates unexpanded
  [[nodiscard]] const core::Labels& annotations() const;  // as written
  [[nodiscard]] uint64_t group_id() const;
  [[nodiscard]] const std::string& group_name() const;
  [[nodiscard]] const std::string& file() const;
  [[nodiscard]] const std::string& datasource_type() const;  // prometheus | graphite | vlogs
  [[nodiscard]] bool debug() const;
  [[nodiscard]] int update_entries_limit() const;
  [[nodiscard]] bool uses_query() const override;  // some template calls `query` (may block in apply)

  // Alerts sorted by ID (pending, firing, and resolved ones within the 15m retention); valid
  // until the next apply, restore or close.
  [[nodiscard]] std::span<const Alert> alerts() const override;
  [[nodiscard]] const Alert* alert(uint64_t id) const;
  // firing if any alert fires, else pending if any is pending, else inactive.
  [[nodiscard]] AlertState state() const;
  [[nodiscard]] size_t count(AlertState s) const;

  [[nodiscard]] const std::string& last_error() const;  // empty = healthy
  [[nodiscard]] const RuleUpdate& last_update() const;  // last_update().time = lastEvaluation
  [[nodiscard]] const UpdateHistory& history() const override;
  [[nodiscard]] uint64_t errors_total() const;
  [[nodiscard]] uint64_t fired_total() const;
  // `<external_url>/vmalert/alert?group_id=G&alert_id=A`.
  [[nodiscard]] std::string generator_url(uint64_t alert_id) const;
  // generator_url without the alert ID (made once with the rule's context).
  [[nodiscard]] const std::string& generator_url_prefix() const;
  // The generatorURL of alert `a` at wall time `now`: generator_url(id) by default, else
  // `<external_url>/` followed by the rendered -external.alert.source (vmalert: an execution
  // error leaves only `<external_url>/`; `query` is not available there).
  [[nodiscard]] std::string source_url(uint64_t alert_id, const Alert& a,
                                       core::TimePoint now) const;

 private:
  struct Impl;
  explicit AlertingRule(std::unique_ptr<Impl> impl);
  // `a`'s payload fragments (rules::Alert::json), rebuilt first if `a`'s labels or
  // annotations are no longer the blocks they were built from, or (with
  // -external.alert.source) its generatorURL rendered at `now` differs.
  const std::shared_ptr<const core::AlertJson>& payload_json(uint64_t alert_id, Alert& a,
                                                            core::TimePoint now) const;
  // Sets how `na` (alert `id`, sent at `now`) gets its generatorURL, labels and annotations
  // into the payload. An alert whose label and annotation blocks are their own JSON (nearly
  // all: core::Labels::append_verbatim_json) and whose URL is the default link keeps no
  // fragment: it carries the rule's URL prefix in JSON (one string the rule keeps for every
  // notification) and its ID. Any other alert carries its fragment (payload_json).
  void set_payload(notifier::Alert& na, uint64_t id, Alert& a, core::TimePoint now) const;

  std::unique_ptr<Impl> impl_;
};

// -external.alert.source at start-up (vmalert main.go getAlertURLGenerator). With `validate`
// (-rule.validateTemplates) the text is parsed and run once over empty data, and either failure
// is the error; without it an unparsable text yields the empty template (the generatorURL is
// then `<external_url>/`, as vmalert's failing execution gives). Empty text: no template.
[[nodiscard]] core::Result<std::optional<templates::Template>> parse_alert_source(
    std::string_view text, bool validate, const templates::TemplateSet* shared = nullptr);

// How long inactive alerts are kept (and re-sent).
inline constexpr core::Duration kResolvedRetention = std::chrono::minutes(15);

}  // namespace rules
