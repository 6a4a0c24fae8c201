#include "app/group_runner.hpp"

#include "net/asio.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <future>

#include "core/duration.hpp"
#include "rules/alerting_rule.hpp"
#include "rules/group_math.hpp"

namespace app {
namespace asio = boost::asio;

namespace {

core::TimePoint wall_now() {
  return core::TimePoint{std::chrono::duration_cast<core::Duration>(
      std::chrono::system_clock::now().time_since_epoch())};
}

// Turns a callback-style operation into an awaitable. `start` receives a std::function<void(T)>
// that may be called from any thread exactly once; the coroutine resumes on its own executor.
template <class T, class Start>
asio::awaitable<T> await_callback(Start start) {
  co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(T)>(
      [start = std::move(start)](auto handler) mutable {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        start([h](T value) mutable {
          auto ex = asio::get_associated_executor(*h);
          asio::dispatch(ex, [h, v = std::move(value)]() mutable { (*h)(std::move(v)); });
        });
      },
      asio::use_awaitable);
}

struct RuleSlot {
  rules::AlertingRule rule;
  core::QueryResult result;
};

}  // namespace

struct GroupRunner::Impl {
  config::GroupSpec spec;
  RunnerSettings settings;
  RunnerDeps deps;
  std::unique_ptr<datasource::Querier> querier;
  std::vector<std::unique_ptr<RuleSlot>> slots;
  core::Duration interval{};
  core::Duration eval_delay{};
  bool alignment = true;
  asio::steady_timer timer;
  std::atomic<bool> stopped{false};
  uint64_t iterations = 0;
  uint64_t missed = 0;
  uint64_t resets = 0;
  double iteration_seconds = 0;
  core::TimePoint last_eval{};

  Impl(const config::GroupSpec& s, const RunnerSettings& st, RunnerDeps d)
      : spec(s), settings(st), deps(d), timer(d.io) {}

  asio::awaitable<void> run(std::shared_ptr<GroupRunner> self);
  asio::awaitable<void> evaluate(core::TimePoint eval_ts);
  asio::awaitable<void> eval_rule(RuleSlot& slot, core::TimePoint qts);
  asio::awaitable<bool> sleep_until(core::TimePoint wall_deadline);
  rules::TemplateEnv template_env(core::TimePoint qts);
  void send(RuleSlot& slot);
  void publish();
  std::string where(const RuleSlot& slot) const {
    return "group \"" + spec.name + "\": rule \"" + slot.rule.name() + "\"";
  }
};

core::Result<std::shared_ptr<GroupRunner>> GroupRunner::create(const config::GroupSpec& spec,
                                                               const RunnerSettings& settings,
                                                               RunnerDeps deps) {
  auto impl = std::make_unique<Impl>(spec, settings, deps);
  impl->interval = spec.interval.value_or(settings.default_interval);
  impl->eval_delay = spec.eval_delay.value_or(settings.default_eval_delay);
  impl->alignment = spec.eval_alignment.value_or(true);

  rules::RuleContext ctx;
  ctx.external_labels = settings.external_labels;
  ctx.external_url = settings.external_url;
  ctx.disable_alertgroup_label = settings.disable_alertgroup_label;
  ctx.group_interval = impl->interval;
  ctx.limit = spec.limit > 0 ? spec.limit : settings.results_limit;
  ctx.update_entries_limit = settings.update_entries_limit;
  ctx.templates = settings.templates;
  for (const auto& r : spec.rules) {
    if (r.kind == config::RuleKind::recording) {
      return core::fail(spec.file + ": group \"" + spec.name + "\": recording rule \"" + r.name +
                        "\": recording rules need -remoteWrite.url, which alertd does not "
                        "support yet");
    }
    auto rule = rules::AlertingRule::create(r, spec, ctx);
    if (!rule) return core::fail(rule.error().wrap(spec.file));
    impl->slots.push_back(std::make_unique<RuleSlot>(RuleSlot{std::move(*rule), {}}));
  }

  datasource::QuerierParams params;
  params.type = spec.type;
  params.eval_interval = impl->interval;
  params.query_params = spec.params;
  params.headers = spec.headers;
  params.debug = spec.debug;
  impl->querier = deps.queriers.build(params);
  return std::shared_ptr<GroupRunner>(new GroupRunner(std::move(impl)));
}

GroupRunner::GroupRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GroupRunner::~GroupRunner() = default;

const config::GroupSpec& GroupRunner::spec() const { return impl_->spec; }

void GroupRunner::start() {
  impl_->publish();
  auto self = shared_from_this();
  asio::co_spawn(
      impl_->deps.io, [self]() { return self->impl_->run(self); },
      [name = impl_->spec.name](std::exception_ptr e) {
        if (!e) return;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          spdlog::error("group \"{}\": evaluation loop stopped: {}", name, ex.what());
        }
      });
}

void GroupRunner::stop() {
  impl_->stopped = true;
  impl_->timer.cancel();
}

asio::awaitable<bool> GroupRunner::Impl::sleep_until(core::TimePoint wall_deadline) {
  const auto wait = wall_deadline - wall_now();
  timer.expires_after(wait > core::Duration::zero() ? wait : core::Duration::zero());
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return !stopped.load();
}

asio::awaitable<void> GroupRunner::Impl::run(std::shared_ptr<GroupRunner> self) {
  const auto delay =
      rules::start_delay(wall_now(), spec.id, interval, settings.max_start_delay, spec.eval_offset);
  spdlog::info("group \"{}\" started; interval={}; concurrency={}; first evaluation in {}",
               spec.name, core::format_go_duration(interval), spec.concurrency,
               core::format_go_duration(delay));
  if (!co_await sleep_until(wall_now() + delay)) co_return;
  core::TimePoint eval_ts = wall_now();
  while (!stopped) {
    const auto started = std::chrono::steady_clock::now();
    co_await evaluate(eval_ts);
    ++iterations;
    iteration_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    last_eval = eval_ts;
    publish();
    if (!co_await sleep_until(eval_ts + interval)) break;
    const auto tick = rules::next_tick(eval_ts, wall_now(), interval);
    if (tick.missed > 0) {
      ++missed;
      spdlog::warn("group \"{}\": skipped {} evaluation(s): the previous one took longer than {}",
                   spec.name, tick.missed, core::format_go_duration(interval));
    }
    if (tick.reset) ++resets;
    eval_ts = tick.eval_ts;
  }
  (void)self;
  spdlog::info("group \"{}\": stopped", spec.name);
}

asio::awaitable<void> GroupRunner::Impl::evaluate(core::TimePoint eval_ts) {
  const auto qts = rules::query_time(eval_ts, interval, eval_delay, alignment, spec.eval_offset);
  const size_t workers =
      std::min(slots.size(), static_cast<size_t>(std::max(spec.concurrency, 1)));
  if (workers <= 1) {
    for (auto& slot : slots) {
      if (stopped) co_return;
      co_await eval_rule(*slot, qts);
    }
    co_return;
  }
  // `workers` coroutines take rules in order; the last one to finish wakes this one.
  auto next = std::make_shared<size_t>(0);
  auto running = std::make_shared<size_t>(workers);
  asio::steady_timer done(deps.io, asio::steady_timer::time_point::max());
  for (size_t w = 0; w < workers; ++w) {
    asio::co_spawn(
        deps.io,
        [this, next, running, qts, &done]() -> asio::awaitable<void> {
          while (*next < slots.size() && !stopped) {
            auto& slot = *slots[(*next)++];
            co_await eval_rule(slot, qts);
          }
          if (--*running == 0) done.cancel();
        },
        asio::detached);
  }
  boost::system::error_code ec;
  co_await done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

rules::TemplateEnv GroupRunner::Impl::template_env(core::TimePoint qts) {
  rules::TemplateEnv env;
  env.external_labels = &settings.external_labels;
  env.external_url = settings.external_url;
  env.now = wall_now;
  // Called on a pool thread (rules that use `query` are applied there): the query itself runs
  // on the event loop; this thread waits for it, bounded by the query timeout.
  env.query = [this, qts](std::string_view q) -> core::Result<std::vector<rules::QuerySample>> {
    struct Shared {
      core::QueryResult result;
      std::promise<std::optional<core::Error>> done;
    };
    auto shared = std::make_shared<Shared>();
    auto fut = shared->done.get_future();
    asio::post(deps.io, [this, shared, query = std::string(q), qts]() {
      querier->query(query, qts, shared->result,
                     [shared](std::optional<core::Error> err) { shared->done.set_value(err); });
    });
    if (fut.wait_for(settings.query_timeout + std::chrono::seconds(5)) !=
        std::future_status::ready) {
      return core::fail("query \"" + std::string(q) + "\" timed out");
    }
    if (auto err = fut.get()) return core::fail(*err);
    std::vector<rules::QuerySample> out;
    out.reserve(shared->result.size());
    for (size_t i = 0; i < shared->result.size(); ++i) {
      out.push_back({shared->result.labels(i).to_labels(), shared->result.value(i),
                     shared->result.timestamp_ms(i)});
    }
    return out;
  };
  return env;
}

asio::awaitable<void> GroupRunner::Impl::eval_rule(RuleSlot& slot, core::TimePoint qts) {
  rules::EvalInfo info;
  info.started = wall_now();
  info.emit_series = false;  // no remote write yet
  const auto steady_start = std::chrono::steady_clock::now();
  deps.counters.execution_total.fetch_add(1, std::memory_order_relaxed);

  auto err = co_await await_callback<std::optional<core::Error>>(
      [this, &slot, qts](std::function<void(std::optional<core::Error>)> cb) {
        querier->query(slot.rule.expr(), qts, slot.result, std::move(cb));
      });
  info.duration = std::chrono::duration_cast<core::Duration>(std::chrono::steady_clock::now() -
                                                             steady_start);
  if (stopped) co_return;
  if (err) {
    slot.rule.record_error(*err, qts, info);
    deps.counters.execution_errors_total.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("{}: failed to execute: {}", where(slot), err->message);
    co_return;
  }

  core::Result<rules::ExecStats> stats = core::fail("not evaluated");
  if (slot.rule.uses_query()) {
    stats = co_await await_callback<core::Result<rules::ExecStats>>(
        [this, &slot, qts, info](std::function<void(core::Result<rules::ExecStats>)> cb) {
          asio::post(deps.pool, [this, &slot, qts, info, cb = std::move(cb)]() {
            const auto env = template_env(qts);
            cb(slot.rule.apply(slot.result, qts, env, info));
          });
        });
  } else {
    stats = slot.rule.apply(slot.result, qts, template_env(qts), info);
  }
  if (!stats) {
    deps.counters.execution_errors_total.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("{}: failed to execute: {}", where(slot), stats.error().message);
    co_return;
  }
  deps.counters.alerts_fired_total.fetch_add(stats->fired, std::memory_order_relaxed);
  if (stats->template_error) {
    spdlog::warn("{}: {}", where(slot), stats->template_error->message);
  }
  send(slot);
}

void GroupRunner::Impl::send(RuleSlot& slot) {
  const auto resolve =
      rules::resolve_duration(interval, settings.resend_delay, settings.max_resolve_duration);
  auto alerts = slot.rule.alerts_to_send(wall_now(), settings.resend_delay, resolve);
  if (alerts.empty() || deps.notifiers.empty()) return;
  auto batch = std::make_shared<std::vector<notifier::Alert>>(std::move(alerts));
  for (auto* n : deps.notifiers) {
    n->send(*batch, spec.notifier_headers,
            [batch, who = where(slot)](std::optional<core::Error> e) {
              if (e) spdlog::error("{}: {}", who, e->message);
            });
  }
}

void GroupRunner::Impl::publish() {
  auto snap = std::make_shared<GroupSnapshot>();
  snap->id = spec.id;
  snap->name = spec.name;
  snap->file = spec.file;
  snap->type = spec.type;
  snap->interval = interval;
  snap->eval_offset = spec.eval_offset;
  snap->eval_delay = spec.eval_delay;
  snap->concurrency = spec.concurrency;
  snap->labels = spec.labels;
  snap->last_evaluation = last_eval;
  snap->iterations_total = iterations;
  snap->iterations_missed_total = missed;
  snap->iterations_reset_total = resets;
  snap->iteration_seconds_sum = iteration_seconds;
  snap->rules.reserve(slots.size());
  for (const auto& slot : slots) {
    const auto& r = slot->rule;
    RuleSnapshot rs;
    rs.id = r.id();
    rs.name = r.name();
    rs.expr = r.expr();
    rs.for_ = r.for_duration();
    rs.keep_firing_for = r.keep_firing_for();
    rs.labels = r.labels();
    rs.annotations = r.annotations();
    rs.state = r.state();
    rs.last_error = r.last_error();
    const auto& u = r.last_update();
    rs.last_evaluation = u.time;
    rs.evaluation_time = u.duration;
    rs.last_samples = u.samples;
    rs.last_series_fetched = u.series_fetched ? static_cast<int64_t>(*u.series_fetched) : -1;
    rs.errors_total = r.errors_total();
    rs.pending = r.count(rules::AlertState::pending);
    rs.firing = r.count(rules::AlertState::firing);
    rs.debug = r.debug();
    rs.update_entries_limit = r.update_entries_limit();
    for (const auto& [id, a] : r.alerts()) {
      if (a.state == rules::AlertState::inactive) continue;
      rs.alerts.push_back(AlertSnapshot{a.id, a.state, a.labels, a.annotations, a.value,
                                        a.active_at, a.restored, a.stabilizing(),
                                        r.generator_url(a.id)});
    }
    snap->rules.push_back(std::move(rs));
  }
  deps.store.publish(std::move(snap));
}

}  // namespace app
