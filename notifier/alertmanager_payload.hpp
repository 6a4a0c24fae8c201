// Alertmanager API v2 payload, byte-for-byte as vmalert's alertmanager_request.qtpl writes it:
//   [{"startsAt":"<RFC3339Nano>","generatorURL":"<url>","endsAt":"<RFC3339Nano>",
//     "labels": {"a":"x",...},"annotations": {"k":"v",...}}, ...]
// (note the space after "labels": and "annotations":). endsAt is left out when unset. Labels
// and annotations are written sorted by name; label names are sanitized to the metric-name
// charset first. Written straight into the output buffer: no DOM.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "notifier/notifier.hpp"

namespace notifier {

// Appends the JSON array for `alerts` to `out` (out is not cleared).
void encode_alerts(std::span<const Alert> alerts, std::string& out);

// Appends `s` as a JSON string with quotes, escaping like qtpl's %q: ", \, control characters
// (\n, \r, \t, \b, \f, others as \u00XX), '<' as \u003c and '\'' as \u0027. Each byte of
// invalid UTF-8 becomes U+FFFD (qtpl copies it raw; Alertmanager's decoder makes the same
// replacement, so the alert it stores is identical and the JSON stays valid).
void append_json_string(std::string& out, std::string_view s);

// Label names must match [a-zA-Z_:][a-zA-Z0-9_:]*: every other byte becomes '_' (a leading
// digit too). An empty name stays empty.
[[nodiscard]] std::string sanitize_label_name(std::string_view name);
[[nodiscard]] bool is_valid_label_name(std::string_view name);

}  // namespace notifier
