// rules::Group: one rule group, pure. It owns its rules by ID and turns one round's query
// results into what leaves the daemon: alert batches for the notifiers and series for remote
// write. No I/O, no clock, no threads: the scheduler in app/ runs the queries (up to
// `concurrency` at once), calls on_result/on_error for each rule as its answer arrives, and
// hands the RuleOutput to its sinks. Every effective setting comes from config::GroupSpec.
//
// One round, for each rule i (group.cpp, "one round"):
//   query rule(i).expr() at times.query_ts  ->  on_result(i, result, times, env, info)
//                                           or  on_error(i, err, times, info)
//   -> RuleOutput{alerts due at times.now, series to write, counters}
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/model.hpp"
#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/query_result.hpp"
#include "core/time.hpp"
#include "notifier/notifier.hpp"
#include "rules/rule.hpp"
#include "templates/template.hpp"

namespace rules {

// What every group shares, from flags.
struct GroupContext {
  core::Labels external_labels;           // -external.label
  std::string external_url;               // -external.url (no trailing slash), generatorURL
  bool disable_alertgroup_label = false;  // -disableAlertgroupLabel
  int update_entries_limit = 20;          // -rule.updateEntriesLimit
  core::Duration resend_delay{0};         // -rule.resendDelay
  core::Duration max_resolve_duration{0}; // -rule.maxResolveDuration
  // -rule.keepFiringOnError: while a rule's query keeps failing, its firing alerts are still
  // sent (fresh endsAt) for this long after the first failure; 0 = vmalert (nothing is sent,
  // Alertmanager resolves them when endsAt passes).
  core::Duration keep_firing_on_error{0};
  bool emit_series = false;               // remote write configured: build series
  const templates::TemplateSet* templates = nullptr;  // -rule.templates, may be null
  std::optional<templates::Template> alert_source;    // -external.alert.source, parsed
};

// The times of one round. eval_ts is the tick; query_ts is eval_ts shifted by eval_delay and
// aligned (rules::query_time); now is the wall clock when the rule's answer was handled.
struct RoundTimes {
  core::TimePoint eval_ts{};
  core::TimePoint query_ts{};
  core::TimePoint now{};
};

// What one rule's evaluation produced.
struct RuleOutput {
  std::vector<notifier::Alert> alerts;  // due notifications, in alert-ID order
  std::vector<Series> series;           // to remote-write (empty unless emit_series)
  uint64_t fired = 0;                   // alerts that became firing
  std::optional<core::Error> error;     // the round failed (query, duplicates, limit)
  std::optional<core::Error> template_error;  // the round succeeded, a template failed
};

class Group {
 public:
  // Builds every rule (templates parsed, labels merged). Errors name file, group and rule.
  [[nodiscard]] static core::Result<std::unique_ptr<Group>> create(config::GroupSpec spec,
                                                                   const GroupContext& ctx);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  // The group's settings as loaded, without its rules: `rules` is emptied once they are built
  // (rule(i) has each one's settings).
  [[nodiscard]] const config::GroupSpec& spec() const { return spec_; }
  [[nodiscard]] uint64_t id() const { return spec_.id; }
  [[nodiscard]] size_t size() const { return rules_.size(); }
  [[nodiscard]] Rule& rule(size_t i) { return *rules_[i]; }
  [[nodiscard]] const Rule& rule(size_t i) const { return *rules_[i]; }
  [[nodiscard]] bool uses_query() const;  // some rule's templates call `query`

  // One rule's part of a round (see the top of this file).
  [[nodiscard]] RuleOutput on_result(size_t i, const core::QueryResult& result,
                                     const RoundTimes& times, const templates::TemplateEnv& env,
                                     const EvalInfo& info);
  [[nodiscard]] RuleOutput on_error(size_t i, const core::Error& err, const RoundTimes& times,
                                    const EvalInfo& info);

  // Reload (vmalert Group.updateWith): `newer` has the same group ID. Rules with the same ID
  // keep their state and take the new settings; new rules are added; rules that are gone are
  // closed, and what closing them produced (resolved alerts, stale markers) is returned to be
  // sent and written. Rule order follows `newer`.
  [[nodiscard]] RuleOutput update_from(Group&& newer, core::TimePoint now);
  // The group is removed: every rule closed (resolved alerts, stale markers).
  [[nodiscard]] RuleOutput close(core::TimePoint now);

  [[nodiscard]] const GroupContext& context() const { return ctx_; }

 private:
  Group(config::GroupSpec spec, GroupContext ctx);

  config::GroupSpec spec_;
  GroupContext ctx_;
  std::vector<std::unique_ptr<Rule>> rules_;
  // Rule ID -> wall time of the first failure in the current run of failed queries.
  std::unordered_map<uint64_t, core::TimePoint> failing_since_;
};

}  // namespace rules
