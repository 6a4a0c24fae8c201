// FakeQuerier: a datasource::Querier answering from a table set by the test, synchronously.
// Also builds QueryResults for tests that call rules:: pure functions directly.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/query_result.hpp"
#include "datasource/querier.hpp"

namespace fakes {

struct FakeSeries {
  core::Labels labels;  // __name__ included if wanted
  double value = 0;
};

// Fills `out` with one sample per series at `ts_ms`.
inline void fill_result(core::QueryResult& out, const std::vector<FakeSeries>& series,
                        int64_t ts_ms = 0) {
  out.clear();
  for (const auto& s : series) {
    out.begin_series();
    for (const auto& l : s.labels) out.add_label(l.name, l.value);
    out.add_sample({ts_ms, s.value});
    out.end_series();
  }
}

inline core::QueryResult make_result(const std::vector<FakeSeries>& series, int64_t ts_ms = 0) {
  core::QueryResult r;
  fill_result(r, series, ts_ms);
  return r;
}

class FakeQuerier final : public datasource::Querier {
 public:
  // Querier
  void query(std::string_view expr, core::TimePoint ts, core::QueryResult& out,
             datasource::QueryDone done) override {
    calls.emplace_back(std::string(expr), ts);
    if (error) {
      out.clear();
      done(error);
      return;
    }
    auto it = answers.find(std::string(expr));
    fill_result(out, it == answers.end() ? std::vector<FakeSeries>{} : it->second,
                core::unix_ms(ts));
    done(std::nullopt);
  }

  std::map<std::string, std::vector<FakeSeries>> answers;
  std::optional<core::Error> error;
  std::vector<std::pair<std::string, core::TimePoint>> calls;
};

}  // namespace fakes
