// Go's width/precision limits in printf and the cap on one rendered value: no template can make
// the daemon build gigabytes, and what Go prints for a crazy width is what we print.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "core/limit_hits.hpp"
#include "templates/go_fmt.hpp"
#include "templates/template.hpp"

using templates::tmpl::Value;

namespace {

std::string fmt(std::string_view f, std::vector<Value> args) {
  std::string s;
  templates::gofmt::sprintf(s, f, args);
  return s;
}

std::string render(std::string_view text, uint64_t max_steps = templates::kMaxRenderSteps) {
  const core::Labels labels{{"instance", "host-1:9100"}};
  templates::TemplateData data;
  data.labels = &labels;
  templates::TemplateEnv env;
  env.max_render_steps = max_steps;
  auto r = templates::render_vmalert(text, data, env);
  return r ? *r : "ERR " + r.error().message;
}

bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("printf: a * width or precision beyond a million is BADWIDTH/BADPREC, as in Go",
          "[templates][fmt]") {
  struct Row {
    const char* format;
    std::vector<Value> args;
    const char* want;
  };
  const std::vector<Row> rows = {
      {"%*d", {Value::make_int(1500000000), Value::make_int(7)}, "%!(BADWIDTH)7"},
      {"%*d", {Value::make_int(-2147483648LL), Value::make_int(7)}, "%!(BADWIDTH)7"},
      {"%*d", {Value::make_int(INT64_MIN), Value::make_int(7)}, "%!(BADWIDTH)7"},
      {"%*d", {Value::make_int(1000001), Value::make_int(7)}, "%!(BADWIDTH)7"},
      {"%*d", {Value::make_int(-1000001), Value::make_int(7)}, "%!(BADWIDTH)7"},
      {"%*d", {Value::make_int(int64_t{1} << 32), Value::make_int(7)}, "%!(BADWIDTH)7"},
      {"%*d", {Value::make_uint(UINT64_MAX, templates::tmpl::Kind::uint64_), Value::make_int(7)},
       "%!(BADWIDTH)7"},
      {"%*d", {Value::make_view("3"), Value::make_int(7)}, "%!(BADWIDTH)7"},
      {"%*d", {}, "%!(BADWIDTH)%!d(MISSING)"},
      {"%*d", {Value::make_int(3), Value::make_int(7)}, "  7"},
      {"%*d", {Value::make_int(-3), Value::make_int(7)}, "7  "},
      {"%*d", {Value::make_uint(3, templates::tmpl::Kind::uint64_), Value::make_int(7)}, "  7"},
      {"%.*f", {Value::make_int(1000001), Value::make_float(1.5)}, "%!(BADPREC)1.500000"},
      {"%.*f", {Value::make_int(-2147483648LL), Value::make_float(1.5)}, "%!(BADPREC)1.500000"},
      // Go: a negative precision argument makes no sense, so it is reported too.
      {"%.*d", {Value::make_int(-1), Value::make_int(5)}, "%!(BADPREC)5"},
      {"%.*s", {Value::make_int(-1), Value::make_view("abc")}, "%!(BADPREC)abc"},
      {"%.*s", {Value::make_int(2), Value::make_view("abc")}, "ab"},
      // A literal number that passes a million before its last digit is "crazy long": Go stops
      // parsing the format there.
      {"%100000000d", {Value::make_int(7)}, "%!(NOVERB)%!(EXTRA int=7)"},
      {"%99999999999999999999d", {Value::make_int(7)}, "%!(NOVERB)%!(EXTRA int=7)"},
      {"%.100000000f", {Value::make_float(1.5)}, "%!(NOVERB)%!(EXTRA float64=1.5)"},
      {"x%1000000000000d|", {Value::make_int(7)}, "x%!(NOVERB)%!(EXTRA int=7)"},
  };
  for (const auto& r : rows) {
    INFO(r.format);
    CHECK(fmt(r.format, r.args) == r.want);
  }
}

TEST_CASE("printf: widths up to Go's limits are honoured exactly", "[templates][fmt]") {
  // A million via *, and 10,000,000 as a literal (Go checks before each digit, so 8 digits pass).
  CHECK(fmt("%*d", {Value::make_int(1000000), Value::make_int(7)}).size() == 1000000);
  CHECK(fmt("%*d", {Value::make_int(-1000000), Value::make_int(7)}).size() == 1000000);
  CHECK(fmt("%10000000d", {Value::make_int(7)}).size() == 10000000);
}

TEST_CASE("printf: large precisions print the exact decimal expansion", "[templates][fmt]") {
  CHECK(fmt("%.30f", {Value::make_float(0.1)}) == "0.100000000000000005551115123126");
  CHECK(fmt("%.60g", {Value::make_float(0.1)}) ==
        "0.1000000000000000055511151231257827021181583404541015625");
  CHECK(fmt("%.100e", {Value::make_float(1)}) == "1." + std::string(100, '0') + "e+00");
  CHECK(fmt("%.1100f", {Value::make_float(0.5)}) == "0.5" + std::string(1099, '0'));
  const std::string tiny = fmt("%.1100f", {Value::make_float(5e-324)});
  CHECK(tiny.size() == 1102);
  CHECK(tiny.substr(0, 8) == "0.000000");
  CHECK(tiny.substr(325, 6) == "494065");  // 5e-324 = 4.94065...e-324: the digits are there
}

TEST_CASE("sprintf stops once it has written more than max_size bytes", "[templates][fmt]") {
  std::string s;
  const std::vector<Value> args{Value::make_int(1), Value::make_int(2), Value::make_int(3)};
  templates::gofmt::sprintf(s, "%5d%5d%5d", args, 7);
  CHECK(s == "    1    2");
}

TEST_CASE("templates: the issue's printf widths render as Go does", "[templates]") {
  CHECK(render("{{ printf \"%*d\" 1500000000 7 }}") == "%!(BADWIDTH)7");
  CHECK(render("{{ printf \"%*d\" -2147483648 7 }}") == "%!(BADWIDTH)7");
  CHECK(render("{{ len (printf \"%*d\" 1000000 7) }}") == "1000000");
}

TEST_CASE("templates: one rendered value is capped at kMaxRenderedBytes", "[templates]") {
  STATIC_REQUIRE(templates::kMaxRenderedBytes == 1048576);
  const uint64_t hits = core::limit_hits(core::Limit::rendered_template);
  SECTION("output written by a range loop") {
    const std::string r = render("{{ range 100000000 }}xxxxxxxx{{ end }}");
    CHECK(contains(r, "ERR error evaluating template: template: :1:"));
    CHECK(contains(r, "rendered value exceeds 1048576 bytes"));
    CHECK(core::limit_hits(core::Limit::rendered_template) == hits + 1);
  }
  SECTION("output printed by actions") {
    const std::string r = render("{{ range 100000000 }}{{ $labels.instance }}{{ end }}");
    CHECK(contains(r, "rendered value exceeds 1048576 bytes"));
  }
  SECTION("a string doubled in a variable") {
    const std::string r = render(
        "{{ $s := \"xxxxxxxx\" }}{{ range 40 }}{{ $s = printf \"%s%s\" $s $s }}{{ end }}"
        "{{ len $s }}");
    CHECK(contains(r, "error calling printf: result exceeds 1048576 bytes"));
    CHECK(core::limit_hits(core::Limit::rendered_template) == hits + 1);
  }
  SECTION("a literal width of ten million") {
    const std::string r = render("{{ printf \"%10000000d\" 7 }}");
    CHECK(contains(r, "error calling printf: result exceeds 1048576 bytes"));
  }
  SECTION("print of many large operands") {
    const std::string r = render(
        "{{ $s := printf \"%1000000d\" 1 }}{{ print $s $s $s $s $s $s $s $s }}");
    CHECK(contains(r, "error calling print: result exceeds 1048576 bytes"));
  }
  SECTION("reReplaceAll multiplying sizes") {
    const std::string r =
        render("{{ reReplaceAll \"\" \"yyyyyyyyyyyyyyyy\" (printf \"%900000s\" \"\") }}");
    CHECK(contains(r, "error calling reReplaceAll: result exceeds 1048576 bytes"));
  }
  SECTION("just under the cap renders") {
    CHECK(render("{{ range 1024 }}" + std::string(1024, 'z') + "{{ end }}").size() == 1048576);
    CHECK(core::limit_hits(core::Limit::rendered_template) == hits);
  }
}

TEST_CASE("templates: one render is capped at kMaxRenderSteps", "[templates]") {
  STATIC_REQUIRE(templates::kMaxRenderSteps == 10'000'000);
  CHECK(templates::TemplateEnv{}.max_render_steps == templates::kMaxRenderSteps);
  const uint64_t hits = core::limit_hits(core::Limit::template_steps);
  SECTION("the default budget: a loop that writes nothing") {
    const std::string r = render("{{ range 100000000 }}{{ end }}");
    CHECK(contains(r, "ERR error evaluating template: template: :1:"));
    CHECK(contains(r, "exceeded 10000000 evaluation steps"));
    CHECK(core::limit_hits(core::Limit::template_steps) == hits + 1);
  }
  // The rest use a budget of 100,000 (the same code; 10 million takes ~30 s under ASan).
  constexpr uint64_t kSteps = 100'000;
  SECTION("a define that calls itself twice per level (2^40 calls, within the depth limit)") {
    const std::string r = render(
        "{{ define \"t\" }}{{ if lt (len .) 40 }}{{ template \"t\" (printf \"%sx\" .) }}"
        "{{ template \"t\" (printf \"%sx\" .) }}{{ end }}{{ end }}{{ template \"t\" \"\" }}",
        kSteps);
    CHECK(contains(r, "exceeded 100000 evaluation steps"));
    CHECK(core::limit_hits(core::Limit::template_steps) == hits + 1);
  }
  SECTION("calls on a large string pay for its bytes") {
    // 100 KB per `len` argument is ~390 steps: the budget runs out after ~250 iterations
    // instead of running 100 million of them.
    const std::string r = render(
        "{{ $s := printf \"%100000d\" 1 }}{{ range 100000000 }}{{ len $s }}{{ end }}", kSteps);
    CHECK(contains(r, "exceeded 100000 evaluation steps"));
    CHECK_FALSE(contains(r, "rendered value exceeds"));
  }
  SECTION("each query pays for its round trip") {
    templates::TemplateData data;
    const core::Labels labels;
    data.labels = &labels;
    templates::TemplateEnv env;
    env.max_render_steps = kSteps;
    int queries = 0;
    env.query = [&](std::string_view) -> core::Result<std::vector<templates::QuerySample>> {
      ++queries;
      return std::vector<templates::QuerySample>{};
    };
    auto r = templates::render_vmalert("{{ range 100000 }}{{ query \"up\" }}{{ end }}", data, env);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "exceeded 100000 evaluation steps"));
    CHECK(queries > 90);
    CHECK(queries < 100);
  }
  SECTION("a large render under the budget completes and counts nothing") {
    // 10,000 iterations of 5 steps (the iteration, three nodes, one command): 30 KB written.
    CHECK(render("{{ range 10000 }}a{{ \"b\" }}c{{ end }}", kSteps).size() == 30'000);
    // 33,000 iterations of 3 steps (the iteration, the if node, its command): 99,000 + 2.
    CHECK(render("{{ range 33000 }}{{ if false }}x{{ end }}{{ end }}", kSteps).empty());
    CHECK(core::limit_hits(core::Limit::template_steps) == hits);
  }
}
