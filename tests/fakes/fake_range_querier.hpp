// FakeRangeQuerier: a datasource::RangeQuerierFactory whose range queries are answered from a
// function of (expr, timestamp) set by the test, on the clock's loop (never inside the call),
// as a real datasource answers. Errors can be queued for the next calls. RecordingSeriesWriter
// keeps every series written.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/clock.hpp"
#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/query_result.hpp"
#include "core/series.hpp"
#include "datasource/querier.hpp"
#include "datasource/series_writer.hpp"

namespace fakes {

struct RangePoint {
  core::Labels labels;
  double value = 0;
};

class FakeRangeQuerier final : public datasource::RangeQuerierFactory {
 public:
  // The instant answer of `expr` at `ts_ms` (the fake evaluates every step of a range with it).
  using Answer = std::function<std::vector<RangePoint>(const std::string& expr, int64_t ts_ms)>;

  struct Call {
    std::string expr;
    core::TimePoint start;
    core::TimePoint end;
    core::Duration step;
  };

  explicit FakeRangeQuerier(app::Clock& clock) : clock_(clock) {}

  // RangeQuerierFactory
  std::unique_ptr<datasource::RangeQuerier> build_range(
      const datasource::QuerierParams& params) override {
    return std::make_unique<Querier>(*this, params.eval_interval);
  }

  Answer answer;
  std::deque<core::Error> errors;  // returned by the next calls, in order
  std::vector<Call> calls;

 private:
  class Querier final : public datasource::RangeQuerier {
   public:
    Querier(FakeRangeQuerier& f, core::Duration step) : f_(f), step_(step) {}
    // RangeQuerier
    void query_range(std::string_view expr, core::TimePoint start, core::TimePoint end,
                     core::QueryResult& out, datasource::QueryDone done) override {
      f_.calls.push_back({std::string(expr), start, end, step_});
      out.clear();
      if (!f_.errors.empty()) {
        core::Error e = std::move(f_.errors.front());
        f_.errors.pop_front();
        f_.clock_.post([done = std::move(done), e = std::move(e)] { done(e); });
        return;
      }
      // Series by label set, samples in time order, as a datasource's matrix.
      std::vector<std::pair<core::Labels, std::vector<core::Sample>>> series;
      const int64_t step_ms = std::chrono::duration_cast<std::chrono::milliseconds>(step_).count();
      for (int64_t t = core::unix_ms(start); t <= core::unix_ms(end); t += step_ms) {
        for (auto& p : f_.answer ? f_.answer(std::string(expr), t) : std::vector<RangePoint>{}) {
          auto it = std::find_if(series.begin(), series.end(),
                                 [&](const auto& s) { return s.first == p.labels; });
          if (it == series.end()) {
            series.emplace_back(std::move(p.labels), std::vector<core::Sample>{});
            it = series.end() - 1;
          }
          it->second.push_back({t, p.value});
        }
        if (step_ms <= 0) break;
      }
      out.type = core::ResultType::matrix;
      for (const auto& [labels, samples] : series) {
        out.begin_series();
        for (const auto& l : labels) out.add_label(l.name, l.value);
        for (const auto& s : samples) out.add_sample(s);
        out.end_series();
      }
      f_.clock_.post([done = std::move(done)] { done(std::nullopt); });
    }

   private:
    FakeRangeQuerier& f_;
    core::Duration step_;
  };

  app::Clock& clock_;
};

class RecordingSeriesWriter final : public datasource::SeriesWriter {
 public:
  // SeriesWriter
  void write(std::span<const core::Series> series) override {
    written.insert(written.end(), series.begin(), series.end());
  }
  std::vector<core::Series> written;
};

}  // namespace fakes
