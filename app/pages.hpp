// The web UI, server-rendered: the groups page (/, /vmalert/, /vmalert/home, /vmalert/groups:
// every group with its rules, state, health, last evaluation and error, filtered by the same
// query parameters as /api/v1/rules), the alerts page (/vmalert/alerts: pending and firing
// alerts with labels, annotations and activeAt), the notifiers page (/vmalert/notifiers), and the
// places a person lands on from a notification: the alert page (every generatorURL points there:
// /vmalert/alert?group_id=&alert_id=) and the rule page (/vmalert/rule?group_id=&rule_id=) with
// its update history. Each page names a failed last reload. Self-contained (one inline
// stylesheet, no scripts, no external assets, usable on a phone); links are relative, so the
// pages work behind a path prefix or a proxy, as vmalert's do.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "app/api.hpp"
#include "app/snapshot.hpp"
#include "notifier/notifier.hpp"

namespace app {

// What the list pages echo back and show beside the content.
struct PageQuery {
  std::string_view search;        // ?search=
  std::string_view state;         // ?state= (groups page)
  std::string_view reload_error;  // the last reload's error, "" when it succeeded
};

// `base` is prepended to every link: "" for pages under /vmalert/, "vmalert/" at "/".
[[nodiscard]] std::string groups_page(const RulesSelection& sel, const PageQuery& q,
                                      std::string_view base = {});
[[nodiscard]] std::string alerts_page(const SnapshotStore& store, const PageQuery& q,
                                      std::string_view base = {});
[[nodiscard]] std::string notifiers_page(std::span<const std::shared_ptr<notifier::Notifier>> ns,
                                         const PageQuery& q, std::string_view base = {});

[[nodiscard]] std::string alert_page(const GroupSnapshot& g, const RuleSnapshot& r,
                                     const AlertSnapshot& a);
[[nodiscard]] std::string rule_page(const GroupSnapshot& g, const RuleSnapshot& r);
[[nodiscard]] std::string error_page(std::string_view message);

// Appends `s` with & < > " ' escaped.
void append_html_escaped(std::string& out, std::string_view s);

}  // namespace app
