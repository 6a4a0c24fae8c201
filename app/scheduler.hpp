// app::GroupScheduler: drives one rules::Group's rounds on the loop (vmalert's group.Start):
// start jitter or eval_offset, then a round every interval. A round queries every rule, up to
// the group's concurrency at once, hands each answer to the group (rules/group.cpp), and sends
// what comes out to the notifiers and the series writer. Time and timers come from an injected
// app::Clock, so a test runs an hour of rounds in milliseconds.
//
// Threads: everything runs on the loop's thread, except rules whose templates call `query`:
// those are applied on the group's own worker thread (one per such group, so a slow datasource
// delays only that group), while the loop keeps running.
//
// Missed ticks: a tick that passes while a round is still running (other than the one the next
// round starts on) is counted in vmalert_iteration_missed_total when it passes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/clock.hpp"
#include "app/metrics.hpp"
#include "app/notifier_set.hpp"
#include "app/snapshot.hpp"
#include "app/state_file.hpp"
#include "core/query_result.hpp"
#include "datasource/querier.hpp"
#include "datasource/series_writer.hpp"
#include "rules/group.hpp"

namespace app {

// Runs blocking jobs off the loop, one at a time, in order (templates that call `query`).
class Worker {
 public:
  virtual ~Worker() = default;
  virtual void run(std::function<void()> job) = 0;
};

struct SchedulerDeps {
  Clock& clock;
  NotifierSet& notifiers;
  datasource::SeriesWriter& series;
  SnapshotStore& store;
  GlobalCounters& counters;
  StateSink* state = nullptr;  // -state.path; null: not kept
};

struct SchedulerOptions {
  core::Duration max_start_delay = std::chrono::minutes(5);  // -group.maxStartDelay
  core::Duration query_timeout = std::chrono::seconds(30);   // bounds a template's `query` wait
  // Start at once instead of after the jitter (tests; a group replaced on reload keeps vmalert's
  // jitter).
  bool skip_start_delay = false;
};

class GroupScheduler : public std::enable_shared_from_this<GroupScheduler> {
 public:
  // `worker` may be null when no rule's templates call `query`.
  GroupScheduler(std::unique_ptr<rules::Group> group,
                 std::unique_ptr<datasource::Querier> querier, std::unique_ptr<Worker> worker,
                 SchedulerDeps deps, SchedulerOptions options);
  ~GroupScheduler();

  // Before start(): restore alert state from `remote_read` (vmalert.md §6) before the first
  // round, so an alert whose `for` has elapsed comes back firing on that round.
  void restore_before_first_round(std::unique_ptr<datasource::Querier> remote_read,
                                  core::Duration lookback);
  // Publishes the initial snapshot and arms the first round.
  void start();
  // Replaces the group with `newer` (same ID) before the next round: matching rules keep their
  // state (rules::Group::update_from). Applied at once when no round runs.
  void update(std::unique_ptr<rules::Group> newer, std::unique_ptr<datasource::Querier> querier,
              std::unique_ptr<Worker> worker);
  // Stops: no new round or rule starts; `stopped` runs on the loop once nothing of this group is
  // in flight any more (a running query ends by its timeout at the latest). With `close`, the
  // group's rules are closed first: their alerts resolved and sent, their series marked stale.
  void stop(std::function<void()> stopped, bool close = false);

  [[nodiscard]] uint64_t id() const;
  [[nodiscard]] const config::GroupSpec& spec() const;
  [[nodiscard]] bool round_running() const { return in_flight_ > 0 || round_active_; }

 private:
  struct Slot;
  void begin_round(core::TimePoint eval_ts);
  void restore_next(size_t i);
  void launch(size_t i);
  void on_answer(size_t i, std::optional<core::Error> err);
  [[nodiscard]] rules::RuleOutput evaluate(size_t i);
  void deliver(size_t i, rules::RuleOutput out);
  void rule_done(size_t i);
  [[nodiscard]] std::unique_ptr<core::QueryResult> take_result();
  void give_back_result(std::unique_ptr<core::QueryResult> r);
  void end_round();
  void arm_next_round();
  void arm_miss_watch(core::TimePoint at);
  void apply_pending_update();
  void finish_stop();
  void publish();
  void publish_counters();
  void reset_slots();
  [[nodiscard]] templates::TemplateEnv template_env(core::TimePoint query_ts);
  [[nodiscard]] const std::string& where(size_t i) const;

  std::unique_ptr<rules::Group> group_;
  std::unique_ptr<datasource::Querier> querier_;
  std::unique_ptr<Worker> worker_;
  SchedulerDeps deps_;
  SchedulerOptions options_;
  std::unique_ptr<Timer> round_timer_;
  std::unique_ptr<Timer> miss_timer_;
  std::vector<std::unique_ptr<Slot>> slots_;
  // Results not in use (at most the group's concurrency); see Slot::result.
  std::vector<std::unique_ptr<core::QueryResult>> result_pool_;
  static constexpr size_t kKeepResultBytes = 1 << 20;

  // The round in progress.
  bool round_active_ = false;
  rules::RoundTimes times_{};
  size_t next_rule_ = 0;
  size_t in_flight_ = 0;
  std::chrono::steady_clock::time_point round_started_{};

  // Remote-read restore, before the first round.
  std::unique_ptr<datasource::Querier> restore_querier_;
  core::Duration restore_lookback_{};
  core::QueryResult restore_result_;
  bool restoring_ = false;
  std::optional<core::TimePoint> round_waiting_;  // a tick that came while restoring

  // Scheduling state.
  bool started_ = false;
  bool stopping_ = false;
  bool close_on_stop_ = false;
  std::function<void()> on_stopped_;
  core::TimePoint last_eval_ts_{};
  bool has_last_eval_ = false;
  struct PendingUpdate;
  std::unique_ptr<PendingUpdate> pending_;

  std::shared_ptr<const GroupSnapshot> last_snapshot_;
  // Counters for the snapshot.
  uint64_t iterations_ = 0;
  uint64_t missed_ = 0;
  uint64_t resets_ = 0;
  double iteration_seconds_ = 0;
  RecentQuantiles iteration_quantiles_;
};

}  // namespace app
