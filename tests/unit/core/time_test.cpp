#include "core/time.hpp"

#include <catch2/catch.hpp>

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
