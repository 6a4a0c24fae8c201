// Replay (app/replay.hpp): range splitting, the points a range answer is applied at, and the
// driver on a manual loop against a fake range datasource and a recording series writer.
#include "app/replay.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config/loader.hpp"
#include "tests/fakes/fake_range_querier.hpp"
#include "tests/fakes/manual_loop.hpp"

namespace {

using namespace std::chrono_literals;

const core::TimePoint kT0 = core::from_unix_ms(1'700'000'040'000);  // a whole minute

std::vector<config::GroupSpec> load(const std::string& yaml) {
  config::LoadOptions lo;
  lo.default_interval = 1min;
  lo.default_eval_delay = 0s;
  auto r = config::parse_rules_text(yaml, "rules.yml", lo);
  for (const auto& e : r.errors) FAIL(e.message);
  return std::move(r.groups);
}

int64_t ms(core::TimePoint t) { return core::unix_ms(t); }
int64_t minute(int n) { return ms(kT0 + std::chrono::minutes(n)); }

struct Harness {
  fakes::ManualLoop loop{kT0 + 24h};
  fakes::FakeRangeQuerier ds{loop};
  fakes::RecordingSeriesWriter writer;
  app::ReplayOptions options;
  std::vector<std::string> logged;
  std::function<void(std::function<void()>)> wait_for_room;
  size_t max_write_rows = 0;

  Harness() {
    options.from = kT0;
    options.to = kT0 + 10min;
    options.max_datapoints = 4;
    options.rules_delay = 0s;
  }

  app::ReplaySummary run(const std::string& yaml) {
    app::ReplayDeps deps{loop, ds, writer, wait_for_room, max_write_rows, nullptr,
                         [this](std::string_view m) { logged.emplace_back(m); }};
    app::Replayer replayer(deps, options);
    std::optional<app::ReplaySummary> got;
    replayer.run(load(yaml), rules::GroupContext{},
                 [&](app::ReplaySummary s) { got = std::move(s); });
    loop.advance(1h);
    REQUIRE(got.has_value());
    return std::move(*got);
  }

  // (metric, job, alertstate) -> ts -> value, stale markers as "stale".
  std::map<std::tuple<std::string, std::string, std::string>, std::map<int64_t, std::string>>
  by_series() const {
    std::map<std::tuple<std::string, std::string, std::string>, std::map<int64_t, std::string>> out;
    for (const auto& s : writer.written) {
      const core::Labels ls = s.merged_labels();
      auto key = std::make_tuple(std::string(ls.get("__name__").value_or("")),
                                 std::string(ls.get("job").value_or("")),
                                 std::string(ls.get("alertstate").value_or("")));
      auto& points = out[key];
      INFO("duplicate point for " << ls.to_string() << " at " << s.timestamp_ms);
      CHECK_FALSE(points.contains(s.timestamp_ms));
      points[s.timestamp_ms] = core::is_stale_nan(s.value) ? "stale" : std::to_string(s.value);
    }
    return out;
  }
};

}  // namespace

TEST_CASE("replay ranges: steps of interval x maxDatapoints, the last one clipped",
          "[app][replay]") {
  using R = app::ReplayRange;
  CHECK(app::split_replay_range(kT0, kT0 + 25min, 10min) ==
        std::vector<R>{{kT0, kT0 + 10min}, {kT0 + 10min, kT0 + 20min}, {kT0 + 20min, kT0 + 25min}});
  CHECK(app::split_replay_range(kT0, kT0 + 20min, 10min) ==
        std::vector<R>{{kT0, kT0 + 10min}, {kT0 + 10min, kT0 + 20min}});
  CHECK(app::split_replay_range(kT0, kT0 + 1s, 10min) == std::vector<R>{{kT0, kT0 + 1s}});
  CHECK(app::split_replay_range(kT0, kT0, 10min).empty());
  CHECK(app::split_replay_range(kT0 + 1min, kT0, 10min).empty());
}

TEST_CASE("replay options: vmalert's checks", "[app][replay]") {
  app::ReplayOptions o;
  o.from = kT0;
  o.to = kT0 + 1h;
  CHECK(app::check_replay_options(o).has_value());
  auto bad = o;
  bad.max_datapoints = 0;
  CHECK_THAT(app::check_replay_options(bad).error().message,
             Catch::Contains("replay.maxDatapointsPerQuery can't be lower than 1"));
  bad = o;
  bad.retry_attempts = 0;
  CHECK_FALSE(app::check_replay_options(bad).has_value());
  bad = o;
  bad.to = bad.from;
  CHECK_THAT(app::check_replay_options(bad).error().message,
             Catch::Contains("must be bigger than replay.timeFrom"));
}

TEST_CASE("replay points: the range grid after the last applied point, off-grid samples too",
          "[app][replay]") {
  core::QueryResult m;
  m.type = core::ResultType::matrix;
  m.begin_series();
  m.add_label("job", "a");
  m.add_sample({minute(0), 1});
  m.add_sample({minute(1) + 500, 2});  // off the grid
  m.end_series();
  const app::ReplayRange r{kT0, kT0 + 3min};
  CHECK(app::replay_points(m, r, 1min, std::numeric_limits<int64_t>::min()) ==
        std::vector<int64_t>{minute(0), minute(1), minute(1) + 500, minute(2), minute(3)});
  CHECK(app::replay_points(m, r, 1min, minute(1)) ==
        std::vector<int64_t>{minute(1) + 500, minute(2), minute(3)});
}

TEST_CASE("replay slice: the instant answer at one time cut from a matrix", "[app][replay]") {
  core::QueryResult m;
  m.type = core::ResultType::matrix;
  m.begin_series();
  m.add_label("job", "a");
  m.add_sample({minute(0), 1});
  m.add_sample({minute(2), 3});
  m.end_series();
  m.begin_series();
  m.add_label("job", "b");
  m.add_sample({minute(1), 20});
  m.add_sample({minute(2), 30});
  m.end_series();
  std::vector<size_t> cursors;
  core::QueryResult out;
  std::vector<std::vector<std::pair<std::string, double>>> got;
  for (int i = 0; i < 4; ++i) {
    app::slice_matrix_at(m, cursors, minute(i), out);
    std::vector<std::pair<std::string, double>> row;
    for (size_t s = 0; s < out.size(); ++s) {
      CHECK(out.timestamp_ms(s) == minute(i));
      row.emplace_back(std::string(*out.labels(s).get("job")), out.value(s));
    }
    got.push_back(row);
  }
  using Row = std::vector<std::pair<std::string, double>>;
  CHECK(got == std::vector<Row>{{{"a", 1}}, {{"b", 20}}, {{"a", 3}, {"b", 30}}, {}});
}

TEST_CASE("replay progress bar", "[app][replay]") {
  CHECK(app::format_progress_bar(0, 4, 8) == "0 / 4 [>-------] 0.00%");
  CHECK(app::format_progress_bar(1, 4, 8) == "1 / 4 [==>-----] 25.00%");
  CHECK(app::format_progress_bar(4, 4, 8) == "4 / 4 [========] 100.00%");
}

TEST_CASE("replay of a recording rule: every point once, across ranges, stale marker on a gap",
          "[app][replay]") {
  Harness h;
  h.ds.answer = [](const std::string& expr, int64_t t) {
    CHECK(expr == "up");
    const auto m = static_cast<double>((t - minute(0)) / 60'000);
    std::vector<fakes::RangePoint> out{{{{"job", "a"}}, m}};
    if (t <= minute(4)) out.push_back({{{"job", "b"}}, 100 + m});
    return out;
  };
  const auto summary = h.run(R"(
groups:
  - name: g
    rules:
      - record: job:up
        expr: up
)");
  CHECK_FALSE(summary.fatal.has_value());
  CHECK(summary.groups == 1);
  CHECK(summary.rules == 1);
  // 10 minutes at 1m, 4 points per request: [0,4] [4,8] [8,10].
  REQUIRE(h.ds.calls.size() == 3);
  CHECK(h.ds.calls[0].start == kT0);
  CHECK(h.ds.calls[0].end == kT0 + 4min);
  CHECK(h.ds.calls[2].start == kT0 + 8min);
  CHECK(h.ds.calls[2].end == kT0 + 10min);
  CHECK(h.ds.calls[0].step == 1min);
  CHECK(summary.requests == 3);

  const auto series = h.by_series();
  std::map<int64_t, std::string> want_a;
  for (int i = 0; i <= 10; ++i) want_a[minute(i)] = std::to_string(static_cast<double>(i));
  CHECK(series.at({"job:up", "a", ""}) == want_a);
  std::map<int64_t, std::string> want_b;
  for (int i = 0; i <= 4; ++i) want_b[minute(i)] = std::to_string(100.0 + i);
  want_b[minute(5)] = "stale";
  CHECK(series.at({"job:up", "b", ""}) == want_b);
  CHECK(summary.rows == 11 + 6);
}

TEST_CASE("replay of an alerting rule: for, reset on a gap, state kept across ranges",
          "[app][replay]") {
  Harness h;
  h.options.max_datapoints = 3;  // ranges [0,3] [3,6] [6,9] [9,10]
  // Active at minutes 0-5 and 7-10; absent at 6.
  h.ds.answer = [](const std::string&, int64_t t) {
    if (t == minute(6)) return std::vector<fakes::RangePoint>{};
    return std::vector<fakes::RangePoint>{{{{"job", "a"}}, 1}};
  };
  const auto summary = h.run(R"(
groups:
  - name: g
    rules:
      - alert: Down
        expr: up == 0
        for: 2m
        annotations:
          summary: "{{ $labels.job }} is down"
)");
  CHECK_FALSE(summary.fatal.has_value());
  CHECK(h.ds.calls.size() == 4);
  const auto series = h.by_series();
  const auto& pending = series.at({"ALERTS", "a", "pending"});
  const auto& firing = series.at({"ALERTS", "a", "firing"});
  const std::string one = std::to_string(1.0);
  CHECK(pending == std::map<int64_t, std::string>{{minute(0), one},
                                                  {minute(1), one},
                                                  {minute(2), "stale"},
                                                  {minute(7), one},
                                                  {minute(8), one},
                                                  {minute(9), "stale"}});
  CHECK(firing == std::map<int64_t, std::string>{{minute(2), one},
                                                 {minute(3), one},
                                                 {minute(4), one},
                                                 {minute(5), one},
                                                 {minute(6), "stale"},
                                                 {minute(9), one},
                                                 {minute(10), one}});
  // ALERTS_FOR_STATE carries activeAt (unix seconds): the first run, then the one after the gap.
  const auto& for_state = series.at({"ALERTS_FOR_STATE", "a", ""});
  CHECK(for_state.at(minute(5)) == std::to_string(static_cast<double>(minute(0) / 1000)));
  CHECK(for_state.at(minute(6)) == "stale");
  CHECK(for_state.at(minute(10)) == std::to_string(static_cast<double>(minute(7) / 1000)));
}

TEST_CASE("replay: for: 0 alerts fire at once", "[app][replay]") {
  Harness h;
  h.options.to = kT0 + 2min;
  h.ds.answer = [](const std::string&, int64_t) {
    return std::vector<fakes::RangePoint>{{{{"job", "a"}}, 1}};
  };
  const auto summary = h.run(R"(
groups:
  - name: g
    rules:
      - alert: Down
        expr: up == 0
)");
  CHECK_FALSE(summary.fatal.has_value());
  const auto series = h.by_series();
  CHECK_FALSE(series.contains({"ALERTS", "a", "pending"}));
  CHECK(series.at({"ALERTS", "a", "firing"}).size() == 3);
}

TEST_CASE("replay: ranges run concurrently write what one at a time writes", "[app][replay]") {
  auto answer = [](const std::string&, int64_t t) {
    const auto m = (t - minute(0)) / 60'000;
    std::vector<fakes::RangePoint> out{{{{"job", "a"}}, static_cast<double>(m)}};
    if (m % 3 != 0) out.push_back({{{"job", "b"}}, 1});  // gaps at 0, 3, 6, 9
    return out;
  };
  const std::string yaml = R"(
groups:
  - name: g
    rules:
      - record: r
        expr: up
      - alert: A
        expr: up
)";
  Harness one;
  one.ds.answer = answer;
  const auto s1 = one.run(yaml);
  Harness four;
  four.ds.answer = answer;
  four.options.rule_concurrency = 4;
  const auto s4 = four.run(yaml);
  CHECK_FALSE(s1.fatal.has_value());
  CHECK_FALSE(s4.fatal.has_value());
  CHECK(s1.rows == s4.rows);
  CHECK(one.by_series() == four.by_series());
}

TEST_CASE("replay: failed attempts are retried 1s apart, 400 is not", "[app][replay]") {
  const std::string yaml = R"(
groups:
  - name: g
    rules:
      - record: r
        expr: up
)";
  SECTION("two connection errors, then an answer") {
    Harness h;
    h.ds.answer = [](const std::string&, int64_t) {
      return std::vector<fakes::RangePoint>{{{{"job", "a"}}, 1}};
    };
    h.ds.errors = {core::Error{"refused", core::ErrorKind::connection},
                   core::Error{"503", core::ErrorKind::http_status, 503}};
    const auto summary = h.run(yaml);
    CHECK_FALSE(summary.fatal.has_value());
    CHECK(h.ds.calls.size() == 5);  // 3 for the first range, then 2
    CHECK(h.ds.calls[0].start == h.ds.calls[2].start);
    REQUIRE(h.logged.size() == 2);
    CHECK_THAT(h.logged[0], Catch::Contains("attempt 1 to execute rule \"r\" failed: refused"));
    CHECK(h.by_series().at({"r", "a", ""}).size() == 11);
  }
  SECTION("every attempt fails: the replay stops") {
    Harness h;
    h.options.retry_attempts = 3;
    for (int i = 0; i < 3; ++i) h.ds.errors.push_back(core::Error{"timeout", core::ErrorKind::timeout});
    const auto summary = h.run(yaml);
    REQUIRE(summary.fatal.has_value());
    CHECK_THAT(summary.fatal->message, Catch::Contains("rule \"r\" (group \"g\")"));
    CHECK(h.ds.calls.size() == 3);
    CHECK(h.writer.written.empty());
  }
  SECTION("HTTP 400: no retry") {
    Harness h;
    h.ds.errors = {core::Error{"bad query", core::ErrorKind::http_status, 400}};
    const auto summary = h.run(yaml);
    REQUIRE(summary.fatal.has_value());
    CHECK(h.ds.calls.size() == 1);
  }
  SECTION("-replay.continueWithExecutionErr: the range is skipped and reported") {
    Harness h;
    h.options.retry_attempts = 1;
    h.options.continue_on_error = true;
    h.ds.answer = [](const std::string&, int64_t) {
      return std::vector<fakes::RangePoint>{{{{"job", "a"}}, 1}};
    };
    h.ds.errors = {core::Error{"bad query", core::ErrorKind::http_status, 422}};
    const auto summary = h.run(yaml);
    CHECK_FALSE(summary.fatal.has_value());
    CHECK(summary.failed_ranges == 1);
    REQUIRE(summary.errors.size() == 1);
    CHECK_THAT(summary.errors[0], Catch::Contains("bad query"));
    // Minutes 4..10 written (the first range [0,4] was lost; 4 came again with the second).
    CHECK(h.by_series().at({"r", "a", ""}).size() == 7);
  }
}

TEST_CASE("replay: groups and rules in order, rulesDelay between rules", "[app][replay]") {
  Harness h;
  h.options.rules_delay = 1s;
  h.ds.answer = [](const std::string&, int64_t) { return std::vector<fakes::RangePoint>{}; };
  const auto summary = h.run(R"(
groups:
  - name: g1
    rules:
      - record: r1
        expr: one
      - record: r2
        expr: two
  - name: g2
    interval: 30s
    rules:
      - record: r3
        expr: three
)");
  CHECK(summary.groups == 2);
  CHECK(summary.rules == 3);
  REQUIRE(h.ds.calls.size() == 3 + 3 + 5);
  CHECK(h.ds.calls[0].expr == "one");
  CHECK(h.ds.calls[3].expr == "two");
  CHECK(h.ds.calls[6].expr == "three");
  CHECK(h.ds.calls[6].step == 30s);
  CHECK(h.ds.calls[6].end == kT0 + 2min);  // 4 points of 30s
}

TEST_CASE("replay: rows go to the writer in chunks, each after the writer has room",
          "[app][replay]") {
  Harness h;
  h.max_write_rows = 4;
  std::vector<size_t> seen;  // rows written when each wait began
  h.wait_for_room = [&](std::function<void()> go) {
    seen.push_back(h.writer.written.size());
    h.loop.post(std::move(go));  // room comes later, on the loop
  };
  h.ds.answer = [](const std::string&, int64_t) {
    return std::vector<fakes::RangePoint>{{{{"job", "a"}}, 1}, {{{"job", "b"}}, 2}};
  };
  const auto summary = h.run(R"(
groups:
  - name: g
    rules:
      - record: r
        expr: up
)");
  CHECK_FALSE(summary.fatal.has_value());
  CHECK(summary.rows == 22);  // 11 points x 2 series
  CHECK(h.writer.written.size() == 22);
  // Ranges of 10, 8 and 4 rows, in chunks of at most 4.
  CHECK(seen == std::vector<size_t>{4, 8, 10, 14, 18, 22});
}
