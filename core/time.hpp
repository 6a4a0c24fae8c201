// Time vocabulary. Go's time.Time and time.Duration are nanosecond based, and templates print
// them exactly like Go, so alertd keeps nanoseconds too. Pure code receives TimePoints as
// arguments; only app/ and net/ read the wall clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace core {

using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, std::chrono::nanoseconds>;

inline TimePoint from_unix_ms(int64_t ms) { return TimePoint{std::chrono::milliseconds{ms}}; }
inline TimePoint from_unix_seconds(double s) {
  return TimePoint{Duration{static_cast<int64_t>(s * 1e9)}};
}
inline int64_t unix_ms(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
inline int64_t unix_seconds(TimePoint t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

// RFC 3339 in UTC with second precision: "2026-12-02T10:46:15Z" (vmalert's query `time`).
std::string format_rfc3339_seconds(TimePoint t);
// RFC 3339 in UTC with Go's RFC3339Nano trimming: "2026-12-02T10:47:06.846344494Z",
// trailing zeros of the fraction dropped, no fraction when it is zero.
std::string format_rfc3339_nano(TimePoint t);
// Appends format_rfc3339_nano(t) to out without a temporary string.
void append_rfc3339_nano(std::string& out, TimePoint t);
// Writes format_rfc3339_nano(t) into `buf` (kRfc3339NanoMax bytes); returns its length.
inline constexpr size_t kRfc3339NanoMax = 48;
size_t put_rfc3339_nano(char* buf, TimePoint t);
// Parses RFC 3339 ("2023-11-14T22:13:20Z", "...T22:13:20.5+01:00"). Returns false on error.
bool parse_rfc3339(std::string_view text, TimePoint& out);

}  // namespace core
