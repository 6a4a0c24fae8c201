#include "core/duration.hpp"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;

TEST_CASE("durations parse in Prometheus and MetricsQL forms", "[core]") {
  struct Case {
    std::string text;
    core::Duration want;
  };
  const std::vector<Case> cases = {
      {"5m", 5min},         {"1h30m", 90min},   {"1.5h", 90min},      {"30s", 30s},
      {"100ms", 100ms},     {"1d", 24h},        {"1w", 7 * 24h},      {"1y", 365 * 24h},
      {"0s", 0s},           {"-5m", -5min},     {"30", 30s},          {"1m30s", 90s},
      {"0.5", 500ms},       {"1ms", 1ms},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto d = core::parse_duration(c.text);
    REQUIRE(d.has_value());
    CHECK(*d == c.want);
  }
}

TEST_CASE("bad durations name the text", "[core]") {
  for (std::string text : {"", "abc", "5x", "m", "1h-", "-"}) {
    INFO(text);
    auto d = core::parse_duration(text);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().message.find("cannot parse duration") != std::string::npos);
  }
}

TEST_CASE("durations format like Go's time.Duration", "[core]") {
  CHECK(core::format_go_duration(0s) == "0s");
  CHECK(core::format_go_duration(5min) == "5m0s");
  CHECK(core::format_go_duration(90min) == "1h30m0s");
  CHECK(core::format_go_duration(1500ms) == "1.5s");
  CHECK(core::format_go_duration(12ms) == "12ms");
  CHECK(core::format_go_duration(1500us) == "1.5ms");
  CHECK(core::format_go_duration(2us) == "2\xc2\xb5s");
  CHECK(core::format_go_duration(7ns) == "7ns");
  CHECK(core::format_go_duration(-90s) == "-1m30s");
  CHECK(core::format_go_duration(26h + 3min + 4s) == "26h3m4s");
}
