// Logging set-up (-loggerLevel, -loggerFormat, -loggerOutput), with VictoriaMetrics' line
// layout (lib/logger) so that log pipelines built for vmalert keep working:
//   default: 2026-12-02T10:46:15.123Z\tinfo\tapp/daemon.cpp:145\tmessage
//   json:    {"ts":"2026-12-02T10:46:15.123Z","level":"info","caller":"app/daemon.cpp:145","msg":"message"}
// Levels are written lowercase as vmalert's: debug, info, warn, error, fatal. The caller is the
// source file:line when the call site passes it (SPDLOG_INFO(...) and friends), "alertd"
// otherwise; errors and warnings are logged with SPDLOG_ERROR/SPDLOG_WARN, so that the caller
// is real and the per-second limits count per place in the code, as vmalert's. Log lines
// carry context as key=value pairs: group=, rule=, err=.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/time.hpp"

namespace app {

// How log lines look: -loggerFormat, -loggerTimezone, -loggerDisableTimestamps.
struct LogLayout {
  bool json = false;
  bool timestamps = true;
  // false: UTC ("...Z"); true: the process' TZ (set by setup_logging from -loggerTimezone),
  // written with its offset ("...+0100"), as Go's "2006-01-02T15:04:05.000Z0700".
  bool local_time = false;
  // -loggerJSONFields: the JSON names of the four fields.
  std::string ts_key = "ts";
  std::string level_key = "level";
  std::string caller_key = "caller";
  std::string msg_key = "msg";
  // -loggerMaxArgLen (0: no limit): longer messages are shortened by limit_log_text.
  size_t max_arg_len = 0;
};

// VictoriaMetrics' stringsutil.LimitStringLen, which its logger applies to every string
// argument longer than -loggerMaxArgLen: the first and last max/2-1 bytes joined by "..".
// A `max` below 4 counts as 4. alertd applies it to the formatted message in one place (the
// log formatter): its messages carry one long user-controlled part (a response body, a query,
// a URL, an error text) after a short context prefix, which the head keeps.
[[nodiscard]] std::string limit_log_text(std::string_view s, size_t max);

// -loggerErrorsPerSecondLimit / -loggerWarnsPerSecondLimit (0 = no limit).
struct LogRateLimits {
  uint64_t errors_per_second = 0;
  uint64_t warns_per_second = 0;
};

// VictoriaMetrics' lib/logger rate limit: per place in the code ("file:line", the caller) and
// per second, at most `limit` error (or warn) lines; the next one is written with the prefix
// "suppressing log message with rate limit=N: ", the rest of that second are dropped. Other
// levels pass. Thread-safe; the second is a parameter (tests need no clock).
class LogLimiter {
 public:
  explicit LogLimiter(LogRateLimits limits) : limits_(limits) {}
  // nullopt: drop the line; otherwise the prefix to write before it ("" mostly).
  [[nodiscard]] std::optional<std::string> admit(std::string_view level, std::string_view caller,
                                                 int64_t unix_second);

 private:
  LogRateLimits limits_;
  std::mutex mu_;
  int64_t second_ = 0;
  std::unordered_map<std::string, uint64_t> counts_;
};

// Installs the default spdlog logger. level: INFO|WARN|ERROR|FATAL|PANIC (and DEBUG);
// format: default|json; output: stderr|stdout; timezone: UTC, Local or an IANA name found in
// the system's zoneinfo; json_fields: -loggerJSONFields ("ts:timestamp,msg:message"). Returns an
// error (and installs nothing) for an unknown time zone.
[[nodiscard]] std::optional<std::string> setup_logging(const std::string& level,
                                                       const std::string& format,
                                                       const std::string& output = "stderr",
                                                       const std::string& timezone = "UTC",
                                                       bool disable_timestamps = false,
                                                       const std::string& json_fields = "",
                                                       LogRateLimits limits = {},
                                                       int max_arg_len = 1000);

// The group and rule a log message is about, read from its `group "g": rule "r": ...` prefix
// (how alertd's messages about a group or rule begin). JSON lines carry them as "group" and
// "rule" fields between "caller" and the message, which keeps its prefix.
struct LogContext {
  std::optional<std::string_view> group;
  std::optional<std::string_view> rule;
};
[[nodiscard]] LogContext log_context(std::string_view msg);

// One log line, newline included (exposed for tests). `level` is vmalert's lowercase name;
// trailing newlines of `msg` are dropped.
[[nodiscard]] std::string format_log_line(const LogLayout& layout, core::TimePoint ts,
                                          std::string_view level, std::string_view caller,
                                          std::string_view msg);
[[nodiscard]] inline std::string format_log_line(bool json, core::TimePoint ts,
                                                 std::string_view level, std::string_view caller,
                                                 std::string_view msg) {
  LogLayout layout;
  layout.json = json;
  return format_log_line(layout, ts, level, caller, msg);
}

}  // namespace app
