// Durations as rule files and flags write them: Prometheus syntax ("1h30m", "5m", "1d", "1w",
// "1y", "100ms") plus MetricsQL's forms ("1.5h", "-5m", a bare number of seconds "30").
// Formatting follows Go's time.Duration.String ("5m0s", "1h30m0s", "1.5s", "0s").
#pragma once

#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/time.hpp"

namespace core {

[[nodiscard]] Result<Duration> parse_duration(std::string_view text);
[[nodiscard]] std::string format_go_duration(Duration d);

}  // namespace core
