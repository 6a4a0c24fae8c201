// The compact QueryResult storage the parser fills: interned (name, value) pairs, label-ref
// ids, series boundaries, abandon/clear semantics.
#include "core/query_result.hpp"

#include <catch2/catch.hpp>

#include <string>

TEST_CASE("identical label pairs are stored once and share an id", "[datasource][query_result]") {
  core::QueryResult r;
  const uint32_t job = r.intern("job");
  const uint32_t a1 = r.intern_label(job, "api");
  const uint32_t a2 = r.intern_label(job, "api");
  const uint32_t b = r.intern_label(job, "db");
  const uint32_t other = r.intern_label(r.intern("team"), "api");
  CHECK(a1 == a2);
  CHECK(a1 != b);
  CHECK(other != a1);  // same value, different name
  CHECK(r.label_value(a1) == "api");
  CHECK(r.label_value(b) == "db");
  CHECK(r.name(r.label_name_id(other)) == "team");
  CHECK(r.name_count() == 2);
}

TEST_CASE("many distinct pairs survive table growth", "[datasource][query_result]") {
  core::QueryResult r;
  const uint32_t n = r.intern("instance");
  std::vector<uint32_t> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(r.intern_label(n, "host-" + std::to_string(i)));
  for (int i = 0; i < 5000; ++i) {
    INFO(i);
    REQUIRE(r.intern_label(n, "host-" + std::to_string(i)) == ids[static_cast<size_t>(i)]);
    REQUIRE(r.label_value(ids[static_cast<size_t>(i)]) == "host-" + std::to_string(i));
  }
}

TEST_CASE("series built from label refs read back in order", "[datasource][query_result]") {
  core::QueryResult r;
  const uint32_t name = r.intern("__name__");
  const uint32_t job = r.intern("job");
  const uint32_t ids1[] = {r.intern_label(name, "up"), r.intern_label(job, "a")};
  const uint32_t ids2[] = {r.intern_label(job, "b")};
  r.begin_series();
  r.add_label_refs(ids1);
  r.add_sample({1000, 1});
  r.end_series();
  r.begin_series();
  r.add_label_refs(ids2);
  r.add_sample({2000, 2});
  r.add_sample({3000, 3});
  r.end_series();
  REQUIRE(r.size() == 2);
  CHECK(r.labels(0).size() == 2);
  CHECK(r.labels(0).get("__name__") == std::optional<std::string_view>("up"));
  CHECK(r.labels(1).get("job") == std::optional<std::string_view>("b"));
  CHECK(r.label_ids(0).size() == 2);
  CHECK(r.label_ids(1)[0] == ids2[0]);
  CHECK(r.samples(0).size() == 1);
  CHECK(r.samples(1).size() == 2);
  CHECK(r.samples(1)[1].value == 3);
}

TEST_CASE("a series in progress is invisible and can be abandoned", "[datasource][query_result]") {
  core::QueryResult r;
  r.begin_series();
  r.add_label("a", "1");
  r.add_sample({1, 1});
  r.end_series();
  r.begin_series();
  r.add_label("b", "2");
  r.add_sample({2, 2});
  CHECK(r.size() == 1);
  CHECK(r.labels(0).size() == 1);  // ends where the series in progress begins
  CHECK(r.samples(0).size() == 1);
  r.abandon_series();
  REQUIRE(r.size() == 1);
  r.begin_series();
  r.add_label("c", "3");
  r.add_sample({3, 3});
  r.end_series();
  REQUIRE(r.size() == 2);
  CHECK(r.labels(1).get("c") == std::optional<std::string_view>("3"));
  CHECK_FALSE(r.labels(1).get("b").has_value());
  CHECK(r.samples(1)[0].timestamp_ms == 3);
}

TEST_CASE("clear keeps names and capacity, drops series and pairs", "[datasource][query_result]") {
  core::QueryResult r;
  r.begin_series();
  r.add_label("job", "x");
  r.add_sample({1, 1});
  r.end_series();
  r.is_partial = true;
  r.series_fetched = 3;
  const uint32_t job = r.intern("job");
  const size_t cap = r.capacity_bytes();
  r.clear();
  CHECK(r.empty());
  CHECK_FALSE(r.is_partial);
  CHECK_FALSE(r.series_fetched.has_value());
  CHECK(r.intern("job") == job);
  CHECK(r.capacity_bytes() == cap);
  const uint32_t id = r.intern_label(job, "y");
  CHECK(r.label_value(id) == "y");
  CHECK(id == 0);  // pair ids restart after clear
}
