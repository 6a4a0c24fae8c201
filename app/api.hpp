// The HTTP surface: health endpoints, /metrics, vmalert's JSON API and the pages a generatorURL
// opens. A plain request -> response function over snapshots; it never touches a rule directly.
//
// JSON API (every path also under /vmalert/), as vmalert's web.go answers it:
//   /api/v1/rules      groups and rules; filters type, rule_group[], file[], rule_name[],
//                      datasource_type, match[], state|filter, exclude_alerts, extended_states,
//                      search, group_limit + page_num
//   /api/v1/alerts     pending and firing alerts; filters rule_group[], file[], match[],
//                      datasource_type
//   /api/v1/alert?group_id=&alert_id=   one alert
//   /api/v1/rule?group_id=&rule_id=     one rule with its "updates"
//   /api/v1/group?group_id=             one group
//   /api/v1/notifiers
// Errors: {"status":"error","errorType":"bad_data"|"not_found"|...,"error":"..."} with 400/404.
// Pages: /vmalert/alert?group_id=&alert_id= (the generatorURL target), /vmalert/rule?...
//
// Bodies are written straight into strings (no DOM), from the immutable snapshots; the two that
// grow with the alerts (/api/v1/rules, /api/v1/alerts) are streamed in pieces (chunked).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/metrics.hpp"
#include "app/notifier_set.hpp"
#include "app/selector.hpp"
#include "app/snapshot.hpp"
#include "core/expected.hpp"
#include "core/json_string.hpp"
#include "net/http_server.hpp"
#include "notifier/notifier.hpp"

namespace app {

// The last configuration reload's error for the UI ("" after a success); set by the reload
// thread, read by the HTTP thread.
class ReloadStatus {
 public:
  void set_error(std::string e) {
    std::lock_guard lock(mu_);
    error_ = std::move(e);
  }
  [[nodiscard]] std::string error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  mutable std::mutex mu_;
  std::string error_;
};

struct ApiContext {
  const SnapshotStore* store = nullptr;
  const GlobalCounters* counters = nullptr;
  const NotifierSet* notifiers = nullptr;  // may be null
  const datasource::RemoteWriteStats* remote_write = nullptr;  // null without -remoteWrite.url
  const std::atomic<bool>* ready = nullptr;
  std::function<void()> reload;  // /-/reload
  std::string reload_auth_key;   // -reloadAuthKey: /-/reload needs ?authKey=<it> when set
  const ReloadStatus* reload_status = nullptr;  // may be null
  std::vector<const PushTargetStats*> push;      // -pushmetrics.url targets (may be empty)
};

// The /metrics page (also what -pushmetrics.url receives).
[[nodiscard]] std::string metrics_page(const ApiContext& ctx);

[[nodiscard]] net::ServerResponse handle_request(const ApiContext& ctx,
                                                 const net::ServerRequest& req);

// A request's form values as Go's r.Form holds them: an urlencoded POST body first, then the
// query string, each name/value percent-decoded, in order.
class FormValues {
 public:
  FormValues() = default;
  explicit FormValues(const net::ServerRequest& req);
  // Parses "a=1&b=2" (appending).
  void add_encoded(std::string_view encoded);

  // The first value of `name` ("" when absent), as Go's FormValue.
  [[nodiscard]] std::string_view get(std::string_view name) const;
  [[nodiscard]] bool has(std::string_view name) const;
  // Every value of `name`, in order.
  [[nodiscard]] std::vector<std::string> all(std::string_view name) const;
  // lib/httputil.GetBool: "", "0", "f", "false", "no" (any case) are false, the rest true.
  [[nodiscard]] bool get_bool(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

// An API failure: the HTTP status and a message the user can act on.
struct ApiError {
  unsigned status = 400;
  std::string message;
};

struct GroupsFilter {
  std::vector<std::string> group_names;  // rule_group[]
  std::vector<std::string> files;        // file[]
  std::string datasource_type;           // datasource_type; "" = any
  [[nodiscard]] bool matches(const GroupSnapshot& g) const;
};

struct AlertsFilter {
  GroupsFilter groups;
  std::vector<SeriesSelector> match;  // match[] on alert labels
};

// Prometheus' /api/v1/rules parameters plus vmalert's (web.go newRulesFilter).
struct RulesFilter {
  GroupsFilter groups;
  std::vector<std::string> rule_names;  // rule_name[]
  std::string rule_type;                // "alerting" | "recording" | "" (from type=alert|record)
  std::vector<std::string> states;      // Grafana's aliases already mapped
  std::vector<SeriesSelector> match;    // match[] on rule labels
  std::string search;                   // lower case
  bool exclude_alerts = false;
  bool extended_states = false;
  int group_limit = 0;  // 0 = no paging
  int page_num = 0;     // 1-based; 0 = not given
};

[[nodiscard]] core::expected<RulesFilter, ApiError> parse_rules_filter(const FormValues& form);

// What /api/v1/rules and the groups page show for a filter: the groups (in vmalert's order,
// paged) with their matching rules and each rule's state as shown.
struct SelectedRule {
  const RuleSnapshot* rule = nullptr;
  std::string_view state;  // rule_state(): "firing", "ok", ... ("" for a recording rule)
};
struct SelectedGroup {
  std::shared_ptr<const GroupSnapshot> group;  // keeps the rules above alive
  std::vector<SelectedRule> rules;
  std::map<std::string, int, std::less<>> states;  // state -> how many rules
};
struct RulesSelection {
  std::vector<SelectedGroup> groups;
  long long page = 0, total_pages = 0, total_groups = 0, total_rules = 0;  // with group_limit
};
[[nodiscard]] core::expected<RulesSelection, ApiError> select_rules(const SnapshotStore& store,
                                                                    const RulesFilter& filter);
[[nodiscard]] core::expected<AlertsFilter, ApiError> parse_alerts_filter(const FormValues& form);

// The /api/v1/alerts and /api/v1/rules answers as streams (piece by piece; they hold the
// snapshots they read until the last piece).
[[nodiscard]] net::BodyProducer alerts_json_stream(const SnapshotStore& store,
                                                   const AlertsFilter& filter);
[[nodiscard]] core::expected<net::BodyProducer, ApiError> rules_json_stream(
    const SnapshotStore& store, const RulesFilter& f);

// JSON bodies, exposed for tests (the streams above, collected).
[[nodiscard]] std::string alerts_json(const SnapshotStore& store, const AlertsFilter& filter = {});
[[nodiscard]] core::expected<std::string, ApiError> rules_json(const SnapshotStore& store,
                                                               const RulesFilter& filter);
[[nodiscard]] std::string rules_json(const SnapshotStore& store);
[[nodiscard]] std::string notifiers_json(std::span<const std::shared_ptr<notifier::Notifier>> ns);
// {"status":"error","errorType":...,"error":...}
[[nodiscard]] std::string error_json(const ApiError& e);

// Appends `s` as a JSON string literal (quotes included), escaped as Go's encoding/json does in
// vmalert's API (core::JsonEscape::go).
inline void append_json_string(std::string& out, std::string_view s) {
  core::append_json_string(out, s, core::JsonEscape::go);
}

}  // namespace app
