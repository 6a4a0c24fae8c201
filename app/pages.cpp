#include "app/pages.hpp"

#include <charconv>
#include <chrono>
#include <cmath>

#include "core/strings.hpp"
#include "core/time.hpp"

namespace app {
namespace {

constexpr std::string_view kStyle =
    "body{font-family:system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;"
    "color:#222}"
    "h1{font-size:1.4rem;word-break:break-word}nav a{margin-right:1rem}"
    "table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}"
    "th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;"
    "vertical-align:top;word-break:break-word}"
    "th{width:12rem;color:#555;font-weight:600;word-break:normal}"
    "code,pre{font-family:ui-monospace,monospace;font-size:.9rem;white-space:pre-wrap}"
    ".badge{display:inline-block;padding:.1rem .5rem;border-radius:.7rem;color:#fff;"
    "background:#6c757d;font-size:.8rem;font-weight:400;white-space:nowrap;word-break:normal}"
    ".firing,.err,.unhealthy{background:#c0392b}.pending{background:#d68910}"
    ".inactive,.ok{background:#1e8449}"
    ".label{display:inline-block;background:#eef;border-radius:.3rem;padding:0 .3rem;"
    "margin:.1rem}"
    ".alert-box{border:1px solid #c0392b;background:#fdecea;padding:.5rem;margin:.5rem 0}"
    "form input{padding:.3rem;margin-right:.5rem}"
    ".list th{width:auto}.muted{color:#777}"
    "@media (max-width:40rem){th{width:auto}table,tr,td,th{display:block}"
    ".list tr:first-child{display:none}.list tr{border-bottom:2px solid #ccc;padding:.3rem 0}"
    ".list td{border:0;padding:.1rem .5rem}}";

// `base` makes the relative links work from where the page is served: "" under /vmalert/,
// "vmalert/" at the root.
void begin(std::string& out, std::string_view title, std::string_view reload_error = {},
           std::string_view base = {}) {
  out += "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>";
  append_html_escaped(out, title);
  out += " - alertd</title><style>";
  out += kStyle;
  out += "</style></head><body><nav>";
  for (auto [href, text] : {std::pair<std::string_view, std::string_view>{"groups", "Groups"},
                            {"alerts", "Alerts"},
                            {"notifiers", "Notifiers"},
                            {"api/v1/rules", "rules (JSON)"},
                            {"api/v1/alerts", "alerts (JSON)"}}) {
    out += "<a href=\"";
    append_html_escaped(out, base);
    out += href;
    out += "\">";
    out += text;
    out += "</a>";
  }
  out += "</nav>";
  if (!reload_error.empty()) {
    out += "<div class=\"alert-box\" id=\"reload-error\"><b>The last configuration reload "
           "failed</b>; the previous configuration keeps running:<pre>";
    append_html_escaped(out, reload_error);
    out += "</pre></div>";
  }
}

void end(std::string& out) { out += "</body></html>"; }

void time_text(std::string& out, core::TimePoint t) {
  if (t == core::TimePoint{}) {
    out += "never";
    return;
  }
  core::append_rfc3339_nano(out, t);
}

void seconds_text(std::string& out, core::Duration d) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, std::chrono::duration<double>(d).count());
  out.append(buf, p);
  out += 's';
}

void badge(std::string& out, std::string_view text) {
  out += "<span class=\"badge ";
  append_html_escaped(out, text);
  out += "\">";
  append_html_escaped(out, text);
  out += "</span>";
}

void labels_cell(std::string& out, const core::Labels& labels) {
  for (const auto& l : labels) {
    out += "<span class=\"label\">";
    append_html_escaped(out, l.name);
    out += '=';
    append_html_escaped(out, l.value);
    out += "</span> ";
  }
}

void row(std::string& out, std::string_view name) {
  out += "<tr><th>";
  append_html_escaped(out, name);
  out += "</th><td>";
}

void row_text(std::string& out, std::string_view name, std::string_view value) {
  row(out, name);
  append_html_escaped(out, value);
  out += "</td></tr>";
}

void annotations_table(std::string& out, const core::Labels& annotations) {
  if (annotations.empty()) return;
  out += "<h2>Annotations</h2><table>";
  for (const auto& a : annotations) {
    row(out, a.name);
    out += "<pre>";
    append_html_escaped(out, a.value);
    out += "</pre></td></tr>";
  }
  out += "</table>";
}

std::string rule_link(const GroupSnapshot& g, const RuleSnapshot& r) {
  return "rule?group_id=" + std::to_string(g.id) + "&rule_id=" + std::to_string(r.id);
}

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

// One alert as a table row: its labels linking to its page, state, activeAt, value and, when
// `annotations`, its annotations.
void alert_row(std::string& out, std::string_view base, const GroupSnapshot& g,
               const AlertSnapshot& a, bool annotations) {
  out += "<tr><td><a href=\"";
  append_html_escaped(out, base);
  append_html_escaped(out, "alert?group_id=" + std::to_string(g.id) +
                               "&alert_id=" + std::to_string(a.id));
  out += "\">";
  labels_cell(out, a.labels);
  out += "</a></td><td>";
  badge(out, rules::to_string(a.state));
  out += "</td><td>";
  time_text(out, a.active_at);
  out += "</td><td>";
  append_html_escaped(out, value_text(a.value));
  out += "</td>";
  if (annotations) {
    out += "<td>";
    for (const auto& an : a.annotations) {
      out += "<b>";
      append_html_escaped(out, an.name);
      out += "</b>: ";
      append_html_escaped(out, an.value);
      out += "<br>";
    }
    out += "</td>";
  }
  out += "</tr>";
}

}  // namespace

void append_html_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
}

std::string alert_page(const GroupSnapshot& g, const RuleSnapshot& r, const AlertSnapshot& a) {
  std::string out;
  begin(out, "Alert " + r.name);
  out += "<h1>Alert ";
  append_html_escaped(out, r.name);
  out += " ";
  badge(out, rules::to_string(a.state));
  out += "</h1><table>";
  row_text(out, "Name", r.name);
  row(out, "State");
  badge(out, rules::to_string(a.state));
  if (a.stabilizing) out += " (kept by keep_firing_for)";
  if (a.restored) out += " (restored)";
  out += "</td></tr>";
  row(out, "Active since");
  time_text(out, a.active_at);
  out += "</td></tr>";
  row_text(out, "Value", value_text(a.value));
  row(out, "Labels");
  labels_cell(out, a.labels);
  out += "</td></tr>";
  row(out, "Group");
  append_html_escaped(out, g.name);
  out += " (<code>";
  append_html_escaped(out, g.file);
  out += "</code>)</td></tr>";
  row(out, "Rule");
  out += "<a href=\"";
  append_html_escaped(out, rule_link(g, r));
  out += "\">";
  append_html_escaped(out, r.name);
  out += "</a></td></tr>";
  row(out, "Expression");
  out += "<pre>";
  append_html_escaped(out, r.expr);
  out += "</pre></td></tr>";
  row(out, "For");
  seconds_text(out, r.for_);
  out += "</td></tr>";
  out += "</table>";
  annotations_table(out, a.annotations);
  out += "<p><a href=\"";
  append_html_escaped(out, "api/v1/alert?group_id=" + std::to_string(g.id) +
                               "&alert_id=" + std::to_string(a.id));
  out += "\">JSON</a></p>";
  end(out);
  return out;
}

std::string rule_page(const GroupSnapshot& g, const RuleSnapshot& r) {
  const bool alerting = r.type == rules::RuleType::alerting;
  std::string out;
  begin(out, "Rule " + r.name);
  out += "<h1>";
  out += alerting ? "Alerting rule " : "Recording rule ";
  append_html_escaped(out, r.name);
  out += "</h1><table>";
  row_text(out, "Name", r.name);
  if (alerting) {
    row(out, "State");
    badge(out, rules::to_string(r.state));
    out += "</td></tr>";
  }
  row(out, "Health");
  badge(out, r.last_error.empty() ? "ok" : "err");
  out += "</td></tr>";
  if (!r.last_error.empty()) {
    row(out, "Last error");
    out += "<pre>";
    append_html_escaped(out, r.last_error);
    out += "</pre></td></tr>";
  }
  row(out, "Group");
  append_html_escaped(out, g.name);
  out += " (<code>";
  append_html_escaped(out, g.file);
  out += "</code>)</td></tr>";
  row(out, "Expression");
  out += "<pre>";
  append_html_escaped(out, r.expr);
  out += "</pre></td></tr>";
  if (alerting) {
    row(out, "For");
    seconds_text(out, r.for_);
    out += "</td></tr>";
    if (r.keep_firing_for != core::Duration::zero()) {
      row(out, "Keep firing for");
      seconds_text(out, r.keep_firing_for);
      out += "</td></tr>";
    }
  }
  row(out, "Labels");
  labels_cell(out, r.labels);
  out += "</td></tr>";
  row(out, "Last evaluation");
  time_text(out, r.last_evaluation);
  out += "</td></tr>";
  row(out, "Evaluation time");
  seconds_text(out, r.evaluation_time);
  out += "</td></tr>";
  row_text(out, "Last samples", std::to_string(r.last_samples));
  out += "</table>";
  annotations_table(out, r.annotations);

  if (alerting) {
    out += "<h2>Alerts (" + std::to_string(r.alerts.size()) + ")</h2>";
    if (!r.alerts.empty()) {
      out += "<table><tr><th>Labels</th><th>State</th><th>Active since</th><th>Value</th></tr>";
      for (const auto& a : r.alerts) alert_row(out, {}, g, a, false);
      out += "</table>";
    }
  }

  out += "<h2>Last updates</h2>";
  out += "<table><tr><th>Updated at</th><th>Evaluation time</th><th>Samples</th>"
         "<th>Duration</th><th>Error</th></tr>";
  for (const auto& u : r.updates()) {
    out += "<tr><td>";
    time_text(out, u.time);
    out += "</td><td>";
    time_text(out, u.at);
    out += "</td><td>" + std::to_string(u.samples);
    if (u.series_fetched) out += " (" + std::to_string(*u.series_fetched) + " series fetched)";
    out += "</td><td>";
    seconds_text(out, u.duration);
    out += "</td><td>";
    if (!u.error.empty()) {
      out += "<pre>";
      append_html_escaped(out, u.error);
      out += "</pre>";
    }
    if (const std::string curl = u.curl_text(); !curl.empty()) {
      out += "<details><summary>request</summary><pre>";
      append_html_escaped(out, curl);
      out += "</pre></details>";
    }
    out += "</td></tr>";
  }
  out += "</table><p><a href=\"";
  append_html_escaped(out, "api/v1/rule?group_id=" + std::to_string(g.id) +
                               "&rule_id=" + std::to_string(r.id));
  out += "\">JSON</a></p>";
  end(out);
  return out;
}

namespace {


void link(std::string& out, std::string_view base, const std::string& href,
          std::string_view text) {
  out += "<a href=\"";
  append_html_escaped(out, base);
  append_html_escaped(out, href);
  out += "\">";
  append_html_escaped(out, text);
  out += "</a>";
}

}  // namespace

std::string groups_page(const RulesSelection& sel, const PageQuery& q, std::string_view base) {
  std::string out;
  begin(out, "Groups", q.reload_error, base);
  size_t rules = 0;
  for (const auto& g : sel.groups) rules += g.rules.size();
  out += "<h1>Groups (" + std::to_string(sel.groups.size()) + " groups, " +
         std::to_string(rules) + " rules)</h1>";
  // Filters are query parameters (the same as /api/v1/rules), so a filtered view is a link.
  out += "<form method=\"get\"><input name=\"search\" placeholder=\"group, file or rule\" value=\"";
  append_html_escaped(out, q.search);
  out += "\"><input name=\"state\" placeholder=\"firing,pending,unhealthy,...\" value=\"";
  append_html_escaped(out, q.state);
  out += "\"><input name=\"extended_states\" type=\"hidden\" value=\"true\">"
         "<button type=\"submit\">Filter</button></form>";
  for (const auto& sg : sel.groups) {
    const GroupSnapshot& g = *sg.group;
    out += "<h2 id=\"group-" + std::to_string(g.id) + "\">";
    append_html_escaped(out, g.name);
    out += " <span class=\"muted\">";
    for (const auto& [state, n] : sg.states) {
      if (state.empty()) continue;
      badge(out, state);
      out += "&times;" + std::to_string(n) + " ";
    }
    out += "</span></h2><p class=\"muted\"><code>";
    append_html_escaped(out, g.file);
    out += "</code> &middot; every ";
    seconds_text(out, g.interval);
    out += " &middot; last evaluation ";
    time_text(out, g.last_evaluation);
    out += "</p><table class=\"list\"><tr><th>Rule</th><th>Type</th><th>State</th>"
           "<th>Health</th><th>Last evaluation</th><th>Samples</th><th>Error</th></tr>";
    for (const auto& sr : sg.rules) {
      const RuleSnapshot& r = *sr.rule;
      const bool alerting = r.type == rules::RuleType::alerting;
      out += "<tr><td>";
      link(out, base, rule_link(g, r), r.name);
      out += "</td><td>";
      out += alerting ? "alerting" : "recording";
      out += "</td><td>";
      if (!sr.state.empty()) badge(out, sr.state);
      if (alerting && !r.alerts.empty()) out += " (" + std::to_string(r.alerts.size()) + ")";
      out += "</td><td>";
      badge(out, r.last_error.empty() ? "ok" : "err");
      out += "</td><td>";
      time_text(out, r.last_evaluation);
      out += "</td><td>" + std::to_string(r.last_samples) + "</td><td>";
      if (!r.last_error.empty()) {
        out += "<pre>";
        append_html_escaped(out, r.last_error);
        out += "</pre>";
      }
      out += "</td></tr>";
    }
    out += "</table>";
  }
  if (sel.groups.empty()) out += "<p>No groups match.</p>";
  end(out);
  return out;
}

std::string alerts_page(const SnapshotStore& store, const PageQuery& q, std::string_view base) {
  std::string out;
  begin(out, "Alerts", q.reload_error, base);
  const auto groups = store.all();
  size_t firing = 0;
  size_t pending = 0;
  for (const auto& g : groups) {
    for (const auto& r : g->rules) {
      for (const auto& a : r.alerts) {
        (a.state == rules::AlertState::firing ? firing : pending) += 1;
      }
    }
  }
  out += "<h1>Alerts (" + std::to_string(firing) + " firing, " + std::to_string(pending) +
         " pending)</h1>";
  out += "<form method=\"get\"><input name=\"search\" placeholder=\"alert name or label value\" "
         "value=\"";
  append_html_escaped(out, q.search);
  out += "\"><button type=\"submit\">Filter</button></form>";
  auto matches = [&](const RuleSnapshot& r, const AlertSnapshot& a) {
    if (q.search.empty() || core::icontains(r.name, q.search)) return true;
    for (const auto& l : a.labels) {
      if (core::icontains(l.value, q.search)) return true;
    }
    return false;
  };
  size_t shown = 0;
  for (const auto& g : groups) {
    for (const auto& r : g->rules) {
      if (r.alerts.empty()) continue;
      bool header = false;
      for (const auto& a : r.alerts) {
        if (!matches(r, a)) continue;
        if (!header) {
          header = true;
          out += "<h2>";
          link(out, base, rule_link(*g, r), r.name);
          out += " <span class=\"muted\">(";
          append_html_escaped(out, g->name);
          out += ")</span></h2><table class=\"list\"><tr><th>Labels</th><th>State</th>"
                 "<th>Active since</th><th>Value</th><th>Annotations</th></tr>";
        }
        ++shown;
        alert_row(out, base, *g, a, true);
      }
      if (header) out += "</table>";
    }
  }
  if (shown == 0) out += "<p>No pending or firing alerts.</p>";
  end(out);
  return out;
}

std::string notifiers_page(std::span<const std::shared_ptr<notifier::Notifier>> ns,
                           const PageQuery& q, std::string_view base) {
  std::string out;
  begin(out, "Notifiers", q.reload_error, base);
  out += "<h1>Notifiers (" + std::to_string(ns.size()) + ")</h1>";
  out += "<table class=\"list\"><tr><th>Kind</th><th>Address</th><th>Sent</th><th>Errors</th>"
         "<th>Queued</th><th>Dropped</th><th>Last error</th></tr>";
  for (const auto& n : ns) {
    if (!n) continue;
    const auto st = n->stats();
    out += "<tr><td>";
    append_html_escaped(out, n->kind());
    out += "</td><td><code>";
    append_html_escaped(out, n->addr());
    out += "</code></td><td>" + std::to_string(st.sent) + "</td><td>" +
           std::to_string(st.errors) + "</td><td>" + std::to_string(st.queued + st.in_flight) +
           "</td><td>" + std::to_string(st.dropped) + "</td><td>";
    if (!st.last_error.empty()) {
      out += "<pre>";
      append_html_escaped(out, st.last_error);
      out += "</pre>";
    }
    out += "</td></tr>";
  }
  out += "</table>";
  if (ns.empty()) out += "<p>No notifiers configured.</p>";
  end(out);
  return out;
}

std::string error_page(std::string_view message) {
  std::string out;
  begin(out, "Not available");
  out += "<h1>Not available</h1><p>";
  append_html_escaped(out, message);
  out += "</p><p>The alert or rule may have been resolved or removed since the link was "
         "sent.</p>";
  end(out);
  return out;
}

}  // namespace app
