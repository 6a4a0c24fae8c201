// The JSON API's filters, single-object endpoints, errors and pages, against a fixed store.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "app/api.hpp"
#include "tests/fakes/recording_notifier.hpp"

namespace {

core::TimePoint at_ms(int64_t ms) { return core::from_unix_ms(ms); }

app::RuleSnapshot alerting(uint64_t id, std::string name, core::Labels labels,
                           rules::AlertState state) {
  app::RuleSnapshot r;
  r.type = rules::RuleType::alerting;
  r.id = id;
  r.name = std::move(name);
  r.expr = "expr_" + std::to_string(id);
  r.labels = std::move(labels);
  r.state = state;
  r.last_samples = 1;
  return r;
}

app::AlertSnapshot alert(uint64_t id, rules::AlertState state, core::Labels labels) {
  app::AlertSnapshot a;
  a.id = id;
  a.state = state;
  a.labels = std::move(labels);
  a.value = 1;
  a.active_at = at_ms(1700000000000);
  return a;
}

// alpha (a.yml): HighCPU firing, DiskFull inactive with no series fetched, job:rate failing.
// beta (b.yml): SlowQuery pending, rec:ok recording fine. gamma (c.yml, graphite): no rules.
void fill(app::SnapshotStore& store) {
  auto alpha = std::make_shared<app::GroupSnapshot>();
  alpha->id = 1;
  alpha->name = "alpha";
  alpha->file = "a.yml";
  alpha->type = "prometheus";
  alpha->interval = std::chrono::seconds(10);
  auto high = alerting(11, "HighCPU", {{"severity", "critical"}, {"team", "db"}},
                       rules::AlertState::firing);
  high.alerts.push_back(alert(99, rules::AlertState::firing,
                              {{"alertname", "HighCPU"}, {"instance", "h<1>"},
                               {"severity", "critical"}}));
  high.annotations = core::Labels{{"summary", "CPU <high> & rising"}};
  rules::RuleUpdate upd;
  upd.time = at_ms(1700000001500);
  upd.at = at_ms(1700000000000);
  upd.duration = std::chrono::milliseconds(3);
  upd.samples = 1;
  upd.curl = std::make_shared<const rules::CurlMaker>(
      [](core::TimePoint) { return std::string("curl 'http://prom/api/v1/query?query=expr_11'"); });
  rules::RuleUpdate failed = upd;
  failed.time = at_ms(1700000000500);
  failed.error = "connection refused";
  failed.samples = 0;
  failed.series_fetched = 4;
  auto history = std::make_shared<rules::UpdateHistory>(20);
  history->add(failed);
  history->add(upd);
  high.history = history;
  high.history_added = history->added();
  // Added after the snapshot was taken: not shown.
  rules::RuleUpdate later = upd;
  later.time = at_ms(1700000002500);
  later.error = "too late for this snapshot";
  history->add(later);
  alpha->rules.push_back(high);
  auto disk = alerting(12, "DiskFull", {{"severity", "warning"}}, rules::AlertState::inactive);
  disk.last_samples = 0;
  disk.last_series_fetched = 0;
  alpha->rules.push_back(disk);
  app::RuleSnapshot rec;
  rec.type = rules::RuleType::recording;
  rec.id = 13;
  rec.name = "job:rate";
  rec.expr = "sum(rate(x[5m]))";
  rec.last_error = "boom";
  alpha->rules.push_back(rec);
  store.publish(alpha);

  auto beta = std::make_shared<app::GroupSnapshot>();
  beta->id = 2;
  beta->name = "beta";
  beta->file = "b.yml";
  beta->type = "prometheus";
  beta->interval = std::chrono::seconds(30);
  beta->params = {"nocache=1"};
  beta->headers = {"X-Tenant: 7"};
  auto slow = alerting(21, "SlowQuery", {{"severity", "warning"}, {"team", "db"}},
                       rules::AlertState::pending);
  slow.alerts.push_back(
      alert(77, rules::AlertState::pending, {{"alertname", "SlowQuery"}, {"team", "db"}}));
  beta->rules.push_back(slow);
  app::RuleSnapshot ok;
  ok.type = rules::RuleType::recording;
  ok.id = 22;
  ok.name = "rec:ok";
  ok.expr = "up";
  ok.last_samples = 3;
  beta->rules.push_back(ok);
  store.publish(beta);

  auto gamma = std::make_shared<app::GroupSnapshot>();
  gamma->id = 3;
  gamma->name = "gamma";
  gamma->file = "c.yml";
  gamma->type = "graphite";
  store.publish(gamma);
}

struct Api {
  app::SnapshotStore store;
  app::GlobalCounters counters;
  app::NotifierSet notifiers;
  app::ApiContext ctx;

  Api() {
    fill(store);
    ctx.store = &store;
    ctx.counters = &counters;
    ctx.notifiers = &notifiers;
  }

  net::ServerResponse get(std::string target) const {
    net::ServerRequest req;
    req.method = "GET";
    req.target = std::move(target);
    auto resp = app::handle_request(ctx, req);
    net::collect_body(resp);  // /api/v1/rules and /api/v1/alerts are streamed
    return resp;
  }
};

rapidjson::Document parse(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

// "group:rule,rule|group:..." for a compact comparison.
std::string listing(const std::string& body) {
  const auto d = parse(body);
  REQUIRE(std::string(d["status"].GetString()) == "success");
  std::string out;
  for (const auto& g : d["data"]["groups"].GetArray()) {
    if (!out.empty()) out += '|';
    out += g["name"].GetString();
    out += ':';
    bool first = true;
    for (const auto& r : g["rules"].GetArray()) {
      if (!first) out += ',';
      first = false;
      out += r["name"].GetString();
    }
  }
  return out;
}

std::string alert_ids(const std::string& body) {
  const auto d = parse(body);
  std::string out;
  for (const auto& a : d["data"]["alerts"].GetArray()) {
    if (!out.empty()) out += ',';
    out += a["id"].GetString();
  }
  return out;
}

}  // namespace

TEST_CASE("/api/v1/rules filters", "[app][api]") {
  Api api;
  struct Case {
    std::string query;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"", "alpha:HighCPU,DiskFull,job:rate|beta:SlowQuery,rec:ok|gamma:"},
      {"type=alert", "alpha:HighCPU,DiskFull|beta:SlowQuery|gamma:"},
      {"type=record", "alpha:job:rate|beta:rec:ok|gamma:"},
      {"rule_group[]=beta", "beta:SlowQuery,rec:ok"},
      {"rule_group%5B%5D=beta&rule_group%5B%5D=gamma", "beta:SlowQuery,rec:ok|gamma:"},
      {"file[]=a.yml", "alpha:HighCPU,DiskFull,job:rate"},
      {"datasource_type=graphite", "gamma:"},
      {"rule_name[]=DiskFull&rule_name[]=rec:ok", "alpha:DiskFull|beta:rec:ok|gamma:"},
      {"match[]={severity=\"warning\"}", "alpha:DiskFull|beta:SlowQuery|gamma:"},
      {"match%5B%5D=%7Bseverity%3D%22warning%22%7D", "alpha:DiskFull|beta:SlowQuery|gamma:"},
      {"match[]={team=\"db\",severity=\"critical\"}&match[]={severity=\"warning\",team=\"db\"}",
       "alpha:HighCPU|beta:SlowQuery|gamma:"},
      {"match[]={severity=~\"crit.*|warn.*\",team!=\"db\"}", "alpha:DiskFull|gamma:"},
      {"state=firing", "alpha:HighCPU|gamma:"},
      {"state=firing,pending", "alpha:HighCPU|beta:SlowQuery|gamma:"},
      {"state=firing&state=pending", "alpha:HighCPU|beta:SlowQuery|gamma:"},
      {"filter=pending", "beta:SlowQuery|gamma:"},
      {"state=inactive", "alpha:DiskFull|gamma:"},
      {"state=normal", "alpha:DiskFull|gamma:"},
      {"state=recovering", "gamma:"},
      // Without extended states, recording rules have no state and nothing is "nomatch".
      {"state=nomatch", "gamma:"},
      {"state=nomatch&extended_states=true", "alpha:DiskFull|gamma:"},
      {"state=noData&extended_states=1", "alpha:DiskFull|gamma:"},
      {"state=unhealthy&extended_states=true", "alpha:job:rate|gamma:"},
      {"state=error&extended_states=yes", "alpha:job:rate|gamma:"},
      {"state=ok&extended_states=true", "beta:rec:ok|gamma:"},
      {"state=ok&extended_states=false", "gamma:"},
      {"search=HIGH", "alpha:HighCPU|gamma:"},
      {"search=b.yml", "beta:SlowQuery,rec:ok|gamma:"},
      {"search=alp", "alpha:HighCPU,DiskFull,job:rate|gamma:"},
      {"type=alert&rule_group[]=alpha&state=firing", "alpha:HighCPU"},
  };
  for (const auto& c : cases) {
    INFO(c.query);
    const auto resp = api.get("/api/v1/rules?" + c.query);
    REQUIRE(resp.status == 200);
    CHECK(resp.content_type == "application/json");
    CHECK(listing(resp.body) == c.expected);
    // Everything also answers under /vmalert/.
    CHECK(api.get("/vmalert/api/v1/rules?" + c.query).body == resp.body);
  }
}

TEST_CASE("/api/v1/rules: states, extended states, exclude_alerts", "[app][api]") {
  Api api;
  auto d = parse(api.get("/api/v1/rules").body);
  const auto& alpha = d["data"]["groups"][0];
  CHECK(std::string(alpha["rules"][0]["state"].GetString()) == "firing");
  CHECK(std::string(alpha["rules"][1]["state"].GetString()) == "inactive");
  CHECK(std::string(alpha["rules"][2]["state"].GetString()).empty());  // recording
  CHECK(alpha["rules"][0]["alerts"].Size() == 1);
  CHECK_FALSE(alpha["rules"][1].HasMember("alerts"));  // omitted when empty, as vmalert
  CHECK(std::string(alpha["rules"][2]["health"].GetString()) == "err");
  CHECK(alpha["rules"][1]["lastSeriesFetched"].GetInt() == 0);
  CHECK_FALSE(alpha["rules"][0].HasMember("lastSeriesFetched"));  // unknown: omitted
  CHECK(std::string(alpha["rules"][1]["lastEvaluation"].GetString()) == "0001-01-01T00:00:00Z");
  // Per-group state counts of the rules shown, keys sorted.
  CHECK_THAT(api.get("/api/v1/rules?rule_group[]=alpha").body,
             Catch::Contains(R"("states":{"":1,"firing":1,"inactive":1}})"));
  CHECK_THAT(api.get("/api/v1/rules?rule_group[]=alpha&extended_states=true").body,
             Catch::Contains(R"("states":{"firing":1,"nomatch":1,"unhealthy":1}})"));
  CHECK_THAT(api.get("/api/v1/rules?rule_group[]=gamma").body, Catch::Contains(R"("states":{})"));
  // Group extras: params and headers only when set, no paging fields without group_limit.
  const auto beta = api.get("/api/v1/rules?rule_group[]=beta").body;
  CHECK_THAT(beta, Catch::Contains(R"("params":["nocache=1"],"headers":["X-Tenant: 7"])"));
  CHECK_THAT(beta, Catch::StartsWith(R"({"status":"success","data":{"groups":[)"));

  const auto excluded = parse(api.get("/api/v1/rules?exclude_alerts=true").body);
  CHECK_FALSE(excluded["data"]["groups"][0]["rules"][0].HasMember("alerts"));
  // The state is still the one the alerts give.
  CHECK(std::string(excluded["data"]["groups"][0]["rules"][0]["state"].GetString()) == "firing");
}

TEST_CASE("/api/v1/rules paging with group_limit and page_num", "[app][api]") {
  Api api;
  auto first = api.get("/api/v1/rules?group_limit=1");
  REQUIRE(first.status == 200);
  CHECK(listing(first.body) == "alpha:HighCPU,DiskFull,job:rate");
  CHECK_THAT(first.body, Catch::StartsWith(
                             R"({"status":"success","total_pages":3,"total_groups":3,)"
                             R"("total_rules":5,"data":)"));
  auto second = api.get("/api/v1/rules?group_limit=2&page_num=2");
  REQUIRE(second.status == 200);
  CHECK(listing(second.body) == "gamma:");
  CHECK_THAT(second.body, Catch::StartsWith(R"({"status":"success","page":2,"total_pages":2,)"
                                            R"("total_groups":3,"total_rules":5,)"));
  auto filtered = api.get("/api/v1/rules?group_limit=1&page_num=1&type=record");
  CHECK(listing(filtered.body) == "alpha:job:rate");
  CHECK_THAT(filtered.body, Catch::Contains(R"("total_groups":3,"total_rules":2)"));

  struct Bad {
    std::string query;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"group_limit=1&page_num=4", "page_num exceeds total amount of pages"},
      {"group_limit=1&page_num=2&rule_group[]=alpha", "page_num exceeds total amount of pages"},
      {"page_num=1", "\\\"group_limit\\\" needs to be present"},
      {"group_limit=0", "\\\"group_limit\\\" is expected to be a positive number"},
      {"group_limit=x", "\\\"group_limit\\\" is expected to be a positive number"},
      {"group_limit=2&page_num=-1", "\\\"page_num\\\" is expected to be a positive number"},
      {"type=alerting", "invalid parameter \\\"type\\\": not supported value \\\"alerting\\\""},
      {"state=bogus", "invalid parameter \\\"state\\\": contains not supported value"},
      {"datasource_type=influx", "invalid parameter \\\"datasource_type\\\""},
      {"match[]=rate(x[5m])", "invalid parameter \\\"match[]\\\""},
      {"match[]={a=~\"(\"}", "invalid regexp"},
  };
  for (const auto& b : bad) {
    INFO(b.query);
    const auto resp = api.get("/api/v1/rules?" + b.query);
    CHECK(resp.status == 400);
    CHECK(resp.content_type == "application/json");
    CHECK_THAT(resp.body, Catch::StartsWith(R"({"status":"error","errorType":"bad_data","error":)"));
    CHECK_THAT(resp.body, Catch::Contains(b.message));
  }
}

TEST_CASE("/api/v1/alerts filters, sorted by ID string", "[app][api]") {
  Api api;
  struct Case {
    std::string query;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"", "77,99"},
      {"rule_group[]=alpha", "99"},
      {"file[]=b.yml", "77"},
      {"datasource_type=graphite", ""},
      {"match[]={team=\"db\"}", "77"},
      {"match[]={instance=\"h<1>\"}", "99"},
      {"match[]={alertname=~\"Slow.*\"}&match[]={instance=\"h<1>\"}", "77,99"},
      {"match[]={alertname=~\"Slow.*\"}&rule_group[]=alpha", ""},
  };
  for (const auto& c : cases) {
    INFO(c.query);
    const auto resp = api.get("/api/v1/alerts?" + c.query);
    REQUIRE(resp.status == 200);
    CHECK(alert_ids(resp.body) == c.expected);
  }
  const auto bad = api.get("/api/v1/alerts?match[]={");
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains(R"("errorType":"bad_data")"));
}

TEST_CASE("/api/v1/alert, /api/v1/rule with updates, /api/v1/group", "[app][api]") {
  Api api;
  const auto a = api.get("/vmalert/api/v1/alert?group_id=1&alert_id=99");
  REQUIRE(a.status == 200);
  CHECK_THAT(a.body, Catch::StartsWith(R"({"state":"firing","name":"HighCPU","value":"1",)"));
  CHECK_THAT(a.body, Catch::Contains(R"("id":"99","rule_id":"11","group_id":"1")"));

  const auto r = api.get("/api/v1/rule?group_id=1&rule_id=11");
  REQUIRE(r.status == 200);
  CHECK_THAT(r.body,
             Catch::Contains(
                 R"("max_updates_entries":20,"updates":[{"time":"2023-11-14T22:13:21.5Z",)"
                 R"("at":"2023-11-14T22:13:20Z","duration":3000000,"error":null,"samples":1,)"
                 R"("series_fetched":null,"curl":"curl 'http://prom/api/v1/query?query=expr_11'"},)"
                 R"({"time":"2023-11-14T22:13:20.5Z","at":"2023-11-14T22:13:20Z",)"
                 R"("duration":3000000,"error":"connection refused","samples":0,)"
                 R"("series_fetched":4,)"));
  // The entry added after the snapshot was taken is not in it.
  CHECK_THAT(r.body, !Catch::Contains("too late"));
  CHECK_THAT(r.body, Catch::StartsWith(R"({"state":"firing","name":"HighCPU","query":"expr_11",)"
                                       R"("duration":0,"keep_firing_for":0,"labels":)"));
  // Lists do not carry the history.
  CHECK_THAT(api.get("/api/v1/rules").body, !Catch::Contains("\"updates\""));

  const auto g = api.get("/api/v1/group?group_id=2");
  REQUIRE(g.status == 200);
  const auto gd = parse(g.body);
  CHECK(std::string(gd["name"].GetString()) == "beta");
  CHECK(gd["rules"].Size() == 2);
  CHECK(gd["interval"].GetDouble() == 30);
  CHECK_THAT(g.body, Catch::EndsWith(R"("states":{"":1,"pending":1}})"));

  struct Bad {
    std::string target;
    unsigned status;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"/api/v1/alert?group_id=1&alert_id=5", 404,
       R"(can't find alert with id 5 in group \"alpha\")"},
      {"/api/v1/alert?group_id=9&alert_id=99", 404, "can't find group with id 9"},
      {"/api/v1/alert?group_id=x&alert_id=99", 400,
       R"(failed to read \"group_id\" param: strconv.ParseUint: parsing \"x\": invalid syntax)"},
      {"/api/v1/alert?group_id=1", 400, R"(failed to read \"alert_id\" param)"},
      {"/api/v1/rule?group_id=1&rule_id=12345", 404, "can't find rule with id 12345"},
      {"/api/v1/rule?group_id=1&rule_id=-1", 400, R"(failed to read \"rule_id\" param)"},
      {"/api/v1/group", 400, R"(failed to read \"group_id\" param)"},
      {"/api/v1/group?group_id=18446744073709551616", 400, "value out of range"},
      {"/api/v1/group?group_id=4", 404, "can't find group with id 4"},
      {"/api/v1/nope", 404, R"(unsupported path requested: \"/api/v1/nope\")"},
  };
  for (const auto& b : bad) {
    INFO(b.target);
    const auto resp = api.get(b.target);
    CHECK(resp.status == b.status);
    CHECK_THAT(resp.body, Catch::Contains(b.message));
    CHECK_THAT(resp.body,
               Catch::Contains(b.status == 404 ? R"("errorType":"not_found")"
                                               : R"("errorType":"bad_data")"));
  }
}

TEST_CASE("/api/v1/notifiers lists targets by kind", "[app][api]") {
  Api api;
  CHECK(api.get("/api/v1/notifiers").body ==
        R"({"status":"success","data":{"notifiers":[]}})");
  auto n = std::make_shared<fakes::RecordingNotifier>();
  api.notifiers.set({n});
  CHECK(api.get("/vmalert/api/v1/notifiers").body ==
        R"({"status":"success","data":{"notifiers":[{"kind":"static","targets":[)"
        R"({"address":"recording","labels":{},"lastError":"","queueLength":0,"inFlight":0,)"
        R"("dropped":0}]}]}})");
}

TEST_CASE("the generatorURL page and the rule page", "[app][api]") {
  Api api;
  const auto page = api.get("/vmalert/alert?group_id=1&alert_id=99");
  REQUIRE(page.status == 200);
  CHECK(page.content_type == "text/html; charset=utf-8");
  CHECK_THAT(page.body, Catch::Contains("<title>Alert HighCPU - alertd</title>"));
  CHECK_THAT(page.body, Catch::Contains("instance=h&lt;1&gt;"));        // escaped labels
  CHECK_THAT(page.body, Catch::Contains("href=\"rule?group_id=1&amp;rule_id=11\""));
  CHECK_THAT(page.body, Catch::Contains("2023-11-14T22:13:20Z"));
  const auto missing = api.get("/vmalert/alert?group_id=1&alert_id=5");
  CHECK(missing.status == 404);
  CHECK_THAT(missing.body, Catch::Contains("can&#39;t find alert with id 5"));
  CHECK(api.get("/vmalert/alert?group_id=&alert_id=5").status == 400);

  const auto rule = api.get("/vmalert/rule?group_id=1&rule_id=11");
  REQUIRE(rule.status == 200);
  CHECK_THAT(rule.body, Catch::Contains("Alerting rule HighCPU"));
  CHECK_THAT(rule.body, Catch::Contains("CPU &lt;high&gt; &amp; rising"));
  CHECK_THAT(rule.body, Catch::Contains("connection refused"));
  CHECK_THAT(rule.body, Catch::Contains("href=\"alert?group_id=1&amp;alert_id=99\""));
  CHECK(api.get("/vmalert/rule?group_id=1&rule_id=13").status == 200);
  CHECK(api.get("/vmalert/rule?group_id=1&rule_id=14").status == 404);
}

TEST_CASE("form values come from a urlencoded POST body, then the query", "[app][api]") {
  Api api;
  net::ServerRequest req;
  req.method = "POST";
  req.target = "/api/v1/rules?type=alert";
  req.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  req.body = "rule_group%5B%5D=beta&match[]=%7Bteam%3D%22db%22%7D";
  auto resp = app::handle_request(api.ctx, req);
  net::collect_body(resp);
  REQUIRE(resp.status == 200);
  CHECK(listing(resp.body) == "beta:SlowQuery");

  net::ServerRequest q;
  q.target = "/x?a=1&b=&a=2&c";
  const app::FormValues form(q);
  CHECK(form.get("a") == "1");
  CHECK(form.all("a") == std::vector<std::string>{"1", "2"});
  CHECK(form.has("b"));
  CHECK(form.has("c"));
  CHECK_FALSE(form.has("d"));
  CHECK_FALSE(form.get_bool("b"));
  q.target = "/x?t=TRUE&f=No&z=0&one=1";
  const app::FormValues bools(q);
  CHECK(bools.get_bool("t"));
  CHECK(bools.get_bool("one"));
  CHECK_FALSE(bools.get_bool("f"));
  CHECK_FALSE(bools.get_bool("z"));
}

TEST_CASE("the web UI: groups, alerts and notifiers pages", "[app][api][ui]") {
  Api api;
  for (const std::string path : {"/", "/vmalert", "/vmalert/", "/vmalert/home", "/vmalert/groups"}) {
    const auto page = api.get(path);
    INFO(path);
    REQUIRE(page.status == 200);
    CHECK(page.content_type == "text/html; charset=utf-8");
    CHECK_THAT(page.body, Catch::Contains("<title>Groups - alertd</title>"));
    CHECK_THAT(page.body, Catch::Contains("Groups (3 groups, 5 rules)"));
    CHECK_THAT(page.body, Catch::Contains(">alpha <span"));
    CHECK_THAT(page.body, Catch::Contains(">gamma <span"));
    CHECK_THAT(page.body, Catch::Contains("<pre>boom</pre>"));  // job:rate's last error
    // Links resolve from where the page is: at "/" they go through vmalert/.
    const std::string base = path == "/" || path == "/vmalert" ? "vmalert/" : "";
    CHECK_THAT(page.body, Catch::Contains("href=\"" + base + "rule?group_id=1&amp;rule_id=11\""));
    CHECK_THAT(page.body, Catch::Contains("href=\"" + base + "alerts\""));
    CHECK_THAT(page.body, Catch::Contains("href=\"" + base + "api/v1/rules\""));
  }
  // The same filters as /api/v1/rules, echoed into the form.
  const auto firing = api.get("/vmalert/groups?state=firing&extended_states=true");
  // (gamma has no rules: shown whatever the filter, as /api/v1/rules does)
  CHECK_THAT(firing.body, Catch::Contains("Groups (2 groups, 1 rules)"));
  CHECK_THAT(firing.body, Catch::Contains("HighCPU"));
  CHECK_THAT(firing.body, !Catch::Contains("DiskFull"));
  CHECK_THAT(firing.body, Catch::Contains("name=\"state\" placeholder=\"firing,pending,unhealthy,...\" value=\"firing\""));
  const auto search = api.get("/vmalert/groups?search=%3Cb%3E");
  CHECK_THAT(search.body, Catch::Contains("Groups (1 groups, 0 rules)"));
  CHECK_THAT(search.body, !Catch::Contains(">alpha <span"));
  CHECK_THAT(search.body, Catch::Contains("value=\"&lt;b&gt;\""));  // echoed, escaped
  CHECK(api.get("/vmalert/groups?state=bogus").status == 400);

  const auto alerts = api.get("/vmalert/alerts");
  REQUIRE(alerts.status == 200);
  CHECK_THAT(alerts.body, Catch::Contains("Alerts (1 firing, 1 pending)"));
  CHECK_THAT(alerts.body, Catch::Contains("href=\"alert?group_id=1&amp;alert_id=99\""));
  CHECK_THAT(alerts.body, Catch::Contains("instance=h&lt;1&gt;"));
  CHECK_THAT(alerts.body, Catch::Contains("2023-11-14T22:13:20Z"));
  CHECK_THAT(alerts.body, Catch::Contains("SlowQuery"));
  const auto db = api.get("/vmalert/alerts?search=slow");
  CHECK_THAT(db.body, Catch::Contains("SlowQuery"));
  CHECK_THAT(db.body, !Catch::Contains("HighCPU"));

  const auto none = api.get("/vmalert/notifiers");
  CHECK_THAT(none.body, Catch::Contains("No notifiers configured."));
  auto n = std::make_shared<fakes::RecordingNotifier>();
  api.notifiers.set({n});
  const auto some = api.get("/vmalert/notifiers");
  CHECK_THAT(some.body, Catch::Contains("Notifiers (1)"));
  CHECK_THAT(some.body, Catch::Contains("<code>recording</code>"));

  // A failed reload shows on every page until a reload succeeds.
  app::ReloadStatus status;
  api.ctx.reload_status = &status;
  CHECK_THAT(api.get("/vmalert/groups").body, !Catch::Contains("reload-error"));
  status.set_error("rules.yml:3:5: group \"g\": bad <thing>");
  for (const std::string path : {"/", "/vmalert/alerts", "/vmalert/notifiers"}) {
    CHECK_THAT(api.get(path).body, Catch::Contains("bad &lt;thing&gt;"));
  }
  status.set_error("");
  CHECK_THAT(api.get("/").body, !Catch::Contains("reload-error"));
}
