#include "rules/group.hpp"

#include <unordered_map>
#include <utility>

#include "rules/alerting_rule.hpp"
#include "rules/group_math.hpp"
#include "rules/recording_rule.hpp"

namespace rules {
namespace {

core::Result<std::unique_ptr<Rule>> make_rule(const config::RuleSpec& r,
                                              const config::GroupSpec& g,
                                              const GroupContext& ctx) {
  RuleContext rc;
  rc.external_labels = ctx.external_labels;
  rc.external_url = ctx.external_url;
  rc.disable_alertgroup_label = ctx.disable_alertgroup_label;
  rc.group_interval = g.effective_interval;
  rc.limit = g.effective_limit;
  rc.update_entries_limit = ctx.update_entries_limit;
  rc.templates = ctx.templates;
  rc.alert_source = ctx.alert_source;
  switch (r.kind) {
    case config::RuleKind::alerting: {
      auto rule = AlertingRule::create(r, g, rc);
      if (!rule) return core::fail(rule.error().wrap(g.file));
      return std::unique_ptr<Rule>(std::make_unique<AlertingRule>(std::move(*rule)));
    }
    case config::RuleKind::recording: {
      auto rule = RecordingRule::create(r, g, rc);
      if (!rule) return core::fail(rule.error().wrap(g.file));
      return std::unique_ptr<Rule>(std::make_unique<RecordingRule>(std::move(*rule)));
    }
  }
  return core::fail("unknown rule kind");
}

void append(RuleOutput& out, Rule::Closed&& closed) {
  for (auto& a : closed.alerts) out.alerts.push_back(std::move(a));
  for (auto& s : closed.series) out.series.push_back(std::move(s));
}

}  // namespace

Group::Group(config::GroupSpec spec, GroupContext ctx)
    : spec_(std::move(spec)), ctx_(std::move(ctx)) {}
Group::~Group() = default;

core::Result<std::unique_ptr<Group>> Group::create(config::GroupSpec spec,
                                                   const GroupContext& ctx) {
  std::unique_ptr<Group> g(new Group(std::move(spec), ctx));
  g->rules_.reserve(g->spec_.rules.size());
  for (const auto& r : g->spec_.rules) {
    auto rule = make_rule(r, g->spec_, g->ctx_);
    if (!rule) return core::fail(rule.error());
    g->rules_.push_back(std::move(*rule));
  }
  // Each rule now holds what it needs of its spec; the specs themselves (names, expressions,
  // label and annotation texts: ~0.6 kB a rule) would be a second copy for the group's life.
  g->spec_.rules = {};
  return g;
}

bool Group::uses_query() const {
  for (const auto& r : rules_)
    if (r->uses_query()) return true;
  return false;
}

// ---- one round -------------------------------------------------------------------------------

RuleOutput Group::on_result(size_t i, const core::QueryResult& result, const RoundTimes& times,
                            const templates::TemplateEnv& env, const EvalInfo& info) {
  Rule& rule = *rules_[i];
  failing_since_.erase(rule.id());
  RuleOutput out;
  EvalInfo ei = info;
  ei.emit_series = ctx_.emit_series;
  auto stats = rule.apply(result, times.query_ts, env, ei);
  if (!stats) {
    // Duplicate label sets or the limit: the round failed, the state is what vmalert leaves.
    out.error = std::move(stats.error());
    return out;
  }
  out.fired = stats->fired;
  out.series = std::move(stats->series);
  out.template_error = std::move(stats->template_error);
  const auto resolve = resolve_duration(spec_.effective_interval, ctx_.resend_delay,
                                        ctx_.max_resolve_duration);
  out.alerts = rule.alerts_to_send(times.now, ctx_.resend_delay, resolve);
  return out;
}

RuleOutput Group::on_error(size_t i, const core::Error& err, const RoundTimes& times,
                           const EvalInfo& info) {
  Rule& rule = *rules_[i];
  rule.record_error(err, times.query_ts, info);
  RuleOutput out;
  out.error = err;
  if (ctx_.keep_firing_on_error > core::Duration::zero()) {
    // The datasource is down, not the condition: keep Alertmanager from resolving what fires.
    const auto since = failing_since_.try_emplace(rule.id(), times.now).first->second;
    if (times.now - since <= ctx_.keep_firing_on_error) {
      const auto resolve = resolve_duration(spec_.effective_interval, ctx_.resend_delay,
                                            ctx_.max_resolve_duration);
      out.alerts = rule.alerts_to_send(times.now, ctx_.resend_delay, resolve);
    }
  }
  return out;
}

// ---- reload ----------------------------------------------------------------------------------

RuleOutput Group::update_from(Group&& newer, core::TimePoint now) {
  RuleOutput out;
  std::unordered_map<uint64_t, std::unique_ptr<Rule>> old;
  old.reserve(rules_.size());
  for (auto& r : rules_) {
    const uint64_t id = r->id();
    // Two rules with one ID cannot load (config rejects duplicates); keep the first anyway.
    if (!old.contains(id)) old.emplace(id, std::move(r));
  }
  std::vector<std::unique_ptr<Rule>> next;
  next.reserve(newer.rules_.size());
  for (auto& nr : newer.rules_) {
    auto it = old.find(nr->id());
    if (it != old.end() && it->second->type() == nr->type()) {
      it->second->update_from(std::move(*nr));
      next.push_back(std::move(it->second));
      old.erase(it);
    } else {
      next.push_back(std::move(nr));
    }
  }
  for (auto& [id, gone] : old) {
    if (gone) append(out, gone->close(now));
  }
  rules_ = std::move(next);
  spec_ = std::move(newer.spec_);
  ctx_ = std::move(newer.ctx_);
  return out;
}

RuleOutput Group::close(core::TimePoint now) {
  RuleOutput out;
  for (auto& r : rules_) append(out, r->close(now));
  return out;
}

std::string_view to_string(RuleType t) {
  switch (t) {
    case RuleType::alerting: return "alerting";
    case RuleType::recording: return "recording";
  }
  return "alerting";
}

}  // namespace rules
