// datasource::Querier: what rules/ sees of a datasource. Asynchronous, callback based, no
// Asio in the interface: the callback runs on the event loop's thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/query_result.hpp"
#include "core/time.hpp"

namespace datasource {

// Per-group settings, as vmalert's QuerierParams.
struct QuerierParams {
  std::string type = "prometheus";  // prometheus | graphite | vlogs
  core::Duration eval_interval{};
  // Group `params`: extra URL arguments; they override the same keys of -datasource.url.
  std::vector<std::pair<std::string, std::vector<std::string>>> query_params;
  // Group `headers`, already split into name/value.
  std::vector<std::pair<std::string, std::string>> headers;
  bool debug = false;
};

using QueryDone = std::function<void(std::optional<core::Error>)>;
// A request as a curl command for a query timestamp (Querier::curl_maker).
using CurlMaker = std::function<std::string(core::TimePoint)>;

class Querier {
 public:
  virtual ~Querier() = default;
  // Instant query of `expr` at `ts` (already shifted by eval_delay and aligned by the caller).
  // Fills `out` (cleared first; reuse it across calls for zero steady-state allocations) and
  // then calls `done` with nullopt, or with an error naming the query and URL (no secrets).
  // `out` must stay alive until `done` runs.
  virtual void query(std::string_view expr, core::TimePoint ts, core::QueryResult& out,
                     QueryDone done) = 0;
  // Makes the request query(expr, ts) sends, as a shell-quoted curl command with secrets
  // hidden, for any ts (a rule's update history shows it, as vmalert's "curl" field). It holds
  // what it needs, not this querier: a history may outlive it. Default: none (null).
  [[nodiscard]] virtual std::shared_ptr<const CurlMaker> curl_maker(std::string_view expr) const {
    (void)expr;
    return nullptr;
  }
};

class QuerierFactory {
 public:
  virtual ~QuerierFactory() = default;
  virtual std::unique_ptr<Querier> build(const QuerierParams& params) = 0;
};

// Range queries (/api/v1/query_range), for replay (vmalert.md §8): `expr` evaluated at
// start, start + step, ... up to end, with step = the group's evaluation interval in whole
// seconds. Fills `out` (resultType must be matrix; cleared first) and calls `done` as
// Querier::query does. `out` must stay alive until `done` runs.
class RangeQuerier {
 public:
  virtual ~RangeQuerier() = default;
  virtual void query_range(std::string_view expr, core::TimePoint start, core::TimePoint end,
                           core::QueryResult& out, QueryDone done) = 0;
};

class RangeQuerierFactory {
 public:
  virtual ~RangeQuerierFactory() = default;
  virtual std::unique_ptr<RangeQuerier> build_range(const QuerierParams& params) = 0;
};

}  // namespace datasource
