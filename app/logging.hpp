// Logging set-up (-loggerLevel, -loggerFormat). Log lines carry context as key=value pairs:
// group=, rule=, err=. JSON format writes one object per line with escaped fields.
#pragma once

#include <string>

namespace app {

// Installs the default spdlog logger on stderr. level: INFO|WARN|ERROR|FATAL|PANIC|DEBUG;
// format: default|json.
void setup_logging(const std::string& level, const std::string& format);

}  // namespace app
