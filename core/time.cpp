#include "core/time.hpp"

#include <charconv>
#include <cstdio>

namespace core {
namespace {

// Writes `v` as exactly `width` decimal digits (zero-padded) at `p`; returns the end.
char* put_digits(char* p, unsigned long long v, int width) {
  for (int i = width - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  return p + width;
}

// "YYYY-MM-DDTHH:MM:SS" into `buf` (at least 32 bytes); returns the end. Hand-written digits:
// the payload formats two of these per alert, and snprintf was most of an unchanged alert's
// cost. Years outside 0..9999 fall back to snprintf (Go prints them in full, so does this).
char* put_date_time(char* buf, TimePoint t, long long& nanos_out) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);
  nanos_out = (t - secs).count();
  const auto days = floor<std::chrono::days>(secs);
  const year_month_day ymd{days};
  const hh_mm_ss hms{secs - days};
  const int year = static_cast<int>(ymd.year());
  char* p = buf;
  if (year >= 0 && year <= 9999) {
    p = put_digits(p, static_cast<unsigned>(year), 4);
  } else {
    p += std::snprintf(p, 16, "%04d", year);
  }
  *p++ = '-';
  p = put_digits(p, static_cast<unsigned>(ymd.month()), 2);
  *p++ = '-';
  p = put_digits(p, static_cast<unsigned>(ymd.day()), 2);
  *p++ = 'T';
  p = put_digits(p, static_cast<unsigned long long>(hms.hours().count()), 2);
  *p++ = ':';
  p = put_digits(p, static_cast<unsigned long long>(hms.minutes().count()), 2);
  *p++ = ':';
  p = put_digits(p, static_cast<unsigned long long>(hms.seconds().count()), 2);
  return p;
}

void append_date_time(std::string& out, TimePoint t, long long& nanos_out) {
  char buf[32];
  const char* end = put_date_time(buf, t, nanos_out);
  out.append(buf, static_cast<size_t>(end - buf));
}

bool parse_int(std::string_view s, size_t pos, size_t len, int& out) {
  if (pos + len > s.size()) return false;
  auto [p, ec] = std::from_chars(s.data() + pos, s.data() + pos + len, out);
  return ec == std::errc{} && p == s.data() + pos + len;
}

}  // namespace

std::string format_rfc3339_seconds(TimePoint t) {
  std::string out;
  long long nanos = 0;
  append_date_time(out, t, nanos);
  out += 'Z';
  return out;
}

size_t put_rfc3339_nano(char* buf, TimePoint t) {
  long long nanos = 0;
  char* p = put_date_time(buf, t, nanos);
  if (nanos != 0) {
    *p++ = '.';
    p = put_digits(p, static_cast<unsigned long long>(nanos), 9);
    while (p[-1] == '0') --p;  // Go's RFC3339Nano drops trailing zeros
  }
  *p++ = 'Z';
  return static_cast<size_t>(p - buf);
}

void append_rfc3339_nano(std::string& out, TimePoint t) {
  char buf[kRfc3339NanoMax];
  out.append(buf, put_rfc3339_nano(buf, t));
}

std::string format_rfc3339_nano(TimePoint t) {
  std::string out;
  append_rfc3339_nano(out, t);
  return out;
}

bool parse_rfc3339(std::string_view s, TimePoint& out) {
  using namespace std::chrono;
  int y, mo, d, h, mi, sec;
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
      s[13] != ':' || s[16] != ':')
    return false;
  if (!parse_int(s, 0, 4, y) || !parse_int(s, 5, 2, mo) || !parse_int(s, 8, 2, d) ||
      !parse_int(s, 11, 2, h) || !parse_int(s, 14, 2, mi) || !parse_int(s, 17, 2, sec))
    return false;
  size_t pos = 19;
  long long nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) {
        nanos = nanos * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return false;
    for (; digits < 9; ++digits) nanos *= 10;
  }
  long long offset_s = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!parse_int(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !parse_int(s, pos + 4, 2, om))
      return false;
    offset_s = (oh * 3600LL + om * 60LL) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 60) return false;
  const auto tp = sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} - seconds{offset_s};
  out = TimePoint{tp.time_since_epoch() + nanoseconds{nanos}};
  return true;
}

}  // namespace core
