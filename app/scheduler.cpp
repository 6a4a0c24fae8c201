#include "app/scheduler.hpp"

#include <spdlog/spdlog.h>

#include <future>
#include <optional>
#include <thread>
#include <utility>

#include "app/memory.hpp"
#include "core/duration.hpp"
#include "rules/group_math.hpp"

namespace app {

struct GroupScheduler::Slot {
  // The answer of the query in flight for this rule, from the group's pool (result_pool_): held
  // only from launch until the rule has been applied, so a group keeps at most `concurrency`
  // results, not one per rule at its high-water mark.
  std::unique_ptr<core::QueryResult> result;
  rules::EvalInfo info;
  std::chrono::steady_clock::time_point started{};
  // The rule's request as curl (EvalInfo::curl), made once per querier: slots are rebuilt with
  // a new one.
  std::shared_ptr<const rules::CurlMaker> curl;
  std::string where;  // where(i): `group "G": rule "R"`, for log lines and notification errors
};

struct GroupScheduler::PendingUpdate {
  std::unique_ptr<rules::Group> group;
  std::unique_ptr<datasource::Querier> querier;
  std::unique_ptr<Worker> worker;
};

namespace {
thread_local bool on_loop_thread = false;

// Marks the current thread as the loop's for the duration of a callback (see template_env).
struct LoopScope {
  bool saved;
  LoopScope() : saved(on_loop_thread) { on_loop_thread = true; }
  ~LoopScope() { on_loop_thread = saved; }
};
}  // namespace

GroupScheduler::GroupScheduler(std::unique_ptr<rules::Group> group,
                               std::unique_ptr<datasource::Querier> querier,
                               std::unique_ptr<Worker> worker, SchedulerDeps deps,
                               SchedulerOptions options)
    : group_(std::move(group)),
      querier_(std::move(querier)),
      worker_(std::move(worker)),
      deps_(deps),
      options_(options),
      round_timer_(deps.clock.make_timer()),
      miss_timer_(deps.clock.make_timer()) {
  reset_slots();
}

GroupScheduler::~GroupScheduler() = default;

uint64_t GroupScheduler::id() const { return group_->id(); }
const config::GroupSpec& GroupScheduler::spec() const { return group_->spec(); }

const std::string& GroupScheduler::where(size_t i) const { return slots_[i]->where; }

// Slots are made when the group is (and rebuilt when it is updated): a rule's `where` text is
// made once, not per round (every notification carries it for its error messages).
void GroupScheduler::reset_slots() {
  slots_.clear();
  slots_.resize(group_->size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i] = std::make_unique<Slot>();
    std::string& w = slots_[i]->where;
    w.append("group \"").append(group_->spec().name).append("\": rule \"");
    w.append(group_->rule(i).name()).append("\"");
  }
}

// ---- scheduling --------------------------------------------------------------------------------

void GroupScheduler::restore_before_first_round(std::unique_ptr<datasource::Querier> remote_read,
                                                core::Duration lookback) {
  restore_querier_ = std::move(remote_read);
  restore_lookback_ = lookback;
}

// One rule after another, each rule's ALERTS_FOR_STATE at now-1s; errors are logged and the
// rule simply starts without restored state (as in vmalert).
void GroupScheduler::restore_next(size_t i) {
  while (i < group_->size() && group_->rule(i).restore_query(restore_lookback_).empty()) ++i;
  if (i >= group_->size() || stopping_) {
    restoring_ = false;
    restore_querier_.reset();
    restore_result_ = core::QueryResult{};
    if (round_waiting_ && !stopping_) {
      const auto ts = *round_waiting_;
      round_waiting_.reset();
      begin_round(ts);
    } else if (stopping_ && !round_running()) {
      finish_stop();
    }
    return;
  }
  const auto query = group_->rule(i).restore_query(restore_lookback_);
  const auto at = deps_.clock.now() - std::chrono::seconds(1);
  restore_querier_->query(
      query, at, restore_result_,
      [self = shared_from_this(), i](std::optional<core::Error> err) {
        LoopScope loop;
        if (err) {
          SPDLOG_ERROR("{}: failed to restore alert state: {}", self->where(i), err->message);
        } else if (const size_t n = self->group_->rule(i).restore(self->restore_result_); n > 0) {
          spdlog::info("{}: restored the activeAt of {} alert(s) from -remoteRead.url",
                       self->where(i), n);
        }
        self->restore_next(i + 1);
      });
}

void GroupScheduler::start() {
  started_ = true;
  if (restore_querier_) {
    restoring_ = true;
    restore_next(0);
  }
  publish();
  const auto& spec = group_->spec();
  const auto interval = spec.effective_interval;
  const auto delay = options_.skip_start_delay
                         ? core::Duration::zero()
                         : rules::start_delay(deps_.clock.now(), spec.id, interval,
                                              options_.max_start_delay, spec.eval_offset);
  spdlog::info("group \"{}\" started; interval={}; concurrency={}; first evaluation in {}",
               spec.name, core::format_go_duration(interval), spec.effective_concurrency,
               core::format_go_duration(delay));
  round_timer_->start(delay, [self = shared_from_this()] {
    LoopScope loop;
    if (!self->stopping_) self->begin_round(self->deps_.clock.now());
  });
}

void GroupScheduler::arm_next_round() {
  const auto interval = group_->spec().effective_interval;
  const auto wait = last_eval_ts_ + interval - deps_.clock.now();
  round_timer_->start(wait, [self = shared_from_this()] {
    LoopScope loop;
    if (self->stopping_) return;
    const auto tick = rules::next_tick(self->last_eval_ts_, self->deps_.clock.now(),
                                       self->group_->spec().effective_interval);
    if (tick.reset) ++self->resets_;
    self->begin_round(tick.eval_ts);
  });
}

// While a round runs past the tick after the one the next round will start on, each further
// tick is missed: counted the moment it passes, not when the slow round finally ends.
void GroupScheduler::arm_miss_watch(core::TimePoint at) {
  miss_timer_->start(at - deps_.clock.now(), [self = shared_from_this(), at] {
    LoopScope loop;
    if (!self->round_active_ || self->stopping_) return;
    ++self->missed_;
    self->publish_counters();
    SPDLOG_WARN("group \"{}\": missed an evaluation: the round that started at {} is still "
                 "running after {}",
                 self->group_->spec().name, core::format_rfc3339_seconds(self->times_.eval_ts),
                 core::format_go_duration(at - self->times_.eval_ts));
    self->arm_miss_watch(at + self->group_->spec().effective_interval);
  });
}

// ---- one round ---------------------------------------------------------------------------------

void GroupScheduler::begin_round(core::TimePoint eval_ts) {
  if (restoring_) {
    round_waiting_ = eval_ts;
    return;
  }
  const auto& spec = group_->spec();
  round_active_ = true;
  round_started_ = deps_.clock.monotonic();
  times_.eval_ts = eval_ts;
  times_.query_ts = rules::query_time(eval_ts, spec.effective_interval,
                                      spec.effective_eval_delay, spec.effective_eval_alignment,
                                      spec.eval_offset);
  next_rule_ = 0;
  arm_miss_watch(eval_ts + 2 * spec.effective_interval);
  const size_t workers = std::min(group_->size(),
                                  static_cast<size_t>(std::max(spec.effective_concurrency, 1)));
  if (workers == 0) {
    end_round();
    return;
  }
  for (size_t w = 0; w < workers; ++w) launch(next_rule_++);
}

void GroupScheduler::launch(size_t i) {
  ++in_flight_;
  Slot& slot = *slots_[i];
  slot.result = take_result();
  slot.info = {};
  slot.info.started = deps_.clock.now();
  if (slot.curl == nullptr) slot.curl = querier_->curl_maker(group_->rule(i).expr());
  slot.info.curl = slot.curl;
  slot.started = deps_.clock.monotonic();
  deps_.counters.execution_total.fetch_add(1, std::memory_order_relaxed);
  // The querier completes on the loop (possibly before query() returns, as fakes do).
  try {
    querier_->query(group_->rule(i).expr(), times_.query_ts, *slot.result,
                    [self = shared_from_this(), i](std::optional<core::Error> err) {
                      LoopScope loop;
                      self->on_answer(i, std::move(err));
                    });
  } catch (const std::exception& e) {
    // A bug, not a datasource failure: the rule's round fails, the group goes on.
    on_answer(i, core::Error{std::string("internal error: ") + e.what()});
  }
}

rules::RuleOutput GroupScheduler::evaluate(size_t i) {
  Slot& slot = *slots_[i];
  try {
    return group_->on_result(i, *slot.result, times_, template_env(times_.query_ts), slot.info);
  } catch (const std::exception& e) {
    return group_->on_error(i, core::Error{std::string("internal error: ") + e.what()}, times_,
                            slot.info);
  }
}

void GroupScheduler::on_answer(size_t i, std::optional<core::Error> err) {
  Slot& slot = *slots_[i];
  slot.info.duration =
      std::chrono::duration_cast<core::Duration>(deps_.clock.monotonic() - slot.started);
  if (stopping_ && !close_on_stop_) {
    rule_done(i);
    return;
  }
  times_.now = deps_.clock.now();
  if (err) {
    deliver(i, group_->on_error(i, *err, times_, slot.info));
    rule_done(i);
    return;
  }
  rules::Rule& rule = group_->rule(i);
  if (rule.uses_query() && worker_) {
    // Templates may block on `query`: apply on the group's worker, then come back.
    worker_->run([self = shared_from_this(), i] {
      auto out = std::make_shared<rules::RuleOutput>(self->evaluate(i));
      self->deps_.clock.post([self, i, out]() mutable {
        LoopScope loop;
        self->deliver(i, std::move(*out));
        self->rule_done(i);
      });
    });
    return;
  }
  deliver(i, evaluate(i));
  rule_done(i);
}

void GroupScheduler::deliver(size_t i, rules::RuleOutput out) {
  if (out.error) {
    deps_.counters.execution_errors_total.fetch_add(1, std::memory_order_relaxed);
    SPDLOG_ERROR("{}: failed to execute: {}", where(i), out.error->message);
  }
  if (out.template_error) SPDLOG_WARN("{}: {}", where(i), out.template_error->message);
  deps_.counters.alerts_fired_total.fetch_add(out.fired, std::memory_order_relaxed);
  if (!out.series.empty()) deps_.series.write(out.series);
  if (!out.alerts.empty()) {
    deps_.notifiers.send(std::move(out.alerts), group_->spec().notifier_headers, where(i));
  }
}

std::unique_ptr<core::QueryResult> GroupScheduler::take_result() {
  if (result_pool_.empty()) return std::make_unique<core::QueryResult>();
  auto r = std::move(result_pool_.back());
  result_pool_.pop_back();
  return r;
}

void GroupScheduler::give_back_result(std::unique_ptr<core::QueryResult> r) {
  if (!r) return;
  // A result that once held a big answer is dropped rather than kept at that size for good;
  // the usual small ones are reused (no allocations in the steady state).
  if (r->capacity_bytes() > kKeepResultBytes) return;
  r->clear();
  result_pool_.push_back(std::move(r));
}

void GroupScheduler::rule_done(size_t i) {
  if (i < slots_.size()) give_back_result(std::move(slots_[i]->result));
  --in_flight_;
  if (!stopping_ && next_rule_ < group_->size()) {
    launch(next_rule_++);
    return;
  }
  if (in_flight_ == 0) end_round();
}

void GroupScheduler::end_round() {
  miss_timer_->cancel();
  // The alerts of the round were queued rule by rule: they leave now, together.
  deps_.notifiers.flush();
  if (round_active_) {
    ++iterations_;
    const auto now = deps_.clock.monotonic();
    const double seconds = std::chrono::duration<double>(now - round_started_).count();
    iteration_seconds_ += seconds;
    iteration_quantiles_.observe(now, seconds);
    last_eval_ts_ = times_.eval_ts;
    has_last_eval_ = true;
    round_active_ = false;
  }
  if (stopping_) {
    finish_stop();
    return;
  }
  apply_pending_update();
  publish();
  if (deps_.state != nullptr) deps_.state->save(*group_);
  // The previous snapshot and this round's answers are gone: give a spike's pages back.
  memory_releaser().after_round();
  arm_next_round();
}

// ---- update and stop ---------------------------------------------------------------------------

void GroupScheduler::update(std::unique_ptr<rules::Group> newer,
                            std::unique_ptr<datasource::Querier> querier,
                            std::unique_ptr<Worker> worker) {
  pending_ = std::make_unique<PendingUpdate>(
      PendingUpdate{std::move(newer), std::move(querier), std::move(worker)});
  if (!round_running()) {
    apply_pending_update();
    publish();
    if (deps_.state != nullptr) deps_.state->save(*group_);
  }
}

void GroupScheduler::apply_pending_update() {
  if (!pending_) return;
  auto p = std::move(pending_);
  const auto now = deps_.clock.now();
  auto closed = group_->update_from(std::move(*p->group), now);
  if (p->querier) querier_ = std::move(p->querier);
  if (p->worker || !group_->uses_query()) worker_ = std::move(p->worker);
  reset_slots();
  if (!closed.series.empty()) deps_.series.write(closed.series);
  if (!closed.alerts.empty()) {
    deps_.notifiers.send(std::move(closed.alerts), group_->spec().notifier_headers,
                         "group \"" + group_->spec().name + "\": removed rules");
    deps_.notifiers.flush();
  }
  // The interval is part of the group ID: an update never changes it, so the armed timer holds.
  spdlog::info("group \"{}\": updated", group_->spec().name);
}

void GroupScheduler::stop(std::function<void()> stopped, bool close) {
  stopping_ = true;
  close_on_stop_ = close;
  on_stopped_ = std::move(stopped);
  round_timer_->cancel();
  miss_timer_->cancel();
  if (!round_running() && !restoring_) finish_stop();
}

void GroupScheduler::finish_stop() {
  const bool closing = close_on_stop_;
  if (close_on_stop_) {
    close_on_stop_ = false;
    auto closed = group_->close(deps_.clock.now());
    if (!closed.series.empty()) deps_.series.write(closed.series);
    if (!closed.alerts.empty()) {
      deps_.notifiers.send(std::move(closed.alerts), group_->spec().notifier_headers,
                           "group \"" + group_->spec().name + "\": removed");
      deps_.notifiers.flush();
    }
  }
  deps_.store.remove(group_->id());
  if (closing && deps_.state != nullptr) deps_.state->forget(group_->id());
  spdlog::info("group \"{}\": stopped", group_->spec().name);
  if (auto cb = std::move(on_stopped_)) {
    on_stopped_ = nullptr;
    deps_.clock.post(std::move(cb));
  }
}

// ---- templates and snapshots -------------------------------------------------------------------

templates::TemplateEnv GroupScheduler::template_env(core::TimePoint query_ts) {
  const auto& ctx = group_->context();
  templates::TemplateEnv env;
  env.external_labels = &ctx.external_labels;
  env.external_url = ctx.external_url;
  env.now = [&clock = deps_.clock] { return clock.now(); };
  env.query = [this, query_ts](std::string_view q)
      -> core::Result<std::vector<templates::QuerySample>> {
    struct Shared {
      core::QueryResult result;
      std::promise<std::optional<core::Error>> done;
    };
    auto shared = std::make_shared<Shared>();
    auto fut = shared->done.get_future();
    auto run = [this, shared, query = std::string(q), query_ts] {
      querier_->query(query, query_ts, shared->result,
                      [shared](std::optional<core::Error> err) { shared->done.set_value(err); });
    };
    if (on_loop_thread) {
      // Applied on the loop (no worker): only a querier that answers at once can serve it.
      run();
      if (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        return core::fail("query \"" + std::string(q) + "\": not available on the event loop");
      }
    } else {
      deps_.clock.post(std::move(run));
      if (fut.wait_for(options_.query_timeout + std::chrono::seconds(5)) !=
          std::future_status::ready) {
        return core::fail(core::Error{"query \"" + std::string(q) + "\" timed out",
                                      core::ErrorKind::timeout});
      }
    }
    if (auto err = fut.get()) return core::fail(*err);
    std::vector<templates::QuerySample> out;
    out.reserve(shared->result.size());
    for (size_t i = 0; i < shared->result.size(); ++i) {
      out.push_back({shared->result.labels(i).to_labels(), shared->result.value(i),
                     shared->result.timestamp_ms(i)});
    }
    return out;
  };
  return env;
}

void GroupScheduler::publish() {
  const auto& spec = group_->spec();
  auto snap = std::make_shared<GroupSnapshot>();
  snap->id = spec.id;
  snap->name = spec.name;
  snap->file = spec.file;
  snap->type = spec.type;
  snap->interval = spec.effective_interval;
  snap->eval_offset = spec.eval_offset;
  snap->eval_delay = spec.eval_delay;
  snap->concurrency = spec.effective_concurrency;
  snap->limit = spec.effective_limit;
  snap->labels = spec.labels;
  snap->params = api_params(spec.params);
  snap->headers = api_headers(spec.headers);
  snap->notifier_headers = api_headers(spec.notifier_headers);
  snap->last_evaluation = has_last_eval_ ? last_eval_ts_ : core::TimePoint{};
  snap->iterations_total = iterations_;
  snap->iterations_missed_total = missed_;
  snap->iterations_reset_total = resets_;
  snap->iteration_seconds_sum = iteration_seconds_;
  snap->iteration_quantiles = iteration_quantiles_.quantiles(deps_.clock.monotonic());
  snap->rules.reserve(group_->size());
  for (size_t i = 0; i < group_->size(); ++i) snap->rules.push_back(group_->rule(i).describe());
  last_snapshot_ = snap;
  deps_.store.publish(std::move(snap));
}

// Counters changed while a round runs (rules may be in use on the worker): the last snapshot's
// rules, the current counters.
void GroupScheduler::publish_counters() {
  if (!last_snapshot_) return;
  auto snap = std::make_shared<GroupSnapshot>(*last_snapshot_);
  snap->iterations_missed_total = missed_;
  snap->iterations_reset_total = resets_;
  last_snapshot_ = snap;
  deps_.store.publish(std::move(snap));
}

}  // namespace app
