#include "app/replay.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "app/manager.hpp"
#include "core/duration.hpp"

namespace app {

core::Result<void> check_replay_options(const ReplayOptions& o) {
  if (o.max_datapoints < 1) {
    return core::fail("replay.maxDatapointsPerQuery can't be lower than 1",
                      core::ErrorKind::bad_config);
  }
  if (o.retry_attempts < 1) {
    return core::fail("replay.ruleRetryAttempts can't be lower than 1", core::ErrorKind::bad_config);
  }
  if (o.rule_concurrency < 1) {
    return core::fail("replay.ruleEvaluationConcurrency can't be lower than 1",
                      core::ErrorKind::bad_config);
  }
  if (o.to <= o.from) {
    return core::fail("replay.timeTo=" + core::format_rfc3339_seconds(o.to) +
                          " must be bigger than replay.timeFrom=" +
                          core::format_rfc3339_seconds(o.from),
                      core::ErrorKind::bad_config);
  }
  return {};
}

std::vector<ReplayRange> split_replay_range(core::TimePoint from, core::TimePoint to,
                                            core::Duration step) {
  std::vector<ReplayRange> out;
  if (step <= core::Duration::zero()) return out;
  for (core::TimePoint s = from; s < to; s += step) {
    out.push_back({s, std::min(s + step, to)});
  }
  return out;
}

std::vector<int64_t> replay_points(const core::QueryResult& matrix, const ReplayRange& range,
                                   core::Duration step, int64_t after_ms) {
  const int64_t start = core::unix_ms(range.start);
  const int64_t end = core::unix_ms(range.end);
  const int64_t step_ms = std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::milliseconds>(step).count());
  std::vector<int64_t> out;
  for (int64_t t = start; t <= end; t += step_ms) {
    if (t > after_ms) out.push_back(t);
  }
  bool off_grid = false;
  for (size_t i = 0; i < matrix.size(); ++i) {
    for (const core::Sample& s : matrix.samples(i)) {
      if (s.timestamp_ms > after_ms && s.timestamp_ms >= start && s.timestamp_ms <= end &&
          (s.timestamp_ms - start) % step_ms != 0) {
        out.push_back(s.timestamp_ms);
        off_grid = true;
      }
    }
  }
  if (off_grid) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

void slice_matrix_at(const core::QueryResult& matrix, std::vector<size_t>& cursors, int64_t ts_ms,
                     core::QueryResult& out) {
  out.clear();
  out.type = core::ResultType::vector;
  cursors.resize(matrix.size(), 0);
  for (size_t i = 0; i < matrix.size(); ++i) {
    const auto samples = matrix.samples(i);
    size_t& c = cursors[i];
    while (c < samples.size() && samples[c].timestamp_ms < ts_ms) ++c;
    if (c == samples.size() || samples[c].timestamp_ms != ts_ms) continue;
    out.begin_series();
    for (const auto& l : matrix.labels(i)) out.add_label(l.name, l.value);
    out.add_sample(samples[c]);
    out.end_series();
  }
}

std::string format_progress_bar(size_t done, size_t total, size_t width) {
  const double frac = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const auto filled = static_cast<size_t>(frac * static_cast<double>(width));
  std::string bar = std::to_string(done) + " / " + std::to_string(total) + " [";
  for (size_t i = 0; i < width; ++i) {
    if (i < filled) {
      bar.push_back('=');
    } else if (i == filled && done < total) {
      bar.push_back('>');
    } else {
      bar.push_back('-');
    }
  }
  char pct[32];
  std::snprintf(pct, sizeof pct, "] %.2f%%", frac * 100.0);
  bar += pct;
  return bar;
}

namespace {

class ConsoleProgress final : public ReplayProgress {
 public:
  ConsoleProgress(std::FILE* out, std::FILE* err, bool bar) : out_(out), err_(err), bar_(bar) {}

  // ReplayProgress
  void group_started(const config::GroupSpec& group, size_t requests,
                     core::Duration max_range) override {
    std::fprintf(out_,
                 "\nGroup \"%s\"\ninterval: \t%s\nrequests to make: \t%zu\nmax range per "
                 "request: \t%s\n",
                 group.name.c_str(), core::format_go_duration(group.effective_interval).c_str(),
                 requests, core::format_go_duration(max_range).c_str());
    if (group.effective_limit > 0) {
      std::fprintf(out_, "\nPlease note, `limit: %d` param has no effect during replay.\n",
                   group.effective_limit);
    }
    std::fflush(out_);
  }
  void rule_started(const rules::Rule& rule, size_t requests) override {
    std::fprintf(out_, "> Rule \"%s\" (ID: %llu)\n", rule.name().c_str(),
                 static_cast<unsigned long long>(rule.id()));
    std::fflush(out_);
    total_ = requests;
    if (bar_) draw(0);
  }
  void range_done(size_t done, size_t total) override {
    total_ = total;
    if (bar_) draw(done);
  }
  void rule_done() override {
    if (bar_) {
      std::fputc('\n', err_);
      std::fflush(err_);
    }
  }

 private:
  void draw(size_t done) {
    std::fprintf(err_, "\r%s", format_progress_bar(done, total_, 50).c_str());
    std::fflush(err_);
  }

  std::FILE* out_;
  std::FILE* err_;
  bool bar_;
  size_t total_ = 0;
};

}  // namespace

std::unique_ptr<ReplayProgress> make_console_progress(std::FILE* out, std::FILE* err, bool bar) {
  return std::make_unique<ConsoleProgress>(out, err, bar);
}

// ---- the driver --------------------------------------------------------------------------------

namespace {

// 400 and 422 mean the expression itself is wrong (vmalert gives up at once); config errors and
// cancellation would not change either.
bool worth_retrying(const core::Error& e) {
  switch (e.kind) {
    case core::ErrorKind::http_status: return e.http_status != 400 && e.http_status != 422;
    case core::ErrorKind::bad_config:
    case core::ErrorKind::canceled: return false;
    case core::ErrorKind::other:
    case core::ErrorKind::timeout:
    case core::ErrorKind::connection:
    case core::ErrorKind::bad_response:
    case core::ErrorKind::too_large:
    case core::ErrorKind::io: return true;
  }
  return true;
}

// Rules whose state carries from one range to the next cannot run ranges side by side. Every
// alerting rule does: even with `for: 0`, ALERTS_FOR_STATE carries activeAt, the start of the
// run of points the alert has been active, which a range cannot know alone (vmalert runs
// `for: 0` rules concurrently and restarts activeAt at each range).
bool needs_sequential_ranges(const rules::Rule& r) {
  return r.type() == rules::RuleType::alerting;
}

}  // namespace

struct Replayer::State : std::enable_shared_from_this<State> {
  State(ReplayDeps d, ReplayOptions o) : deps(std::move(d)), options(std::move(o)) {}

  // One range of the current rule being queried or applied.
  struct Slot {
    size_t range = 0;
    int attempt = 1;
    core::QueryResult result;
    // Concurrent ranges: a fresh copy of the group owns the rule instance of this range.
    std::unique_ptr<rules::Group> copy;
    rules::Rule* rule = nullptr;
    std::unique_ptr<Timer> retry_timer;
    std::vector<core::Series> rows;  // what the range produced, written in chunks
    size_t written = 0;
  };

  ReplayDeps deps;
  ReplayOptions options;
  std::vector<config::GroupSpec> groups;
  rules::GroupContext ctx;
  std::function<void(ReplaySummary)> done;
  ReplaySummary summary;

  size_t group_index = 0;
  std::unique_ptr<rules::Group> group;
  std::unique_ptr<datasource::RangeQuerier> querier;
  std::vector<ReplayRange> ranges;
  core::Duration step{};

  size_t rule_index = 0;
  size_t concurrency = 1;
  size_t next_range = 0;
  size_t ranges_done = 0;
  size_t in_flight = 0;
  int64_t last_applied_ms = std::numeric_limits<int64_t>::min();  // sequential ranges only
  bool stopping = false;
  std::unique_ptr<Timer> delay_timer;

  // Reused per point.
  core::QueryResult instant;
  std::vector<size_t> cursors;

  void log_error(const std::string& msg) {
    if (deps.log_error) deps.log_error(msg);
  }

  void finish() {
    if (auto cb = std::move(done)) {
      done = nullptr;
      cb(std::move(summary));
    }
  }

  void start_group() {
    if (stopping || group_index == groups.size()) {
      finish();
      return;
    }
    config::GroupSpec& spec = groups[group_index];
    step = spec.effective_interval;
    ranges = split_replay_range(options.from, options.to, step * options.max_datapoints);
    ++summary.groups;
    if (deps.progress != nullptr) {
      deps.progress->group_started(spec, ranges.size(), step * options.max_datapoints);
    }
    spec.effective_limit = 0;  // vmalert: `limit` has no effect during replay
    auto built = rules::Group::create(spec, ctx);
    if (!built) {
      summary.fatal = built.error();
      finish();
      return;
    }
    group = std::move(*built);
    querier = deps.queriers.build_range(querier_params(spec));
    rule_index = 0;
    start_rule();
  }

  void start_rule() {
    if (stopping) {
      finish();
      return;
    }
    if (rule_index == group->size()) {
      ++group_index;
      start_group();
      return;
    }
    const rules::Rule& rule = group->rule(rule_index);
    concurrency = needs_sequential_ranges(rule)
                      ? 1
                      : std::min(static_cast<size_t>(options.rule_concurrency),
                                 std::max<size_t>(ranges.size(), 1));
    next_range = 0;
    ranges_done = 0;
    in_flight = 0;
    last_applied_ms = std::numeric_limits<int64_t>::min();
    ++summary.rules;
    if (deps.progress != nullptr) deps.progress->rule_started(rule, ranges.size());
    if (ranges.empty()) {
      rule_finished();
      return;
    }
    while (in_flight < concurrency && next_range < ranges.size()) launch(next_range++);
  }

  void launch(size_t range) {
    ++in_flight;
    auto slot = std::make_shared<Slot>();
    slot->range = range;
    if (concurrency == 1) {
      slot->rule = &group->rule(rule_index);
    } else {
      auto copy = rules::Group::create(groups[group_index], ctx);
      if (!copy) {  // the same spec built once already: cannot happen
        fail_range(*slot, copy.error());
        return;
      }
      slot->copy = std::move(*copy);
      slot->rule = &slot->copy->rule(rule_index);
    }
    query(std::move(slot));
  }

  void query(std::shared_ptr<Slot> slot) {
    const ReplayRange& r = ranges[slot->range];
    Slot& s = *slot;
    querier->query_range(s.rule->expr(), r.start, r.end, s.result,
                         [self = shared_from_this(), slot](std::optional<core::Error> err) {
                           self->on_answer(slot, std::move(err));
                         });
  }

  void on_answer(const std::shared_ptr<Slot>& slot, std::optional<core::Error> err) {
    Slot& s = *slot;
    if (err) {
      const std::string what = "attempt " + std::to_string(s.attempt) +
                               " to execute rule \"" + s.rule->name() + "\" failed: " +
                               err->message;
      log_error(what);
      if (!stopping && s.attempt < options.retry_attempts && worth_retrying(*err)) {
        ++s.attempt;
        s.retry_timer = deps.clock.make_timer();
        s.retry_timer->start(options.retry_delay,
                             [self = shared_from_this(), slot] { self->query(slot); });
        return;
      }
      fail_range(s, *err);
      return;
    }
    ++summary.requests;
    auto applied = apply(s);
    // What was computed before a failure is still what live evaluation would have written.
    write_rows(slot, applied ? std::nullopt : std::optional<core::Error>(applied.error()));
  }

  // The range's rows in chunks of at most max_write_rows, waiting for room in between, so one
  // large range cannot overflow the writer's queue.
  void write_rows(const std::shared_ptr<Slot>& slot, std::optional<core::Error> failure) {
    Slot& s = *slot;
    const size_t chunk = deps.max_write_rows == 0 ? s.rows.size() : deps.max_write_rows;
    if (s.written < s.rows.size()) {
      const size_t n = std::min(chunk, s.rows.size() - s.written);
      deps.writer.write(std::span<const core::Series>(s.rows.data() + s.written, n));
      s.written += n;
      summary.rows += n;
      auto next = [self = shared_from_this(), slot, failure] { self->write_rows(slot, failure); };
      if (deps.wait_for_room) {
        deps.wait_for_room(std::move(next));
      } else {
        next();
      }
      return;
    }
    s.rows = {};
    if (failure) {
      fail_range(s, *failure);
    } else {
      range_finished();
    }
  }

  // The answer, point by point. Sequential ranges share one rule and skip the boundary point
  // the previous range applied; a concurrent range's fresh rule is seeded with its first point
  // (written by the previous range), whose output is dropped.
  core::Result<void> apply(Slot& s) {
    const ReplayRange& r = ranges[s.range];
    const bool seed_first = concurrency > 1 && s.range > 0;
    const int64_t after = concurrency == 1 ? last_applied_ms : std::numeric_limits<int64_t>::min();
    const auto points = replay_points(s.result, r, step, after);
    cursors.assign(s.result.size(), 0);
    s.rows.clear();
    s.written = 0;
    templates::TemplateEnv env;
    env.external_labels = &ctx.external_labels;
    env.external_url = ctx.external_url;
    env.now = [&clock = deps.clock] { return clock.now(); };
    rules::EvalInfo info;
    info.emit_series = true;
    std::optional<core::Error> failure;
    for (const int64_t t : points) {
      slice_matrix_at(s.result, cursors, t, instant);
      info.started = deps.clock.now();
      auto stats = s.rule->apply(instant, core::from_unix_ms(t), env, info);
      if (concurrency == 1) last_applied_ms = t;
      if (!stats) {
        failure = stats.error().wrap("at " + core::format_rfc3339_seconds(core::from_unix_ms(t)));
        break;
      }
      if (seed_first && t == core::unix_ms(r.start)) continue;
      for (auto& series : stats->series) s.rows.push_back(std::move(series));
    }
    s.result.clear();
    if (failure) return core::fail(std::move(*failure));
    return {};
  }

  void fail_range(Slot& s, const core::Error& err) {
    const ReplayRange& r = ranges[s.range];
    const std::string what = "rule \"" + group->rule(rule_index).name() + "\" (group \"" +
                             group->spec().name + "\"), range " +
                             core::format_rfc3339_seconds(r.start) + " - " +
                             core::format_rfc3339_seconds(r.end) + ": " + err.message;
    if (options.continue_on_error) {
      ++summary.failed_ranges;
      summary.errors.push_back(what);
      log_error("skipping " + what);
    } else if (!stopping) {
      stopping = true;
      summary.fatal = core::Error{what, err.kind, err.http_status};
    }
    range_finished();
  }

  void range_finished() {
    --in_flight;
    ++ranges_done;
    if (deps.progress != nullptr) deps.progress->range_done(ranges_done, ranges.size());
    if (!stopping && next_range < ranges.size()) {
      launch(next_range++);
      return;
    }
    if (in_flight == 0) rule_finished();
  }

  void rule_finished() {
    if (deps.progress != nullptr) deps.progress->rule_done();
    ++rule_index;
    if (stopping) {
      finish();
      return;
    }
    // vmalert sleeps after every rule: the remote storage gets time to make the results
    // readable for the rules that use them.
    if (options.rules_delay > core::Duration::zero()) {
      delay_timer = deps.clock.make_timer();
      delay_timer->start(options.rules_delay, [self = shared_from_this()] { self->start_rule(); });
    } else {
      deps.clock.post([self = shared_from_this()] { self->start_rule(); });
    }
  }
};

Replayer::Replayer(ReplayDeps deps, ReplayOptions options)
    : state_(std::make_shared<State>(std::move(deps), std::move(options))) {}

Replayer::~Replayer() = default;

void Replayer::run(std::vector<config::GroupSpec> groups, rules::GroupContext ctx,
                   std::function<void(ReplaySummary)> done) {
  state_->groups = std::move(groups);
  state_->ctx = std::move(ctx);
  state_->ctx.emit_series = true;
  state_->done = std::move(done);
  state_->deps.clock.post([s = state_] { s->start_group(); });
}

}  // namespace app
