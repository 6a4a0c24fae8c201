#include "app/api.hpp"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "app/auth.hpp"
#include "app/pages.hpp"
#include "core/time.hpp"
#include "net/url.hpp"

namespace app {
namespace {

// ---- JSON pieces -------------------------------------------------------------------------

void append_labels(std::string& out, const core::Labels& labels) {
  // Nearly every set needs no escaping: its block (or its interned pairs) is already Go's JSON.
  if (labels.append_verbatim_json(out, core::JsonEscape::go, false)) return;
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

void append_string_array(std::string& out, const std::vector<std::string>& items) {
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    append_json_string(out, items[i]);
  }
  out += ']';
}

// Go's time.Time JSON: RFC3339Nano; the zero time (never evaluated) is year 1.
void append_time(std::string& out, core::TimePoint t) {
  out += '"';
  if (t == core::TimePoint{}) {
    out += "0001-01-01T00:00:00Z";
  } else {
    core::append_rfc3339_nano(out, t);
  }
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
  if (!a.labels.empty()) {
    out += ",\"labels\":";
    append_labels(out, a.labels);
  }
  out += ",\"annotations\":";
  append_labels(out, a.annotations);
  out += ",\"activeAt\":";
  append_time(out, a.active_at);
  out += ",\"id\":";
  append_u64_string(out, a.id);
  out += ",\"rule_id\":";
  append_u64_string(out, r.id);
  out += ",\"group_id\":";
  append_u64_string(out, g.id);
  out += ",\"expression\":";
  append_json_string(out, r.expr);
  out += ",\"source\":";
  // `a` is one of r.alerts: its templated source (if any) sits at the same index.
  const auto at = static_cast<size_t>(&a - r.alerts.data());
  if (at < r.alert_sources.size()) {
    append_json_string(out, r.alert_sources[at]);
  } else {
    std::string source = r.alert_source_prefix;
    source.append(std::to_string(a.id));
    append_json_string(out, source);
  }
  out += ",\"restored\":";
  out += a.restored ? "true" : "false";
  out += ",\"stabilizing\":";
  out += a.stabilizing ? "true" : "false";
  out += '}';
}

// How a rule is written: its (possibly extended) state, with or without alerts and updates.
struct RuleOptions {
  std::string_view state;
  bool alerts = true;
  bool updates = false;
};

void append_update(std::string& out, const rules::RuleUpdate& u) {
  out += "{\"time\":";
  append_time(out, u.time);
  out += ",\"at\":";
  append_time(out, u.at);
  // Go's time.Duration marshals as integer nanoseconds.
  out += ",\"duration\":";
  out += std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(u.duration).count());
  out += ",\"error\":";
  if (u.error.empty()) {
    out += "null";
  } else {
    append_json_string(out, u.error);
  }
  out += ",\"samples\":" + std::to_string(u.samples);
  out += ",\"series_fetched\":";
  out += u.series_fetched ? std::to_string(*u.series_fetched) : std::string("null");
  out += ",\"curl\":";
  append_json_string(out, u.curl_text());
  out += '}';
}

void append_rule(std::string& out, const GroupSnapshot& g, const RuleSnapshot& r,
                 const RuleOptions& opt) {
  out += "{\"state\":";
  append_json_string(out, opt.state);
  out += ",\"name\":";
  append_json_string(out, r.name);
  out += ",\"query\":";
  append_json_string(out, r.expr);
  out += ",\"duration\":";
  append_seconds(out, r.for_);
  out += ",\"keep_firing_for\":";
  append_seconds(out, r.keep_firing_for);
  if (!r.labels.empty()) {
    out += ",\"labels\":";
    append_labels(out, r.labels);
  }
  if (!r.annotations.empty()) {
    out += ",\"annotations\":";
    append_labels(out, r.annotations);
  }
  out += ",\"lastError\":";
  append_json_string(out, r.last_error);
  out += ",\"evaluationTime\":";
  append_seconds(out, r.evaluation_time);
  out += ",\"lastEvaluation\":";
  append_time(out, r.last_evaluation);
  if (opt.alerts && !r.alerts.empty()) {
    out += ",\"alerts\":[";
    bool first_alert = true;
    for (const auto& a : r.alerts) {
      if (!first_alert) out += ',';
      first_alert = false;
      append_alert(out, g, r, a);
    }
    out += ']';
  }
  out += ",\"health\":";
  out += r.last_error.empty() ? "\"ok\"" : "\"err\"";
  out += ",\"type\":";
  append_json_string(out, rules::to_string(r.type));
  out += ",\"datasourceType\":";
  append_json_string(out, g.type);
  out += ",\"lastSamples\":" + std::to_string(r.last_samples);
  if (r.last_series_fetched >= 0) {
    out += ",\"lastSeriesFetched\":" + std::to_string(r.last_series_fetched);
  }
  out += ",\"id\":";
  append_u64_string(out, r.id);
  out += ",\"group_id\":";
  append_u64_string(out, g.id);
  out += ",\"group_name\":";
  append_json_string(out, g.name);
  out += ",\"file\":";
  append_json_string(out, g.file);
  out += ",\"debug\":";
  out += r.debug ? "true" : "false";
  out += ",\"max_updates_entries\":" + std::to_string(r.update_entries_limit);
  const auto updates = opt.updates ? r.updates() : std::vector<rules::RuleUpdate>{};
  if (!updates.empty()) {
    out += ",\"updates\":[";
    bool first = true;
    for (const auto& u : updates) {
      if (u.time == core::TimePoint{} && u.at == core::TimePoint{}) continue;
      if (!first) out += ',';
      first = false;
      append_update(out, u);
    }
    out += ']';
  }
  out += '}';
}

// Everything of a group but its rules and states, which the caller writes: `{"name":..,"rules":[`
// is opened by append_group_head and closed by append_group_tail.
void append_group_head(std::string& out, const GroupSnapshot& g) {
  out += "{\"name\":";
  append_json_string(out, g.name);
  out += ",\"rules\":[";
}

void append_group_tail(std::string& out, const GroupSnapshot& g,
                       const std::map<std::string, int, std::less<>>& states) {
  out += "],\"interval\":";
  append_seconds(out, g.interval);
  out += ",\"lastEvaluation\":";
  append_time(out, g.last_evaluation);
  out += ",\"type\":";
  append_json_string(out, g.type);
  out += ",\"id\":";
  append_u64_string(out, g.id);
  out += ",\"file\":";
  append_json_string(out, g.file);
  out += ",\"concurrency\":" + std::to_string(g.concurrency);
  if (!g.params.empty()) {
    out += ",\"params\":";
    append_string_array(out, g.params);
  }
  if (!g.headers.empty()) {
    out += ",\"headers\":";
    append_string_array(out, g.headers);
  }
  if (!g.notifier_headers.empty()) {
    out += ",\"notifier_headers\":";
    append_string_array(out, g.notifier_headers);
  }
  if (!g.labels.empty()) {
    out += ",\"labels\":";
    append_labels(out, g.labels);
  }
  if (g.eval_offset && *g.eval_offset != core::Duration::zero()) {
    out += ",\"eval_offset\":";
    append_seconds(out, *g.eval_offset);
  }
  if (g.eval_delay && *g.eval_delay != core::Duration::zero()) {
    out += ",\"eval_delay\":";
    append_seconds(out, *g.eval_delay);
  }
  out += ",\"states\":{";
  bool first = true;
  for (const auto& [state, n] : states) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, state);
    out += ':' + std::to_string(n);
  }
  out += "}}";
}

// ---- rule state and filters ------------------------------------------------------------------

// The rule's API state: alerting rules inactive|pending|firing, recording rules "". Extended
// states (vmalert's UI, ApiRule.ExtendState) apply to rules without active alerts: "ok" for an
// empty state, "unhealthy" when the last run failed, "nomatch" when the datasource fetched no
// series at all (it must report the count: Prometheus does not, so never "nomatch" there).
std::string_view rule_state(const RuleSnapshot& r, bool extended) {
  std::string_view state =
      r.type == rules::RuleType::recording ? std::string_view{} : rules::to_string(r.state);
  if (!extended || !r.alerts.empty()) return state;
  if (state.empty()) state = "ok";
  if (!r.last_error.empty()) return "unhealthy";
  if (r.last_samples == 0 && r.last_series_fetched == 0) return "nomatch";
  return state;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool contains_folded(std::string_view haystack, std::string_view lowered_needle) {
  return ascii_lower(haystack).find(lowered_needle) != std::string::npos;
}

core::unexpected<ApiError> bad_request(std::string message) {
  return core::unexpected<ApiError>(ApiError{400, std::move(message)});
}

core::expected<GroupsFilter, ApiError> parse_groups_filter(const FormValues& form) {
  GroupsFilter gf;
  gf.group_names = form.all("rule_group[]");
  gf.files = form.all("file[]");
  const std::string_view ds = form.get("datasource_type");
  if (!ds.empty()) {
    if (ds != "prometheus" && ds != "graphite" && ds != "vlogs") {
      return bad_request("invalid parameter \"datasource_type\": not supported value \"" +
                         std::string(ds) + "\"");
    }
    gf.datasource_type = std::string(ds);
  }
  return gf;
}

core::expected<std::vector<SeriesSelector>, ApiError> parse_match(const FormValues& form) {
  std::vector<SeriesSelector> out;
  for (const auto& text : form.all("match[]")) {
    auto sel = SeriesSelector::parse(text);
    if (!sel) return bad_request("invalid parameter \"match[]\": " + sel.error().message);
    out.push_back(std::move(*sel));
  }
  return out;
}

bool rule_matches(const RulesFilter& f, const RuleSnapshot& r, std::string_view state) {
  if (!f.rule_type.empty() && f.rule_type != rules::to_string(r.type)) return false;
  if (!f.rule_names.empty() && !contains(f.rule_names, r.name)) return false;
  if (!matches_any(f.match, r.labels)) return false;
  if (f.states.empty()) return true;
  return contains(f.states, state);
}

// Go's strconv.Atoi-like: an optional sign and decimal digits only.
std::optional<long long> parse_int(std::string_view s) {
  long long v = 0;
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc{} || p != e || b == e) return std::nullopt;
  return v;
}

// group_id / alert_id / rule_id as uint64, with Go's error text.
core::expected<uint64_t, ApiError> parse_id(const FormValues& form, std::string_view name) {
  const std::string_view s = form.get(name);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) {
    const char* why = ec == std::errc::result_out_of_range ? "value out of range" : "invalid syntax";
    return bad_request("failed to read \"" + std::string(name) +
                       "\" param: strconv.ParseUint: parsing \"" + std::string(s) + "\": " + why);
  }
  return v;
}

core::unexpected<ApiError> not_found(std::string message) {
  return core::unexpected<ApiError>(ApiError{404, std::move(message)});
}

core::expected<std::shared_ptr<const GroupSnapshot>, ApiError> find_group(
    const SnapshotStore& store, const FormValues& form) {
  auto gid = parse_id(form, "group_id");
  if (!gid) return core::unexpected<ApiError>(gid.error());
  auto g = store.get(*gid);
  if (!g) return not_found("can't find group with id " + std::to_string(*gid));
  return g;
}

// A streamed answer's pieces are about this big (the last item may run past it).
constexpr size_t kStreamPiece = 64 * 1024;

// ---- responses -----------------------------------------------------------------------------

net::ServerResponse json_response(unsigned status, std::string body) {
  net::ServerResponse resp;
  resp.status = status;
  resp.content_type = "application/json";
  resp.body = std::move(body);
  return resp;
}

// A streamed JSON answer (net::BodyProducer): /api/v1/rules and /api/v1/alerts grow with the
// alerts (about 900 bytes each), so they are sent piece by piece instead of built whole.
net::ServerResponse json_stream_response(net::BodyProducer producer) {
  net::ServerResponse resp;
  resp.content_type = "application/json";
  resp.stream = std::move(producer);
  return resp;
}

net::ServerResponse error_response(const ApiError& e) { return json_response(e.status, error_json(e)); }

net::ServerResponse text_response(unsigned status, std::string body) {
  net::ServerResponse resp;
  resp.status = status;
  resp.body = std::move(body);
  return resp;
}

net::ServerResponse html_response(unsigned status, std::string body) {
  net::ServerResponse resp;
  resp.status = status;
  resp.content_type = "text/html; charset=utf-8";
  resp.body = std::move(body);
  return resp;
}

// The alert `alert_id` of group `group_id` and its rule.
struct AlertRef {
  std::shared_ptr<const GroupSnapshot> group;
  const RuleSnapshot* rule = nullptr;
  const AlertSnapshot* alert = nullptr;
};

core::expected<AlertRef, ApiError> find_alert(const SnapshotStore& store, const FormValues& form) {
  auto g = find_group(store, form);
  if (!g) return core::unexpected<ApiError>(g.error());
  auto aid = parse_id(form, "alert_id");
  if (!aid) return core::unexpected<ApiError>(aid.error());
  for (const auto& r : (*g)->rules) {
    for (const auto& a : r.alerts) {
      if (a.id == *aid) return AlertRef{*g, &r, &a};
    }
  }
  return not_found("can't find alert with id " + std::to_string(*aid) + " in group \"" +
                   (*g)->name + "\"");
}

struct RuleRef {
  std::shared_ptr<const GroupSnapshot> group;
  const RuleSnapshot* rule = nullptr;
};

core::expected<RuleRef, ApiError> find_rule(const SnapshotStore& store, const FormValues& form) {
  auto g = find_group(store, form);
  if (!g) return core::unexpected<ApiError>(g.error());
  auto rid = parse_id(form, "rule_id");
  if (!rid) return core::unexpected<ApiError>(rid.error());
  for (const auto& r : (*g)->rules) {
    if (r.id == *rid) return RuleRef{*g, &r};
  }
  return not_found("can't find rule with id " + std::to_string(*rid) + " in group \"" +
                   (*g)->name + "\"");
}

std::string group_json(const GroupSnapshot& g) {
  std::string out;
  std::map<std::string, int, std::less<>> states;
  append_group_head(out, g);
  bool first = true;
  for (const auto& r : g.rules) {
    if (!first) out += ',';
    first = false;
    const auto state = rule_state(r, false);
    ++states[std::string(state)];
    append_rule(out, g, r, RuleOptions{state, true, false});
  }
  append_group_tail(out, g, states);
  return out;
}

}  // namespace

// ---- public ---------------------------------------------------------------------------------

std::string error_json(const ApiError& e) {
  std::string_view type = "bad_data";
  if (e.status == 404) type = "not_found";
  if (e.status >= 500) type = "internal";
  std::string out = R"({"status":"error","errorType":")";
  out += type;
  out += R"(","error":)";
  append_json_string(out, e.message);
  out += '}';
  return out;
}

std::vector<std::string> api_params(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& params) {
  std::vector<std::pair<std::string, std::vector<std::string>>> sorted = params;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [name, values] : sorted) {
    for (const auto& v : values) out.push_back(name + "=" + v);
  }
  return out;
}

std::vector<std::string> api_headers(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::pair<std::string, std::string>> sorted = headers;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(sorted.size());
  for (const auto& [name, value] : sorted) {
    out.push_back(name + ": " + (net::looks_secret(name) ? std::string("secret") : value));
  }
  return out;
}

FormValues::FormValues(const net::ServerRequest& req) {
  if (req.method == "POST") {
    for (const auto& [name, value] : req.headers) {
      if (name.size() == 12 && ::strncasecmp(name.data(), "content-type", 12) == 0 &&
          value.starts_with("application/x-www-form-urlencoded")) {
        add_encoded(req.body);
        break;
      }
    }
  }
  if (const size_t q = req.target.find('?'); q != std::string::npos) {
    add_encoded(std::string_view(req.target).substr(q + 1));
  }
}

void FormValues::add_encoded(std::string_view encoded) {
  while (!encoded.empty()) {
    const size_t amp = encoded.find('&');
    const std::string_view pair = encoded.substr(0, amp);
    encoded = amp == std::string_view::npos ? std::string_view{} : encoded.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    values_.emplace_back(
        net::query_unescape(pair.substr(0, eq)),
        eq == std::string_view::npos ? std::string{} : net::query_unescape(pair.substr(eq + 1)));
  }
}

std::string_view FormValues::get(std::string_view name) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return v;
  }
  return {};
}

bool FormValues::has(std::string_view name) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return true;
  }
  return false;
}

std::vector<std::string> FormValues::all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : values_) {
    if (n == name) out.push_back(v);
  }
  return out;
}

bool FormValues::get_bool(std::string_view name) const {
  const std::string v = ascii_lower(get(name));
  return !(v.empty() || v == "0" || v == "f" || v == "false" || v == "no");
}

bool GroupsFilter::matches(const GroupSnapshot& g) const {
  if (!group_names.empty() && !contains(group_names, g.name)) return false;
  if (!files.empty() && !contains(files, g.file)) return false;
  if (!datasource_type.empty() && datasource_type != g.type) return false;
  return true;
}

core::expected<AlertsFilter, ApiError> parse_alerts_filter(const FormValues& form) {
  AlertsFilter f;
  auto gf = parse_groups_filter(form);
  if (!gf) return core::unexpected<ApiError>(gf.error());
  f.groups = std::move(*gf);
  auto match = parse_match(form);
  if (!match) return core::unexpected<ApiError>(match.error());
  f.match = std::move(*match);
  return f;
}

core::expected<RulesFilter, ApiError> parse_rules_filter(const FormValues& form) {
  RulesFilter f;
  auto gf = parse_groups_filter(form);
  if (!gf) return core::unexpected<ApiError>(gf.error());
  f.groups = std::move(*gf);
  const std::string_view type = form.get("type");
  if (type == "alert") {
    f.rule_type = "alerting";
  } else if (type == "record") {
    f.rule_type = "recording";
  } else if (!type.empty()) {
    return bad_request("invalid parameter \"type\": not supported value \"" + std::string(type) +
                       "\"");
  }
  auto match = parse_match(form);
  if (!match) return core::unexpected<ApiError>(match.error());
  f.match = std::move(*match);

  // "recovering" is Grafana's and accepted but never matches; noData, normal and error are
  // Grafana's names for nomatch, inactive and unhealthy.
  static constexpr std::string_view kStates[] = {"ok",       "nomatch",  "inactive",
                                                 "firing",   "pending",  "unhealthy",
                                                 "recovering", "noData", "normal",
                                                 "error"};
  auto states = form.all("state");
  if (states.empty()) states = form.all("filter");
  for (const auto& list : states) {
    std::string_view rest = list;
    while (true) {
      const size_t comma = rest.find(',');
      std::string_view v = rest.substr(0, comma);
      if (!v.empty()) {
        if (std::find(std::begin(kStates), std::end(kStates), v) == std::end(kStates)) {
          return bad_request("invalid parameter \"state\": contains not supported value \"" +
                             std::string(v) + "\"");
        }
        if (v == "noData") v = "nomatch";
        if (v == "normal") v = "inactive";
        if (v == "error") v = "unhealthy";
        f.states.emplace_back(v);
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  f.exclude_alerts = form.get_bool("exclude_alerts");
  f.extended_states = form.get_bool("extended_states");
  f.rule_names = form.all("rule_name[]");
  f.search = ascii_lower(form.get("search"));

  const std::string_view page_num = form.get("page_num");
  const std::string_view group_limit = form.get("group_limit");
  if (!page_num.empty()) {
    if (group_limit.empty()) {
      return bad_request("\"group_limit\" needs to be present in order to paginate over the groups");
    }
    const auto v = parse_int(page_num);
    if (!v || *v <= 0 || *v > 1'000'000'000) {
      return bad_request("\"page_num\" is expected to be a positive number, found \"" +
                         std::string(page_num) + "\"");
    }
    f.page_num = static_cast<int>(*v);
  }
  if (!group_limit.empty()) {
    const auto v = parse_int(group_limit);
    if (!v || *v <= 0 || *v > 1'000'000'000) {
      return bad_request("\"group_limit\" is expected to be a positive number, found \"" +
                         std::string(group_limit) + "\"");
    }
    f.group_limit = static_cast<int>(*v);
  }
  return f;
}

net::BodyProducer alerts_json_stream(const SnapshotStore& store, const AlertsFilter& filter) {
  struct Ref {
    const GroupSnapshot* g;
    const RuleSnapshot* r;
    const AlertSnapshot* a;
  };
  // The snapshots (immutable) stay alive in the producer until the last piece: the answer is
  // one consistent view however long the client takes to read it.
  struct State {
    std::vector<std::shared_ptr<const GroupSnapshot>> groups;
    std::vector<Ref> refs;
    size_t next = 0;
    bool started = false;
  };
  auto st = std::make_shared<State>();
  st->groups = store.all();
  for (const auto& g : st->groups) {
    if (!filter.groups.matches(*g)) continue;
    for (const auto& r : g->rules) {
      for (const auto& a : r.alerts) {
        if (matches_any(filter.match, a.labels)) st->refs.push_back({g.get(), &r, &a});
      }
    }
  }
  // vmalert sorts by the ID's decimal string ("10" < "9").
  std::sort(st->refs.begin(), st->refs.end(), [](const Ref& x, const Ref& y) {
    char bx[24];
    char by[24];
    const auto ex = std::to_chars(bx, bx + sizeof bx, x.a->id).ptr;
    const auto ey = std::to_chars(by, by + sizeof by, y.a->id).ptr;
    return std::string_view(bx, static_cast<size_t>(ex - bx)) <
           std::string_view(by, static_cast<size_t>(ey - by));
  });
  return [st](std::string& out) {
    if (!st->started) {
      st->started = true;
      out += R"({"status":"success","data":{"alerts":[)";
    }
    while (st->next < st->refs.size() && out.size() < kStreamPiece) {
      if (st->next > 0) out += ',';
      const Ref& ref = st->refs[st->next++];
      append_alert(out, *ref.g, *ref.r, *ref.a);
    }
    if (st->next < st->refs.size()) return true;
    out += "]}}";
    return false;
  };
}

std::string alerts_json(const SnapshotStore& store, const AlertsFilter& filter) {
  net::ServerResponse r;
  r.stream = alerts_json_stream(store, filter);
  net::collect_body(r);
  return std::move(r.body);
}

core::expected<RulesSelection, ApiError> select_rules(const SnapshotStore& store,
                                                     const RulesFilter& f) {
  RulesSelection sel;
  const auto groups = store.all();
  const long long limit = f.group_limit;
  long long skip = (static_cast<long long>(f.page_num) - 1) * limit;
  const bool early_empty = skip >= static_cast<long long>(groups.size());
  if (!early_empty) {
    SelectedGroup current;
    for (const auto& g : groups) {
      if (!f.groups.matches(*g)) continue;
      const bool group_found = f.search.empty() || contains_folded(g->name, f.search) ||
                               contains_folded(g->file, f.search);
      current.rules.clear();
      current.states.clear();
      for (const auto& r : g->rules) {
        if (!group_found && !contains_folded(r.name, f.search)) continue;
        const auto state = rule_state(r, f.extended_states);
        if (!rule_matches(f, r, state)) continue;
        ++current.states[std::string(state)];
        current.rules.push_back(SelectedRule{&r, state});
      }
      if (!g->rules.empty() && current.rules.empty()) continue;
      if (limit > 0) {
        ++sel.total_groups;
        sel.total_rules += static_cast<long long>(current.rules.size());
      }
      if (skip > 0) {
        --skip;
        continue;
      }
      if (limit == 0 || static_cast<long long>(sel.groups.size()) < limit) {
        current.group = g;
        sel.groups.push_back(std::move(current));
        current = SelectedGroup{};
      }
    }
  }
  if (limit > 0 && !early_empty) {
    sel.page = f.page_num;
    sel.total_pages = std::max<long long>((sel.total_groups + limit - 1) / limit, 1);
  }
  if (f.page_num > 1 && sel.groups.empty()) {
    return bad_request("page_num exceeds total amount of pages");
  }
  if (sel.page > sel.total_pages) {
    return bad_request("page_num=" + std::to_string(sel.page) +
                       " exceeds total amount of pages in result=" +
                       std::to_string(sel.total_pages));
  }
  return sel;
}

core::expected<net::BodyProducer, ApiError> rules_json_stream(const SnapshotStore& store,
                                                              const RulesFilter& f) {
  auto sel = select_rules(store, f);
  if (!sel) return core::unexpected<ApiError>(sel.error());
  // The selection holds the group snapshots (immutable), so every piece reads the same view.
  // One piece is at most one rule past kStreamPiece (a rule with all its alerts).
  struct State {
    RulesSelection sel;
    bool exclude_alerts = false;
    bool started = false;
    size_t group = 0;
    size_t rule = 0;  // next rule of `group`
    bool in_group = false;  // `group`'s head is out
  };
  auto st = std::make_shared<State>();
  st->sel = std::move(*sel);
  st->exclude_alerts = f.exclude_alerts;
  return [st](std::string& out) {
    const auto& groups = st->sel.groups;
    if (!st->started) {
      st->started = true;
      const auto& s = st->sel;
      out = R"({"status":"success")";
      if (s.page != 0) out += ",\"page\":" + std::to_string(s.page);
      if (s.total_pages != 0) out += ",\"total_pages\":" + std::to_string(s.total_pages);
      if (s.total_groups != 0) out += ",\"total_groups\":" + std::to_string(s.total_groups);
      if (s.total_rules != 0) out += ",\"total_rules\":" + std::to_string(s.total_rules);
      out += R"(,"data":{"groups":[)";
    }
    while (st->group < groups.size() && out.size() < kStreamPiece) {
      const SelectedGroup& sg = groups[st->group];
      if (!st->in_group) {
        st->in_group = true;
        if (st->group > 0) out += ',';
        append_group_head(out, *sg.group);
      }
      while (st->rule < sg.rules.size() && out.size() < kStreamPiece) {
        if (st->rule > 0) out += ',';
        const SelectedRule& sr = sg.rules[st->rule++];
        append_rule(out, *sg.group, *sr.rule, RuleOptions{sr.state, !st->exclude_alerts, false});
      }
      if (st->rule < sg.rules.size()) return true;
      append_group_tail(out, *sg.group, sg.states);
      ++st->group;
      st->rule = 0;
      st->in_group = false;
    }
    if (st->group < groups.size()) return true;
    out += "]}}";
    return false;
  };
}

core::expected<std::string, ApiError> rules_json(const SnapshotStore& store,
                                                 const RulesFilter& f) {
  auto producer = rules_json_stream(store, f);
  if (!producer) return core::unexpected<ApiError>(producer.error());
  net::ServerResponse r;
  r.stream = std::move(*producer);
  net::collect_body(r);
  return std::move(r.body);
}

std::string rules_json(const SnapshotStore& store) {
  auto r = rules_json(store, RulesFilter{});
  return r ? std::move(*r) : error_json(r.error());
}

std::string notifiers_json(std::span<const std::shared_ptr<notifier::Notifier>> ns) {
  std::map<std::string, std::vector<const notifier::Notifier*>, std::less<>> by_kind;
  for (const auto& n : ns) {
    if (n) by_kind[std::string(n->kind())].push_back(n.get());
  }
  std::string out = R"({"status":"success","data":{"notifiers":[)";
  bool first_kind = true;
  for (const auto& [kind, targets] : by_kind) {
    if (!first_kind) out += ',';
    first_kind = false;
    out += "{\"kind\":";
    append_json_string(out, kind);
    out += ",\"targets\":[";
    bool first = true;
    for (const auto* n : targets) {
      if (!first) out += ',';
      first = false;
      out += "{\"address\":";
      append_json_string(out, n->addr());
      out += ",\"labels\":";
      append_labels(out, n->target_labels());
      const auto st = n->stats();
      out += ",\"lastError\":";
      append_json_string(out, st.last_error);
      // alertd: the delivery queue (notifier/delivery_queue.hpp).
      out += ",\"queueLength\":" + std::to_string(st.queued);
      out += ",\"inFlight\":" + std::to_string(st.in_flight);
      out += ",\"dropped\":" + std::to_string(st.dropped);
      out += '}';
    }
    out += "]}";
  }
  out += "]}}";
  return out;
}

std::string metrics_page(const ApiContext& ctx) {
  std::vector<std::shared_ptr<notifier::Notifier>> owned;
  if (ctx.notifiers != nullptr) owned = ctx.notifiers->targets();
  std::vector<const notifier::Notifier*> notifiers;
  for (const auto& n : owned) notifiers.push_back(n.get());
  return render_metrics(*ctx.store, *ctx.counters, notifiers, ctx.remote_write, ctx.push);
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
    auto resp = text_response(200, metrics_page(ctx));
    resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return resp;
  }
  if (path == "/-/reload") {
    if (auto denied = check_auth_key(req, ctx.reload_auth_key, "reloadAuthKey")) return *denied;
    if (ctx.reload) ctx.reload();
    return text_response(200, "");
  }
  if (path.starts_with("/api/v1/")) {
    const FormValues form(req);
    if (path == "/api/v1/rules") {
      auto f = parse_rules_filter(form);
      if (!f) return error_response(f.error());
      auto producer = rules_json_stream(*ctx.store, *f);
      if (!producer) return error_response(producer.error());
      return json_stream_response(std::move(*producer));
    }
    if (path == "/api/v1/alerts") {
      auto f = parse_alerts_filter(form);
      if (!f) return error_response(f.error());
      return json_stream_response(alerts_json_stream(*ctx.store, *f));
    }
    if (path == "/api/v1/alert") {
      auto ref = find_alert(*ctx.store, form);
      if (!ref) return error_response(ref.error());
      std::string out;
      append_alert(out, *ref->group, *ref->rule, *ref->alert);
      return json_response(200, std::move(out));
    }
    if (path == "/api/v1/rule") {
      auto ref = find_rule(*ctx.store, form);
      if (!ref) return error_response(ref.error());
      std::string out;
      append_rule(out, *ref->group, *ref->rule,
                  RuleOptions{rule_state(*ref->rule, false), true, true});
      return json_response(200, std::move(out));
    }
    if (path == "/api/v1/group") {
      auto g = find_group(*ctx.store, form);
      if (!g) return error_response(g.error());
      return json_response(200, group_json(**g));
    }
    if (path == "/api/v1/notifiers") {
      std::vector<std::shared_ptr<notifier::Notifier>> owned;
      if (ctx.notifiers != nullptr) owned = ctx.notifiers->targets();
      return json_response(200, notifiers_json(owned));
    }
  }
  if (path == "/vmalert/alert") {
    const FormValues form(req);
    auto ref = find_alert(*ctx.store, form);
    if (!ref) return html_response(ref.error().status, error_page(ref.error().message));
    return html_response(200, alert_page(*ref->group, *ref->rule, *ref->alert));
  }
  if (path == "/vmalert/rule") {
    const FormValues form(req);
    auto ref = find_rule(*ctx.store, form);
    if (!ref) return html_response(ref.error().status, error_page(ref.error().message));
    return html_response(200, rule_page(*ref->group, *ref->rule));
  }
  if (path == "/" || path == "/vmalert" || path == "/vmalert/" || path == "/vmalert/home" ||
      path == "/vmalert/groups" || path == "/vmalert/alerts" || path == "/vmalert/notifiers") {
    const std::string_view base = path == "/" ? "vmalert/" : path == "/vmalert" ? "vmalert/" : "";
    const FormValues form(req);
    const std::string reload_error = ctx.reload_status ? ctx.reload_status->error() : "";
    PageQuery q{form.get("search"), form.get("state"), reload_error};
    if (path == "/vmalert/alerts") return html_response(200, alerts_page(*ctx.store, q, base));
    if (path == "/vmalert/notifiers") {
      std::vector<std::shared_ptr<notifier::Notifier>> owned;
      if (ctx.notifiers != nullptr) owned = ctx.notifiers->targets();
      return html_response(200, notifiers_page(owned, q, base));
    }
    auto f = parse_rules_filter(form);
    if (!f) return html_response(f.error().status, error_page(f.error().message));
    auto sel = select_rules(*ctx.store, *f);
    if (!sel) return html_response(sel.error().status, error_page(sel.error().message));
    return html_response(200, groups_page(*sel, q, base));
  }
  return error_response(
      ApiError{404, "unsupported path requested: \"" + std::string(path) + "\""});
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
