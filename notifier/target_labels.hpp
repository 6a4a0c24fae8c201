// From a discovered (or static) Alertmanager address to the URL alerts are posted to, as
// vmalert's notifier/config.go does it (mergeLabels, parseLabels, addMissingPort):
//   1. labels __address__, __scheme__ and __alerts_path__ are built from the address (an
//      `http://` or `https://` prefix sets the scheme, a path in it replaces the alerts path,
//      else the alerts path is path.Join("/", path_prefix, "/api/v2/alerts")), plus the
//      discovery's meta labels (__meta_*);
//   2. `relabel_configs` run over them (a drop, or no __address__ left, means "no target");
//   3. __meta_* labels go; the URL is __scheme__ (default http) :// __address__ (a missing port
//      becomes 80 or 443) __alerts_path__ (a leading '/' added when missing).
// Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/labels.hpp"
#include "notifier/relabel.hpp"

namespace notifier {

inline constexpr std::string_view kAlertsPath = "/api/v2/alerts";

struct TargetSpec {
  std::string url;
  core::Labels labels;  // after relabeling, without __meta_* (vmalert shows them in the UI)
};

// nullopt when relabeling dropped the target or left it without an address. An address that
// cannot form a URL (spaces, control characters) is an error naming it.
[[nodiscard]] core::Result<std::optional<TargetSpec>> build_target(std::string_view address,
                                                                   const core::Labels& meta,
                                                                   std::string_view scheme,
                                                                   std::string_view path_prefix,
                                                                   const RelabelRules& relabel);

// Go's path.Join("/", parts...) for the alerts path: slashes collapsed, `.` and `..` resolved,
// no trailing slash.
[[nodiscard]] std::string join_url_path(std::string_view prefix, std::string_view path);

}  // namespace notifier
