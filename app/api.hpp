// The HTTP surface: health endpoints, /metrics, and vmalert's JSON API (/api/v1/alerts,
// /api/v1/rules, also under /vmalert/). A plain request -> response function over snapshots;
// it never touches a rule directly.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "app/metrics.hpp"
#include "app/notifier_set.hpp"
#include "app/snapshot.hpp"
#include "net/http_server.hpp"
#include "notifier/notifier.hpp"

namespace app {

struct ApiContext {
  const SnapshotStore* store = nullptr;
  const GlobalCounters* counters = nullptr;
  const NotifierSet* notifiers = nullptr;  // may be null
  const std::atomic<bool>* ready = nullptr;
  std::function<void()> reload;  // /-/reload
  std::string reload_auth_key;   // -reloadAuthKey: /-/reload needs ?authKey=<it> when set
};

[[nodiscard]] net::ServerResponse handle_request(const ApiContext& ctx,
                                                 const net::ServerRequest& req);

// JSON bodies, exposed for tests.
[[nodiscard]] std::string alerts_json(const SnapshotStore& store);
[[nodiscard]] std::string rules_json(const SnapshotStore& store);

// Appends `s` as a JSON string literal (quotes included).
void append_json_string(std::string& out, std::string_view s);

}  // namespace app
