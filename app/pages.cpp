#include "app/pages.hpp"

#include <charconv>
#include <chrono>
#include <cmath>

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
    "th{width:12rem;color:#555;font-weight:600}"
    "code,pre{font-family:ui-monospace,monospace;font-size:.9rem;white-space:pre-wrap}"
    ".badge{display:inline-block;padding:.1rem .5rem;border-radius:.7rem;color:#fff;"
    "background:#6c757d}"
    ".firing,.err,.unhealthy{background:#c0392b}.pending{background:#d68910}"
    ".inactive,.ok{background:#1e8449}"
    ".label{display:inline-block;background:#eef;border-radius:.3rem;padding:0 .3rem;"
    "margin:.1rem}"
    "@media (max-width:40rem){th{width:auto}table,tr,td,th{display:block}}";

void begin(std::string& out, std::string_view title) {
  out += "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>";
  append_html_escaped(out, title);
  out += " - alertd</title><style>";
  out += kStyle;
  out += "</style></head><body><nav><a href=\"../\">alertd</a>"
         "<a href=\"api/v1/rules\">rules (JSON)</a><a href=\"api/v1/alerts\">alerts (JSON)</a>"
         "</nav>";
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
      for (const auto& a : r.alerts) {
        out += "<tr><td><a href=\"";
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
        out += "</td></tr>";
      }
      out += "</table>";
    }
  }

  out += "<h2>Last updates</h2>";
  out += "<table><tr><th>Updated at</th><th>Evaluation time</th><th>Samples</th>"
         "<th>Duration</th><th>Error</th></tr>";
  for (const auto& u : r.updates) {
    if (!u) continue;
    out += "<tr><td>";
    time_text(out, u->time);
    out += "</td><td>";
    time_text(out, u->at);
    out += "</td><td>" + std::to_string(u->samples);
    if (u->series_fetched) out += " (" + std::to_string(*u->series_fetched) + " series fetched)";
    out += "</td><td>";
    seconds_text(out, u->duration);
    out += "</td><td>";
    if (!u->error.empty()) {
      out += "<pre>";
      append_html_escaped(out, u->error);
      out += "</pre>";
    }
    if (!u->curl.empty()) {
      out += "<details><summary>request</summary><pre>";
      append_html_escaped(out, u->curl);
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
