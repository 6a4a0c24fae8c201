// Group scheduling math (vmalert group.go).
#include "rules/group_math.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "core/time.hpp"

namespace {
using namespace std::chrono_literals;

core::TimePoint at(const char* rfc3339) {
  core::TimePoint t;
  REQUIRE(core::parse_rfc3339(rfc3339, t));
  return t;
}
}  // namespace

TEST_CASE("resolve_duration is 4 x max(interval, resendDelay), capped", "[rules][group]") {
  struct Case {
    core::Duration interval, resend, max, want;
  };
  const std::vector<Case> cases = {
      {1min, 0s, 0s, 4min},
      {30s, 5min, 0s, 20min},
      {1min, 0s, 90s, 90s},
      {10s, 0s, 10min, 40s},
  };
  for (const auto& c : cases) {
    CHECK(rules::resolve_duration(c.interval, c.resend, c.max) == c.want);
  }
}

TEST_CASE("go_truncate counts from Go's zero time", "[rules][group]") {
  // Divisors of a day agree with the Unix epoch.
  CHECK(rules::go_truncate(at("2026-12-02T10:46:17.5Z"), 1min) == at("2026-12-02T10:46:00Z"));
  CHECK(rules::go_truncate(at("2026-12-02T10:46:17Z"), 5s) == at("2026-12-02T10:46:15Z"));
  // 7s does not divide a day: year-1 based, 62135596800 % 7 = 3, so the grid is shifted.
  const auto t = at("2026-12-02T10:46:17Z");
  const int64_t unix_s = core::unix_seconds(t);
  const int64_t expected = unix_s - ((unix_s + 62135596800LL) % 7);
  CHECK(rules::go_truncate(t, 7s) == core::TimePoint{std::chrono::seconds{expected}});
  CHECK(rules::go_truncate(t, 0s) == t);
}

TEST_CASE("query_time applies eval_delay, then alignment", "[rules][group]") {
  struct Case {
    const char* name;
    const char* eval;
    core::Duration interval, delay;
    bool align;
    std::optional<core::Duration> offset;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"delay then align", "2026-12-02T10:47:06.8Z", 1min, 30s, true, {}, "2026-12-02T10:46:00Z"},
      {"align only", "2026-12-02T10:47:06.8Z", 10s, 0s, true, {}, "2026-12-02T10:47:00Z"},
      {"no alignment", "2026-12-02T10:47:06.8Z", 1min, 30s, false, {}, "2026-12-02T10:46:36.8Z"},
      {"offset: this interval", "2026-12-02T11:40:00Z", 1h, 30s, true, 30min, "2026-12-02T11:30:00Z"},
      {"offset: previous interval", "2026-12-02T11:20:00Z", 1h, 30s, true, 30min,
       "2026-12-02T10:30:00Z"},
      {"negative offset", "2026-12-02T11:50:00Z", 1h, 0s, true, -10min, "2026-12-02T11:50:00Z"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(rules::query_time(at(c.eval), c.interval, c.delay, c.align, c.offset) == at(c.want));
  }
}

TEST_CASE("start_delay spreads groups deterministically by ID", "[rules][group]") {
  const auto now = at("2026-12-02T10:00:00Z");  // a multiple of every interval below
  // Phase = id / 2^64 of the interval.
  CHECK(rules::start_delay(now, 0, 1min, 5min, {}) == 0s);
  CHECK(rules::start_delay(now, uint64_t{1} << 63, 1min, 5min, {}) == 30s);
  CHECK(rules::start_delay(now, uint64_t{1} << 62, 1min, 5min, {}) == 15s);
  // Capped by maxStartDelay.
  CHECK(rules::start_delay(now, uint64_t{1} << 63, 1h, 5min, {}) == 150s);
  // From an arbitrary now: lands on the same phase of the grid, within [0, d).
  const auto later = now + 40s;
  const auto d = rules::start_delay(later, uint64_t{1} << 63, 1min, 5min, {});
  CHECK(d == 50s);  // next :30 point
  for (uint64_t id : {uint64_t{1}, uint64_t{12047911435210440035ULL}, ~uint64_t{0}}) {
    const auto x = rules::start_delay(later + 123ms, id, 1min, 5min, {});
    CHECK(x >= 0s);
    CHECK(x < 1min);
  }
}

TEST_CASE("start_delay with eval_offset waits for the next offset point", "[rules][group]") {
  CHECK(rules::start_delay(at("2026-12-02T10:10:00Z"), 99, 1h, 5min, 30min) == 20min);
  CHECK(rules::start_delay(at("2026-12-02T10:40:00Z"), 99, 1h, 5min, 30min) == 50min);
  CHECK(rules::start_delay(at("2026-12-02T10:30:00Z"), 99, 1h, 5min, 30min) == 0s);
}

TEST_CASE("next_tick counts missed iterations", "[rules][group]") {
  const auto t0 = at("2026-12-02T10:00:00Z");
  auto t = rules::next_tick(t0, t0 + 10s + 3ms, 10s);
  CHECK(t.eval_ts == t0 + 10s);
  CHECK(t.missed == 0);
  CHECK_FALSE(t.reset);
  t = rules::next_tick(t0, t0 + 9s, 10s);  // ticker early: still one interval
  CHECK(t.eval_ts == t0 + 10s);
  CHECK(t.missed == 0);
  t = rules::next_tick(t0, t0 + 35s, 10s);  // a slow round: 2 intervals skipped
  CHECK(t.missed == 2);
  CHECK(t.eval_ts == t0 + 30s);
  t = rules::next_tick(t0, t0 - 1h, 10s);  // clock went back
  CHECK(t.reset);
  CHECK(t.eval_ts == t0 - 1h);
}
