// Go fmt/strconv formatting details beyond template_cases.json.
#include "templates/go_fmt.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

using templates::tmpl::Value;

namespace {
std::string v_of(double v) {
  std::string s;
  templates::gofmt::append_float_v(s, v);
  return s;
}
std::string fmt(std::string_view f, std::vector<Value> args) {
  std::string s;
  templates::gofmt::sprintf(s, f, args);
  return s;
}
}  // namespace

TEST_CASE("%v of float64 is Go's shortest form", "[templates][fmt]") {
  struct Row {
    double v;
    const char* want;
  };
  const Row rows[] = {
      {0, "0"},           {-0.0, "-0"},       {1, "1"},           {0.5, "0.5"},
      {123456, "123456"}, {999999, "999999"}, {1e6, "1e+06"},     {1234567, "1.234567e+06"},
      {1e-4, "0.0001"},   {1e-5, "1e-05"},    {1e20, "1e+20"},    {1e100, "1e+100"},
      {5e-324, "5e-324"}, {0.1 + 0.2, "0.30000000000000004"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
      {std::nan(""), "NaN"},
  };
  for (const auto& r : rows) {
    INFO(r.want);
    CHECK(v_of(r.v) == r.want);
  }
}

TEST_CASE("%.Ne rounds like C's printf at every precision, short decimals and subnormals included",
          "[templates][fmt]") {
  // Values with few digits (100.5, 0.25, 12) take the shortest-digits path, others the rounding
  // one; Go's %e is C's (two exponent digits at least), and glibc rounds exactly.
  std::mt19937_64 rng(7);
  std::vector<double> values{
      0.0,      1.0,       100.5, 0.1, 0.25, 12,   999.95, 1e21, 5e-324, 1.7976931348623157e308,
      0.000123, 123456789, 0.5,   2.5, 1.25, 9.995};
  for (int i = 0; i < 3000; ++i) {
    const double scale = std::pow(10.0, static_cast<int>(rng() % 40) - 20);
    values.push_back(static_cast<double>(rng() % 100000) / 1000.0 * scale);  // short decimals
    values.push_back(
        std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 150));
    // Subnormals: an ulp is a large part of them.
    values.push_back(
        std::ldexp(static_cast<double>(rng() % 1000 + 1), -1074 + static_cast<int>(rng() % 60)));
  }
  for (const double v : values) {
    for (int prec = 0; prec <= 17; ++prec) {
      std::string got;
      templates::gofmt::append_float(got, v, 'e', prec);
      char want[128];
      std::snprintf(want, sizeof want, "%.*e", prec, v);
      INFO("v=" << v << " prec=" << prec);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("printf verbs, widths and flags", "[templates][fmt]") {
  CHECK(fmt("%.4g", {Value::make_float(1234567)}) == "1.235e+06");
  CHECK(fmt("%.4g", {Value::make_float(100000)}) == "1e+05");
  CHECK(fmt("%.4g", {Value::make_float(1000)}) == "1000");
  CHECK(fmt("%.3g", {Value::make_float(0.0001234)}) == "0.000123");
  CHECK(fmt("%g", {Value::make_float(1e21)}) == "1e+21");
  CHECK(fmt("%e", {Value::make_float(0)}) == "0.000000e+00");
  CHECK(fmt("%E", {Value::make_float(1234.5678)}) == "1.234568E+03");
  CHECK(fmt("%.0f|%.0f|%.0f", {Value::make_float(0.5), Value::make_float(1.5), Value::make_float(2.5)}) == "0|2|2");
  CHECK(fmt("%.2f", {Value::make_float(-0.001)}) == "-0.00");
  CHECK(fmt("%8.2f|%-8.2f|%+.1f|% .1f", {Value::make_float(3.14159), Value::make_float(3.14159),
                                          Value::make_float(2), Value::make_float(2)}) ==
        "    3.14|3.14    |+2.0| 2.0");
  CHECK(fmt("%05d|%-5d|%+d|%x|%X|%o|%b|%#x", {Value::make_int(42), Value::make_int(42), Value::make_int(42),
                                             Value::make_int(255), Value::make_int(255), Value::make_int(8),
                                             Value::make_int(5), Value::make_int(255)}) ==
        "00042|42   |+42|ff|FF|10|101|0xff");
  CHECK(fmt("%q", {Value::make_view("a\"b\n")}) == "\"a\\\"b\\n\"");
  CHECK(fmt("%s %s", {Value::make_view("a")}) == "a %!s(MISSING)");
  CHECK(fmt("%d", {Value::make_view("x")}) == "%!d(string=x)");
  CHECK(fmt("abc%", {}) == "abc%!(NOVERB)");
  CHECK(fmt("%s", {Value::make_view("a"), Value::make_int(2)}) == "a%!(EXTRA int=2)");
  CHECK(fmt("%t|%v", {Value::make_bool(true), Value::make_bool(false)}) == "true|false");
  CHECK(fmt("%v", {Value{}}) == "<nil>");
  CHECK(fmt("%d %%", {Value::make_int(-7)}) == "-7 %");
  CHECK(fmt("%#v|%#v|%6.2f|%.10g|%g|%.0e", {Value::make_float(1), Value::make_view("s"), Value::make_float(3.14159),
                                              Value::make_float(1.0 / 3), Value::make_float(1e-7),
                                              Value::make_float(12345)}) ==
        "1|\"s\"|  3.14|0.3333333333|1e-07|1e+04");
  CHECK(fmt("%T %T", {Value::make_float(1), Value::make_view("s")}) == "float64 string");
  CHECK(fmt("%s", {Value::make_duration(core::Duration{300'000'000'000})}) == "5m0s");
  CHECK(fmt("%d", {Value::make_duration(core::Duration{1500})}) == "1500");
}

TEST_CASE("Sprint spaces operands only between non-strings", "[templates][fmt]") {
  std::string s;
  const std::vector<Value> args{Value::make_int(1), Value::make_int(2), Value::make_view("a"),
                                Value::make_view("b"), Value::make_float(3.5)};
  templates::gofmt::sprint(s, args);
  CHECK(s == "1 2ab3.5");
  s.clear();
  templates::gofmt::sprintln(s, args);
  CHECK(s == "1 2 a b 3.5\n");
}

TEST_CASE("time.Time String and Format", "[templates][fmt]") {
  const int64_t t = 1435065584;  // 2015-06-23 13:19:44.128 UTC
  const int64_t ns = 128000000;
  std::string s;
  templates::gofmt::append_time(s, t, ns);
  CHECK(s == "2015-06-23 13:19:44.128 +0000 UTC");
  struct Row {
    const char* layout;
    const char* want;
  };
  const Row rows[] = {
      {"2006-01-02T15:04:05Z07:00", "2015-06-23T13:19:44Z"},
      {"2006-01-02T15:04:05.000Z", "2015-06-23T13:19:44.128Z"},
      {"Mon Jan _2 15:04:05 MST 2006", "Tue Jun 23 13:19:44 UTC 2015"},
      {"02/01/06 03:04PM -0700", "23/06/15 01:19PM +0000"},
      {"January 2, 2006 .999999", "June 23, 2015 .128"},
      {"Monday 002", "Tuesday 174"},
  };
  for (const auto& r : rows) {
    std::string out;
    templates::gofmt::append_time_layout(out, t, ns, r.layout);
    INFO(r.layout);
    CHECK(out == r.want);
  }
}

TEST_CASE("times outside the int64-nanosecond range print like Go", "[templates][fmt]") {
  std::string s;
  templates::gofmt::append_time(s, -62135596800, 0);
  CHECK(s == "0001-01-01 00:00:00 +0000 UTC");
  s.clear();
  templates::gofmt::append_time(s, 253402300799, 999999999);
  CHECK(s == "9999-12-31 23:59:59.999999999 +0000 UTC");
  s.clear();
  templates::gofmt::append_time(s, -1, 500000000);
  CHECK(s == "1969-12-31 23:59:59.5 +0000 UTC");
}

TEST_CASE("strconv.ParseFloat accepts Go's forms and reports Go's error", "[templates][fmt]") {
  CHECK(*templates::gofmt::parse_float("1e3") == 1000);
  CHECK(*templates::gofmt::parse_float("+Inf") == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(*templates::gofmt::parse_float("NaN")));
  CHECK(*templates::gofmt::parse_float("0x1p-2") == 0.25);
  CHECK(*templates::gofmt::parse_float("-0.5") == -0.5);
  const auto bad = templates::gofmt::parse_float("abc");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message == "strconv.ParseFloat: parsing \"abc\": invalid syntax");
  CHECK_FALSE(templates::gofmt::parse_float("").has_value());
  CHECK_FALSE(templates::gofmt::parse_float("1 ").has_value());
}
