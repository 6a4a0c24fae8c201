// HoldingQuerier: a datasource::Querier that answers only when the test releases the call, to
// stand for a slow datasource (rounds longer than the interval, stop during a round,
// concurrency).
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "datasource/querier.hpp"
#include "tests/fakes/fake_querier.hpp"

namespace fakes {

class HoldingQuerier final : public datasource::Querier {
 public:
  struct Call {
    std::string expr;
    core::TimePoint ts;
    core::QueryResult* out;
    datasource::QueryDone done;
  };

  // Querier
  void query(std::string_view expr, core::TimePoint ts, core::QueryResult& out,
             datasource::QueryDone done) override {
    held.push_back(Call{std::string(expr), ts, &out, std::move(done)});
    ++total;
    if (held.size() > max_held) max_held = held.size();
  }

  // Answers the oldest held call with `series` (or `error`).
  void release_one(const std::vector<FakeSeries>& series = {},
                   std::optional<core::Error> error = std::nullopt) {
    Call c = std::move(held.front());
    held.pop_front();
    if (error) {
      c.out->clear();
    } else {
      fill_result(*c.out, series, core::unix_ms(c.ts));
    }
    c.done(std::move(error));
  }
  void release_all(const std::vector<FakeSeries>& series = {}) {
    while (!held.empty()) release_one(series);
  }

  std::deque<Call> held;
  size_t total = 0;
  size_t max_held = 0;
};

}  // namespace fakes
