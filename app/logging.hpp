// Logging set-up (-loggerLevel, -loggerFormat, -loggerOutput), with VictoriaMetrics' line
// layout (lib/logger) so that log pipelines built for vmalert keep working:
//   default: 2026-12-02T10:46:15.123Z\tinfo\tapp/daemon.cpp:145\tmessage
//   json:    {"ts":"2026-12-02T10:46:15.123Z","level":"info","caller":"app/daemon.cpp:145","msg":"message"}
// Levels are written lowercase as vmalert's: debug, info, warn, error, fatal. The caller is the
// source file:line when the call site passes it (SPDLOG_INFO(...) and friends), "alertd"
// otherwise. Log lines carry context as key=value pairs: group=, rule=, err=.
#pragma once

#include <string>
#include <string_view>

#include "core/time.hpp"

namespace app {

// Installs the default spdlog logger. level: INFO|WARN|ERROR|FATAL|PANIC (and DEBUG);
// format: default|json; output: stderr|stdout.
void setup_logging(const std::string& level, const std::string& format,
                   const std::string& output = "stderr");

// One log line, newline included (exposed for tests). `level` is vmalert's lowercase name;
// trailing newlines of `msg` are dropped.
[[nodiscard]] std::string format_log_line(bool json, core::TimePoint ts, std::string_view level,
                                          std::string_view caller, std::string_view msg);

}  // namespace app
