// Alertmanager API v2 payload, byte-for-byte as vmalert's alertmanager_request.qtpl writes it:
//   [{"startsAt":"<RFC3339Nano>","generatorURL":"<url>","endsAt":"<RFC3339Nano>",
//     "labels": {"a":"x",...},"annotations": {"k":"v",...}}, ...]
// (note the space after "labels": and "annotations":). endsAt is left out when unset. Labels
// and annotations are written sorted by name; label names are sanitized to the metric-name
// charset first. Written straight into the output buffer: no DOM.
//
// An alert with pre-built fragments (Alert::json, core/alert_json.hpp) has them copied: the
// generator URL always, its labels and annotations when the alert still holds the blocks they
// were built from (as kept JSON text, or names and values copied between quotes from the block
// when nothing in it needs escaping). Only the two timestamps are formatted per alert then, and
// with `out`'s capacity reused nothing is allocated per alert.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/alert_json.hpp"
#include "core/json_string.hpp"
#include "notifier/notifier.hpp"

namespace notifier {

// Appends the JSON array for `alerts` to `out` (out is not cleared).
void encode_alerts(std::span<const Alert> alerts, std::string& out);

// Appends `s` as a JSON string with quotes, escaped as vmalert's quicktemplate payload does
// (core::JsonEscape::qtpl).
inline void append_json_string(std::string& out, std::string_view s) {
  core::append_json_string(out, s, core::JsonEscape::qtpl);
}

// Label names must match [a-zA-Z_:][a-zA-Z0-9_:]*: every other byte becomes '_' (a leading
// digit too). An empty name stays empty. (core/alert_json.hpp, which the fragments use.)
[[nodiscard]] inline std::string sanitize_label_name(std::string_view name) {
  return core::sanitize_alert_label_name(name);
}
[[nodiscard]] inline bool is_valid_label_name(std::string_view name) {
  return core::is_alert_label_name(name);
}

}  // namespace notifier
