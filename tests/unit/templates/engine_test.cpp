// The template engine's API and the Go semantics template_cases.json does not cover.
#include <pthread.h>

#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "templates/template.hpp"

namespace {

struct Fixture {
  core::Labels labels{{"instance", "host-1:9100"}, {"job", "node"}};
  core::Labels ext{{"cluster", "prod"}};
  templates::TemplateData data;
  templates::TemplateEnv env;
  int queries = 0;
  Fixture() {
    data.labels = &labels;
    data.value = 93.5;
    data.expr = "up == 0";
    data.active_at = core::from_unix_seconds(1700000000);
    data.for_ = std::chrono::minutes(5);
    data.interval = std::chrono::seconds(30);
    env.external_labels = &ext;
    env.external_url = "http://vm.example.com:8880/vmalert";
    env.query = [this](std::string_view q) -> core::Result<std::vector<templates::QuerySample>> {
      ++queries;
      if (q == "fail") return core::fail("datasource unreachable");
      templates::QuerySample a{core::Labels{{"instance", "b"}}, 2, 1700000000000};
      templates::QuerySample b{core::Labels{{"instance", "a"}}, 1, 1700000000000};
      return std::vector<templates::QuerySample>{a, b};
    };
    env.now = [] { return core::from_unix_seconds(1700000100); };
  }
  std::string render(std::string_view text, const templates::TemplateSet* set = nullptr) {
    auto r = templates::render_vmalert(text, data, env, set);
    return r ? *r : "ERR " + r.error().message;
  }
};

}  // namespace

TEST_CASE("rendering table beyond the reference cases", "[templates]") {
  Fixture f;
  struct Row {
    const char* text;
    const char* want;
  };
  const Row rows[] = {
      {"{{ $for }} {{ $interval }} {{ .For }}", "5m0s 30s 5m0s"},
      {"{{ $activeAt }}", "2023-11-14 22:13:20 +0000 UTC"},
      {"{{ ($activeAt.Add (parseDurationTime \"1h\")).UnixMilli }}", "1700003600000"},
      {"{{ $activeAt.Unix }} {{ $activeAt.Format \"15:04\" }}", "1700000000 22:13"},
      {"{{ ((now | toTime).Sub $activeAt).String }}", "1m40s"},
      {"{{ $for.Seconds }} {{ printf \"%s\" .Interval }}", "300 30s"},
      {"{{ $expr | queryEscape }} {{ \"a/b c\" | pathEscape }}", "up+%3D%3D+0 a%2Fb%20c"},
      {"{{ externalURL }} {{ pathPrefix }} {{ $externalURL }}",
       "http://vm.example.com:8880/vmalert /vmalert http://vm.example.com:8880/vmalert"},
      {"{{ \"a\\nb\\r\" | crlfEscape }}|{{ \"x\\\"<'\" | quotesEscape }}|{{ \"q\" | jsonEscape }}",
       "a\\nb\\r|x\\\"\\u003c\\u0027|\"q\""},
      {"{{ \"<b>\" | safeHtml }}", "<b>"},
      {"{{ range $i, $s := query \"up\" }}{{ $i }}={{ $s | value }}/{{ label \"instance\" $s }} {{ end }}",
       "0=2/b 1=1/a "},
      {"{{ (query \"up\" | first).Labels.instance }} {{ query \"up\" | first | strvalue }}|", "b |"},
      {"{{ len (query \"up\") }} {{ len $labels }} {{ len \"héllo\" }}", "2 2 6"},
      {"{{ index (args 1 \"x\") \"arg1\" }} {{ index (args 1) \"nope\" }}", "x <no value>"},
      {"{{ define \"t\" }}[{{ . }}]{{ end }}{{ template \"t\" $labels.job }}", "[node]"},
      {"{{ block \"b\" . }}{{ .Expr }}{{ end }}", "up == 0"},
      {"{{ with $labels.nope }}x{{ else with $labels.job }}{{ . }}{{ end }}", "node"},
      {"{{ range $k, $v := $labels }}{{ if eq $k \"job\" }}{{ break }}{{ end }}{{ $k }}{{ end }}", "instance"},
      {"{{ if and (gt $value 90.0) (lt $value 100.0) }}yes{{ end }}", "yes"},
      {"{{ or 0 \"\" \"z\" }} {{ and 1 0 2 }} {{ not 0 }}", "z 0 true"},
      {"{{ eq \"a\" \"b\" \"a\" }} {{ ne 1 2 }} {{ ge 2 2 }} {{ le 1 2 }}", "true true true true"},
      {"{{- \"  x  \" -}}", "  x  "},
      {"a  {{- /* c */ -}}  b", "ab"},
      {"{{ print 1 2 }}{{ print \"a\" 1 }}", "1 2a1"},
      {"{{ js \"<a'b>\" }}", "\\u003Ca\\'b\\u003E"},
      {"{{ slice \"abcdef\" 2 }} {{ slice \"abcdef\" }}", "cdef abcdef"},
      {"{{ 'a' }} {{ 1e3 }} {{ -1 }} {{ 0b101 }} {{ 0o17 }} {{ 1_000 }} {{ .5 }}", "97 1000 -1 5 15 1000 0.5"},
      {"{{ humanizeTimestamp 1435065584.128 }}", "2015-06-23 13:19:44.128 +0000 UTC"},
      {"{{ 1679055557 | formatTime \"2006-01-02T15:04:05Z07:00\" }}", "2023-03-17T12:19:17Z"},
      {"{{ parseDuration \"1d\" }} {{ parseDuration \"1.5h\" }}", "86400 5400"},
      {"{{ reReplaceAll \"\" \"-\" \"ab\" }} {{ reReplaceAll \"(?P<x>a)\" \"[$x]\" \"cab\" }}", "-a-b- c[a]b"},
      {"{{ \"STRAßE\" | toLower }} {{ \"straße\" | toUpper }} {{ \"foo.bar\" | title }}", "straße STRAßE Foo.Bar"},
      {"{{ \"[::1]:80\" | stripDomain }} {{ \"a.b\" | stripDomain }} {{ \"a.b:1\" | stripDomain }}", "[::1]:80 a a:1"},
      {"{{ $value = 1.0 }}{{ $value }} {{ .Value }}", "1 93.5"},
      {"{{ ($activeAt.Truncate (parseDurationTime \"1h\")).Format \"15:04 Jan 2\" }} {{ ($activeAt.Round (parseDurationTime \"1h\")).Hour }}",
       "22:00 Nov 14 22"},
      {"{{ $activeAt.Before (now | toTime) }} {{ ($activeAt.Add -1000000000).Second }} {{ $activeAt.YearDay }}", "true 19 318"},
      {"{{ (toTime -1.5).UnixMilli }} {{ toTime 1e300 | printf \"%T\" }}", "-1500 time.Time"},
      {"{{ range $i := 3 }}{{ $i }}{{ end }}|{{ range 0 }}x{{ else }}none{{ end }}", "012|none"},
      {"{{ $x := 1 }}{{ range $labels }}{{ $x = 2 }}{{ end }}{{ $x }}", "2"},
      {"{{ $ }}", "{{prometheus map[instance:host-1:9100 job:node] 93.5 up == 0 30s 0 0 2023-11-14 22:13:20 +0000 UTC 5m0s false} map[cluster:prod] http://vm.example.com:8880/vmalert}"},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    CHECK(f.render(r.text) == r.want);
  }
}

TEST_CASE("error texts and positions", "[templates]") {
  Fixture f;
  struct Row {
    const char* text;
    const char* want;
  };
  const Row rows[] = {
      {"line1\n{{ $x }}", "ERR error parsing template: template: :2: undefined variable \"$x\""},
      {"line1\n  {{ humanize \"x\" }}",
       "ERR error evaluating template: template: :2:5: executing \"\" at <humanize \"x\">: error calling "
       "humanize: strconv.ParseFloat: parsing \"x\": invalid syntax"},
      {"{{ if true }}", "ERR error parsing template: template: :1: unexpected EOF"},
      {"{{ \"unterminated }}", "ERR error parsing template: template: :1: unterminated quoted string"},
      {"{{ $labels.foo-bar }}", "ERR error parsing template: template: :1: bad character U+002D '-'"},
      {"{{ break }}", "ERR error parsing template: template: :1: {{break}} outside {{range}}"},
      {"{{ template \"nope\" }}",
       "ERR error evaluating template: template: :1:328: executing \"\" at <{{template \"nope\"}}>: template "
       "\"nope\" not defined"},
      {"{{ query \"fail\" }}",
       "ERR error evaluating template: template: :1:319: executing \"\" at <query \"fail\">: error calling "
       "query: datasource unreachable"},
      {"{{ reReplaceAll \"(\" \"\" \"x\" }}",
       "ERR error evaluating template: template: :1:319: executing \"\" at <reReplaceAll \"(\" \"\" ...>: error "
       "calling reReplaceAll: regexp: Compile(\"(\"): error parsing regexp: missing ): ("},
      {"{{ gt $value 80 }}",
       "ERR error evaluating template: template: :1:319: executing \"\" at <gt $value 80>: error calling gt: "
       "incompatible types for comparison"},
      {"{{ 1 | 2 }}", "ERR error parsing template: template: :1: non executable command in pipeline stage 2"},
      {"{{ with 1 }}{{ else if 2 }}{{ end }}", "ERR error parsing template: template: :1: unexpected <if> in input"},
      {"{{ $value.x }}",
       "ERR error evaluating template: template: :1:325: executing \"\" at <$value.x>: can't evaluate field x "
       "in type float64"},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    CHECK(f.render(r.text) == r.want);
  }
}

TEST_CASE("literal values, uses_query, and no partial output on error", "[templates]") {
  Fixture f;
  auto lit = templates::Template::parse("only {{ opening");
  REQUIRE(lit.has_value());
  CHECK(lit->is_literal());
  CHECK_FALSE(lit->uses_query());

  auto q = templates::Template::parse("{{ define \"q\" }}{{ query \"up\" }}{{ end }}{{ template \"q\" }}");
  REQUIRE(q.has_value());
  CHECK_FALSE(q->is_literal());
  CHECK(q->uses_query());
  auto nq = templates::Template::parse("{{ $labels.job }}");
  REQUIRE(nq.has_value());
  CHECK_FALSE(nq->uses_query());

  auto bad = templates::Template::parse("{{ $labels.job }} then {{ first (query \"none\") }}");
  REQUIRE(bad.has_value());
  f.env.query = [](std::string_view) -> core::Result<std::vector<templates::QuerySample>> {
    return std::vector<templates::QuerySample>{};
  };
  std::string out = "keep:";
  auto r = bad->render(f.data, f.env, out);
  CHECK_FALSE(r.has_value());
  CHECK(out == "keep:");

  CHECK(templates::vmalert_error_text(r.error()) == "error evaluating template: " + r.error().message);
  CHECK(templates::check_template("{{ end }}").has_value());
  CHECK_FALSE(templates::check_template("{{ $value }}").has_value());
}

TEST_CASE("check_template parses what rendering would copy verbatim, as vmalert's validation",
          "[templates]") {
  struct Row {
    const char* text;
    const char* error;  // "" = valid
  };
  const Row rows[] = {
      {"{{ $labels.instance ", "template: :1: unclosed action"},
      {"{{ $labels.instance }} and {{ $value", "template: :1: unclosed action"},
      {"only {{ opening", "template: :1: function \"opening\" not defined"},
      {"line\n{{ $nope", "template: :2: undefined variable \"$nope\""},
      {"{{ if $value }}x", "template: :1: unexpected EOF"},
      {"{{ }}", "template: :1: missing value for command"},
      {"no action }} at all", ""},
      {"plain text", ""},
      {"{{ $labels.instance }}", ""},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    const auto err = templates::check_template(r.text);
    if (*r.error == '\0') {
      CHECK_FALSE(err.has_value());
    } else {
      REQUIRE(err.has_value());
      CHECK(err->message == r.error);
    }
  }
  // Rendering still copies a value without "}}" unchanged (vmalert's ExecuteWithoutTemplate).
  Fixture f;
  CHECK(f.render("{{ $labels.instance ") == "{{ $labels.instance ");
}

TEST_CASE("a template renders many times into an appended buffer", "[templates]") {
  Fixture f;
  auto t = templates::Template::parse("{{ $labels.instance }}={{ $value | humanize }};");
  REQUIRE(t.has_value());
  std::string out;
  for (int i = 0; i < 3; ++i) {
    f.data.value = 1000.0 * (i + 1);
    REQUIRE(t->render(f.data, f.env, out).has_value());
  }
  CHECK(out == "host-1:9100=1k;host-1:9100=2k;host-1:9100=3k;");
}

TEST_CASE("label templates see zero values beyond labels, value and expr", "[templates]") {
  core::Labels labels{{"job", "x"}};
  templates::TemplateData data;
  data.labels = &labels;
  data.value = 1;
  data.expr = "e";
  templates::TemplateEnv env;
  auto r = templates::render_vmalert(
      "{{ $labels.job }} {{ $value }} {{ $expr }} [{{ $externalURL }}] {{ $for }} {{ $alertID }} "
      "{{ $activeAt }} {{ $activeAt.IsZero }} {{ $activeAt.Unix }}",
      data, env);
  REQUIRE(r.has_value());
  CHECK(*r == "x 1 e [] 0s 0 0001-01-01 00:00:00 +0000 UTC true -62135596800");
  auto nq = templates::render_vmalert("{{ query \"up\" }}", data, env);
  REQUIRE_FALSE(nq.has_value());
  CHECK_THAT(nq.error().message, Catch::Contains("query is not available in this context"));
}

TEST_CASE("TemplateSet shares define blocks with every value", "[templates]") {
  Fixture f;
  const std::vector<templates::TemplateSet::File> files{
      {"common.tmpl", "{{ define \"summary\" }}{{ .Labels.job }} is down ({{ .Value }}){{ end }}\n"
                      "{{ define \"q\" }}{{ range query \"up\" }}{{ .Value }}{{ end }}{{ end }}"},
      {"more.tmpl", "{{ define \"url\" }}{{ externalURL }}/x{{ end }}"},
  };
  auto set = templates::TemplateSet::parse(files);
  REQUIRE(set.has_value());
  CHECK_FALSE(set->empty());
  CHECK(f.render("{{ template \"summary\" . }} {{ template \"url\" }}", &*set) ==
        "node is down (93.5) http://vm.example.com:8880/vmalert/x");
  auto t = templates::Template::parse("{{ template \"q\" }}", &*set);
  REQUIRE(t.has_value());
  CHECK(t->uses_query());
  // A value's own definition wins over the shared one.
  CHECK(f.render("{{ define \"url\" }}own{{ end }}{{ template \"url\" }}", &*set) == "own");

  const std::vector<templates::TemplateSet::File> broken{{"bad.tmpl", "ok\n{{ define \"x\" }}{{ if }}{{ end }}"}};
  auto err = templates::TemplateSet::parse(broken);
  REQUIRE_FALSE(err.has_value());
  CHECK(err.error().message == "template: bad.tmpl:2: missing value for if");
}

TEST_CASE("runaway recursion is stopped", "[templates]") {
  Fixture f;
  const std::string got = f.render("{{ define \"r\" }}{{ template \"r\" }}{{ end }}{{ template \"r\" }}");
  CHECK_THAT(got, Catch::Contains("exceeded maximum template depth"));
}

TEST_CASE("nesting inside recursion stops before the stack ends, on any thread", "[templates]") {
  // 900 nested blocks in a define that calls itself: 1000 calls deep, 900,000 levels of walking.
  std::string deep = "{{ define \"d\" }}";
  for (int i = 0; i < 900; ++i) deep += "{{ if 1 }}";
  deep += "{{ template \"d\" }}";
  for (int i = 0; i < 900; ++i) deep += "{{ end }}";
  deep += "{{ end }}{{ template \"d\" }}";
  const std::string error = "exceeded maximum template depth (the thread's stack is nearly full)";
  Fixture f;
  CHECK_THAT(f.render(deep), Catch::Contains(error));
  // Rendered on a thread with a 1 MiB stack (parsed here: the parser's 1000 levels of nesting
  // need more than that under ASan's debug build): the same error, then a template that fits.
  auto deep_t = templates::Template::parse(deep);
  auto fits_t = templates::Template::parse(
      "{{ define \"r\" }}{{ if . }}{{ if 1 }}{{ template \"r\" 0 }}{{ end }}{{ else }}ok"
      "{{ end }}{{ end }}{{ template \"r\" 1 }}");
  REQUIRE(deep_t.has_value());
  REQUIRE(fits_t.has_value());
  struct Job {
    Fixture* f;
    const templates::Template* deep;
    const templates::Template* fits;
    std::string got;
    std::string fits_out;
  } job{&f, &*deep_t, &*fits_t, {}, {}};
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, size_t{1} << 20) == 0);
  pthread_t thread;
  const int rc = pthread_create(
      &thread, &attr,
      [](void* p) -> void* {
        auto* j = static_cast<Job*>(p);
        std::string out;
        auto r = j->deep->render(j->f->data, j->f->env, out);
        j->got = r ? "rendered: " + out : r.error().message;
        auto ok = j->fits->render(j->f->data, j->f->env, j->fits_out);
        if (!ok) j->fits_out = ok.error().message;
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  REQUIRE(rc == 0);
  pthread_join(thread, nullptr);
  CHECK_THAT(job.got, Catch::Contains(error));
  CHECK(job.fits_out == "ok");
}

TEST_CASE("a text parsed again shares the live parse; copies share it too", "[templates]") {
  Fixture f;
  const std::string text = "{{ $labels.instance }} is down ({{ $value | humanize }})";
  auto a = templates::Template::parse(text);
  auto b = templates::Template::parse(text);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->shares_parse_with(*b));
  const templates::Template copy = *a;
  CHECK(copy.shares_parse_with(*a));
  std::string out_a, out_b;
  REQUIRE(a->render(f.data, f.env, out_a));
  REQUIRE(copy.render(f.data, f.env, out_b));
  CHECK(out_a == "host-1:9100 is down (93.5)");
  CHECK(out_b == out_a);
  // Another text, or the same text against a template set, is another parse.
  auto other = templates::Template::parse(text + " ");
  REQUIRE(other);
  CHECK_FALSE(other->shares_parse_with(*a));
  const templates::TemplateSet::File file{"t.tmpl", R"({{ define "x" }}X{{ end }})"};
  auto set = templates::TemplateSet::parse(std::span(&file, 1));
  REQUIRE(set);
  auto with_set = templates::Template::parse(text, &*set);
  REQUIRE(with_set);
  CHECK_FALSE(with_set->shares_parse_with(*a));
  // Parses nobody holds any more are not kept: parsing after they are gone still works.
  for (int i = 0; i < 200; ++i) {
    auto t = templates::Template::parse("{{ $value }} #" + std::to_string(i));
    REQUIRE(t);
  }
  auto again = templates::Template::parse("{{ $value }} #7");
  REQUIRE(again);
  std::string out_c;
  REQUIRE(again->render(f.data, f.env, out_c));
  CHECK(out_c == "93.5 #7");
}

TEST_CASE("a parse leaves the shared-parse map with the last Template holding it", "[templates]") {
  const size_t before = templates::live_parse_count();
  {
    auto a = templates::Template::parse("{{ $value }} leaves #1");
    auto lit = templates::Template::parse("literal leaves #1");
    REQUIRE(a);
    REQUIRE(lit);
    CHECK(templates::live_parse_count() == before + 2);
    {
      const templates::Template copy = *a;
      auto b = templates::Template::parse("{{ $value }} leaves #1");
      REQUIRE(b);
      CHECK(b->shares_parse_with(*a));
      CHECK(templates::live_parse_count() == before + 2);
    }
    CHECK(templates::live_parse_count() == before + 2);  // `a` still holds it
  }
  CHECK(templates::live_parse_count() == before);
  // The same text parsed afresh is a new live parse again.
  auto c = templates::Template::parse("{{ $value }} leaves #1");
  REQUIRE(c);
  CHECK(templates::live_parse_count() == before + 1);
}

TEST_CASE("a variable read before its declaration is written is undefined, as in Go",
          "[templates]") {
  // Go parses these (the declared name is in scope for the pipeline's own commands) and fails
  // at execution. The slot must not show what an earlier render left in the reused scratch:
  // found by templates_fuzz, where "XYZ" from the first render reached the second.
  Fixture f;
  for (int i = 0; i < 2; ++i) {
    INFO("round " << i);
    CHECK(f.render(R"({{ $a := "XYZ" }}{{ $b := 12 }}{{ $a }})") == "XYZ");
    const std::string range = f.render("{{ range $i, $i }}A{{ $i }}{{ else }}none{{ end }}");
    CHECK_THAT(range, Catch::StartsWith("ERR ") && Catch::EndsWith("undefined variable: $i"));
    const std::string self = f.render("{{ $x := $x }}{{ $x }}");
    CHECK_THAT(self, Catch::StartsWith("ERR ") && Catch::EndsWith("undefined variable: $x"));
  }
}

TEST_CASE("texts and $labels.NAME only: the shortcut writes what the interpreter would",
          "[templates]") {
  Fixture f;
  struct Row {
    const char* text;
    const char* want;
  };
  const Row rows[] = {
      // The shortcut's forms.
      {"{{ $labels.instance }}", "host-1:9100"},
      {"on {{ $labels.instance }} ({{$labels.job}})!", "on host-1:9100 (node)!"},
      {"a {{- $labels.job -}} b {{/* note */}}c", "anodeb c"},
      {"{{ $labels.job }}{{ $labels.job }}", "nodenode"},
      // A label that is not there: "" (vmalert's missingkey=zero), by the shortcut too.
      {"x {{ $labels.missing }} y", "x  y"},
      {"{{ $labels.job }} {{ $labels.nope }}", "node "},
      // Near misses the shortcut must leave to the interpreter.
      {"{{ $labels.job | toUpper }}", "NODE"},
      {"{{ .Labels.job }}", "node"},
      {"{{ $labels := .ExternalLabels }}{{ $labels.cluster }}", "prod"},
      {"{{ $labels = .ExternalLabels }}{{ $labels.cluster }}", "prod"},
      {"{{ $externalLabels.cluster }}", "prod"},
      {"{{ if true }}{{ $labels.job }}{{ end }}", "node"},
      {"{{ $labels.job.x }}", "ERR "},
  };
  for (const auto& row : rows) {
    INFO(row.text);
    const std::string got = f.render(row.text);
    if (std::string_view(row.want) == "ERR ") {
      CHECK(got.rfind("ERR ", 0) == 0);
    } else {
      CHECK(got == row.want);
    }
  }
  // Twice through one parse (the shortcut appends to what the buffer holds).
  auto t = templates::Template::parse("<{{ $labels.job }}>");
  REQUIRE(t.has_value());
  std::string out = "pre";
  REQUIRE(t->render(f.data, f.env, out).has_value());
  REQUIRE(t->render(f.data, f.env, out).has_value());
  CHECK(out == "pre<node><node>");
  // No labels at all: the interpreter's empty map, both ways.
  f.data.labels = nullptr;
  CHECK(f.render("[{{ $labels.job }}]") == "[]");
  CHECK(f.render("[{{ if true }}{{ $labels.job }}{{ end }}]") == "[]");
}

TEST_CASE(
    "$value, its humanize functions and printf: the shortcut writes what the interpreter would",
    "[templates]") {
  // Each form once as it is (the shortcut) and once inside {{ if true }} (the interpreter), for
  // values that take every branch of the formatting: zero and negative zero, the SI and binary
  // prefixes both ways, exponent forms, integers past 2^53, NaN and the infinities.
  Fixture f;
  const char* forms[] = {
      "{{ $value }}",
      "v={{$value}} on {{ $labels.instance }}",
      "{{ $value | humanize }}",
      "{{ humanize $value }}",
      "{{ $value | humanize1024 }} B",
      "{{ $value | humanizePercentage }}",
      "{{ humanizeDuration $value }}",
      "{{ printf \"%.2f\" $value }}%",
      "{{ $value | printf \"%.3g|%v|%d|%s|%e\" }}",
      "{{ printf \"%5.1f%%\" $value }} of {{ $labels.job }}",
      "{{- $value -}} x {{ $value | humanize }} y {{ $labels.missing }}",
  };
  const double values[] = {0.0,
                           -0.0,
                           1.0,
                           -1.5,
                           93.5,
                           0.000123456,
                           1e-9,
                           999.9999,
                           1234.5678,
                           1e6,
                           12345678.9,
                           9007199254740993.0,
                           1e21,
                           1e300,
                           -2.5e-300,
                           5e-324,
                           86400 * 3.5,
                           0.25,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()};
  for (const char* form : forms) {
    for (double v : values) {
      INFO(form << " with " << v);
      f.data.value = v;
      const std::string interpreted = f.render(std::string("{{ if true }}") + form + "{{ end }}");
      CHECK(f.render(form) == interpreted);
    }
  }
  // Near misses the shortcut must leave to the interpreter (their errors, other variables).
  f.data.value = 2048;
  CHECK(f.render("{{ $value | humanize 2 }}").rfind("ERR ", 0) == 0);
  CHECK(f.render("{{ humanize $value $value }}").rfind("ERR ", 0) == 0);
  CHECK(f.render("{{ $value.x }}").rfind("ERR ", 0) == 0);
  CHECK(f.render("{{ $value := 3 }}{{ $value }}") == "3");
  CHECK(f.render("{{ $value = \"s\" }}{{ $value }}") == "s");
  CHECK(f.render("{{ printf $labels.job $value }}") == "node%!(EXTRA float64=2048)");
  CHECK(f.render("{{ printf \"%v-%v\" $value $value }}") == "2048-2048");
  CHECK(f.render("{{ $value | toUpper }}").rfind("ERR ", 0) == 0);
  CHECK(f.render("{{ $value | humanize | toUpper }}") == "2.048K");
  // No labels: the shortcut writes "" for a label, as the interpreter's empty map does.
  f.data.labels = nullptr;
  CHECK(f.render("[{{ $value | humanize1024 }}]") == "[2ki]");
  CHECK(f.render("[{{ $value }} {{ $labels.job }}]") == "[2048 ]");
}

TEST_CASE("labels given as a builder render as the built set does", "[templates]") {
  Fixture f;
  core::LabelsBuilder b;
  b.reset(f.labels);
  const char* texts[] = {
      "{{ $labels.instance }} / {{ $labels.job }}",  // simple: looked up in the builder
      "[{{ $labels.missing }}]",                     // simple, a label missing: ""
      "{{ $value | humanize }} on {{ $labels.job }}",
      "{{ $labels.job | toUpper }} {{ len $labels }}",  // not simple: a set is built first
      "{{ range $k, $v := $labels }}{{ $k }}={{ $v }};{{ end }}",
      "{{ .Labels.instance }}",
  };
  for (const char* text : texts) {
    INFO(text);
    const std::string from_set = f.render(text);
    f.data.labels = nullptr;
    f.data.label_builder = &b;
    CHECK(f.render(text) == from_set);
    f.data.labels = &f.labels;
    f.data.label_builder = nullptr;
  }
  auto simple = templates::Template::parse("{{ $labels.job }} {{ printf \"%.1f\" $value }}");
  auto complex = templates::Template::parse("{{ if true }}x{{ end }}");
  auto literal = templates::Template::parse("no actions");
  REQUIRE((simple && complex && literal));
  CHECK(simple->simple());
  CHECK_FALSE(complex->simple());
  CHECK(literal->simple());
  // Output that depends on label values only (an alert whose labels did not change keeps it).
  auto labels_only = templates::Template::parse("at {{ $labels.job }}/{{ $labels.__name__ }}");
  auto dot = templates::Template::parse("{{ .Labels.job }}");
  REQUIRE((labels_only && dot));
  CHECK(labels_only->reads_labels_only());
  CHECK(labels_only->reads_label("job"));
  CHECK(labels_only->reads_label("__name__"));
  CHECK_FALSE(labels_only->reads_label("instance"));
  CHECK(literal->reads_labels_only());
  CHECK_FALSE(literal->reads_label("job"));
  CHECK_FALSE(simple->reads_labels_only());  // $value
  CHECK_FALSE(complex->reads_labels_only());
  CHECK_FALSE(dot->reads_labels_only());  // not one of the simple forms: the interpreter's
}

TEST_CASE("a value the $labels shortcut would take past the cap fails as the interpreter's",
          "[templates]") {
  const std::string big(templates::kMaxRenderedBytes / 2 + 10, 'v');
  core::Labels labels{{"big", big}};
  templates::TemplateData data;
  data.labels = &labels;
  templates::TemplateEnv env;
  auto r = templates::render_vmalert("{{ $labels.big }}{{ $labels.big }}", data, env);
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("exceeds 1048576 bytes"));
  auto one = templates::render_vmalert("{{ $labels.big }}", data, env);
  REQUIRE(one.has_value());
  CHECK(*one == big);
  // A simple template keeps no parse tree: past the cap its text is parsed again for the
  // interpreter's error, every time, and the same template still renders under the cap.
  auto t = templates::Template::parse("<{{ $labels.big }}{{ $labels.big }}>");
  REQUIRE(t.has_value());
  REQUIRE(t->simple());
  for (int i = 0; i < 2; ++i) {
    std::string out = "pre";
    auto failed = t->render(data, env, out);
    REQUIRE_FALSE(failed.has_value());
    CHECK_THAT(failed.error().message,
               Catch::Contains("template: :1:") && Catch::Contains("exceeds 1048576 bytes"));
    CHECK(out == "pre");
  }
  core::Labels small{{"big", "s"}};
  data.labels = &small;
  std::string out;
  REQUIRE(t->render(data, env, out).has_value());
  CHECK(out == "<ss>");
}
