#include "core/duration.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace core {
namespace {

// Returns the unit length in nanoseconds, or 0 when `u` is not a unit.
double unit_nanos(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "µs") return 1e3;
  if (u == "ms") return 1e6;
  if (u == "s") return 1e9;
  if (u == "m") return 60e9;
  if (u == "h") return 3600e9;
  if (u == "d") return 86400e9;
  if (u == "w") return 7 * 86400e9;
  if (u == "y") return 365 * 86400e9;
  return 0;
}

}  // namespace

Result<Duration> parse_duration(std::string_view text) {
  const std::string quoted = "cannot parse duration \"" + std::string(text) + "\"";
  std::string_view s = text;
  if (s.empty()) return fail(quoted + ": empty duration");
  bool negative = false;
  if (s.front() == '-' || s.front() == '+') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return fail(quoted + ": missing number");
  // A bare number is a count of seconds (MetricsQL).
  {
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc{} && p == s.data() + s.size()) {
      if (!std::isfinite(v)) return fail(quoted + ": not a finite number");
      return Duration{static_cast<int64_t>(std::llround((negative ? -v : v) * 1e9))};
    }
  }
  double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == 0) return fail(quoted + ": expected a number at \"" + std::string(s) + "\"");
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + i, v);
    if (ec != std::errc{} || p != s.data() + i) return fail(quoted + ": bad number");
    s.remove_prefix(i);
    size_t j = 0;
    while (j < s.size() && !((s[j] >= '0' && s[j] <= '9') || s[j] == '.')) ++j;
    const double unit = unit_nanos(s.substr(0, j));
    if (unit == 0) {
      return fail(quoted + (j == 0 ? std::string(": missing unit")
                                   : ": unknown unit \"" + std::string(s.substr(0, j)) + "\""));
    }
    total += v * unit;
    s.remove_prefix(j);
  }
  if (total > 9.2e18) return fail(quoted + ": too large");
  return Duration{static_cast<int64_t>(std::llround(negative ? -total : total))};
}

// Go's time.Duration.String.
std::string format_go_duration(Duration d) {
  int64_t v = d.count();
  if (v == 0) return "0s";
  const bool neg = v < 0;
  uint64_t u = neg ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  char buf[40];
  size_t w = sizeof buf;
  auto fmt_frac = [&](uint64_t val, int prec) {
    bool print = false;
    for (int i = 0; i < prec; ++i) {
      const auto digit = val % 10;
      print = print || digit != 0;
      if (print) buf[--w] = static_cast<char>('0' + digit);
      val /= 10;
    }
    if (print) buf[--w] = '.';
    return val;
  };
  auto fmt_int = [&](uint64_t val) {
    if (val == 0) {
      buf[--w] = '0';
      return;
    }
    while (val > 0) {
      buf[--w] = static_cast<char>('0' + val % 10);
      val /= 10;
    }
  };
  if (u < 1000000000ULL) {
    buf[--w] = 's';
    if (u < 1000ULL) {
      buf[--w] = 'n';
      fmt_int(u);
    } else {
      int prec = 6;
      if (u < 1000000ULL) {
        // Go writes U+00B5 MICRO SIGN: "µs".
        prec = 3;
        buf[--w] = '\xb5';
        buf[--w] = '\xc2';
      } else {
        buf[--w] = 'm';
      }
      u = fmt_frac(u, prec);
      fmt_int(u);
    }
  } else {
    buf[--w] = 's';
    u = fmt_frac(u, 9);
    fmt_int(u % 60);
    u /= 60;
    if (u > 0) {
      buf[--w] = 'm';
      fmt_int(u % 60);
      u /= 60;
      if (u > 0) {
        buf[--w] = 'h';
        fmt_int(u);
      }
    }
  }
  if (neg) buf[--w] = '-';
  return std::string(buf + w, sizeof buf - w);
}

}  // namespace core
