#include "app/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <memory>

#include "app/api.hpp"

namespace app {
namespace {

std::string_view level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return "debug";
    case spdlog::level::info: return "info";
    case spdlog::level::warn: return "warn";
    case spdlog::level::err: return "error";
    case spdlog::level::critical: return "fatal";
    case spdlog::level::off:
    case spdlog::level::n_levels: break;
  }
  return "info";
}

// Go's "2006-01-02T15:04:05.000Z0700": always three fractional digits, then "Z" for UTC or
// the offset as "+0100".
void append_timestamp(std::string& out, core::TimePoint ts, bool local_time) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(ts.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(ms.count() / 1000);
  long frac = static_cast<long>(ms.count() % 1000);
  std::tm tm{};
  if (local_time) {
    ::localtime_r(&secs, &tm);
  } else {
    ::gmtime_r(&secs, &tm);
  }
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ld", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  out.append(buf, static_cast<size_t>(n));
  const long off = local_time ? tm.tm_gmtoff : 0;
  if (off == 0) {
    out += 'Z';
  } else {
    const long a = off < 0 ? -off : off;
    n = std::snprintf(buf, sizeof buf, "%c%02ld%02ld", off < 0 ? '-' : '+', a / 3600,
                      (a % 3600) / 60);
    out.append(buf, static_cast<size_t>(n));
  }
}

// "app/daemon.cpp:145" from __FILE__ (which may be absolute or "../app/daemon.cpp"): the last
// two path components, as VictoriaMetrics strips everything up to its repository root.
std::string caller_of(const spdlog::source_loc& loc) {
  if (loc.empty()) return "alertd";
  std::string_view file = loc.filename;
  if (const size_t last = file.rfind('/'); last != std::string_view::npos && last > 0) {
    if (const size_t prev = file.rfind('/', last - 1); prev != std::string_view::npos) {
      file.remove_prefix(prev + 1);
    }
  }
  return std::string(file) + ":" + std::to_string(loc.line);
}

// Drops or marks error/warn lines over the per-second limits, then hands them to `inner`.
class RateLimitedSink final : public spdlog::sinks::sink {
 public:
  RateLimitedSink(spdlog::sink_ptr inner, LogRateLimits limits)
      : inner_(std::move(inner)), limiter_(limits) {}

  // spdlog::sinks::sink
  void log(const spdlog::details::log_msg& msg) override {
    const int64_t second =
        std::chrono::duration_cast<std::chrono::seconds>(msg.time.time_since_epoch()).count();
    const auto prefix = limiter_.admit(level_name(msg.level), caller_of(msg.source), second);
    if (!prefix) return;
    if (prefix->empty()) {
      inner_->log(msg);
      return;
    }
    const std::string text = *prefix + std::string(msg.payload.data(), msg.payload.size());
    spdlog::details::log_msg marked = msg;
    marked.payload = spdlog::string_view_t(text.data(), text.size());
    inner_->log(marked);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  spdlog::sink_ptr inner_;
  LogLimiter limiter_;
};

class VmFormatter final : public spdlog::formatter {
 public:
  explicit VmFormatter(LogLayout layout) : layout_(layout) {}

  // spdlog::formatter
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto ts = core::TimePoint{std::chrono::duration_cast<core::TimePoint::duration>(
        msg.time.time_since_epoch())};
    const std::string line =
        format_log_line(layout_, ts, level_name(msg.level), caller_of(msg.source),
                        std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(line.data(), line.data() + line.size());
  }
  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<VmFormatter>(layout_);
  }

 private:
  LogLayout layout_;
};

spdlog::level::level_enum to_level(const std::string& level) {
  if (level == "DEBUG") return spdlog::level::debug;
  if (level == "WARN") return spdlog::level::warn;
  if (level == "ERROR") return spdlog::level::err;
  if (level == "FATAL" || level == "PANIC") return spdlog::level::critical;
  return spdlog::level::info;
}

}  // namespace

std::optional<std::string> LogLimiter::admit(std::string_view level, std::string_view caller,
                                             int64_t unix_second) {
  const uint64_t limit = level == "error" ? limits_.errors_per_second
                         : level == "warn" ? limits_.warns_per_second
                                           : 0;
  if (limit == 0) return std::string();
  std::lock_guard lock(mu_);
  if (unix_second != second_) {
    // VictoriaMetrics resets its counts every second.
    counts_.clear();
    second_ = unix_second;
  }
  uint64_t& n = counts_[std::string(caller)];
  if (n < limit) {
    ++n;
    return std::string();
  }
  if (n == limit) {
    ++n;
    return "suppressing log message with rate limit=" + std::to_string(limit) + ": ";
  }
  return std::nullopt;
}

LogContext log_context(std::string_view msg) {
  LogContext out;
  // The closing quote of a name: the first '"' followed by ':', ';', ' ' or the end.
  auto quoted = [](std::string_view s, std::string_view& name) -> size_t {
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '"') continue;
      if (i + 1 == s.size() || s[i + 1] == ':' || s[i + 1] == ';' || s[i + 1] == ' ') {
        name = s.substr(0, i);
        return i + 1;
      }
    }
    return std::string_view::npos;
  };
  constexpr std::string_view kGroup = "group \"";
  constexpr std::string_view kRule = ": rule \"";
  if (!msg.starts_with(kGroup)) return out;
  std::string_view group;
  const size_t end = quoted(msg.substr(kGroup.size()), group);
  if (end == std::string_view::npos) return out;
  out.group = group;
  const std::string_view rest = msg.substr(kGroup.size() + end);
  if (rest.starts_with(kRule)) {
    std::string_view rule;
    if (quoted(rest.substr(kRule.size()), rule) != std::string_view::npos) out.rule = rule;
  }
  return out;
}

std::string limit_log_text(std::string_view s, size_t max) {
  max = std::max<size_t>(max, 4);
  if (s.size() <= max) return std::string(s);
  const size_t n = max / 2 - 1;
  std::string out;
  out.reserve(2 * n + 2);
  out.append(s.substr(0, n)).append("..").append(s.substr(s.size() - n));
  return out;
}

std::string format_log_line(const LogLayout& layout, core::TimePoint ts, std::string_view level,
                            std::string_view caller, std::string_view msg) {
  std::string shortened;
  if (layout.max_arg_len > 0 && msg.size() > layout.max_arg_len) {
    shortened = limit_log_text(msg, layout.max_arg_len);
    msg = shortened;
  }
  while (!msg.empty() && msg.back() == '\n') msg.remove_suffix(1);
  std::string line;
  line.reserve(msg.size() + caller.size() + 64);
  if (layout.json) {
    line += '{';
    if (layout.timestamps) {
      append_json_string(line, layout.ts_key);
      line += ":\"";
      append_timestamp(line, ts, layout.local_time);
      line += "\",";
    }
    append_json_string(line, layout.level_key);
    line += ':';
    append_json_string(line, level);
    line += ',';
    append_json_string(line, layout.caller_key);
    line += ':';
    append_json_string(line, caller);
    line += ',';
    if (const LogContext ctx = log_context(msg); ctx.group) {
      line += "\"group\":";
      append_json_string(line, *ctx.group);
      line += ',';
      if (ctx.rule) {
        line += "\"rule\":";
        append_json_string(line, *ctx.rule);
        line += ',';
      }
    }
    append_json_string(line, layout.msg_key);
    line += ':';
    append_json_string(line, msg);
    line += "}\n";
  } else {
    if (layout.timestamps) {
      append_timestamp(line, ts, layout.local_time);
      line += '\t';
    }
    line.append(level).append("\t").append(caller).append("\t").append(msg);
    line += '\n';
  }
  return line;
}

std::optional<std::string> setup_logging(const std::string& level, const std::string& format,
                                         const std::string& output, const std::string& timezone,
                                         bool disable_timestamps, const std::string& json_fields,
                                         LogRateLimits limits, int max_arg_len) {
  LogLayout layout;
  layout.json = format == "json";
  layout.max_arg_len = static_cast<size_t>(std::max(max_arg_len, 4));
  layout.timestamps = !disable_timestamps;
  // "ts:timestamp,msg:message" (checked by the flag parser).
  for (std::string_view rest = json_fields; !rest.empty();) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view field = item.substr(0, colon);
    const std::string name(item.substr(colon + 1));
    if (field == "ts") layout.ts_key = name;
    if (field == "level") layout.level_key = name;
    if (field == "caller") layout.caller_key = name;
    if (field == "msg") layout.msg_key = name;
  }
  if (timezone != "UTC") {
    layout.local_time = true;
    if (timezone != "Local") {
      // No tzdb in this libstdc++: the C library's TZ, checked against the zoneinfo files
      // first so that a typo fails at start as vmalert's does, not as silent UTC.
      const char* dir = std::getenv("TZDIR");
      const std::string path = std::string(dir != nullptr ? dir : "/usr/share/zoneinfo") + "/" +
                               timezone;
      if (timezone.find("..") != std::string::npos || ::access(path.c_str(), R_OK) != 0) {
        return "-loggerTimezone=" + timezone + ": unknown time zone (no " + path + ")";
      }
      ::setenv("TZ", timezone.c_str(), 1);
    }
    ::tzset();
  }
  spdlog::sink_ptr sink;
  if (output == "stdout") {
    sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  }
  if (limits.errors_per_second != 0 || limits.warns_per_second != 0) {
    sink = std::make_shared<RateLimitedSink>(std::move(sink), limits);
  }
  auto logger = std::make_shared<spdlog::logger>("alertd", std::move(sink));
  logger->set_formatter(std::make_unique<VmFormatter>(layout));
  logger->set_level(to_level(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return std::nullopt;
}

}  // namespace app
