#include "app/api.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <chrono>
#include <cstdio>

#include "app/auth.hpp"
#include "core/time.hpp"

namespace app {
namespace {

void append_labels(std::string& out, const core::Labels& labels) {
  out += '{';
  bool first = true;
  for (const auto& l : labels) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, l.name);
    out += ':';
    append_json_string(out, l.value);
  }
  out += '}';
}

void append_u64_string(std::string& out, uint64_t v) {
  out += '"';
  out += std::to_string(v);
  out += '"';
}

// vmalert formats alert values with strconv.FormatFloat(v, 'f', -1, 32).
std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v),
                               std::chars_format::fixed);
  if (ec != std::errc{}) return std::to_string(v);
  return std::string(buf, p);
}

void append_seconds(std::string& out, core::Duration d) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, std::chrono::duration<double>(d).count());
  out.append(buf, p);
}

void append_alert(std::string& out, const GroupSnapshot& g, const RuleSnapshot& r,
                  const AlertSnapshot& a) {
  out += "{\"state\":";
  append_json_string(out, rules::to_string(a.state));
  out += ",\"name\":";
  append_json_string(out, r.name);
  out += ",\"value\":";
  append_json_string(out, format_value(a.value));
  out += ",\"labels\":";
  append_labels(out, a.labels);
  out += ",\"annotations\":";
  append_labels(out, a.annotations);
  out += ",\"activeAt\":\"";
  core::append_rfc3339_nano(out, a.active_at);
  out += "\",\"id\":";
  append_u64_string(out, a.id);
  out += ",\"rule_id\":";
  append_u64_string(out, r.id);
  out += ",\"group_id\":";
  append_u64_string(out, g.id);
  out += ",\"expression\":";
  append_json_string(out, r.expr);
  out += ",\"source\":";
  append_json_string(out, a.source);
  out += ",\"restored\":";
  out += a.restored ? "true" : "false";
  out += ",\"stabilizing\":";
  out += a.stabilizing ? "true" : "false";
  out += '}';
}

net::ServerResponse json_response(unsigned status, std::string body) {
  net::ServerResponse resp;
  resp.status = status;
  resp.content_type = "application/json";
  resp.body = std::move(body);
  return resp;
}

net::ServerResponse text_response(unsigned status, std::string body) {
  net::ServerResponse resp;
  resp.status = status;
  resp.body = std::move(body);
  return resp;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xF];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

std::string alerts_json(const SnapshotStore& store) {
  struct Ref {
    const GroupSnapshot* g;
    const RuleSnapshot* r;
    const AlertSnapshot* a;
  };
  const auto groups = store.all();
  std::vector<Ref> refs;
  for (const auto& g : groups)
    for (const auto& r : g->rules)
      for (const auto& a : r.alerts) refs.push_back({g.get(), &r, &a});
  std::sort(refs.begin(), refs.end(), [](const Ref& x, const Ref& y) { return x.a->id < y.a->id; });
  std::string out = R"({"status":"success","data":{"alerts":[)";
  bool first = true;
  for (const auto& ref : refs) {
    if (!first) out += ',';
    first = false;
    append_alert(out, *ref.g, *ref.r, *ref.a);
  }
  out += "]}}";
  return out;
}

std::string rules_json(const SnapshotStore& store) {
  std::string out = R"({"status":"success","data":{"groups":[)";
  bool first_group = true;
  for (const auto& g : store.all()) {
    if (!first_group) out += ',';
    first_group = false;
    out += "{\"name\":";
    append_json_string(out, g->name);
    out += ",\"rules\":[";
    bool first_rule = true;
    for (const auto& r : g->rules) {
      if (!first_rule) out += ',';
      first_rule = false;
      out += "{\"state\":";
      append_json_string(out, rules::to_string(r.state));
      out += ",\"name\":";
      append_json_string(out, r.name);
      out += ",\"query\":";
      append_json_string(out, r.expr);
      out += ",\"duration\":";
      append_seconds(out, r.for_);
      out += ",\"keep_firing_for\":";
      append_seconds(out, r.keep_firing_for);
      out += ",\"labels\":";
      append_labels(out, r.labels);
      out += ",\"annotations\":";
      append_labels(out, r.annotations);
      out += ",\"lastError\":";
      append_json_string(out, r.last_error);
      out += ",\"evaluationTime\":";
      append_seconds(out, r.evaluation_time);
      out += ",\"lastEvaluation\":\"";
      core::append_rfc3339_nano(out, r.last_evaluation);
      out += "\",\"alerts\":[";
      bool first_alert = true;
      for (const auto& a : r.alerts) {
        if (!first_alert) out += ',';
        first_alert = false;
        append_alert(out, *g, r, a);
      }
      out += "],\"health\":";
      out += r.last_error.empty() ? "\"ok\"" : "\"err\"";
      out += ",\"type\":";
      append_json_string(out, rules::to_string(r.type));
      out += ",\"datasourceType\":";
      append_json_string(out, g->type);
      out += ",\"lastSamples\":" + std::to_string(r.last_samples);
      out += ",\"lastSeriesFetched\":" + std::to_string(r.last_series_fetched);
      out += ",\"id\":";
      append_u64_string(out, r.id);
      out += ",\"group_id\":";
      append_u64_string(out, g->id);
      out += ",\"group_name\":";
      append_json_string(out, g->name);
      out += ",\"file\":";
      append_json_string(out, g->file);
      out += ",\"debug\":";
      out += r.debug ? "true" : "false";
      out += ",\"max_updates_entries\":" + std::to_string(r.update_entries_limit);
      out += '}';
    }
    out += "],\"interval\":";
    append_seconds(out, g->interval);
    out += ",\"lastEvaluation\":\"";
    core::append_rfc3339_nano(out, g->last_evaluation);
    out += "\",\"type\":";
    append_json_string(out, g->type);
    out += ",\"id\":";
    append_u64_string(out, g->id);
    out += ",\"file\":";
    append_json_string(out, g->file);
    out += ",\"concurrency\":" + std::to_string(g->concurrency);
    out += ",\"labels\":";
    append_labels(out, g->labels);
    if (g->eval_offset) {
      out += ",\"eval_offset\":";
      append_seconds(out, *g->eval_offset);
    }
    if (g->eval_delay) {
      out += ",\"eval_delay\":";
      append_seconds(out, *g->eval_delay);
    }
    out += '}';
  }
  out += "]}}";
  return out;
}

net::ServerResponse handle_request(const ApiContext& ctx, const net::ServerRequest& req) {
  std::string_view path = req.target;
  if (auto q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  if (path.starts_with("/vmalert/api/")) path.remove_prefix(std::string_view("/vmalert").size());

  if (path == "/-/healthy" || path == "/health" || path == "/ping") return text_response(200, "OK");
  if (path == "/-/ready") {
    if (ctx.ready != nullptr && !ctx.ready->load()) return text_response(503, "not ready");
    return text_response(200, "OK");
  }
  if (path == "/metrics") {
    std::vector<std::shared_ptr<notifier::Notifier>> owned;
    if (ctx.notifiers != nullptr) owned = ctx.notifiers->targets();
    std::vector<const notifier::Notifier*> notifiers;
    for (const auto& n : owned) notifiers.push_back(n.get());
    auto resp = text_response(200, render_metrics(*ctx.store, *ctx.counters, notifiers));
    resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return resp;
  }
  if (path == "/api/v1/alerts") return json_response(200, alerts_json(*ctx.store));
  if (path == "/api/v1/rules") return json_response(200, rules_json(*ctx.store));
  if (path == "/-/reload") {
    if (auto denied = check_auth_key(req, ctx.reload_auth_key, "reloadAuthKey")) return *denied;
    if (ctx.reload) ctx.reload();
    return text_response(200, "");
  }
  if (path == "/") {
    return text_response(200,
                         "alertd\n\n/api/v1/alerts\n/api/v1/rules\n/metrics\n/-/healthy\n/-/ready\n");
  }
  std::string body = R"({"error":)";
  append_json_string(body, "unsupported path requested: \"" + std::string(path) + "\"");
  body += R"(,"errorType":404})";
  return json_response(404, body);
}

std::vector<std::shared_ptr<const GroupSnapshot>> SnapshotStore::all() const {
  std::vector<std::shared_ptr<const GroupSnapshot>> out;
  {
    std::lock_guard lock(mu_);
    out.reserve(groups_.size());
    for (const auto& [id, g] : groups_) out.push_back(g);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a->name != b->name ? a->name < b->name : a->file < b->file;
  });
  return out;
}

}  // namespace app
