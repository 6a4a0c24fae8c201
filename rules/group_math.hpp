// Group scheduling math (vmalert app/vmalert/rule/group.go), pure: every time is an argument.
//
// A group runner does, with the wall clock `now` read at the edge:
//   auto eval_ts = now + start_delay(now, group.id, interval, max_start_delay, eval_offset);
//   sleep until eval_ts; loop {
//     ts = query_time(eval_ts, interval, eval_delay, eval_alignment, eval_offset);
//     evaluate rules at ts; send with resolve_duration(interval, resend_delay, max_resolve);
//     sleep one interval (a ticker); tick = next_tick(eval_ts, wall_now, interval);
//     missed_total += tick.missed > 0 ? 1 : 0; eval_ts = tick.eval_ts; }
#pragma once

#include <cstdint>
#include <optional>

#include "core/time.hpp"

namespace rules {

// Go's time.Time.Truncate: rounds t down to a multiple of d since Go's zero time
// (0001-01-01 UTC), which differs from the Unix epoch for intervals that do not divide a day.
// d <= 0 returns t unchanged.
[[nodiscard]] core::TimePoint go_truncate(core::TimePoint t, core::Duration d);

// 4 x max(interval, resend_delay), capped by max_resolve when max_resolve > 0.
[[nodiscard]] core::Duration resolve_duration(core::Duration interval, core::Duration resend_delay,
                                              core::Duration max_resolve);

// The query timestamp for an evaluation at eval_ts (vmalert adjustReqTimestamp):
// - with eval_offset: the offset point of eval_ts's interval (go_truncate(eval_ts) + offset),
//   or of the previous interval when eval_ts is before it; eval_delay and alignment ignored;
// - else eval_ts - eval_delay, then go_truncate'd to the interval when eval_alignment.
// A negative eval_offset means interval - |offset|.
[[nodiscard]] core::TimePoint query_time(core::TimePoint eval_ts, core::Duration interval,
                                         core::Duration eval_delay, bool eval_alignment,
                                         std::optional<core::Duration> eval_offset);

// Delay before the group's first evaluation, from `now`:
// - with eval_offset: until the next offset point (now itself if it is one);
// - else a deterministic spread from the group ID over d = min(interval, max_start_delay)
//   (max_start_delay <= 0 means interval): the phase id/2^64 * d, reached from now's phase
//   (now mod d since the Unix epoch); the result is in [0, d).
[[nodiscard]] core::Duration start_delay(core::TimePoint now, uint64_t group_id,
                                         core::Duration interval, core::Duration max_start_delay,
                                         std::optional<core::Duration> eval_offset);

struct NextTick {
  core::TimePoint eval_ts{};
  int64_t missed = 0;  // whole intervals skipped (vmalert_iteration_missed_total += missed>0)
  bool reset = false;  // wall clock went backward: eval_ts restarts at now
                       // (vmalert_iteration_reset_total += 1)
};

// Called when the ticker fires at wall time `now` after the evaluation at prev_eval_ts:
// missed = (now - prev_eval_ts) / interval - 1 (clamped at 0), eval_ts advances by
// (missed + 1) intervals. If now < prev_eval_ts the clock moved back: eval_ts = now, reset.
[[nodiscard]] NextTick next_tick(core::TimePoint prev_eval_ts, core::TimePoint now,
                                 core::Duration interval);

}  // namespace rules
