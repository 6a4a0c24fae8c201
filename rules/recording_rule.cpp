#include "rules/recording_rule.hpp"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "core/limit_hits.hpp"

namespace rules {
namespace {

constexpr std::string_view kMetricName = "__name__";

// A series written, by content hash: equal sets hash equal, so sorted by hash, equal sets sit
// in one run of equal hashes (tiny: a 64-bit hash collides almost never); `index` is its place
// in the round's result.
struct Written {
  uint64_t hash = 0;
  core::Labels labels;
  size_t index = 0;
  friend bool operator<(const Written& a, const Written& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.index < b.index;
  }
};

// Whether `sorted` holds a set equal to `w`.
bool contains(const std::vector<Written>& sorted, const Written& w) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), w.hash,
                             [](const Written& x, uint64_t h) { return x.hash < h; });
  for (; it != sorted.end() && it->hash == w.hash; ++it) {
    if (it->labels == w.labels) return true;
  }
  return false;
}

}  // namespace

struct RecordingRule::Impl {
  uint64_t id = 0;
  std::string name;
  std::string expr;
  core::Labels labels;  // external < group < rule
  bool debug = false;
  int entries_limit = 20;
  int limit = 0;
  std::shared_ptr<UpdateHistory> history;  // made by create(), sized by entries_limit
  uint64_t errors_total = 0;
  // Series written last successful round, for staleness markers: sorted by hash, each the
  // block that was written (shared), no text key (the text doubled every series' cost).
  std::vector<Written> written;
  core::LabelsBuilder builder;  // scratch, one series at a time

  void record(RuleUpdate u) {
    if (!u.error.empty()) ++errors_total;
    history->add(std::move(u));
  }
};

RecordingRule::RecordingRule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RecordingRule::RecordingRule(RecordingRule&&) noexcept = default;
RecordingRule& RecordingRule::operator=(RecordingRule&&) noexcept = default;
RecordingRule::~RecordingRule() = default;

core::Result<RecordingRule> RecordingRule::create(const config::RuleSpec& rule,
                                                  const config::GroupSpec& group,
                                                  const RuleContext& ctx) {
  auto impl = std::make_unique<Impl>();
  impl->id = rule.id;
  impl->name = rule.name;
  impl->expr = rule.expr;
  impl->debug = rule.debug.value_or(group.debug);
  impl->limit = ctx.limit;
  impl->entries_limit = std::max(1, rule.update_entries_limit.value_or(ctx.update_entries_limit));
  impl->history = std::make_shared<UpdateHistory>(static_cast<size_t>(impl->entries_limit));
  impl->labels = ctx.external_labels;
  for (const auto& l : group.labels) impl->labels.set(l.name, l.value);
  for (const auto& l : rule.labels) impl->labels.set(l.name, l.value);
  return RecordingRule(std::move(impl));
}

core::Result<ExecStats> RecordingRule::apply(const core::QueryResult& result, core::TimePoint ts,
                                             const templates::TemplateEnv&,
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

  const size_t n = result.size();
  if (s.limit > 0 && n > static_cast<size_t>(s.limit)) {
    core::count_limit_hit(core::Limit::rule_results);
    return fail_round("exec exceeded limit of " + std::to_string(s.limit) + " with " +
                      std::to_string(n) + " series");
  }
  std::vector<core::Series> out;
  out.reserve(n);
  std::vector<Written> current;
  current.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // One block per series: the builder holds views into `result` and the rule's labels.
    auto& b = s.builder;
    b.reset();
    for (auto e : result.labels(i)) b.set(e.name, e.value);
    b.set(kMetricName, s.name);
    for (const auto& l : s.labels) {
      if (l.value.empty()) {
        b.erase(l.name);
        continue;
      }
      if (auto prev = b.get(l.name); prev && *prev != l.value) {
        b.set_owned("exported_" + std::string(l.name), *prev);
      }
      b.set(l.name, l.value);
    }
    core::Labels ls = b.build();
    const int64_t ts_ms = result.samples(i).empty() ? core::unix_ms(ts) : result.timestamp_ms(i);
    const double v = result.samples(i).empty() ? 0.0 : result.value(i);
    if (info.emit_series) out.push_back({ls, v, ts_ms});
    const uint64_t h = ls.content_hash();
    current.push_back({h, std::move(ls), i});
  }
  std::sort(current.begin(), current.end());
  // Two series with one label set fail the round, named as the first one met in result order
  // whose set an earlier series already had.
  const Written* dup = nullptr;
  for (size_t a = 0; a < current.size(); ++a) {
    for (size_t b = a + 1; b < current.size() && current[b].hash == current[a].hash; ++b) {
      if (current[b].labels == current[a].labels && (!dup || current[b].index < dup->index)) {
        dup = &current[b];
      }
    }
  }
  if (dup) {
    return fail_round("original metric " + result.labels(dup->index).to_labels().to_string() +
                      "; resulting labels " + dup->labels.to_string() +
                      ": result contains metrics with the same labelset during evaluation");
  }
  if (info.emit_series) {
    const int64_t stale_ms = core::unix_ms(ts);
    for (const auto& w : s.written) {
      if (!contains(current, w)) out.push_back({w.labels, core::stale_nan(), stale_ms});
    }
    s.written = std::move(current);
  }
  stats.series = std::move(out);
  s.record(std::move(upd));
  return stats;
}

void RecordingRule::record_error(const core::Error& err, core::TimePoint ts,
                                 const EvalInfo& info) {
  impl_->record(make_update(ts, info, err));
}

void RecordingRule::update_from(Rule&& newer) {
  // Group::update_from matches by ID and type, so this is always a recording rule.
  Impl& s = *impl_;
  Impl& n = *static_cast<RecordingRule&>(newer).impl_;
  s.labels = std::move(n.labels);
  s.debug = n.debug;
  s.entries_limit = n.entries_limit;
  s.limit = n.limit;
  s.history = std::move(n.history);
}

Rule::Closed RecordingRule::close(core::TimePoint now) {
  Closed out;
  const int64_t ts_ms = core::unix_ms(now);
  for (auto& w : impl_->written) out.series.push_back({std::move(w.labels), core::stale_nan(), ts_ms});
  impl_->written.clear();
  return out;
}

RuleView RecordingRule::describe() const {
  const Impl& s = *impl_;
  RuleView v;
  v.type = RuleType::recording;
  v.id = s.id;
  v.name = s.name;
  v.expr = s.expr;
  v.labels = s.labels;
  v.state = AlertState::inactive;
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
  return v;
}

uint64_t RecordingRule::id() const { return impl_->id; }
const std::string& RecordingRule::name() const { return impl_->name; }
const std::string& RecordingRule::expr() const { return impl_->expr; }
const UpdateHistory& RecordingRule::history() const { return *impl_->history; }
const core::Labels& RecordingRule::labels() const { return impl_->labels; }
uint64_t RecordingRule::errors_total() const { return impl_->errors_total; }

}  // namespace rules
