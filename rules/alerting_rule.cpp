#include "rules/alerting_rule.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/json_string.hpp"
#include "core/limit_hits.hpp"
#include "templates/go_fmt.hpp"

namespace rules {
namespace {

constexpr std::string_view kAlertNameLabel = "alertname";
constexpr std::string_view kAlertGroupLabel = "alertgroup";
constexpr std::string_view kAlertStateLabel = "alertstate";
constexpr std::string_view kMetricName = "__name__";
constexpr std::string_view kAlertsMetric = "ALERTS";
constexpr std::string_view kAlertsForStateMetric = "ALERTS_FOR_STATE";

// ALERTS{labels, alertstate="state"} and ALERTS_FOR_STATE{labels}: the alert's block with
// these set over it (core::Series::overrides), no block of their own.
constexpr core::Label kAlertsFiring[] = {{kMetricName, kAlertsMetric}, {kAlertStateLabel, "firing"}};
constexpr core::Label kAlertsPending[] = {{kMetricName, kAlertsMetric}, {kAlertStateLabel, "pending"}};
constexpr core::Label kAlertsForState[] = {{kMetricName, kAlertsForStateMetric}};

core::Series alerts_series(const core::Labels& labels, AlertState state, double v, int64_t ts_ms) {
  const std::span<const core::Label> overrides =
      state == AlertState::firing ? std::span<const core::Label>(kAlertsFiring) : kAlertsPending;
  return {labels, v, ts_ms, overrides};
}
core::Series for_state_series(const core::Labels& labels, double v, int64_t ts_ms) {
  return {labels, v, ts_ms, kAlertsForState};
}

struct NamedTemplate {
  std::string name;
  std::string text;
  templates::Template tpl;
  bool literal = true;
  // Literal, or reads labels only and not __name__: its output is a function of the alert's
  // processed labels, so an alert whose labels are unchanged keeps what it rendered before.
  bool labels_only = true;
};

// Go's %v of a map[string]string: map[a:x b:y], keys sorted.
std::string go_map_string(const core::Labels& ls) {
  std::string out = "map[";
  bool first = true;
  for (const auto& l : ls) {
    if (!first) out += ' ';
    first = false;
    out.append(l.name).append(":").append(l.value);
  }
  out += ']';
  return out;
}


bool has_template_action(std::string_view s) {
  return s.find("{{") != std::string_view::npos && s.find("}}") != std::string_view::npos;
}

core::Result<std::vector<NamedTemplate>> parse_all(const core::Labels& items, std::string_view what,
                                                   const templates::TemplateSet* shared,
                                                   std::string_view where) {
  std::vector<NamedTemplate> out;
  out.reserve(items.size());
  for (const auto& item : items) {
    NamedTemplate nt;
    nt.name = item.name;
    nt.text = item.value;
    nt.literal = !has_template_action(item.value);
    if (!nt.literal) {
      auto parsed = templates::Template::parse(item.value, shared);
      if (!parsed) {
        std::string ctx(where);
        ctx.append(": ").append(what).append(" \"").append(item.name).append("\"");
        return core::fail(parsed.error().wrap(ctx));
      }
      nt.tpl = std::move(*parsed);
      nt.literal = nt.tpl.is_literal();
      nt.labels_only = nt.tpl.reads_labels_only() && !nt.tpl.reads_label(kMetricName);
    }
    out.push_back(std::move(nt));
  }
  return out;
}

// apply()'s scratch, one series at a time (nothing here grows with the result). One per
// thread, not per rule: ~1.2 KB a rule, 1.2 MB at 1,000 rules, for buffers used one rule at a
// time. apply() never runs inside another apply() on the same thread (a template's `query`
// waits for the loop; it does not evaluate rules).
struct ApplyScratch {
  core::LabelsBuilder origin_b;
  core::LabelsBuilder processed_b;
  std::vector<std::string> label_values;       // rendered rule labels of one series
  std::vector<std::string> annotation_values;  // rendered annotations of one series
  std::vector<core::Label> annotation_items;
  std::vector<core::Label> extra_items;  // the rule's labels for one series, sorted by name
};

ApplyScratch& apply_scratch() {
  static thread_local ApplyScratch scratch;
  return scratch;
}

// Renders `t` into `out` (replacing it). On error `out` holds the error text.
bool render_into(const NamedTemplate& t, const templates::TemplateData& data,
                 const templates::TemplateEnv& env,
                 std::string& out, std::optional<core::Error>& first_error,
                 std::string_view what) {
  out.clear();
  if (t.literal) {
    out = t.text;
    return true;
  }
  auto r = t.tpl.render(data, env, out);
  if (r) return true;
  out = templates::vmalert_error_text(r.error());  // vmalert: "error evaluating template: ..."
  if (!first_error) {
    std::string ctx = "failed to expand ";
    ctx.append(what).append(" \"").append(t.name).append("\"");
    first_error = r.error().wrap(ctx);
  }
  return false;
}

// vmalert labelSet.add: `v` overrides the series value in `processed`; a different series value
// is kept as exported_<k>; origin keeps the series value. An empty value deletes the label.
// Both builders hold views: `k` and `v` must outlive the build.
void add_extra_label(core::LabelsBuilder& origin, core::LabelsBuilder& processed,
                     std::string_view k, std::string_view v) {
  if (v.empty()) {
    processed.erase(k);
    return;
  }
  processed.set(k, v);
  auto ov = origin.get(k);
  if (!ov) {
    origin.set(k, v);
    return;
  }
  if (*ov != v) {
    std::string key = "exported_";
    key.append(k);
    processed.set_owned(std::move(key), *ov);
  }
}

// Whether `ls` holds exactly `names` (sorted, unique) with `values`.
bool same_values(const core::Labels& ls, std::span<const core::Label> items) {
  if (ls.size() != items.size()) return false;
  size_t i = 0;
  for (const core::Label l : ls) {
    if (!(l == items[i++])) return false;
  }
  return true;
}

int64_t series_ts_ms(core::TimePoint ts) { return core::unix_seconds(ts) * 1000; }

}  // namespace

std::string_view to_string(AlertState s) {
  switch (s) {
    case AlertState::inactive: return "inactive";
    case AlertState::pending: return "pending";
    case AlertState::firing: return "firing";
  }
  return "inactive";
}


struct AlertingRule::Impl {
  uint64_t id = 0;
  std::string name;
  std::string expr;
  core::Duration for_{};
  core::Duration keep_firing_for{};
  core::Labels labels;       // merged external < group < rule, unexpanded
  core::Labels annotations;  // as written
  std::vector<NamedTemplate> label_tpls;
  std::vector<NamedTemplate> annotation_tpls;
  uint64_t group_id = 0;
  std::string group_name;
  std::string file;
  std::string type;
  bool debug = false;
  int entries_limit = 20;
  RuleContext ctx;
  bool uses_query = false;
  // Every label and annotation template is Template::simple(): apply() gives them its label
  // builders to look labels up in, instead of building two label sets per series for them.
  bool simple_templates = false;
  // The labels apply() adds to every series (the label templates' names, then alertname and
  // alertgroup when set) as indexes in that order, sorted by name; empty when two of them have
  // the same name (then each is added in turn, the later one winning: add_extra_label).
  std::vector<uint32_t> extra_order;

  // The labels apply() adds to every series, in vmalert's order: the label templates' (with
  // their rendered `values`), then alertname and alertgroup when set.
  [[nodiscard]] size_t extra_count() const {
    return label_tpls.size() + (name.empty() ? 0 : 1) +
           (ctx.disable_alertgroup_label || group_name.empty() ? 0 : 1);
  }
  [[nodiscard]] core::Label extra_label(size_t k, std::span<const std::string> values) const {
    const size_t nt = label_tpls.size();
    if (k < nt) return core::Label{label_tpls[k].name, values[k]};
    if (k == nt && !name.empty()) return core::Label{kAlertNameLabel, name};
    return core::Label{kAlertGroupLabel, group_name};
  }

  // Sorted by ID, in one array: a std::map node cost ~50 bytes more per alert (5 MB at 100k).
  // New alerts of a round are added in one merge after it (add_alerts).
  std::vector<Alert> alerts;
  std::shared_ptr<UpdateHistory> history;  // made by create(), sized by entries_limit
  uint64_t errors_total = 0;
  uint64_t fired_total = 0;
  // What the last successful round wrote for each active alert, for staleness markers: ALERTS
  // with this state and ALERTS_FOR_STATE, both the alert's labels plus the series name (and the
  // state). Sorted by ID; the alert's own label block, shared, not the two series' blocks and
  // their text (~1 kB an alert at 13 labels).
  struct Written {
    uint64_t id = 0;
    core::Labels labels;
    AlertState state = AlertState::pending;
  };
  std::vector<Written> written;
  bool written_overridden = false;  // some of them have an `alertstate` label
  // Timestamp of those series: close() must write its markers strictly later, or a remote-write
  // receiver rejects the whole batch ("duplicate sample for timestamp").
  int64_t prev_series_ms = 0;
  // Alert ID -> activeAt read back before the first round (remote-read restore).
  std::unordered_map<uint64_t, core::TimePoint> restore_hints;
  // The alert ID of each series of the last round, in the result's order. A query answers its
  // series in the same order round after round, so series i is first compared with that alert:
  // equal processed labels are the same ID, without hashing the labels again (FNV-1a goes a
  // byte at a time: ~1,800 instructions at 11 labels, a compare ~300).
  std::vector<uint64_t> last_order;
  // The generator URL up to the alert ID (-external.url, group ID) and its JSON form for the
  // notifier ("generatorURL":"<prefix>, no closing quote), made with the context (create(),
  // update_from()): every round's notifications and API snapshot share them.
  std::string url_prefix;
  std::shared_ptr<const std::string> url_prefix_json;

  void make_url_prefix() {
    url_prefix = ctx.external_url;
    while (!url_prefix.empty() && url_prefix.back() == '/') url_prefix.pop_back();
    url_prefix.append("/vmalert/alert?group_id=")
        .append(std::to_string(group_id))
        .append("&alert_id=");
    std::string p = "\"generatorURL\":";
    core::append_json_string(p, url_prefix, core::JsonEscape::qtpl);
    p.pop_back();  // the closing quote: the encoder writes the ID, then the quote
    url_prefix_json = std::make_shared<const std::string>(std::move(p));
  }

  Alert* find(uint64_t alert_id) {
    auto it = std::lower_bound(alerts.begin(), alerts.end(), alert_id,
                               [](const Alert& a, uint64_t v) { return a.id < v; });
    return it != alerts.end() && it->id == alert_id ? &*it : nullptr;
  }

  // Merges `fresh` (any order; the first of equal IDs wins, as do alerts already there) into
  // `alerts`, keeping it sorted. The array grows to exactly what it holds, so a rule keeps no
  // spare capacity; it shrinks again when half of it is unused.
  void add_alerts(std::vector<Alert>& fresh) {
    if (fresh.empty()) return;
    std::stable_sort(fresh.begin(), fresh.end(),
                     [](const Alert& a, const Alert& b) { return a.id < b.id; });
    std::vector<Alert> merged;
    merged.reserve(alerts.size() + fresh.size());
    auto a = alerts.begin();
    for (auto f = fresh.begin(); f != fresh.end(); ++f) {
      if (f != fresh.begin() && std::prev(f)->id == f->id) continue;
      while (a != alerts.end() && a->id < f->id) merged.push_back(std::move(*a++));
      if (a != alerts.end() && a->id == f->id) continue;
      merged.push_back(std::move(*f));
    }
    while (a != alerts.end()) merged.push_back(std::move(*a++));
    alerts = std::move(merged);
    fresh.clear();
  }

  void shrink_alerts() {
    if (alerts.capacity() > 2 * alerts.size() + 16) alerts.shrink_to_fit();
  }

  // Staleness markers at `ts_ms` for what `written` has and `current` (sorted by ID, what this
  // round writes) does not. Series of two different alerts are the same series only when their
  // labels differ in `alertstate` alone, which ALERTS overrides (IDs ignore `__name__`, so two
  // alerts differing only in that cannot both exist). Only when some alert has an `alertstate`
  // label are series compared as text: then no marker for a series written this round, and one
  // marker per series.
  void mark_stale(const std::vector<Written>& current, bool current_overridden, int64_t ts_ms,
                  std::vector<core::Series>& out) {
    const bool text_check = current_overridden || written_overridden;
    std::unordered_set<std::string> texts;  // series written this round or marked (text_check)
    if (text_check) {
      for (const auto& c : current) {
        texts.insert(alerts_series(c.labels, c.state, 1, 0).merged_labels().to_string());
        texts.insert(for_state_series(c.labels, 1, 0).merged_labels().to_string());
      }
    }
    auto mark = [&](core::Series&& series) {
      if (text_check && !texts.insert(series.merged_labels().to_string()).second) return;
      out.push_back(std::move(series));
    };
    size_t j = 0;
    for (const auto& p : written) {
      while (j < current.size() && current[j].id < p.id) ++j;
      const bool same_alert = j < current.size() && current[j].id == p.id && current[j].labels == p.labels;
      if (!same_alert) mark(for_state_series(p.labels, stale_nan(), ts_ms));
      if (same_alert && current[j].state == p.state) continue;
      mark(alerts_series(p.labels, p.state, stale_nan(), ts_ms));
    }
  }

  // Whether the alert has a label that its ALERTS series overrides.
  static bool overridden(const core::Labels& labels) { return labels.get(kAlertStateLabel).has_value(); }

  void record(RuleUpdate u) {
    if (!u.error.empty()) ++errors_total;
    history->add(std::move(u));
  }
};

AlertingRule::AlertingRule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AlertingRule::AlertingRule(AlertingRule&&) noexcept = default;
AlertingRule& AlertingRule::operator=(AlertingRule&&) noexcept = default;
AlertingRule::~AlertingRule() = default;

core::Result<AlertingRule> AlertingRule::create(const config::RuleSpec& rule,
                                                const config::GroupSpec& group,
                                                const RuleContext& ctx) {
  auto impl = std::make_unique<Impl>();
  impl->id = rule.id;
  impl->name = rule.name;
  impl->expr = rule.expr;
  impl->for_ = rule.for_;
  impl->keep_firing_for = rule.keep_firing_for;
  impl->annotations = rule.annotations;
  impl->group_id = group.id;
  impl->group_name = group.name;
  impl->file = group.file;
  impl->type = group.type;
  impl->debug = rule.debug.value_or(group.debug);
  impl->ctx = ctx;
  impl->entries_limit = std::max(1, rule.update_entries_limit.value_or(ctx.update_entries_limit));
  impl->history = std::make_shared<UpdateHistory>(static_cast<size_t>(impl->entries_limit));

  // external < group < rule (vmalert NewGroup/mergeLabels).
  impl->labels = ctx.external_labels;
  for (const auto& l : group.labels) impl->labels.set(l.name, l.value);
  for (const auto& l : rule.labels) impl->labels.set(l.name, l.value);

  std::string where = "group \"" + group.name + "\": rule \"" + rule.name + "\"";
  auto lt = parse_all(impl->labels, "label", ctx.templates, where);
  if (!lt) return core::fail(lt.error());
  impl->label_tpls = std::move(*lt);
  auto at = parse_all(impl->annotations, "annotation", ctx.templates, where);
  if (!at) return core::fail(at.error());
  impl->annotation_tpls = std::move(*at);
  {
    const std::vector<std::string> no_values(impl->label_tpls.size());
    std::vector<std::string_view> names;
    for (size_t k = 0; k < impl->extra_count(); ++k) {
      names.push_back(impl->extra_label(k, no_values).name);
    }
    std::vector<uint32_t> order(names.size());
    for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
    const bool distinct =
        std::adjacent_find(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
          return names[a] == names[b];
        }) == order.end();
    // A rule label named __name__ stays in the processed set, which the merge's way of
    // building it (the origin without __name__) would drop.
    const bool has_name = std::find(names.begin(), names.end(), kMetricName) != names.end();
    if (distinct && !has_name) impl->extra_order = std::move(order);
  }
  impl->make_url_prefix();
  impl->simple_templates = true;
  for (const auto* v : {&impl->label_tpls, &impl->annotation_tpls}) {
    for (const auto& t : *v) {
      if (!t.literal && t.tpl.uses_query()) impl->uses_query = true;
      if (!t.literal && !t.tpl.simple()) impl->simple_templates = false;
    }
  }
  return AlertingRule(std::move(impl));
}

core::Result<ExecStats> AlertingRule::apply(const core::QueryResult& result, core::TimePoint ts,
                                            const templates::TemplateEnv& env,
                                            const EvalInfo& info) {
  Impl& s = *impl_;
  ExecStats stats;
  stats.samples = result.size();
  stats.series_fetched = result.series_fetched;

  RuleUpdate upd = make_update(ts, info, result);

  auto fail_round = [&](std::string msg) -> core::Result<ExecStats> {
    upd.error = msg;
    s.record(std::move(upd));
    return core::fail(std::move(msg));
  };

  // Step 3 (vmalert's order is 2, 3, 4; 3 touches only inactive alerts and 2 reads only active
  // ones, so it runs first here): drop alerts resolved more than resolvedRetention ago.
  std::erase_if(s.alerts, [&](const Alert& a) {
    return a.state == AlertState::inactive && ts - a.resolved_at > kResolvedRetention;
  });

  // Steps 2 and 4, one series at a time (no second copy of the whole result): expand label,
  // then annotation templates, then update or create the alert. Expanding series j never reads
  // what updating series i < j wrote (different alert IDs; an equal ID fails the round).
  const size_t n = result.size();
  for (Alert& a : s.alerts) a.seen = false;
  // Alerts created this round, merged into `alerts` after it, and their IDs for the duplicate
  // check (existing alerts have `seen`). Local: a member would keep the first round's size.
  std::vector<Alert> added;
  std::unordered_set<uint64_t> added_ids;
  ApplyScratch& scratch = apply_scratch();
  auto& ob = scratch.origin_b;
  auto& pb = scratch.processed_b;
  auto& label_values = scratch.label_values;
  auto& annotation_values = scratch.annotation_values;
  auto& annotation_items = scratch.annotation_items;
  auto& extra_items = scratch.extra_items;
  label_values.resize(s.label_tpls.size());
  annotation_values.resize(s.annotation_tpls.size());
  // Last round's IDs for the series it had; the new entries (0) are never guessed from.
  const size_t known_order = std::min(s.last_order.size(), n);
  s.last_order.resize(n);  // from empty: exactly n, no spare capacity kept per rule
  for (size_t i = 0; i < n; ++i) {
    const double value = result.samples(i).empty() ? 0.0 : result.value(i);
    // Views into `result`: valid through this iteration.
    ob.reset_unsorted(result.labels(i));
    // Simple templates look labels up in the builders; others get built sets.
    core::Labels series_labels;
    if (!s.simple_templates) series_labels = ob.build();

    templates::TemplateData label_data;
    if (s.simple_templates) {
      label_data.label_builder = &ob;
    } else {
      label_data.labels = &series_labels;
    }
    label_data.value = value;
    label_data.expr = s.expr;
    label_data.type = {};  // label templates see only $labels, $value, $expr
    // Rendered before any label is added, so every label template sees the series labels.
    for (size_t k = 0; k < s.label_tpls.size(); ++k) {
      render_into(s.label_tpls[k], label_data, env, label_values[k], stats.template_error,
                  "label");
    }
    // The rule's labels. When their names are distinct, none is empty and none is a series
    // label (nearly always), adding them in turn (add_extra_label) puts exactly them into both
    // the origin and the processed set: one merge into `ob` does, and the processed set (`ob`
    // without __name__, which its hash skips) is built only for a new alert. Otherwise in turn.
    bool merged = !s.extra_order.empty();
    if (merged) {
      extra_items.clear();
      for (const uint32_t k : s.extra_order) {
        const core::Label l = s.extra_label(k, label_values);
        if (l.value.empty()) {
          merged = false;
          break;
        }
        extra_items.push_back(l);
      }
      merged = merged && ob.insert_absent(extra_items);
    }
    if (!merged) {
      pb.reset(ob);
      pb.erase(kMetricName);
      for (size_t k = 0; k < s.extra_count(); ++k) {
        const core::Label l = s.extra_label(k, label_values);
        add_extra_label(ob, pb, l.name, l.value);
      }
    }
    // The processed set, when the merge left it unbuilt.
    auto processed = [&]() -> const core::LabelsBuilder& {
      if (merged) {
        pb.reset(ob);
        pb.erase(kMetricName);
      }
      return pb;
    };
    Alert* existing = nullptr;
    if (i < known_order) {
      Alert* guess = s.find(s.last_order[i]);
      if (guess != nullptr &&
          (merged ? ob.equals_without_name(guess->labels) : pb.equals(guess->labels))) {
        existing = guess;
      }
    }
    const uint64_t id = existing != nullptr ? existing->id
                        : merged            ? ob.hash_without_name()
                                            : pb.hash_without_name();
    if (existing == nullptr) existing = s.find(id);
    s.last_order[i] = id;
    const bool repeated = existing != nullptr ? std::exchange(existing->seen, true)
                                              : !added_ids.insert(id).second;
    if (repeated) {
      s.add_alerts(added);  // as vmalert, alerts created before the duplicate stay
      return fail_round("labels " + go_map_string(processed().build()) +
                        ": result contains metrics with the same labelset after applying rule "
                        "labels");
    }
    core::Labels origin;
    templates::TemplateData data;
    if (s.simple_templates) {
      data.label_builder = &ob;
    } else {
      origin = ob.size() == series_labels.size() ? series_labels : ob.build();
      data.labels = &origin;
    }
    data.value = value;
    data.expr = s.expr;
    data.type = s.type;
    data.interval = s.ctx.group_interval;
    data.alert_id = id;
    data.group_id = s.group_id;
    data.active_at = ts;
    if (existing != nullptr && existing->state != AlertState::inactive) {
      data.active_at = existing->active_at;
    }
    data.for_ = s.for_;
    data.is_partial = result.is_partial;
    annotation_items.clear();
    // An annotation that reads labels only (not __name__) renders what it rendered for this
    // alert before: the origin labels are the processed ones plus __name__ when `merged`, and
    // the alert's ID stands for its processed labels. Kept only when that render was also
    // merged and without a template error (Alert::rendered_merged).
    const bool reuse = merged && existing != nullptr && existing->rendered_merged;
    bool render_failed = false;
    for (size_t k = 0; k < s.annotation_tpls.size(); ++k) {
      const auto& t = s.annotation_tpls[k];
      if (reuse && t.labels_only) {
        if (const auto kept = existing->annotations.get(t.name)) {
          annotation_items.push_back(core::Label{t.name, *kept});
          continue;
        }
      }
      if (!render_into(t, data, env, annotation_values[k], stats.template_error, "annotation")) {
        render_failed = true;
      }
      annotation_items.push_back(core::Label{t.name, annotation_values[k]});
    }

    if (existing != nullptr) {
      Alert& a = *existing;
      if (a.state == AlertState::inactive) {
        a.state = AlertState::pending;
        a.active_at = ts;
      }
      a.value = value;
      // Unchanged annotations keep their block (shared with snapshots and notifications).
      if (!same_values(a.annotations, annotation_items)) {
        a.annotations = core::Labels::from(annotation_items);
      }
      a.rendered_merged = merged && !render_failed;
      a.keep_firing_since = {};
      continue;
    }
    Alert a;
    a.id = id;
    a.state = AlertState::pending;
    a.seen = true;
    a.labels = processed().build_interned();  // kept for the alert's life; most labels shared
    a.annotations = core::Labels::from(annotation_items);
    a.rendered_merged = merged && !render_failed;
    a.value = value;
    a.active_at = ts;
    if (auto hint = s.restore_hints.find(id); hint != s.restore_hints.end()) {
      // Restored before the first round: pending since then, so it can fire right now.
      a.active_at = std::min(hint->second, ts);
      a.restored = true;
    }
    added.push_back(std::move(a));
  }
  s.add_alerts(added);
  if (s.last_order.capacity() > n + n / 4 + 4) s.last_order.shrink_to_fit();
  if (stats.template_error) upd.error = stats.template_error->message;
  s.restore_hints.clear();  // they apply to the first round only

  // Steps 5-6: alerts not seen this round; pending -> firing.
  size_t retained = 0;
  size_t kept = 0;  // alerts [0, kept) stay; a pending alert not seen this round is dropped
  for (size_t i = 0; i < s.alerts.size(); ++i) {
    if (kept != i) s.alerts[kept] = std::move(s.alerts[i]);
    Alert& a = s.alerts[kept];
    ++kept;
    if (!a.seen) {
      if (a.state == AlertState::pending) {
        --kept;
        continue;
      }
      if (a.state == AlertState::firing) {
        if (s.keep_firing_for > core::Duration::zero() && a.keep_firing_since == core::TimePoint{}) {
          a.keep_firing_since = ts;
        }
        // With keep_firing_for 0, keep_firing_since is zero and this always holds.
        if (ts - a.keep_firing_since >= s.keep_firing_for) {
          a.state = AlertState::inactive;
          a.resolved_at = ts;
          a.keep_firing_since = {};
          continue;
        }
      }
    }
    // vmalert quirk: already-inactive (recently resolved) alerts count towards the limit too.
    ++retained;
    if (a.state == AlertState::pending && ts - a.active_at >= s.for_) {
      a.state = AlertState::firing;
      a.start = ts;
      ++stats.fired;
      ++s.fired_total;
    }
  }
  s.alerts.erase(s.alerts.begin() + static_cast<std::ptrdiff_t>(kept), s.alerts.end());
  s.shrink_alerts();

  // Step 7: limit.
  if (s.ctx.limit > 0 && retained > static_cast<size_t>(s.ctx.limit)) {
    core::count_limit_hit(core::Limit::rule_results);
    s.alerts = {};
    return fail_round("exec exceeded limit of " + std::to_string(s.ctx.limit) + " with " +
                      std::to_string(retained) + " alerts");
  }

  // Step 8: ALERTS / ALERTS_FOR_STATE and staleness markers.
  if (info.emit_series) {
    const int64_t ts_ms = series_ts_ms(ts);
    std::vector<Impl::Written> current;
    current.reserve(s.alerts.size());
    bool overridden = false;
    for (const Alert& a : s.alerts) {  // by ID
      if (a.state == AlertState::inactive) continue;
      stats.series.push_back(alerts_series(a.labels, a.state, 1.0, ts_ms));
      stats.series.push_back(for_state_series(
          a.labels, static_cast<double>(core::unix_seconds(a.active_at)), ts_ms));
      current.push_back({a.id, a.labels, a.state});
      overridden = overridden || Impl::overridden(a.labels);
    }
    s.mark_stale(current, overridden, ts_ms, stats.series);
    s.written = std::move(current);
    s.written_overridden = overridden;
    s.prev_series_ms = ts_ms;
  }

  s.record(std::move(upd));
  return stats;
}

void AlertingRule::record_error(const core::Error& err, core::TimePoint ts, const EvalInfo& info) {
  impl_->record(make_update(ts, info, err));
}

std::vector<notifier::Alert> AlertingRule::alerts_to_send(core::TimePoint now,
                                                          core::Duration resend_delay,
                                                          core::Duration resolve_duration) {
  std::vector<notifier::Alert> out;
  // With the default -rule.resendDelay (0) every firing alert is due each round: one
  // allocation instead of a doubling per power of two (the batch leaves with this round).
  out.reserve(impl_->alerts.size());
  for (auto& a : impl_->alerts) {
    bool due = false;
    switch (a.state) {
      case AlertState::pending:
        continue;
      case AlertState::firing:
        // Re-fired after a resolve: the last notification said "resolved".
        due = a.end < a.last_sent;
        break;
      case AlertState::inactive:
        due = a.resolved_at > a.last_sent;
        break;
    }
    if (!due) due = a.last_sent + resend_delay < now;
    if (!due) continue;
    a.end = a.state == AlertState::inactive ? a.resolved_at : now + resolve_duration;
    a.last_sent = now;
    notifier::Alert na;
    na.labels = a.labels;
    na.annotations = a.annotations;
    na.starts_at = a.start;
    na.ends_at = a.end;
    set_payload(na, a.id, a, now);
    out.push_back(std::move(na));
  }
  return out;
}

std::string AlertingRule::restore_query(core::Duration lookback) const {
  const Impl& s = *impl_;
  if (s.for_ <= core::Duration::zero()) return {};
  // last_over_time works on Prometheus and VictoriaMetrics alike (vmalert v1.93 used it; newer
  // versions use MetricsQL's default_rollup, which Prometheus rejects).
  std::string q = "last_over_time(";
  q.append(kAlertsForStateMetric).append("{");
  if (!s.ctx.disable_alertgroup_label) {
    q.append(kAlertGroupLabel).append("=");
    templates::gofmt::append_quote(q, s.group_name);
    q.append(",");
  }
  q.append(kAlertNameLabel).append("=");
  templates::gofmt::append_quote(q, s.name);
  for (const auto& l : s.labels) {
    if (has_template_action(l.value)) continue;
    q.append(",").append(l.name).append("=");
    templates::gofmt::append_quote(q, l.value);
  }
  q.append("}[");
  q.append(std::to_string(std::chrono::duration_cast<std::chrono::seconds>(lookback).count()));
  q.append("s])");
  return q;
}

size_t AlertingRule::restore(const core::QueryResult& result) {
  size_t restored = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    if (result.samples(i).empty()) continue;
    core::Labels ls = result.labels(i).to_labels();
    ls.erase(kMetricName);
    Alert* found = impl_->find(ls.hash_without_name());
    const double v = result.value(i);
    // Unix seconds: anything outside a sane range is not an activeAt (and must not overflow).
    if (!std::isfinite(v) || v <= 0 || v > 1e11) continue;
    const core::TimePoint active_at{std::chrono::seconds{static_cast<int64_t>(v)}};
    if (found == nullptr) {
      // Before the first round: remembered for the alert that round creates.
      if (impl_->restore_hints.emplace(ls.hash_without_name(), active_at).second) ++restored;
      continue;
    }
    Alert& a = *found;
    if (a.restored || a.state != AlertState::pending) continue;
    a.active_at = active_at;
    a.restored = true;
    ++restored;
  }
  return restored;
}

void AlertingRule::update_from(AlertingRule&& newer) {
  Impl& s = *impl_;
  Impl& n = *newer.impl_;
  s.expr = std::move(n.expr);
  s.for_ = n.for_;
  s.keep_firing_for = n.keep_firing_for;
  s.labels = std::move(n.labels);
  s.annotations = std::move(n.annotations);
  s.label_tpls = std::move(n.label_tpls);
  s.annotation_tpls = std::move(n.annotation_tpls);
  s.type = std::move(n.type);
  s.debug = n.debug;
  s.entries_limit = n.entries_limit;
  s.ctx = std::move(n.ctx);
  s.url_prefix = std::move(n.url_prefix);
  s.url_prefix_json = std::move(n.url_prefix_json);
  s.uses_query = n.uses_query;
  // Both follow the templates and labels just taken (group and external labels can change
  // without changing the rule's ID).
  s.simple_templates = n.simple_templates;
  s.extra_order = std::move(n.extra_order);
  s.history = std::move(n.history);
  // The generator URL comes from the context (-external.url, group ID): build the payload
  // fragments again at the next send. The annotation templates may have changed: render all.
  for (auto& a : s.alerts) {
    a.json.reset();
    a.rendered_merged = false;
  }
}

void AlertingRule::update_from(Rule&& newer) {
  // Group::update_from matches by ID and type, so this is always an alerting rule.
  update_from(std::move(static_cast<AlertingRule&>(newer)));
}

Rule::Closed AlertingRule::close(core::TimePoint now) {
  Impl& s = *impl_;
  Closed out;
  for (auto& a : s.alerts) {
    // Pending alerts were never sent; firing ones get a last "resolved" notification.
    if (a.state != AlertState::firing) continue;
    notifier::Alert na;
    na.labels = a.labels;
    na.annotations = a.annotations;
    na.starts_at = a.start;
    na.ends_at = now;
    set_payload(na, a.id, a, now);
    out.alerts.push_back(std::move(na));
  }
  // Series timestamps are whole seconds: a rule removed within the second of its last round
  // would otherwise mark its series stale at that round's own timestamp.
  const int64_t ts_ms = std::max(series_ts_ms(now), s.prev_series_ms + 1);
  s.mark_stale({}, false, ts_ms, out.series);
  s.written.clear();
  s.written_overridden = false;
  s.alerts = {};
  return out;
}

std::vector<Alert> AlertingRule::active_alerts() const {
  std::vector<Alert> out;
  for (const auto& a : impl_->alerts)
    if (a.state != AlertState::inactive) out.push_back(a);
  return out;
}

size_t AlertingRule::restore_alerts(std::span<const Alert> alerts) {
  std::vector<Alert> fresh;
  for (const auto& a : alerts) {
    if (a.state == AlertState::inactive) continue;
    fresh.push_back(a);
    // The ID is the hash of the processed labels: recompute rather than trust the file.
    fresh.back().id = a.labels.hash_without_name();
    fresh.back().seen = false;
    // Kept for the alert's life like a new alert's labels (apply): in the interned form, or a
    // restart would hold every restored alert's labels inline (~5x the bytes) until it resolves.
    if (!a.labels.is_interned()) {
      const std::vector<core::Label> items(a.labels.begin(), a.labels.end());
      fresh.back().labels = core::Labels::interned(items);
    }
  }
  const size_t before = impl_->alerts.size();
  impl_->add_alerts(fresh);
  return impl_->alerts.size() - before;
}

// Per alert, kept by every rule and by the API snapshot of every rule (x 100k alerts).
static_assert(sizeof(void*) != 8 || sizeof(Alert) == 104);
static_assert(sizeof(void*) != 8 || sizeof(AlertView) == 48);

RuleView AlertingRule::describe() const {
  const Impl& s = *impl_;
  RuleView v;
  v.type = RuleType::alerting;
  v.id = s.id;
  v.name = s.name;
  v.expr = s.expr;
  v.for_ = s.for_;
  v.keep_firing_for = s.keep_firing_for;
  v.labels = s.labels;
  v.annotations = s.annotations;
  v.state = state();
  const auto& u = s.history->last();
  v.last_error = u.error;
  v.last_evaluation = u.time;
  v.evaluation_time = u.duration;
  v.last_samples = u.samples;
  v.last_series_fetched = u.series_fetched ? static_cast<int64_t>(*u.series_fetched) : -1;
  v.errors_total = s.errors_total;
  v.debug = s.debug;
  v.update_entries_limit = s.entries_limit;
  v.history = s.history;
  v.history_added = s.history->added();
  v.alert_source_prefix = generator_url_prefix();
  v.alerts.reserve(static_cast<size_t>(std::count_if(
      s.alerts.begin(), s.alerts.end(),
      [](const Alert& a) { return a.state != AlertState::inactive; })));
  for (const auto& a : s.alerts) {
    if (a.state == AlertState::inactive) continue;
    // The API has no wall clock to offer: a source calling `now` sees the last evaluation.
    if (s.ctx.alert_source) v.alert_sources.push_back(source_url(a.id, a, u.time));
    if (a.state == AlertState::pending) ++v.pending;
    if (a.state == AlertState::firing) ++v.firing;
    v.alerts.push_back(AlertView{a.id, a.state, a.restored, a.stabilizing(), a.labels,
                                 a.annotations, a.value, a.active_at});
  }
  return v;
}

uint64_t AlertingRule::id() const { return impl_->id; }
const std::string& AlertingRule::name() const { return impl_->name; }
const std::string& AlertingRule::expr() const { return impl_->expr; }
core::Duration AlertingRule::for_duration() const { return impl_->for_; }
core::Duration AlertingRule::keep_firing_for() const { return impl_->keep_firing_for; }
const core::Labels& AlertingRule::labels() const { return impl_->labels; }
const core::Labels& AlertingRule::annotations() const { return impl_->annotations; }
uint64_t AlertingRule::group_id() const { return impl_->group_id; }
const std::string& AlertingRule::group_name() const { return impl_->group_name; }
const std::string& AlertingRule::file() const { return impl_->file; }
const std::string& AlertingRule::datasource_type() const { return impl_->type; }
bool AlertingRule::debug() const { return impl_->debug; }
int AlertingRule::update_entries_limit() const { return impl_->entries_limit; }
bool AlertingRule::uses_query() const { return impl_->uses_query; }
std::span<const Alert> AlertingRule::alerts() const { return impl_->alerts; }

const Alert* AlertingRule::alert(uint64_t id) const { return impl_->find(id); }

AlertState AlertingRule::state() const {
  bool pending = false;
  for (const auto& a : impl_->alerts) {
    if (a.state == AlertState::firing) return AlertState::firing;
    if (a.state == AlertState::pending) pending = true;
  }
  return pending ? AlertState::pending : AlertState::inactive;
}

size_t AlertingRule::count(AlertState st) const {
  return static_cast<size_t>(std::count_if(impl_->alerts.begin(), impl_->alerts.end(),
                                           [st](const Alert& a) { return a.state == st; }));
}

const std::string& AlertingRule::last_error() const { return impl_->history->last().error; }
const RuleUpdate& AlertingRule::last_update() const { return impl_->history->last(); }
const UpdateHistory& AlertingRule::history() const { return *impl_->history; }
uint64_t AlertingRule::errors_total() const { return impl_->errors_total; }
uint64_t AlertingRule::fired_total() const { return impl_->fired_total; }

const std::string& AlertingRule::generator_url_prefix() const { return impl_->url_prefix; }

std::string AlertingRule::generator_url(uint64_t alert_id) const {
  std::string url = impl_->url_prefix;
  return url.append(std::to_string(alert_id));
}

std::string AlertingRule::source_url(uint64_t alert_id, const Alert& a,
                                     core::TimePoint now) const {
  const Impl& s = *impl_;
  if (!s.ctx.alert_source) return generator_url(alert_id);
  std::string url = s.ctx.external_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += '/';
  // vmalert's notifier.Alert.ExecTemplate: the alert's own labels, value and times.
  templates::TemplateData data;
  data.labels = &a.labels;
  data.value = a.value;
  data.expr = s.expr;
  data.type = s.type;
  data.interval = s.ctx.group_interval;
  data.alert_id = alert_id;
  data.group_id = s.group_id;
  data.active_at = a.active_at;
  data.for_ = s.for_;
  templates::TemplateEnv env;
  env.external_labels = &s.ctx.external_labels;
  env.external_url = s.ctx.external_url;
  env.now = [now] { return now; };
  // On an execution error render() leaves nothing of its own output: `<external_url>/`.
  (void)s.ctx.alert_source->render(data, env, url);
  return url;
}

const std::shared_ptr<const core::AlertJson>& AlertingRule::payload_json(uint64_t alert_id,
                                                                        Alert& a,
                                                                        core::TimePoint now) const {
  // Labels are immutable blocks and an alert keeps its annotation block while the rendered text
  // is the same: holding the same blocks means the fragment is still the alert's JSON.
  const bool same_blocks =
      a.json && a.json->labels_from(a.labels) && a.json->annotations_from(a.annotations);
  if (!impl_->ctx.alert_source) {
    if (!same_blocks) {
      a.json = core::AlertJson::build(a.labels, a.annotations, generator_url(alert_id));
    }
    return a.json;
  }
  // A templated source may read $value or the time: render it at every send, as vmalert does,
  // and build the fragment again only when the text changed.
  const std::string url = source_url(alert_id, a, now);
  if (!same_blocks || !a.json->generator_url_is(url)) {
    a.json = core::AlertJson::build(a.labels, a.annotations, url);
  }
  return a.json;
}

void AlertingRule::set_payload(notifier::Alert& na, uint64_t id, Alert& a,
                               core::TimePoint now) const {
  if (!impl_->ctx.alert_source && a.labels.json_is_verbatim(core::JsonEscape::qtpl, true) &&
      a.annotations.json_is_verbatim(core::JsonEscape::qtpl, false)) {
    a.json.reset();
    na.url_prefix_json = impl_->url_prefix_json;
    na.url_id = id;
    return;
  }
  na.json = payload_json(id, a, now);
}

core::Result<std::optional<templates::Template>> parse_alert_source(
    std::string_view text, bool validate, const templates::TemplateSet* shared) {
  if (text.empty()) return std::optional<templates::Template>{};
  auto fail = [&](const core::Error& e) {
    return core::fail("error validating source template " + std::string(text) + ": " + e.message);
  };
  if (validate) {
    if (auto err = templates::check_template(text, shared)) return fail(*err);
  }
  auto parsed = templates::Template::parse(text, shared);
  if (!parsed) {
    if (validate) return fail(parsed.error());
    return std::optional<templates::Template>{templates::Template{}};
  }
  if (validate) {
    // vmalert's ValidateTemplates executes the text over empty data as well.
    const core::Labels none;
    templates::TemplateData data;
    data.labels = &none;
    templates::TemplateEnv env;
    env.external_labels = &none;
    env.now = [] { return core::TimePoint{}; };
    std::string out;
    if (auto r = parsed->render(data, env, out); !r) return fail(r.error());
  }
  return std::optional<templates::Template>{std::move(*parsed)};
}

}  // namespace rules
