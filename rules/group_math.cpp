#include "rules/group_math.hpp"

#include <algorithm>

namespace rules {
namespace {

// Seconds from Go's zero time (0001-01-01T00:00:00Z) to the Unix epoch (Go's unixToInternal).
constexpr int64_t kZeroToUnixSeconds = 62135596800LL;

__extension__ typedef __int128 Int128;

}  // namespace

core::TimePoint go_truncate(core::TimePoint t, core::Duration d) {
  if (d <= core::Duration::zero()) return t;
  const Int128 abs_ns = static_cast<Int128>(t.time_since_epoch().count()) +
                        static_cast<Int128>(kZeroToUnixSeconds) * 1'000'000'000;
  Int128 rem = abs_ns % static_cast<Int128>(d.count());
  if (rem < 0) rem += d.count();
  return t - core::Duration{static_cast<int64_t>(rem)};
}

core::Duration resolve_duration(core::Duration interval, core::Duration resend_delay,
                                core::Duration max_resolve) {
  const core::Duration delta = std::max(interval, resend_delay);
  core::Duration d = delta * 4;
  if (max_resolve > core::Duration::zero() && d > max_resolve) d = max_resolve;
  return d;
}

namespace {
core::Duration normalized_offset(core::Duration offset, core::Duration interval) {
  return offset < core::Duration::zero() ? interval + offset : offset;
}
}  // namespace

core::TimePoint query_time(core::TimePoint eval_ts, core::Duration interval,
                           core::Duration eval_delay, bool eval_alignment,
                           std::optional<core::Duration> eval_offset) {
  if (eval_offset) {
    const core::TimePoint point =
        go_truncate(eval_ts, interval) + normalized_offset(*eval_offset, interval);
    // Before this interval's offset point: the round belongs to the previous interval.
    return eval_ts < point ? point - interval : point;
  }
  core::TimePoint ts = eval_ts - eval_delay;
  if (eval_alignment) ts = go_truncate(ts, interval);
  return ts;
}

core::Duration start_delay(core::TimePoint now, uint64_t group_id, core::Duration interval,
                           core::Duration max_start_delay,
                           std::optional<core::Duration> eval_offset) {
  if (interval <= core::Duration::zero()) return core::Duration::zero();
  if (eval_offset) {
    const core::TimePoint point =
        go_truncate(now, interval) + normalized_offset(*eval_offset, interval);
    return point < now ? point + interval - now : point - now;
  }
  core::Duration d = interval;
  if (max_start_delay > core::Duration::zero() && d > max_start_delay) d = max_start_delay;
  // vmalert: time.Duration(float64(interval) * (float64(id) / (1 << 64))).
  const double phase = static_cast<double>(group_id) / 18446744073709551616.0;
  core::Duration rand_sleep{static_cast<int64_t>(static_cast<double>(d.count()) * phase)};
  int64_t now_phase = now.time_since_epoch().count() % d.count();
  if (now_phase < 0) now_phase += d.count();
  const core::Duration sleep_offset{now_phase};
  if (rand_sleep < sleep_offset) rand_sleep += d;
  rand_sleep -= sleep_offset;
  if (rand_sleep >= d) rand_sleep -= d;  // float rounding at the very top of the range
  return rand_sleep;
}

NextTick next_tick(core::TimePoint prev_eval_ts, core::TimePoint now, core::Duration interval) {
  NextTick t;
  if (interval <= core::Duration::zero()) {
    t.eval_ts = now;
    return t;
  }
  if (now < prev_eval_ts) {
    t.eval_ts = now;
    t.reset = true;
    return t;
  }
  int64_t missed = (now - prev_eval_ts) / interval - 1;
  if (missed < 0) missed = 0;
  t.missed = missed;
  t.eval_ts = prev_eval_ts + interval * (missed + 1);
  return t;
}

}  // namespace rules
