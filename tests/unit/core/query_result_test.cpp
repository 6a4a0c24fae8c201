#include "core/query_result.hpp"

#include <catch2/catch.hpp>

TEST_CASE("query result interns names and reuses buffers", "[core]") {
  core::QueryResult r;
  for (int round = 0; round < 2; ++round) {
    r.clear();
    r.begin_series();
    r.add_label("__name__", "up");
    r.add_label("job", "a");
    r.add_sample({1000, 1});
    r.end_series();
    r.begin_series();
    r.add_label("job", "b");
    r.add_sample({1000, 0});
    r.end_series();
    REQUIRE(r.size() == 2);
    CHECK(r.labels(0).get("job") == std::optional<std::string_view>("a"));
    CHECK(r.labels(1).get("job") == std::optional<std::string_view>("b"));
    CHECK(r.labels(1).size() == 1);
    CHECK(r.value(0) == 1);
    CHECK(r.timestamp_ms(1) == 1000);
    CHECK(r.labels(0).to_labels().to_string() == "{__name__=\"up\", job=\"a\"}");
  }
  CHECK(r.intern("job") == r.intern("job"));
}

TEST_CASE("abandoning a half-built series leaves the others intact", "[core]") {
  core::QueryResult r;
  r.begin_series();
  r.add_label("a", "1");
  r.add_sample({1, 1});
  r.end_series();
  r.begin_series();
  r.add_label("b", "2");
  r.abandon_series();
  REQUIRE(r.size() == 1);
  CHECK(r.labels(0).size() == 1);
}
