// The PromQL/MetricsQL syntax check: valid forms of both dialects pass, broken ones fail with
// a position inside the expression.
#include <catch2/catch.hpp>

#include "config/promql.hpp"

TEST_CASE("valid PromQL and MetricsQL expressions pass", "[config][promql]") {
  const char* valid[] = {
      // selectors, matchers, quoted names
      "up",
      "up{}",
      "{__name__=~\"job:.*\"}",
      "{\"metric.with.dots\"}",
      "{\"metric\", job=\"a\"}",
      "http_requests_total{job=\"api\", code!=\"500\", path=~\"/a.*\", m!~'x'}",
      "up{job=\"a\",}",
      "up{\"utf8 label\"=\"x\"}",
      "up{a=\"b\" or c=\"d\"}",
      "ns:metric:rate5m",
      "foo.bar.baz",
      "métrique{étiquette=\"é\"}",
      "foo\\-bar",
      // ranges, subqueries, offset, @
      "rate(x[5m])",
      "rate(x[1h30m])",
      "rate(x[1.5h])",
      "rate(x[5m] offset 1h)",
      "rate(x[5m] offset -1h)",
      "x offset 5m @ 1609746000",
      "x @ start()",
      "x @ end() offset 1m",
      "max_over_time(rate(x[5m])[30m:1m])",
      "max_over_time(rate(x[5m])[30m:])",
      "rate(x[5m+1m])",
      "rate(x[1i])",
      "rate(x)",
      "rate(x[(5m-1m)*2])",
      // functions and aggregations
      "sum(rate(x[5m])) by (job)",
      "sum by (job, instance) (rate(x[5m]))",
      "sum without (instance) (x)",
      "count_values(\"version\", build_info)",
      "topk(5, x)",
      "quantile(0.9, x) by (le,)",
      "histogram_quantile(0.99, sum by (le) (rate(h_bucket[5m])))",
      "label_replace(up, \"dst\", \"$1\", \"src\", \"(.*)\")",
      "absent(up{job=\"x\"})",
      "time()",
      "vector(1)",
      "sum(x) by (job) limit 10",
      "rate(x[5m]) keep_metric_names",
      "any_unknown_function(x, 1, \"s\")",
      "sum(x) by (\"quoted label\")",
      // binary operators and modifiers
      "a + b",
      "a - -b",
      "a / on(job) b",
      "a * ignoring(instance) group_left(version) b",
      "a * on(job) group_right b",
      "a > bool 1",
      "a == b and c != d or e unless f",
      "2 ^ 3 ^ 2",
      "a atan2 b",
      "(a + b) * 2",
      "-x",
      "+x",
      "a default 0",
      "a if b",
      "a ifnot b",
      "a + on() group_left() prefix \"x_\" b",
      "(a, b)",
      "\"a\" + \"b\"",
      // numbers and strings
      "1",
      "0.95",
      "1e3",
      "1.5e-3",
      ".5",
      "0x1F",
      "Inf",
      "-Inf",
      "NaN",
      "5m",
      "1Ki",
      "`raw string`",
      "'single'",
      // WITH templates
      "WITH (x = up{job=\"a\"}) x + 1",
      "with (f(a, b) = a + b) f(x, y)",
      "WITH (commonFilters = {job=\"a\"}, rate5m(m) = rate(m[5m])) rate5m(x{commonFilters})",
      // whitespace and comments
      "sum(\n  rate(x[5m])\n) # trailing comment\n",
      "a\n  > 1",
  };
  for (const char* e : valid) {
    CAPTURE(e);
    const auto err = config::check_promql(e);
    CHECK_FALSE(err.has_value());
    if (err) FAIL_CHECK(err->to_string());
  }
}

TEST_CASE("broken expressions fail with a position", "[config][promql]") {
  struct Case {
    const char* expr;
    const char* error;  // ExprError::to_string()
  };
  const Case invalid[] = {
      {"", "1:1: empty expression"},
      {"sum(rate(x[5m])", "1:4: unclosed left parenthesis"},
      {"vm_rows{ > 0", "1:10: unexpected token \">\" in label matching; want label name"},
      {"up{job=}", "1:8: unexpected token \"}\" in label matching; want string"},
      {"up{job}", "1:7: unexpected token \"}\" in label matching; want \"=\", \"!=\", \"=~\" or "
                  "\"!~\""},
      {"up{job=\"a\"", "1:3: unexpected end of input inside braces"},
      {"up)", "1:3: unexpected right parenthesis ')'"},
      {"rate(x[5m)", "1:10: unexpected token \")\" in range; want \"]\""},
      {"rate(x[5m", "1:7: unclosed left bracket"},
      {"rate(x[])", "1:8: missing range duration in \"[]\""},
      {"a +", "1:4: unexpected end of input after binary operator"},
      {"a + * b", "1:5: unexpected token \"*\""},
      {"up{job=\"a}", "1:8: unterminated quoted string"},
      {"sum by job (x)", "1:5: unexpected token \"by\""},
      {"a b", "1:3: unexpected token \"b\""},
      {"x offset", "1:9: unexpected end of input after offset; want a duration"},
      {"a / on(job b", "1:12: unexpected token \"b\" in grouping opts; want \",\" or \")\""},
      {"sum(x) by (job", "1:11: unclosed left parenthesis"},
      {"foo{a=\"b\"} $", "1:12: unexpected character '$'"},
      {"a ! b", "1:3: unexpected character after '!': want '=' or '~'"},
      {"()", "1:2: unexpected \")\": empty parentheses"},
      {"sum(\n  rate(x[5m]\n", "2:7: unclosed left parenthesis"},
      {"sum(\n  rate(x{a=}[5m]))\n", "2:12: unexpected token \"}\" in label matching; want string"},
      {"WITH (x = ) x", "1:11: unexpected token \")\""},
  };
  for (const auto& c : invalid) {
    CAPTURE(c.expr);
    const auto err = config::check_promql(c.expr);
    REQUIRE(err.has_value());
    CHECK(err->to_string() == c.error);
  }
}

TEST_CASE("deep nesting is an error, not a stack overflow", "[config][promql]") {
  const std::string deep = std::string(100000, '(') + "1" + std::string(100000, ')');
  const auto err = config::check_promql(deep);
  REQUIRE(err.has_value());
  CHECK(err->message == "expression nesting too deep");
  const std::string neg = "x[" + std::string(100000, '-') + "5m]";
  REQUIRE(config::check_promql(neg).has_value());
  const std::string ok = std::string(100, '(') + "1" + std::string(100, ')');
  CHECK_FALSE(config::check_promql(ok).has_value());
}
