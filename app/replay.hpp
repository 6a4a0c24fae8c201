// app::Replayer: vmalert's replay mode (vmalert.md §8, replay.go and group.go `Replay`).
// Backfills what the rules would have written over [from, to]: range queries against the
// datasource, each answer applied point by point to the same rules::RecordingRule /
// rules::AlertingRule the daemon runs, the series written through a datasource::SeriesWriter
// (remote write).
//
// Contract:
//   - Groups one after another, in file order; within a group, rules one after another, with
//     -replay.rulesDelay after each (so a chained rule reads what the previous one wrote).
//   - A rule's time is split into ranges of at most -replay.maxDatapointsPerQuery points of the
//     group interval (split_replay_range: consecutive ranges share their boundary point, as
//     vmalert's rangeIterator does; the shared point is applied once).
//   - Each answer is applied at every point of the range grid (start + k*interval), in time
//     order, so `for`, resets on gaps and staleness markers come out as live evaluation would
//     have produced them at those times. Alerting rules write ALERTS / ALERTS_FOR_STATE, never
//     notifications. The group `limit` is ignored (as in vmalert); templates' `query` fails.
//   - -replay.ruleEvaluationConcurrency > 1 runs that many ranges of one rule at once, each on a
//     fresh copy of the rule seeded with the range's first point (the previous range's last);
//     alerting rules, whose state spans ranges (`for`, and activeAt even with `for: 0`), run one
//     range at a time.
//   - A failed range query is tried -replay.ruleRetryAttempts times in all, 1 s apart (HTTP 400
//     and 422 and config errors are not retried). When every attempt fails the replay stops,
//     or with -replay.continueWithExecutionErr the range is skipped, counted and reported.
//   - Everything runs on the clock's loop; time (retry waits, rules delay) comes from the
//     injected app::Clock, so tests run a replay on fakes::ManualLoop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/clock.hpp"
#include "config/model.hpp"
#include "core/error.hpp"
#include "core/query_result.hpp"
#include "core/time.hpp"
#include "datasource/querier.hpp"
#include "datasource/series_writer.hpp"
#include "rules/group.hpp"

namespace app {

struct ReplayOptions {
  core::TimePoint from{};  // -replay.timeFrom
  core::TimePoint to{};    // -replay.timeTo (default: now)
  core::Duration rules_delay = std::chrono::seconds(1);  // -replay.rulesDelay
  int max_datapoints = 1000;                             // -replay.maxDatapointsPerQuery
  int retry_attempts = 5;                                // -replay.ruleRetryAttempts
  int rule_concurrency = 1;                              // -replay.ruleEvaluationConcurrency
  bool continue_on_error = false;                        // -replay.continueWithExecutionErr
  core::Duration retry_delay = std::chrono::seconds(1);  // between attempts (vmalert: 1s)
};

// The option checks vmalert makes before starting (bounds, to after from).
[[nodiscard]] core::Result<void> check_replay_options(const ReplayOptions& o);

// One range request: [start, end], both included.
struct ReplayRange {
  core::TimePoint start{};
  core::TimePoint end{};
  bool operator==(const ReplayRange&) const = default;
};

// vmalert's rangeIterator: [from, from+step], [from+step, from+2*step], ..., the last one
// clipped to `to`. Empty when `to` is not after `from`.
[[nodiscard]] std::vector<ReplayRange> split_replay_range(core::TimePoint from, core::TimePoint to,
                                                          core::Duration step);

// The points at which a range answer is applied, in ms, ascending: the grid start + k*step up to
// end, plus any sample timestamp of `matrix` inside the range off that grid; only those after
// `after_ms`.
[[nodiscard]] std::vector<int64_t> replay_points(const core::QueryResult& matrix,
                                                 const ReplayRange& range, core::Duration step,
                                                 int64_t after_ms);

// The instant answer at `ts_ms` cut from a matrix: every series with a sample at exactly that
// time, with that sample. `cursors` (one per series, start at 0) make a pass over ascending
// times linear; `out` is cleared first.
void slice_matrix_at(const core::QueryResult& matrix, std::vector<size_t>& cursors, int64_t ts_ms,
                     core::QueryResult& out);

// What the replay tells the person running it (vmalert prints to stdout, its bar to stderr).
class ReplayProgress {
 public:
  virtual ~ReplayProgress() = default;
  virtual void group_started(const config::GroupSpec& group, size_t requests,
                             core::Duration max_range) = 0;
  virtual void rule_started(const rules::Rule& rule, size_t requests) = 0;
  virtual void range_done(size_t done, size_t total) = 0;
  virtual void rule_done() = 0;
};

// "12 / 27 [=========>----------] 44.44%" in `width` columns of bar.
[[nodiscard]] std::string format_progress_bar(size_t done, size_t total, size_t width);

// vmalert's console output: group and rule headers on `out`, and unless `bar` is false a
// progress bar redrawn in place on `err`.
[[nodiscard]] std::unique_ptr<ReplayProgress> make_console_progress(std::FILE* out,
                                                                    std::FILE* err, bool bar);

struct ReplaySummary {
  size_t groups = 0;
  size_t rules = 0;
  size_t requests = 0;       // range queries answered (retries not counted)
  size_t failed_ranges = 0;  // skipped with -replay.continueWithExecutionErr
  uint64_t rows = 0;         // series samples handed to the writer (stale markers included)
  std::vector<std::string> errors;    // one line per failed range
  std::optional<core::Error> fatal;   // the error that stopped the replay
};

struct ReplayDeps {
  Clock& clock;
  datasource::RangeQuerierFactory& queriers;
  datasource::SeriesWriter& writer;
  // Backpressure: called after each chunk of rows written; calls its argument (on the loop)
  // once the writer can take more. Empty: go on at once.
  std::function<void(std::function<void()>)> wait_for_room;
  // The largest chunk handed to the writer at once (0: a range's rows in one call).
  size_t max_write_rows = 0;
  ReplayProgress* progress = nullptr;  // may be null
  // Failed attempts and skipped ranges, for the log; may be empty.
  std::function<void(std::string_view)> log_error;
};

class Replayer {
 public:
  Replayer(ReplayDeps deps, ReplayOptions options);
  ~Replayer();
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  // Starts the replay on the clock's loop; `done` runs there with the summary. `ctx` is the
  // daemon's group context (external labels, URL); series are always built.
  void run(std::vector<config::GroupSpec> groups, rules::GroupContext ctx,
           std::function<void(ReplaySummary)> done);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace app
