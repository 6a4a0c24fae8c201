// Rule-file parsing and validation: fields, defaults, every validation rule with its exact
// position, env expansion, multi-document files, YAML scalars and merge keys, IDs, checksums.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "config/loader.hpp"
#include "core/limit_hits.hpp"
#include "core/hash.hpp"
#include "templates/template.hpp"

using namespace std::chrono_literals;

namespace {

config::LoadOptions test_options() {
  config::LoadOptions o;
  o.check_template = [](std::string_view text) { return templates::check_template(text); };
  o.env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  return o;
}

config::LoadResult parse(const std::string& text,
                         const config::LoadOptions& options = test_options()) {
  return config::parse_rules_text(text, "rules.yml", options);
}

std::string all_errors(const config::LoadResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e.message + "\n";
  return out;
}

}  // namespace

TEST_CASE("every group and rule field is read", "[config]") {
  const auto r = parse(R"(groups:
  - name: g1
    interval: 30s
    eval_delay: 10s
    eval_alignment: false
    limit: 5
    concurrency: 3
    type: prometheus
    params:
      nocache: ["1"]
      extra_label: [env=prod, team=a]
    headers:
      - "X-Tenant: 42"
      - "Authorization:Bearer a:b"
    notifier_headers:
      - "X-From: alertd"
    labels:
      team: infra
    debug: true
    rules:
      - alert: HighCPU
        expr: cpu > 0.9
        for: 5m
        keep_firing_for: 1.5h
        labels:
          severity: page
        annotations:
          summary: "CPU {{ $value }}"
        debug: false
        update_entries_limit: 40
      - record: job:cpu:sum
        expr: sum by (job) (cpu)
        labels:
          source: rec
        debug: true
        update_entries_limit: 3
)");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  REQUIRE(r.groups.size() == 1);
  const auto& g = r.groups[0];
  CHECK(g.name == "g1");
  CHECK(g.file == "rules.yml");
  CHECK(g.pos.line == 2);
  CHECK(g.pos.column == 5);
  CHECK(g.interval == std::optional<core::Duration>(30s));
  CHECK(g.effective_interval == 30s);
  CHECK(g.eval_delay == std::optional<core::Duration>(10s));
  CHECK(g.effective_eval_delay == 10s);
  CHECK(g.eval_alignment == std::optional<bool>(false));
  CHECK(g.limit == 5);
  CHECK(g.concurrency == 3);
  CHECK(g.type == "prometheus");
  REQUIRE(g.params.size() == 2);
  CHECK(g.params[0].first == "nocache");
  CHECK(g.params[0].second == std::vector<std::string>{"1"});
  CHECK(g.params[1].second == std::vector<std::string>{"env=prod", "team=a"});
  REQUIRE(g.headers.size() == 2);
  CHECK(g.headers[0] == std::pair<std::string, std::string>{"X-Tenant", "42"});
  CHECK(g.headers[1] == std::pair<std::string, std::string>{"Authorization", "Bearer a:b"});
  REQUIRE(g.notifier_headers.size() == 1);
  CHECK(g.notifier_headers[0].second == "alertd");
  CHECK(g.labels.get("team") == std::optional<std::string_view>("infra"));
  CHECK(g.debug);
  REQUIRE(g.rules.size() == 2);
  const auto& a = g.rules[0];
  CHECK(a.kind == config::RuleKind::alerting);
  CHECK(a.name == "HighCPU");
  CHECK(a.expr == "cpu > 0.9");
  CHECK(a.for_ == 5min);
  CHECK(a.keep_firing_for == 90min);
  CHECK(a.labels.get("severity") == std::optional<std::string_view>("page"));
  CHECK(a.annotations.get("summary") == std::optional<std::string_view>("CPU {{ $value }}"));
  CHECK(a.debug == std::optional<bool>(false));
  CHECK(a.update_entries_limit == std::optional<int>(40));
  CHECK(a.pos.line == 21);
  const auto& rec = g.rules[1];
  CHECK(rec.kind == config::RuleKind::recording);
  CHECK(rec.name == "job:cpu:sum");
  CHECK(rec.debug == std::optional<bool>(true));
  CHECK(rec.update_entries_limit == std::optional<int>(3));
}

TEST_CASE("defaults come from LoadOptions", "[config]") {
  const std::string text = "groups:\n  - name: g\n    rules:\n      - record: r\n        expr: up\n";
  SECTION("built-in defaults") {
    const auto r = parse(text);
    REQUIRE(r.ok());
    const auto& g = r.groups[0];
    CHECK_FALSE(g.interval.has_value());
    CHECK(g.effective_interval == 1min);
    CHECK_FALSE(g.eval_delay.has_value());
    CHECK(g.effective_eval_delay == 30s);
    CHECK_FALSE(g.eval_alignment.has_value());
    CHECK(g.type == "prometheus");
    CHECK(g.limit == 0);
    CHECK(g.concurrency == 1);
    CHECK_FALSE(g.debug);
    CHECK(g.rules[0].for_ == 0s);
    CHECK_FALSE(g.rules[0].debug.has_value());
    CHECK_FALSE(g.rules[0].update_entries_limit.has_value());
  }
  SECTION("overridden defaults") {
    auto o = test_options();
    o.default_interval = 15s;
    o.default_eval_delay = 0s;
    o.default_rule_type = "graphite";
    const auto r = parse(text, o);
    REQUIRE(r.ok());
    CHECK(r.groups[0].effective_interval == 15s);
    CHECK(r.groups[0].effective_eval_delay == 0s);
    CHECK(r.groups[0].type == "graphite");
  }
  SECTION("interval 0 falls back to the default; concurrency 0 means 1") {
    const auto r = parse("groups:\n  - name: g\n    interval: 0s\n    concurrency: 0\n");
    REQUIRE(r.ok());
    CHECK(r.groups[0].effective_interval == 1min);
    CHECK(r.groups[0].concurrency == 1);
  }
  SECTION("eval_offset makes the effective eval_delay 0") {
    const auto r = parse("groups:\n  - name: g\n    interval: 1h\n    eval_offset: 5m\n");
    INFO(all_errors(r));
    REQUIRE(r.ok());
    CHECK(r.groups[0].eval_offset == std::optional<core::Duration>(5min));
    CHECK(r.groups[0].effective_eval_delay == 0s);
  }
}

TEST_CASE("effective settings are the single source of what a group runs with", "[config]") {
  const std::string base = "groups:\n  - name: g\n";
  SECTION("unset: interval, limit, alignment and concurrency take their defaults") {
    auto o = test_options();
    o.default_limit = 7;
    const auto r = parse(base, o);
    REQUIRE(r.ok());
    const auto& g = r.groups[0];
    CHECK(g.effective_interval == 1min);
    CHECK(g.effective_limit == 7);
    CHECK(g.effective_eval_alignment);
    CHECK(g.effective_concurrency == 1);
  }
  SECTION("set in the group: the group wins over the defaults") {
    auto o = test_options();
    o.default_limit = 7;
    const auto r = parse(base + "    interval: 20s\n    limit: 3\n    eval_alignment: false\n"
                                "    concurrency: 4\n",
                         o);
    REQUIRE(r.ok());
    const auto& g = r.groups[0];
    CHECK(g.effective_interval == 20s);
    CHECK(g.effective_limit == 3);
    CHECK_FALSE(g.effective_eval_alignment);
    CHECK(g.effective_concurrency == 4);
  }
  SECTION("zeros mean unset: interval 0s, limit 0, concurrency 0") {
    auto o = test_options();
    o.default_interval = 45s;
    o.default_limit = 9;
    const auto r = parse(base + "    interval: 0s\n    limit: 0\n    concurrency: 0\n", o);
    REQUIRE(r.ok());
    const auto& g = r.groups[0];
    CHECK(g.effective_interval == 45s);
    CHECK(g.effective_limit == 9);
    CHECK(g.effective_concurrency == 1);
  }
  SECTION("a negative interval is an error, as in vmalert") {
    const auto r = parse(base + "    interval: -1m\n");
    REQUIRE_FALSE(r.ok());
    CHECK(r.groups.empty());
    CHECK_THAT(all_errors(r), Catch::Contains("interval shouldn't be lower than 0"));
  }
  SECTION("a non-positive default interval never yields a group") {
    auto o = test_options();
    o.default_interval = 0s;
    const auto r = parse(base, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.groups.empty());
    CHECK_THAT(all_errors(r), Catch::Contains("evaluation interval must be positive"));
  }
}

TEST_CASE("validation errors name file, line, column, group and rule", "[config]") {
  struct Case {
    const char* what;
    const char* yaml;
    const char* expected;  // the full first error message
  };
  const Case cases[] = {
      {"unknown rule field",
       "groups:\n  - name: g1\n    rules:\n      - alert: HighCPU\n        expr: up\n"
       "        alrt: x\n",
       "rules.yml:6:9: group \"g1\": rule \"HighCPU\": unknown field \"alrt\""},
      {"unknown group field",
       "groups:\n  - name: g1\n    intervall: 1m\n",
       "rules.yml:3:5: group \"g1\": unknown field \"intervall\""},
      {"unknown top-level field",
       "groups: []\nextra: 1\n",
       "rules.yml:2:1: unknown field \"extra\" (a rule file holds only `groups`)"},
      {"neither alert nor record",
       "groups:\n  - name: g\n    rules:\n      - expr: up\n",
       "rules.yml:4:9: group \"g\": rule #1: either `record` or `alert` must be set"},
      {"both alert and record",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        record: r\n        expr: up\n",
       "rules.yml:4:9: group \"g\": rule \"a\": either `record` or `alert` must be set, not both"},
      {"empty alert name",
       "groups:\n  - name: g\n    rules:\n      - alert: \"\"\n        expr: up\n",
       "rules.yml:4:9: group \"g\": rule #1: either `record` or `alert` must be set"},
      {"empty expr",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: \"\"\n",
       "rules.yml:5:15: group \"g\": rule \"a\": expression can't be empty"},
      {"missing expr",
       "groups:\n  - name: g\n    rules:\n      - record: r\n",
       "rules.yml:4:9: group \"g\": rule \"r\": expression can't be empty"},
      {"__name__ label",
       "groups:\n  - name: g\n    rules:\n      - record: r\n        expr: up\n        labels:\n"
       "          __name__: x\n",
       "rules.yml:7:11: group \"g\": rule \"r\": invalid rule label \"__name__\": not allowed in "
       "labels"},
      {"group name missing",
       "groups:\n  - interval: 1m\n",
       "rules.yml:2:5: group #1: group name must be set"},
      {"duplicate group name",
       "groups:\n  - name: g\n  - name: g\n",
       "rules.yml:3:5: group \"g\": group name \"g\" duplicate in file (first defined at line 2)"},
      {"duplicate rule",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n"
       "      - alert: a\n        expr: up\n",
       "rules.yml:6:9: group \"g\": rule \"a\": alerting rule is a duplicate in group (same name, "
       "expr and labels as the rule at line 4)"},
      {"eval_offset without interval",
       "groups:\n  - name: g\n    eval_offset: 2m\n",
       "rules.yml:3:18: group \"g\": eval_offset should be smaller than interval; now eval_offset: "
       "2m0s, interval: not set (eval_offset needs an explicit `interval` in the group)"},
      {"eval_offset larger than interval",
       "groups:\n  - name: g\n    interval: 1m\n    eval_offset: 2m\n",
       "rules.yml:4:18: group \"g\": the abs value of eval_offset should be smaller than interval; "
       "now eval_offset: 2m0s, interval: 1m0s"},
      {"negative eval_offset larger than interval",
       "groups:\n  - name: g\n    interval: 1m\n    eval_offset: -90s\n",
       "rules.yml:4:18: group \"g\": the abs value of eval_offset should be smaller than interval; "
       "now eval_offset: -1m30s, interval: 1m0s"},
      {"eval_offset with eval_delay",
       "groups:\n  - name: g\n    interval: 1m\n    eval_offset: 10s\n    eval_delay: 5s\n",
       "rules.yml:5:17: group \"g\": eval_offset cannot be used with eval_delay"},
      {"negative interval",
       "groups:\n  - name: g\n    interval: -1m\n",
       "rules.yml:3:15: group \"g\": interval shouldn't be lower than 0"},
      {"negative limit",
       "groups:\n  - name: g\n    limit: -1\n",
       "rules.yml:3:12: group \"g\": invalid limit -1, shouldn't be less than 0"},
      {"negative concurrency",
       "groups:\n  - name: g\n    concurrency: -2\n",
       "rules.yml:3:18: group \"g\": invalid concurrency -2, shouldn't be less than 0"},
      {"negative eval_delay",
       "groups:\n  - name: g\n    eval_delay: -2s\n",
       "rules.yml:3:17: group \"g\": eval_delay shouldn't be lower than 0"},
      {"negative for",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        for: -1m\n",
       "rules.yml:6:14: group \"g\": rule \"a\": field \"for\": must not be negative"},
      {"header without colon",
       "groups:\n  - name: g\n    headers:\n      - 'foobar'\n",
       "rules.yml:4:9: group \"g\": field \"headers\": missing ':' in header \"foobar\""},
      {"notifier header without colon",
       "groups:\n  - name: g\n    notifier_headers: [\"a\"]\n",
       "rules.yml:3:24: group \"g\": field \"notifier_headers\": missing ':' in header \"a\""},
      {"bad duration",
       "groups:\n  - name: g\n    interval: 5 minutes\n",
       "rules.yml:3:15: group \"g\": field \"interval\": cannot parse duration \"5 minutes\": "
       "unknown unit \" minutes\""},
      {"bad integer",
       "groups:\n  - name: g\n    limit: ten\n",
       "rules.yml:3:12: group \"g\": field \"limit\": cannot parse \"ten\" as an integer"},
      {"bad bool",
       "groups:\n  - name: g\n    debug: maybe\n",
       "rules.yml:3:12: group \"g\": field \"debug\": cannot parse \"maybe\" as a bool"},
      {"bad type",
       "groups:\n  - name: g\n    type: loki\n",
       "rules.yml:3:11: group \"g\": unknown datasource type \"loki\"; want prometheus, graphite or "
       "vlogs"},
      {"expr is a map",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: {a: b}\n",
       "rules.yml:5:15: group \"g\": rule \"a\": field \"expr\": expected a string, got a map"},
      {"rules is not a list",
       "groups:\n  - name: g\n    rules: 3\n",
       "rules.yml:3:12: group \"g\": field \"rules\": expected a list"},
      {"YAML syntax error",
       "groups:\n  - name: g\n    rules: [\n",
       "rules.yml:4:1: cannot parse YAML: end of sequence flow not found"},
      {"broken expression",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: sum(rate(x[5m])\n",
       "rules.yml:5:18: group \"g\": rule \"a\": could not parse expression: 1:4: unclosed left "
       "parenthesis"},
      {"broken annotation template",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        annotations:\n"
       "          summary: \"{{ }}\"\n",
       "rules.yml:7:20: group \"g\": rule \"a\": invalid annotations: annotation \"summary\": "
       "template: :1: missing value for command"},
      {"broken label template",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        labels:\n"
       "          x: \"{{ unknown }}\"\n",
       "rules.yml:7:14: group \"g\": rule \"a\": invalid labels: label \"x\": template: :1: function "
       "\"unknown\" not defined"},
      // vmalert validates every value, also one rendering would copy verbatim (no "}}").
      {"unclosed action in an annotation",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        annotations:\n"
       "          summary: \"{{ $labels.instance \"\n",
       "rules.yml:7:20: group \"g\": rule \"a\": invalid annotations: annotation \"summary\": "
       "template: :1: unclosed action"},
      {"unclosed action in a label",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        labels:\n"
       "          x: \"{{ $labels.instance }} and {{ $value\"\n",
       "rules.yml:7:14: group \"g\": rule \"a\": invalid labels: label \"x\": template: :1: "
       "unclosed action"},
      {"unknown function in a value without }}",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        annotations:\n"
       "          summary: \"only {{ opening\"\n",
       "rules.yml:7:20: group \"g\": rule \"a\": invalid annotations: annotation \"summary\": "
       "template: :1: function \"opening\" not defined"},
      {"undefined variable",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        annotations:\n"
       "          summary: \"{{ $nope }}\"\n",
       "rules.yml:7:20: group \"g\": rule \"a\": invalid annotations: annotation \"summary\": "
       "template: :1: undefined variable \"$nope\""},
      {"missing end",
       "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        annotations:\n"
       "          summary: \"{{ if $value }}x\"\n",
       "rules.yml:7:20: group \"g\": rule \"a\": invalid annotations: annotation \"summary\": "
       "template: :1: unexpected EOF"},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      const auto r = parse(c.yaml);
      INFO(all_errors(r));
      REQUIRE_FALSE(r.ok());
      CHECK(r.groups.empty());
      CHECK(r.errors.front().message == c.expected);
    }
  }
}

TEST_CASE("a key given twice keeps the last value, with a warning (as vmalert)", "[config]") {
  const auto r = parse(
      "groups:\n  - name: g\n    limit: 1\n    limit: 2\n    rules:\n      - alert: a\n"
      "        expr: up\n        labels: {x: '1', x: '2'}\n");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  CHECK(r.groups[0].limit == 2);
  CHECK(r.groups[0].rules[0].labels.get("x") == std::optional<std::string_view>("2"));
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0] ==
        "rules.yml:4:5: group \"g\": field \"limit\" is set twice (first at line 3); the last "
        "value is used");
  CHECK(r.warnings[1] ==
        "rules.yml:8:26: group \"g\": rule \"a\": field \"x\" is set twice (first at line 8); "
        "the last value is used");
}

TEST_CASE("all errors of a load are reported together", "[config]") {
  const auto r = parse(R"(groups:
  - name: a
    limit: -1
    rules:
      - alert: x
        expr: up
        bogus: 1
      - record: ""
        expr: up
  - name: b
    headers: ["nocolon"]
  - name: a
extra: 1
)");
  REQUIRE(r.errors.size() == 6);
  CHECK(r.errors[0].message ==
        "rules.yml:3:12: group \"a\": invalid limit -1, shouldn't be less than 0");
  CHECK(r.errors[1].message == "rules.yml:7:9: group \"a\": rule \"x\": unknown field \"bogus\"");
  CHECK(r.errors[2].message ==
        "rules.yml:8:9: group \"a\": rule #2: either `record` or `alert` must be set");
  CHECK(r.errors[3].message ==
        "rules.yml:11:15: group \"b\": field \"headers\": missing ':' in header \"nocolon\"");
  CHECK(r.errors[4].message ==
        "rules.yml:12:5: group \"a\": group name \"a\" duplicate in file (first defined at line 2)");
  CHECK(r.errors[5].message ==
        "rules.yml:13:1: unknown field \"extra\" (a rule file holds only `groups`)");
}

TEST_CASE("accepted forms vmalert allows", "[config]") {
  const char* ok_cases[] = {
      // eval_offset within interval, and negative with abs <= interval
      "groups:\n  - name: g\n    interval: 1h\n    eval_offset: 1h\n",
      "groups:\n  - name: g\n    interval: 1h\n    eval_offset: -10m\n",
      // same name, different expr or labels: different rule IDs
      "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n      - alert: a\n"
      "        expr: down\n      - alert: a\n        expr: up\n        labels: {x: y}\n",
      // an alert and a record with the same name
      "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n      - record: a\n"
      "        expr: up\n",
      // a recording rule with `for` and annotations: ignored, as vmalert does
      "groups:\n  - name: g\n    rules:\n      - record: a\n        expr: up\n        for: 1m\n"
      "        keep_firing_for: 1m\n        annotations: {a: b}\n",
      // record name with braces: vmalert does not check it
      "groups:\n  - name: g\n    rules:\n      - record: 'a{b=\"c\"}'\n        expr: up\n",
      // empty file, empty documents, groups null, rules null, no rules key
      "",
      "---\n---\n",
      "groups:\n",
      "groups:\n  - name: g\n    rules:\n  - name: h\n",
      // durations in vmalert's forms
      "groups:\n  - name: g\n    interval: 1.5h\n    eval_delay: 90\n",
      // headers with spaces around the colon
      "groups:\n  - name: g\n    headers: [\"  A  :  b  \"]\n",
      // YAML 1.1 bools
      "groups:\n  - name: g\n    debug: yes\n    eval_alignment: off\n",
      // params with null list
      "groups:\n  - name: g\n    params:\n      a:\n",
  };
  for (const char* text : ok_cases) {
    CAPTURE(text);
    const auto r = parse(text);
    INFO(all_errors(r));
    CHECK(r.ok());
  }
}

TEST_CASE("graphite and vlogs expressions load unvalidated; validation can be turned off",
          "[config]") {
  SECTION("graphite") {
    const auto r = parse(
        "groups:\n  - name: g\n    type: graphite\n    rules:\n      - alert: a\n"
        "        expr: filterSeries(sumSeries(a.b),'last','>', 5) by instance\n");
    CHECK(r.ok());
  }
  SECTION("vlogs") {
    const auto r = parse(
        "groups:\n  - name: g\n    type: vlogs\n    rules:\n      - record: a\n"
        "        expr: 'stats count(*) as requests'\n");
    CHECK(r.ok());
  }
  SECTION("validate_expressions off") {
    auto o = test_options();
    o.validate_expressions = false;
    const auto r = parse("groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up{\n", o);
    CHECK(r.ok());
  }
  SECTION("validate_templates off") {
    auto o = test_options();
    o.validate_templates = false;
    const auto r = parse(
        "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n"
        "        annotations: {s: '{{ }}'}\n",
        o);
    CHECK(r.ok());
  }
}

TEST_CASE("YAML scalars load as their source text", "[config]") {
  const auto r = parse(R"(groups:
  - name: 123
    rules:
      - record: one
        expr: 1
      - record: float
        expr: 0.95
        labels:
          recording: true
          num: 010
          nothing:
      - alert: block
        expr: |
          sum(x)
            > 1
      - alert: folded
        expr: >
          a
          + b
      - alert: plain
        expr: a
          + b
      - alert: single
        expr: 'a{x=''y''}'
      - alert: double
        expr: "a\n+ b"
)");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  const auto& g = r.groups[0];
  CHECK(g.name == "123");
  CHECK(g.rules[0].expr == "1");
  CHECK(g.rules[1].expr == "0.95");
  CHECK(g.rules[1].labels.get("recording") == std::optional<std::string_view>("true"));
  CHECK(g.rules[1].labels.get("num") == std::optional<std::string_view>("010"));
  CHECK(g.rules[1].labels.get("nothing") == std::optional<std::string_view>(""));
  CHECK(g.rules[2].expr == "sum(x)\n  > 1\n");
  CHECK(g.rules[3].expr == "a + b\n");
  CHECK(g.rules[4].expr == "a + b");
  CHECK(g.rules[5].expr == "a{x='y'}");
  CHECK(g.rules[6].expr == "a\n+ b");
}

TEST_CASE("anchors, aliases and merge keys", "[config]") {
  const auto r = parse(R"(groups:
  - name: g
    labels: &common
      team: a
      tier: web
    rules:
      - alert: one
        expr: up == 0
        labels:
          <<: *common
          tier: db
      - alert: two
        expr: up == 0
        labels:
          <<: [*common, {extra: x}]
      - &tmpl
        alert: three
        expr: down
      - <<: *tmpl
        alert: four
  - <<: &base
      name: h
      interval: 5m
  - <<: *base
    name: i
)");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  const auto& rules = r.groups[0].rules;
  REQUIRE(rules.size() == 4);
  CHECK(rules[0].labels.get("team") == std::optional<std::string_view>("a"));
  CHECK(rules[0].labels.get("tier") == std::optional<std::string_view>("db"));
  CHECK(rules[1].labels.size() == 3);
  CHECK(rules[1].labels.get("extra") == std::optional<std::string_view>("x"));
  CHECK(rules[3].name == "four");
  CHECK(rules[3].expr == "down");
  REQUIRE(r.groups.size() == 3);
  CHECK(r.groups[1].name == "h");
  CHECK(r.groups[1].interval == std::optional<core::Duration>(5min));
  CHECK(r.groups[2].name == "i");
  CHECK(r.groups[2].interval == std::optional<core::Duration>(5min));
}

TEST_CASE("multi-document files", "[config]") {
  SECTION("groups from every document") {
    const auto r = parse(
        "groups:\n  - name: b\n---\ngroups:\n  - name: a\n---\n# only a comment\n---\ngroups:\n");
    REQUIRE(r.ok());
    REQUIRE(r.groups.size() == 2);
    CHECK(r.groups[0].name == "a");  // sorted by name within a file
    CHECK(r.groups[1].name == "b");
  }
  SECTION("a group name repeated in another document is a duplicate") {
    const auto r = parse("groups:\n  - name: foo\n---\ngroups:\n  - name: foo\n");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].message ==
          "rules.yml:5:5: group \"foo\": group name \"foo\" duplicate in file (first defined at "
          "line 2)");
  }
  SECTION("unknown keys in every document") {
    const auto r = parse("groups: []\nx: 1\n---\ngroups: []\ny: 2\n");
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[1].message.rfind("rules.yml:5:1: unknown field \"y\"", 0) == 0);
  }
}

TEST_CASE("environment expansion", "[config]") {
  const std::map<std::string, std::string, std::less<>> env = {
      {"A", "alpha"}, {"NESTED", "<%{A}>"}, {"LOOP", "%{LOOP}"}, {"EMPTY", ""}};
  const config::EnvLookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"%{A}", "alpha"},          {"x%{A}y%{A}", "xalphayalpha"},
      {"%{UNKNOWN}", "%{UNKNOWN}"}, {"%{NESTED}", "<alpha>"},
      {"%{EMPTY}|", "|"},         {"%{", "%{"},
      {"%{}", "%{}"},             {"%{A", "%{A"},
      {"100%", "100%"},           {"{{ $labels.x }}", "{{ $labels.x }}"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    CHECK(config::expand_env(c.in, lookup) == c.out);
  }
  // A self-reference stops after a bounded depth instead of looping.
  CHECK(config::expand_env("%{LOOP}", lookup) == "%{LOOP}");

  auto o = test_options();
  o.env = lookup;
  const auto r = parse("groups:\n  - name: g-%{A}\n    rules:\n      - alert: x\n        expr: "
                       "up{env=\"%{NESTED}\"}\n",
                       o);
  INFO(all_errors(r));
  REQUIRE(r.ok());
  CHECK(r.groups[0].name == "g-alpha");
  CHECK(r.groups[0].rules[0].expr == "up{env=\"<alpha>\"}");
}

TEST_CASE("rule and group IDs follow vmalert's recipes", "[config]") {
  const auto r = parse(R"(groups:
  - name: g
    interval: 30s
    eval_offset: 10s
    rules:
      - alert: A
        expr: up == 0
        labels: {b: "2", a: "1"}
      - record: R
        expr: sum(up)
)");
  INFO(all_errors(r));
  REQUIRE(r.ok());
  const auto& g = r.groups[0];
  core::Fnv1a64 h;
  h.add("up == 0");
  h.add("alerting");
  h.add("A");
  h.add("a");
  h.add("1");
  h.add_byte(0xFF);
  h.add("b");
  h.add("2");
  h.add_byte(0xFF);
  CHECK(g.rules[0].id == h.value());
  core::Fnv1a64 hr;
  hr.add("sum(up)");
  hr.add("recording");
  hr.add("R");
  CHECK(g.rules[1].id == hr.value());
  core::Fnv1a64 hg;
  hg.add("rules.yml");
  hg.add_byte(0xFF);
  hg.add("g");
  hg.add("prometheus");
  hg.add("30s");
  hg.add("10s");
  CHECK(g.id == hg.value());
  CHECK(config::group_id(g, 30s) == g.id);
}

TEST_CASE("group ID uses the effective interval", "[config]") {
  const auto r = parse("groups:\n  - name: g\n");
  REQUIRE(r.ok());
  core::Fnv1a64 hg;
  hg.add("rules.yml");
  hg.add_byte(0xFF);
  hg.add("g");
  hg.add("prometheus");
  hg.add("1m0s");
  CHECK(r.groups[0].id == hg.value());
}

TEST_CASE("checksum changes with any field and is stable otherwise", "[config]") {
  const std::string base =
      "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n"
      "        annotations: {s: x}\n";
  const auto a = parse(base);
  const auto b = parse(base);
  REQUIRE(a.ok());
  CHECK(a.groups[0].checksum == b.groups[0].checksum);
  const char* variants[] = {
      "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n"
      "        annotations: {s: y}\n",
      "groups:\n  - name: g\n    limit: 1\n    rules:\n      - alert: a\n        expr: up\n"
      "        annotations: {s: x}\n",
      "groups:\n  - name: g\n    rules:\n      - alert: a\n        expr: up\n        for: 1m\n"
      "        annotations: {s: x}\n",
      "groups:\n  - name: g\n    headers: ['a: b']\n    rules:\n      - alert: a\n        expr: up\n"
      "        annotations: {s: x}\n",
  };
  for (const char* v : variants) {
    CAPTURE(v);
    const auto c = parse(v);
    REQUIRE(c.ok());
    CHECK(c.groups[0].checksum != a.groups[0].checksum);
  }
}

TEST_CASE("a rule's problems are all reported, the expression and templates included",
          "[config]") {
  const auto r = parse(R"(groups:
  - name: g
    rules:
      - alert: a
        alrt: typo
        expr: rate(x[5m]
        annotations:
          summary: "{{ }}"
)");
  REQUIRE(r.errors.size() == 3);
  CHECK(r.errors[0].message == "rules.yml:5:9: group \"g\": rule \"a\": unknown field \"alrt\"");
  CHECK(r.errors[1].message ==
        "rules.yml:6:19: group \"g\": rule \"a\": could not parse expression: 1:5: unclosed left "
        "parenthesis");
  CHECK(r.errors[2].message ==
        "rules.yml:8:20: group \"g\": rule \"a\": invalid annotations: annotation \"summary\": "
        "template: :1: missing value for command");
}

TEST_CASE("hostile merge keys are refused, not followed forever", "[config]") {
  SECTION("a map merging itself") {
    const auto r = parse("groups:\n  - &g\n    name: a\n    <<: *g\n");
    REQUIRE(r.errors.size() == 1);
    // yaml-cpp shares the node: go-yaml's "anchor value contains itself" catches it first.
    CHECK(r.errors[0].message == "rules.yml:2:5: cannot parse YAML: anchor value contains itself");
  }
  SECTION("aliases of aliases (billion laughs)") {
    std::string text = "x0: &l0 {a: b}\n";
    for (int level = 1; level <= 9; ++level) {
      text += "x" + std::to_string(level) + ": &l" + std::to_string(level) + " {<<: [";
      for (int i = 0; i < 10; ++i) text += (i ? ", *l" : "*l") + std::to_string(level - 1);
      text += "]}\n";
    }
    text += "groups:\n  - name: g\n    labels:\n      <<: *l9\n";
    const auto r = parse(text);
    REQUIRE_FALSE(r.ok());
    bool refused = false;
    for (const auto& e : r.errors) {
      refused = refused || e.message.find("document contains excessive aliasing") !=
                               std::string::npos;
    }
    CHECK(refused);
  }
}

TEST_CASE("expression errors point at the exact file position when the text maps 1:1",
          "[config]") {
  struct Case {
    const char* what;
    const char* yaml;
    const char* prefix;  // "file:line:column: "
  };
  const char* head = "groups:\n  - name: g\n    rules:\n      - alert: a\n";
  const Case cases[] = {
      {"plain", "        expr: up{job=}\n", "rules.yml:5:22: "},
      {"single-quoted", "        expr: 'up{job=}'\n", "rules.yml:5:23: "},
      {"double-quoted", "        expr: \"up{job=}\"\n", "rules.yml:5:23: "},
      {"double-quoted with escapes falls back to the value", "        expr: \"up{job=\\\"a\\\",x=}\"\n",
       "rules.yml:5:15: "},
      {"literal block", "        expr: |\n          sum(\n            rate(x{a=}[5m]))\n",
       "rules.yml:7:22: "},
      {"literal block with keep indicator", "        expr: |+\n          a +\n\n          b{\n",
       "rules.yml:8:12: "},
      {"folded block falls back to the value", "        expr: >\n          a +\n          b{\n",
       "rules.yml:5:15: "},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      const auto r = parse(std::string(head) + c.yaml);
      REQUIRE(r.errors.size() == 1);
      INFO(r.errors[0].message);
      CHECK(r.errors[0].message.rfind(c.prefix, 0) == 0);
      CHECK(r.errors[0].message.find("could not parse expression: ") != std::string::npos);
    }
  }
}

TEST_CASE("an alias bomb is refused as go-yaml refuses it", "[config]") {
  // 500 groups share one 200-rule list: 48 KB of YAML that walks as 100k rules (500k nodes).
  std::string text = "groups:\n  - name: g0\n    rules: &r\n";
  for (int i = 0; i < 200; ++i) {
    text += "      - record: r" + std::to_string(i) + "\n        expr: up\n";
  }
  for (int i = 1; i < 500; ++i) text += "  - name: g" + std::to_string(i) + "\n    rules: *r\n";
  const auto r = parse(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.groups.empty());
  CHECK(all_errors(r) == "rules.yml: cannot parse YAML: document contains excessive aliasing\n");
}

TEST_CASE("deep nesting is refused with a clear error, not a crash", "[config]") {
  // yaml-cpp recurses per level and stops at its depth guard; the error must say so (it
  // says "bad file" on its own).
  const int n = 100000;
  for (const std::string& text :
       {"groups: " + std::string(n, '[') + std::string(n, ']') + "\n",
        [] {
          std::string t = "groups:\n";
          for (int i = 1; i < 3000; ++i) t += std::string(static_cast<size_t>(i), ' ') + "a:\n";
          return t;
        }()}) {
    const auto r = parse(text);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(all_errors(r), Catch::StartsWith("rules.yml:") &&
                                  Catch::Contains("cannot parse YAML: nested too deeply"));
  }
}

TEST_CASE("moderate aliasing still loads", "[config]") {
  std::string text = "groups:\n  - name: g0\n    rules: &r\n";
  for (int i = 0; i < 5; ++i) {
    text += "      - record: r" + std::to_string(i) + "\n        expr: up\n";
  }
  for (int i = 1; i < 100; ++i) text += "  - name: g" + std::to_string(i) + "\n    rules: *r\n";
  const auto r = parse(text);
  INFO(all_errors(r));
  REQUIRE(r.ok());
  CHECK(r.groups.size() == 100);
}

TEST_CASE("a stream yaml-cpp cannot get past is an error, not a hang", "[config]") {
  // yaml-cpp 0.7's LoadAll yields empty documents after "!,r" forever (found by
  // rules_file_fuzz: 3 bytes took all memory).
  for (const std::string text : {"!,r", "     !,r", "groups: []\n---\n!,r\n"}) {
    INFO(text);
    const auto r = parse(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.groups.empty());
    CHECK_THAT(all_errors(r), Catch::Matchers::Contains(
                                  "cannot parse YAML: malformed document (the parser stops here)"));
  }
  // Several well-formed documents still load.
  const auto ok = parse("groups: []\n---\ngroups:\n  - name: g\n    rules: []\n---\n");
  INFO(all_errors(ok));
  CHECK(ok.ok());
}

TEST_CASE("invalid UTF-8 is an error naming file:line:column", "[config]") {
  const std::string text =
      "groups:\n  - name: g\n    rules:\n      - record: r\n        expr: up{a=\"\xff\"}\n";
  const auto r = parse(text);
  REQUIRE_FALSE(r.ok());
  CHECK(all_errors(r) == "rules.yml:5:21: invalid UTF-8: a rule file must be UTF-8 encoded\n");
  SECTION("overlong and surrogate forms are invalid too") {
    CHECK_FALSE(parse("groups: []\n# \xc0\xaf\n").ok());
    CHECK_FALSE(parse("groups: []\n# \xed\xa0\x80\n").ok());
    CHECK(parse("groups: []\n# \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n").ok());
  }
}

TEST_CASE("read errors say why; one file is capped", "[config]") {
  auto o = test_options();
  SECTION("no such file") {
    o.paths = {"/nonexistent/alertd/rules.yml"};
    const auto r = config::load_rules(o);
    CHECK(all_errors(r) ==
          "/nonexistent/alertd/rules.yml: failed to read file: no such file or directory\n");
  }
  SECTION("a directory") {
    o.paths = {"/tmp"};
    CHECK_THAT(all_errors(config::load_rules(o)), Catch::Contains("is a directory"));
  }
  SECTION("an endless file stops at the cap") {
    o.paths = {"/dev/zero"};
    const uint64_t hits = core::limit_hits(core::Limit::rule_file_size);
    CHECK(all_errors(config::load_rules(o)) ==
          "/dev/zero: rule file too large: over 32 MiB (the cap on one rule file)\n");
    CHECK(core::limit_hits(core::Limit::rule_file_size) == hits + 1);
  }
  SECTION("a FIFO is refused at once, not waited on for a writer") {
    const std::string fifo = "/tmp/alertd-loader-test-" + std::to_string(::getpid()) + ".fifo";
    ::unlink(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    o.paths = {fifo};
    const auto errors = all_errors(config::load_rules(o));
    ::unlink(fifo.c_str());
    CHECK(errors == fifo + ": failed to read file: a FIFO, not a regular file\n");
  }
  SECTION("a read error (EIO from /proc/self/mem at offset 0)") {
    o.paths = {"/proc/self/mem"};
    CHECK(all_errors(config::load_rules(o)) ==
          "/proc/self/mem: failed to read file: input/output error\n");
  }
  SECTION("an http(s) body over the cap") {
    o.paths = {"http://127.0.0.1:1/rules.yml"};
    o.fetch = [](const std::string&) -> core::Result<std::string> {
      return std::string(config::kMaxRuleFileBytes + 1, '#');
    };
    const uint64_t hits = core::limit_hits(core::Limit::rule_file_size);
    CHECK_THAT(all_errors(config::load_rules(o)), Catch::Contains("too large: over 32 MiB"));
    CHECK(core::limit_hits(core::Limit::rule_file_size) == hits + 1);
  }
}
