// Server-rendered HTML pages for the places a person lands on from a notification: the alert
// page (every generatorURL points there: /vmalert/alert?group_id=&alert_id=) and the rule page
// (/vmalert/rule?group_id=&rule_id=) with its update history. Self-contained (inline style, no
// scripts, no external assets); links are relative, so the pages work behind a path prefix or a
// proxy, as vmalert's do.
#pragma once

#include <string>
#include <string_view>

#include "app/snapshot.hpp"

namespace app {

[[nodiscard]] std::string alert_page(const GroupSnapshot& g, const RuleSnapshot& r,
                                     const AlertSnapshot& a);
[[nodiscard]] std::string rule_page(const GroupSnapshot& g, const RuleSnapshot& r);
[[nodiscard]] std::string error_page(std::string_view message);

// Appends `s` with & < > " ' escaped.
void append_html_escaped(std::string& out, std::string_view s);

}  // namespace app
