#include "core/time.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

TEST_CASE("RFC 3339 formatting and parsing", "[core]") {
  const auto t = core::from_unix_ms(1700000000123);
  CHECK(core::format_rfc3339_seconds(t) == "2023-11-14T22:13:20Z");
  CHECK(core::format_rfc3339_nano(t) == "2023-11-14T22:13:20.123Z");
  CHECK(core::format_rfc3339_nano(core::from_unix_ms(1700000000000)) == "2023-11-14T22:13:20Z");
  core::TimePoint p;
  REQUIRE(core::parse_rfc3339("2023-11-14T22:13:20Z", p));
  CHECK(core::unix_ms(p) == 1700000000000);
  REQUIRE(core::parse_rfc3339("2023-11-14T23:13:20.5+01:00", p));
  CHECK(core::unix_ms(p) == 1700000000500);
  CHECK_FALSE(core::parse_rfc3339("yesterday", p));
  CHECK_FALSE(core::parse_rfc3339("2023-13-14T22:13:20Z", p));
}

TEST_CASE("rfc3339 nano: digits written by hand as Go's RFC3339Nano", "[core][time]") {
  using namespace std::chrono_literals;
  struct Case {
    core::TimePoint t;
    const char* want;
  };
  const core::TimePoint base = core::from_unix_ms(1'764'672'426'846);
  const std::vector<Case> cases = {
      {core::TimePoint{}, "1970-01-01T00:00:00Z"},
      {base + 344494ns, "2025-12-02T10:47:06.846344494Z"},
      {base, "2025-12-02T10:47:06.846Z"},
      {core::TimePoint{} + 1ns, "1970-01-01T00:00:00.000000001Z"},
      {core::TimePoint{} + 100ms, "1970-01-01T00:00:00.1Z"},
      {core::from_unix_ms(951'782'399'000), "2000-02-28T23:59:59Z"},
      {core::from_unix_ms(951'868'800'000), "2000-03-01T00:00:00Z"},
      {core::from_unix_ms(4'102'444'799'999), "2099-12-31T23:59:59.999Z"},
  };
  for (const auto& c : cases) {
    CHECK(core::format_rfc3339_nano(c.t) == c.want);
    char buf[core::kRfc3339NanoMax];
    CHECK(std::string(buf, core::put_rfc3339_nano(buf, c.t)) == c.want);
  }
  CHECK(core::format_rfc3339_seconds(base + 344494ns) == "2025-12-02T10:47:06Z");
}
