#include "templates/go_fmt.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

#include "core/duration.hpp"
#include "core/utf8.hpp"

namespace templates::gofmt {
namespace {

using tmpl::Kind;
using tmpl::Value;

// ---- floats --------------------------------------------------------------------------------

// Decimal digits and exponent of |v|: v = 0.d1d2...dn * 10^dp (Go's decimal form).
struct Digits {
  char d[800];
  int nd = 0;
  int dp = 0;
};

// 767 significant digits write any double exactly; more digits are zeros.
constexpr int kExactDigits = 780;
static_assert(kExactDigits <= static_cast<int>(sizeof(Digits{}.d)));
// A double's exact fixed-point form has at most 1074 digits after the point.
constexpr int kExactFraction = 1074;

// Shortest (prec < 0) or `prec` significant digits, correctly rounded.
void decimal_digits(double v, int prec, Digits& out) {
  char buf[kExactDigits + 16];
  if (prec > kExactDigits) prec = kExactDigits;
  v = std::fabs(v);
  // Few digits (100.5, 12, 99.25: most alert values): v * 10^k is a whole number m below
  // 10^prec for some k < prec. The product's rounding error is within 2^-53 of v, far less than
  // half a unit in the prec-th digit for prec <= 15, so m's digits are v rounded to prec digits
  // exactly; integer arithmetic instead of a rounding to_chars (~600 instructions).
  if (prec > 0 && prec <= 15 && v >= std::numeric_limits<double>::min() && v < 1e15) {
    static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    for (int k = 0; k < prec; ++k) {
      const double m = v * kPow10[k];
      if (m >= kPow10[prec]) break;
      if (m != std::floor(m)) continue;
      char rev[20];
      int n = 0;
      for (auto u = static_cast<uint64_t>(m); u != 0; u /= 10)
        rev[n++] = static_cast<char>('0' + u % 10);
      out.nd = 0;
      while (n > 0) out.d[out.nd++] = rev[--n];
      out.dp = out.nd - k;
      while (out.nd > 1 && out.d[out.nd - 1] == '0') --out.nd;
      return;
    }
  }
  std::to_chars_result r;
  if (prec < 0) {
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  } else {
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific,
                      prec == 0 ? 0 : prec - 1);
  }
  const char* e = static_cast<const char*>(std::memchr(buf, 'e', static_cast<size_t>(r.ptr - buf)));
  out.nd = 0;
  for (const char* p = buf; p < e; ++p) {
    if (*p != '.') out.d[out.nd++] = *p;
  }
  int exp = 0;
  std::from_chars(e + (e[1] == '+' ? 2 : 1), r.ptr, exp);
  while (out.nd > 1 && out.d[out.nd - 1] == '0') --out.nd;
  if (out.nd == 1 && out.d[0] == '0') {
    out.nd = 0;
    out.dp = 0;
    return;
  }
  out.dp = exp + 1;
}

void append_exp(std::string& out, int exp, char e) {
  out.push_back(e);
  out.push_back(exp < 0 ? '-' : '+');
  if (exp < 0) exp = -exp;
  if (exp < 10) out.push_back('0');
  char buf[8];
  auto r = std::to_chars(buf, buf + sizeof buf, exp);
  out.append(buf, r.ptr);
}

// %e from digits with `prec` digits after the point (strconv fmtE).
void fmt_e(std::string& out, const Digits& d, int prec, char e) {
  out.push_back(d.nd == 0 ? '0' : d.d[0]);
  if (prec > 0) {
    out.push_back('.');
    int i = 1;
    const int m = std::min(d.nd, prec + 1);
    if (i < m) {
      out.append(d.d + i, static_cast<size_t>(m - i));
      i = m;
    }
    for (; i <= prec; ++i) out.push_back('0');
  }
  int exp = d.nd == 0 ? 0 : d.dp - 1;
  append_exp(out, exp, e);
}

// %f from digits with `prec` digits after the point (strconv fmtF).
void fmt_f(std::string& out, const Digits& d, int prec) {
  if (d.dp > 0) {
    int m = std::min(d.nd, d.dp);
    out.append(d.d, static_cast<size_t>(m));
    for (; m < d.dp; ++m) out.push_back('0');
  } else {
    out.push_back('0');
  }
  if (prec > 0) {
    out.push_back('.');
    for (int i = 1; i <= prec; ++i) {
      const int j = d.dp + i - 1;
      out.push_back(j >= 0 && j < d.nd ? d.d[j] : '0');
    }
  }
}

void fmt_hex_float(std::string& out, double v, char fmt) {
  // strconv %x with shortest precision: 0x1.8p+01.
  const bool upper = fmt == 'X';
  if (v == 0) {
    out.append(upper ? "0X0P+00" : "0x0p+00");
    return;
  }
  int exp = 0;
  double m = std::frexp(std::fabs(v), &exp);  // m in [0.5, 1)
  m *= 2;
  exp -= 1;
  uint64_t bits = static_cast<uint64_t>(std::ldexp(m - 1.0, 52));
  out.append(upper ? "0X1" : "0x1");
  if (bits != 0) {
    out.push_back('.');
    const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    // 52 bits = 13 hex digits; drop trailing zeros.
    char buf[13];
    for (int i = 12; i >= 0; --i) {
      buf[i] = digits[bits & 0xF];
      bits >>= 4;
    }
    int n = 13;
    while (n > 0 && buf[n - 1] == '0') --n;
    out.append(buf, static_cast<size_t>(n));
  }
  append_exp(out, exp, upper ? 'P' : 'p');
}

// ---- fmt state -----------------------------------------------------------------------------

struct Flags {
  bool plus = false, minus = false, sharp = false, space = false, zero = false;
  bool sharp_v = false, plus_v = false;
  bool wid_present = false, prec_present = false;
  int wid = 0;
  int prec = 0;
};

size_t rune_count(std::string_view s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

void write_padding(std::string& out, const Flags& f, int n) {
  if (n <= 0) return;
  out.append(static_cast<size_t>(n), f.zero ? '0' : ' ');
}

void pad(std::string& out, const Flags& f, std::string_view s) {
  if (!f.wid_present || f.wid == 0) {
    out.append(s);
    return;
  }
  const int width = f.wid - static_cast<int>(rune_count(s));
  if (!f.minus) {
    write_padding(out, f, width);
    out.append(s);
  } else {
    out.append(s);
    Flags sp = f;
    sp.zero = false;
    write_padding(out, sp, width);
  }
}

std::string_view truncate_runes(std::string_view s, const Flags& f) {
  if (!f.prec_present) return s;
  int n = f.prec;
  size_t i = 0;
  while (i < s.size()) {
    if (n == 0) return s.substr(0, i);
    --n;
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  }
  return s;
}

void fmt_float(std::string& out, const Flags& f, double v, char verb, int prec) {
  if (f.prec_present) prec = f.prec;
  std::string num = "+";
  append_float(num, v, verb, prec);
  std::string_view n = num;
  if (n[1] == '-' || n[1] == '+') {
    n.remove_prefix(1);
  }
  char sign = n[0];
  if (f.space && sign == '+' && !f.plus) sign = ' ';
  std::string fixed;
  if (sign != n[0]) {
    fixed.push_back(sign);
    fixed.append(n.substr(1));
    n = fixed;
  }
  if (n[1] == 'I' || n[1] == 'N') {
    Flags g = f;
    g.zero = false;
    if (n[1] == 'N' && !f.space && !f.plus) n.remove_prefix(1);
    pad(out, g, n);
    return;
  }
  if (f.plus || n[0] != '+') {
    if (f.zero && f.wid_present && f.wid > static_cast<int>(n.size())) {
      out.push_back(n[0]);
      write_padding(out, f, f.wid - static_cast<int>(n.size()));
      out.append(n.substr(1));
      return;
    }
    pad(out, f, n);
    return;
  }
  pad(out, f, n.substr(1));
}

void fmt_integer(std::string& out, Flags f, uint64_t u, bool is_signed, int base, char verb,
                 bool upper) {
  const bool negative = is_signed && static_cast<int64_t>(u) < 0;
  if (negative) u = ~u + 1;
  int prec = 0;
  if (f.prec_present) {
    prec = f.prec;
    if (prec == 0 && u == 0) {
      Flags g = f;
      g.zero = false;
      write_padding(out, g, f.wid);
      return;
    }
  } else if (f.zero && f.wid_present) {
    prec = f.wid;
    if (negative || f.plus || f.space) --prec;
  }
  char dbuf[72];
  int i = sizeof dbuf;
  const char* digits = upper ? "0123456789ABCDEFX" : "0123456789abcdefx";
  do {
    dbuf[--i] = digits[u % static_cast<uint64_t>(base)];
    u /= static_cast<uint64_t>(base);
  } while (u != 0);
  const int ndigits = static_cast<int>(sizeof dbuf) - i;
  std::string num;
  if (negative) {
    num.push_back('-');
  } else if (f.plus) {
    num.push_back('+');
  } else if (f.space) {
    num.push_back(' ');
  }
  if (verb == 'O') num.append("0o");
  const bool zero_first = prec > ndigits;
  if (f.sharp) {
    if (base == 2) {
      num.append("0b");
    } else if (base == 8 && !zero_first && dbuf[i] != '0') {
      num.push_back('0');
    } else if (base == 16) {
      num.push_back('0');
      num.push_back(digits[16]);
    }
  }
  if (zero_first) num.append(static_cast<size_t>(prec - ndigits), '0');
  num.append(dbuf + i, static_cast<size_t>(ndigits));
  f.zero = false;
  pad(out, f, num);
}

void append_rune(std::string& out, uint32_t r) {
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
  core::append_utf8(out, r);
}

void quote_rune_into(std::string& out, uint32_t r, char quote) {
  static const char* hex = "0123456789abcdef";
  if (r == static_cast<uint32_t>(quote) || r == '\\') {
    out.push_back('\\');
    out.push_back(static_cast<char>(r));
    return;
  }
  if (r >= 0x20 && r < 0x7F) {
    out.push_back(static_cast<char>(r));
    return;
  }
  if (r >= 0xA0 && r != 0xAD && r != 0xFFFD + 1) {  // treat non-ASCII as printable
    append_rune(out, r);
    return;
  }
  switch (r) {
    case '\a': out.append("\\a"); return;
    case '\b': out.append("\\b"); return;
    case '\f': out.append("\\f"); return;
    case '\n': out.append("\\n"); return;
    case '\r': out.append("\\r"); return;
    case '\t': out.append("\\t"); return;
    case '\v': out.append("\\v"); return;
    default: break;
  }
  if (r < 0x100) {
    out.append("\\x");
    out.push_back(hex[r >> 4]);
    out.push_back(hex[r & 0xF]);
  } else {
    out.append("\\u");
    for (int s = 12; s >= 0; s -= 4) out.push_back(hex[(r >> s) & 0xF]);
  }
}

void fmt_q(std::string& out, const Flags& f, std::string_view s) {
  s = truncate_runes(s, f);
  if (f.sharp && s.find('`') == std::string_view::npos &&
      std::none_of(s.begin(), s.end(), [](char c) { return c != '\t' && static_cast<unsigned char>(c) < 0x20; })) {
    std::string q(1, '`');
    q.append(s).push_back('`');
    pad(out, f, q);
    return;
  }
  std::string q;
  append_quote(q, s);
  pad(out, f, q);
}

void fmt_sx(std::string& out, const Flags& f, std::string_view s, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  size_t length = s.size();
  if (f.prec_present && static_cast<size_t>(f.prec) < length) length = static_cast<size_t>(f.prec);
  std::string buf;
  for (size_t i = 0; i < length; ++i) {
    if (f.space && i > 0) buf.push_back(' ');
    if (f.sharp && (f.space || i == 0)) {
      buf.push_back('0');
      buf.push_back(upper ? 'X' : 'x');
    }
    const auto c = static_cast<unsigned char>(s[i]);
    buf.push_back(digits[c >> 4]);
    buf.push_back(digits[c & 0xF]);
  }
  pad(out, f, buf);
}

void print_arg(std::string& out, Flags f, const Value& v, uint32_t verb, int depth);

void bad_verb(std::string& out, const Flags& f, const Value& v, uint32_t verb) {
  out.append("%!");
  append_rune(out, verb);
  out.push_back('(');
  if (v.is_nil()) {
    out.append("<nil>");
  } else {
    out.append(tmpl::type_name(v));
    out.push_back('=');
    print_arg(out, f, v, 'v', 0);
  }
  out.push_back(')');
}

void fmt_string(std::string& out, const Flags& f, std::string_view s, uint32_t verb,
                const Value& orig) {
  switch (verb) {
    case 'v':
      if (f.sharp_v) {
        fmt_q(out, Flags{}, s);
      } else {
        pad(out, f, truncate_runes(s, f));
      }
      return;
    case 's': pad(out, f, truncate_runes(s, f)); return;
    case 'x': fmt_sx(out, f, s, false); return;
    case 'X': fmt_sx(out, f, s, true); return;
    case 'q': fmt_q(out, f, s); return;
    default: bad_verb(out, f, orig, verb); return;
  }
}

void fmt_int_value(std::string& out, const Flags& f, uint64_t u, bool is_signed, uint32_t verb,
                   const Value& orig) {
  switch (verb) {
    case 'v':
    case 'd': fmt_integer(out, f, u, is_signed, 10, static_cast<char>(verb), false); return;
    case 'b': fmt_integer(out, f, u, is_signed, 2, 'b', false); return;
    case 'o':
    case 'O': fmt_integer(out, f, u, is_signed, 8, static_cast<char>(verb), false); return;
    case 'x': fmt_integer(out, f, u, is_signed, 16, 'x', false); return;
    case 'X': fmt_integer(out, f, u, is_signed, 16, 'X', true); return;
    case 'c': {
      std::string s;
      append_rune(s, u > 0x10FFFF ? 0xFFFD : static_cast<uint32_t>(u));
      pad(out, f, s);
      return;
    }
    case 'q': {
      std::string s = "'";
      const uint32_t r = u > 0x10FFFF ? 0xFFFD : static_cast<uint32_t>(u);
      quote_rune_into(s, r, '\'');
      s.push_back('\'');
      pad(out, f, s);
      return;
    }
    case 'U': {
      char buf[32];
      const int n = std::snprintf(buf, sizeof buf, "U+%04llX", static_cast<unsigned long long>(u));
      pad(out, f, std::string_view(buf, static_cast<size_t>(n)));
      return;
    }
    default: bad_verb(out, f, orig, verb); return;
  }
}

void print_arg(std::string& out, Flags f, const Value& v, uint32_t verb, int depth) {
  if (v.is_nil()) {
    if (verb == 'T' || verb == 'v') {
      pad(out, f, "<nil>");
    } else {
      bad_verb(out, f, v, verb);
    }
    return;
  }
  if (verb == 'T') {
    pad(out, f, tmpl::type_name(v));
    return;
  }
  switch (v.kind) {
    case Kind::nil: return;
    case Kind::boolean:
      if (verb == 't' || verb == 'v') {
        pad(out, f, v.b ? "true" : "false");
      } else {
        bad_verb(out, f, v, verb);
      }
      return;
    case Kind::float_:
      switch (verb) {
        case 'v': fmt_float(out, f, v.f, 'g', -1); return;
        case 'b':
        case 'g':
        case 'G':
        case 'x':
        case 'X': fmt_float(out, f, v.f, static_cast<char>(verb), -1); return;
        case 'f':
        case 'e':
        case 'E':
        case 'F': fmt_float(out, f, v.f, static_cast<char>(verb), 6); return;
        default: bad_verb(out, f, v, verb); return;
      }
    case Kind::int_:
    case Kind::int64_: fmt_int_value(out, f, static_cast<uint64_t>(v.i), true, verb, v); return;
    case Kind::uint8_:
    case Kind::uint64_: fmt_int_value(out, f, v.u, false, verb, v); return;
    case Kind::string:
    case Kind::html: fmt_string(out, f, v.str(), verb, v); return;
    case Kind::duration:
      if (verb == 'v' || verb == 's' || verb == 'x' || verb == 'X' || verb == 'q') {
        std::string s;
        append_duration(s, v.i);
        fmt_string(out, f, s, verb, v);
      } else {
        fmt_int_value(out, f, static_cast<uint64_t>(v.i), true, verb, v);
      }
      return;
    case Kind::time:
      if (verb == 'v' || verb == 's' || verb == 'x' || verb == 'X' || verb == 'q') {
        std::string s;
        append_time(s, v.i, static_cast<int64_t>(v.u));
        fmt_string(out, f, s, verb, v);
      } else {
        bad_verb(out, f, Value::make_string([&] {
                   std::string s;
                   append_time(s, v.i, static_cast<int64_t>(v.u));
                   return s;
                 }()),
                 verb);
      }
      return;
    case Kind::labels: {
      out.append(f.sharp_v ? "map[string]string{" : "map[");
      bool first = true;
      if (v.labels != nullptr) {
        for (const auto& l : *v.labels) {
          if (!first) out.append(f.sharp_v ? ", " : " ");
          first = false;
          fmt_string(out, f, l.name, verb, Value::make_view(l.name));
          out.push_back(':');
          fmt_string(out, f, l.value, verb, Value::make_view(l.value));
        }
      }
      out.push_back(f.sharp_v ? '}' : ']');
      return;
    }
    case Kind::args: {
      out.append(f.sharp_v ? "map[string]interface {}{" : "map[");
      bool first = true;
      for (const auto& [k, val] : v.args->items) {
        if (!first) out.append(f.sharp_v ? ", " : " ");
        first = false;
        fmt_string(out, f, k, verb, Value::make_view(k));
        out.push_back(':');
        if (val.is_nil()) {
          out.append("<nil>");
        } else {
          print_arg(out, f, val, verb, depth + 1);
        }
      }
      out.push_back(f.sharp_v ? '}' : ']');
      return;
    }
    case Kind::metric: {
      const QuerySample& s = v.sample();
      out.push_back('{');
      if (f.plus_v) out.append("Labels:");
      print_arg(out, f, Value::make_labels(&s.labels), verb, depth + 1);
      out.push_back(' ');
      if (f.plus_v) out.append("Timestamp:");
      print_arg(out, f, Value::make_int(s.timestamp_ms / 1000, Kind::int64_), verb, depth + 1);
      out.push_back(' ');
      if (f.plus_v) out.append("Value:");
      print_arg(out, f, Value::make_float(s.value), verb, depth + 1);
      out.push_back('}');
      return;
    }
    case Kind::metrics: {
      out.push_back('[');
      for (size_t k = 0; k < v.metrics->size(); ++k) {
        if (k > 0) out.push_back(' ');
        Value m;
        m.kind = Kind::metric;
        m.metrics = v.metrics;
        m.i = static_cast<int64_t>(k);
        print_arg(out, f, m, verb, depth + 1);
      }
      out.push_back(']');
      return;
    }
    case Kind::root: {
      // Printing the whole data struct is rare; the root knows how to print itself.
      out.append("{...}");
      return;
    }
  }
}

bool is_string_kind(const Value& v) { return v.kind == Kind::string || v.kind == Kind::html; }

// Go's fmt refuses widths and precisions whose magnitude exceeds a million (tooLarge).
constexpr int64_t kMaxWidth = 1000000;
bool too_large(int64_t n) { return n > kMaxWidth || n < -kMaxWidth; }

// Go's parsenum: the digits at s[i..]. A number that grows past kMaxWidth before its last digit
// is "crazy long": Go gives up, reports no number and consumes the rest of the format (so the
// verb ends in %!(NOVERB)). The check comes before each digit, as in Go, so up to 10,000,009
// passes.
int parse_num(std::string_view s, size_t& i, bool& ok) {
  ok = false;
  int n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (too_large(n)) {
      ok = false;
      i = s.size();
      return 0;
    }
    n = n * 10 + (s[i] - '0');
    ok = true;
    ++i;
  }
  return n;
}

// Go's intFromArg: a width or precision given as `*` must be an integer of at most a million
// in magnitude; otherwise it is absent (the caller prints BADWIDTH or BADPREC).
int int_from_arg(std::span<const Value> args, size_t& arg_num, bool& ok) {
  ok = false;
  if (arg_num >= args.size()) return 0;
  const Value& a = args[arg_num++];
  int64_t n = 0;
  switch (a.kind) {
    case Kind::int_:
    case Kind::int64_:
    case Kind::duration: n = a.i; break;
    case Kind::uint8_:
    case Kind::uint64_:
      if (a.u > static_cast<uint64_t>(kMaxWidth)) return 0;
      n = static_cast<int64_t>(a.u);
      break;
    default: return 0;
  }
  if (too_large(n)) return 0;
  ok = true;
  return static_cast<int>(n);
}

const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};
const char* const kDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                             "Thursday", "Friday", "Saturday"};

struct Civil {
  int64_t year;
  int month, day, hour, minute, second, yday, wday;
  int64_t nanos;
};

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Howard Hinnant's civil_from_days / days_from_civil, in int64 so any year Go prints fits.
void civil_from_days(int64_t z, int64_t& y, int& m, int& d) {
  z += 719468;
  const int64_t era = floor_div(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = yoe + era * 400;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  if (m <= 2) ++y;
}

int64_t days_from_civil(int64_t y, int m, int d) {
  if (m <= 2) --y;
  const int64_t era = floor_div(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Civil civil(int64_t sec, int64_t nsec) {
  Civil c{};
  const int64_t days = floor_div(sec, 86400);
  const int64_t sod = sec - days * 86400;
  civil_from_days(days, c.year, c.month, c.day);
  c.hour = static_cast<int>(sod / 3600);
  c.minute = static_cast<int>(sod / 60 % 60);
  c.second = static_cast<int>(sod % 60);
  c.nanos = nsec;
  c.yday = static_cast<int>(days - days_from_civil(c.year, 1, 1)) + 1;
  c.wday = static_cast<int>(((days + 4) % 7 + 7) % 7);
  return c;
}

void append_padded(std::string& out, int64_t v, int width, char padc = '0') {
  char buf[24];
  const bool neg = v < 0;
  uint64_t u = neg ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  int i = sizeof buf;
  do {
    buf[--i] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (neg) out.push_back('-');
  for (int n = static_cast<int>(sizeof buf) - i; n < width; ++n) out.push_back(padc);
  out.append(buf + i, sizeof buf - static_cast<size_t>(i));
}

}  // namespace

// ---- public --------------------------------------------------------------------------------

void append_float(std::string& out, double v, char fmt, int prec) {
  if (std::isnan(v)) {
    out.append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out.append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  if (fmt == 'x' || fmt == 'X') {
    if (std::signbit(v)) out.push_back('-');
    fmt_hex_float(out, v, fmt);
    return;
  }
  if (fmt == 'b') {
    // Rare; print as %e to stay readable.
    fmt = 'e';
  }
  if (std::signbit(v)) out.push_back('-');
  Digits d;
  switch (fmt) {
    case 'e':
    case 'E':
      decimal_digits(v, prec < 0 ? -1 : prec + 1, d);
      fmt_e(out, d, prec < 0 ? std::max(d.nd - 1, 0) : prec, fmt);
      return;
    case 'f':
    case 'F': {
      if (prec < 0) {
        decimal_digits(v, -1, d);
        fmt_f(out, d, std::max(d.nd - d.dp, 0));
        return;
      }
      // 309 integer digits, the point, the exact fraction; zeros after that are exact too.
      char buf[320 + kExactFraction];
      const int exact = std::min(prec, kExactFraction);
      auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::fixed, exact);
      if (r.ec != std::errc{}) {
        out.append("0");
        return;
      }
      out.append(buf, r.ptr);
      out.append(static_cast<size_t>(prec - exact), '0');
      return;
    }
    case 'g':
    case 'G': {
      const bool shortest = prec < 0;
      int p = prec;
      if (p == 0) p = 1;
      decimal_digits(v, shortest ? -1 : p, d);
      int eprec = p;
      if (shortest) {
        eprec = 6;
        p = d.nd;
      } else if (eprec > d.nd && d.nd >= d.dp) {
        eprec = d.nd;
      }
      const int exp = d.dp - 1;
      if (d.nd != 0 && (exp < -4 || exp >= eprec)) {
        if (p > d.nd) p = d.nd;
        fmt_e(out, d, p - 1, fmt == 'g' ? 'e' : 'E');
        return;
      }
      if (d.nd == 0) {
        out.push_back('0');
        return;
      }
      if (p > d.dp) p = d.nd;
      fmt_f(out, d, std::max(p - d.dp, 0));
      return;
    }
    default:
      fmt_e(out, d, 6, 'e');
      return;
  }
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_quote(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    size_t w = 0;
    const uint32_t r = core::decode_utf8(s, i, w);
    if (r == 0xFFFD && w == 1 && static_cast<unsigned char>(s[i]) >= 0x80) {
      static const char* hex = "0123456789abcdef";
      const auto c = static_cast<unsigned char>(s[i]);
      out.append("\\x");
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
    } else {
      quote_rune_into(out, r, '"');
    }
    i += w;
  }
  out.push_back('"');
}

void append_time(std::string& out, int64_t unix_sec, int64_t nsec) {
  const Civil c = civil(unix_sec, nsec);
  append_padded(out, c.year, 4);
  out.push_back('-');
  append_padded(out, c.month, 2);
  out.push_back('-');
  append_padded(out, c.day, 2);
  out.push_back(' ');
  append_padded(out, c.hour, 2);
  out.push_back(':');
  append_padded(out, c.minute, 2);
  out.push_back(':');
  append_padded(out, c.second, 2);
  if (c.nanos != 0) {
    char buf[10];
    int64_t n = c.nanos;
    for (int k = 8; k >= 0; --k) {
      buf[k] = static_cast<char>('0' + n % 10);
      n /= 10;
    }
    int len = 9;
    while (len > 0 && buf[len - 1] == '0') --len;
    out.push_back('.');
    out.append(buf, static_cast<size_t>(len));
  }
  out.append(" +0000 UTC");
}

void append_time_layout(std::string& out, int64_t unix_sec, int64_t nsec, std::string_view layout) {
  const Civil c = civil(unix_sec, nsec);
  auto starts = [&](size_t i, std::string_view p) { return layout.substr(i, p.size()) == p; };
  size_t i = 0;
  while (i < layout.size()) {
    const char ch = layout[i];
    switch (ch) {
      case 'J':
        if (starts(i, "January")) {
          out.append(kMonths[c.month - 1]);
          i += 7;
          continue;
        }
        if (starts(i, "Jan")) {
          out.append(kMonths[c.month - 1], 3);
          i += 3;
          continue;
        }
        break;
      case 'M':
        if (starts(i, "Monday")) {
          out.append(kDays[c.wday]);
          i += 6;
          continue;
        }
        if (starts(i, "Mon")) {
          out.append(kDays[c.wday], 3);
          i += 3;
          continue;
        }
        if (starts(i, "MST")) {
          out.append("UTC");
          i += 3;
          continue;
        }
        break;
      case '0':
        if (i + 1 < layout.size() && layout[i + 1] >= '1' && layout[i + 1] <= '6') {
          switch (layout[i + 1]) {
            case '1': append_padded(out, c.month, 2); break;
            case '2': append_padded(out, c.day, 2); break;
            case '3': append_padded(out, c.hour % 12 == 0 ? 12 : c.hour % 12, 2); break;
            case '4': append_padded(out, c.minute, 2); break;
            case '5': append_padded(out, c.second, 2); break;
            case '6': append_padded(out, c.year % 100, 2); break;
            default: break;
          }
          i += 2;
          continue;
        }
        if (starts(i, "002")) {
          append_padded(out, c.yday, 3);
          i += 3;
          continue;
        }
        break;
      case '1':
        if (starts(i, "15")) {
          append_padded(out, c.hour, 2);
          i += 2;
          continue;
        }
        append_padded(out, c.month, 0);
        i += 1;
        continue;
      case '2':
        if (starts(i, "2006")) {
          append_padded(out, c.year, 4);
          i += 4;
          continue;
        }
        append_padded(out, c.day, 0);
        i += 1;
        continue;
      case '_':
        if (starts(i, "_2")) {
          if (starts(i, "_2006")) {
            out.push_back('_');
            append_padded(out, c.year, 4);
            i += 5;
            continue;
          }
          append_padded(out, c.day, 2, ' ');
          i += 2;
          continue;
        }
        if (starts(i, "__2")) {
          append_padded(out, c.yday, 3, ' ');
          i += 3;
          continue;
        }
        break;
      case '3':
        append_padded(out, c.hour % 12 == 0 ? 12 : c.hour % 12, 0);
        i += 1;
        continue;
      case '4':
        append_padded(out, c.minute, 0);
        i += 1;
        continue;
      case '5':
        append_padded(out, c.second, 0);
        i += 1;
        continue;
      case 'P':
        if (starts(i, "PM")) {
          out.append(c.hour >= 12 ? "PM" : "AM");
          i += 2;
          continue;
        }
        break;
      case 'p':
        if (starts(i, "pm")) {
          out.append(c.hour >= 12 ? "pm" : "am");
          i += 2;
          continue;
        }
        break;
      case '-':
      case 'Z': {
        static const std::string_view kZones[] = {"070000", "07:00:00", "0700", "07:00", "07"};
        bool done = false;
        for (auto z : kZones) {
          if (starts(i + 1, z)) {
            if (ch == 'Z') {
              out.push_back('Z');
            } else if (z == "070000") {
              out.append("+000000");
            } else if (z == "07:00:00") {
              out.append("+00:00:00");
            } else if (z == "0700") {
              out.append("+0000");
            } else if (z == "07:00") {
              out.append("+00:00");
            } else {
              out.append("+00");
            }
            i += 1 + z.size();
            done = true;
            break;
          }
        }
        if (done) continue;
        break;
      }
      case '.':
      case ',':
        if (i + 1 < layout.size() && (layout[i + 1] == '0' || layout[i + 1] == '9')) {
          const char d = layout[i + 1];
          size_t j = i + 1;
          while (j < layout.size() && layout[j] == d) ++j;
          if (!(j < layout.size() && layout[j] >= '0' && layout[j] <= '9')) {
            const size_t n = j - (i + 1);
            char buf[10];
            int64_t ns = c.nanos;
            for (int k = 8; k >= 0; --k) {
              buf[k] = static_cast<char>('0' + ns % 10);
              ns /= 10;
            }
            size_t len = std::min<size_t>(n, 9);
            if (d == '9') {
              while (len > 0 && buf[len - 1] == '0') --len;
              if (len > 0) {
                out.push_back(ch);
                out.append(buf, len);
              }
            } else {
              out.push_back(ch);
              out.append(buf, len);
              for (size_t k = len; k < n; ++k) out.push_back('0');
            }
            i = j;
            continue;
          }
        }
        break;
      default:
        break;
    }
    out.push_back(ch);
    ++i;
  }
}

void append_duration(std::string& out, int64_t ns) {
  out.append(core::format_go_duration(core::Duration{ns}));
}

void print_value(std::string& out, const Value& v) {
  switch (v.kind) {
    case Kind::string:
    case Kind::html: out.append(v.str()); return;
    case Kind::float_: append_float_v(out, v.f); return;
    case Kind::int_:
    case Kind::int64_: append_int(out, v.i); return;
    default: print_arg(out, Flags{}, v, 'v', 0); return;
  }
}

void sprint(std::string& out, std::span<const Value> args, size_t max_size) {
  const size_t start = out.size();
  bool prev_string = false;
  for (size_t k = 0; k < args.size() && out.size() - start <= max_size; ++k) {
    const bool is_string = is_string_kind(args[k]);
    if (k > 0 && !is_string && !prev_string) out.push_back(' ');
    print_value(out, args[k]);
    prev_string = is_string;
  }
}

void sprintln(std::string& out, std::span<const Value> args, size_t max_size) {
  const size_t start = out.size();
  for (size_t k = 0; k < args.size() && out.size() - start <= max_size; ++k) {
    if (k > 0) out.push_back(' ');
    print_value(out, args[k]);
  }
  out.push_back('\n');
}

void sprintf(std::string& out, std::string_view format, std::span<const Value> args,
             size_t max_size) {
  const size_t start = out.size();
  size_t arg_num = 0;
  const size_t end = format.size();
  size_t i = 0;
  while (i < end) {
    if (out.size() - start > max_size) return;  // the caller reports the overflow
    const size_t lasti = i;
    while (i < end && format[i] != '%') ++i;
    if (i > lasti) out.append(format.substr(lasti, i - lasti));
    if (i >= end) break;
    ++i;  // skip %
    Flags f;
    for (; i < end; ++i) {
      const char c = format[i];
      if (c == '#') {
        f.sharp = true;
      } else if (c == '0') {
        f.zero = !f.minus;
      } else if (c == '+') {
        f.plus = true;
      } else if (c == '-') {
        f.minus = true;
        f.zero = false;
      } else if (c == ' ') {
        f.space = true;
      } else {
        break;
      }
    }
    // Width.
    if (i < end && format[i] == '*') {
      ++i;
      f.wid = int_from_arg(args, arg_num, f.wid_present);
      if (!f.wid_present) out.append("%!(BADWIDTH)");
      if (f.wid < 0) {
        f.minus = true;
        f.zero = false;
        f.wid = -f.wid;
      }
    } else {
      f.wid = parse_num(format, i, f.wid_present);
    }
    // Precision (Go: only when something follows the '.').
    if (i + 1 < end && format[i] == '.') {
      ++i;
      if (format[i] == '*') {
        ++i;
        f.prec = int_from_arg(args, arg_num, f.prec_present);
        if (f.prec < 0) {  // a negative precision makes no sense: absent, as in Go
          f.prec = 0;
          f.prec_present = false;
        }
        if (!f.prec_present) out.append("%!(BADPREC)");
      } else {
        f.prec = parse_num(format, i, f.prec_present);
        f.prec_present = true;  // "%.d" and a crazy long precision both mean 0
      }
    }
    if (i >= end) {
      out.append("%!(NOVERB)");
      break;
    }
    size_t w = 0;
    uint32_t verb = core::decode_utf8(format, i, w);
    i += w;
    if (verb == '%') {
      out.push_back('%');
      continue;
    }
    if (arg_num >= args.size()) {
      out.append("%!");
      append_rune(out, verb);
      out.append("(MISSING)");
      continue;
    }
    if (verb == 'v') {
      if (f.sharp) {
        f.sharp = false;
        f.sharp_v = true;
      }
      if (f.plus) {
        f.plus = false;
        f.plus_v = true;
      }
    }
    const Value& a = args[arg_num++];
    print_arg(out, f, a, verb, 0);
  }
  if (arg_num < args.size()) {
    out.append("%!(EXTRA ");
    for (size_t k = arg_num; k < args.size(); ++k) {
      if (k > arg_num) out.append(", ");
      if (args[k].is_nil()) {
        out.append("<nil>");
      } else {
        out.append(tmpl::type_name(args[k]));
        out.push_back('=');
        print_arg(out, Flags{}, args[k], 'v', 0);
      }
    }
    out.push_back(')');
  }
}

core::Result<double> parse_float(std::string_view s) {
  auto syntax = [&] {
    return core::fail("strconv.ParseFloat: parsing " + [&] {
      std::string q;
      append_quote(q, s);
      return q;
    }() + ": invalid syntax");
  };
  std::string_view t = s;
  bool neg = false;
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
    neg = t[0] == '-';
    t.remove_prefix(1);
  }
  if (t.empty()) return syntax();
  auto lower_eq = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::tolower(static_cast<unsigned char>(a[k])) != b[k]) return false;
    }
    return true;
  };
  if (lower_eq(t, "inf") || lower_eq(t, "infinity")) {
    return neg ? -HUGE_VAL : HUGE_VAL;
  }
  if (lower_eq(t, "nan")) return std::nan("");
  // Underscores are allowed only between digits with a base prefix; drop them for hex.
  std::string buf;
  bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  for (char c : t.substr(hex ? 2 : 0)) {
    if (c == '_') {
      if (!hex) return syntax();
      continue;
    }
    buf.push_back(c);
  }
  if (buf.empty()) return syntax();
  for (char c : buf) {
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == 'p' || c == 'P' || c == '+' || c == '-')) {
      return syntax();
    }
  }
  double v = 0;
  auto r = std::from_chars(buf.data(), buf.data() + buf.size(), v,
                           hex ? std::chars_format::hex : std::chars_format::general);
  if (r.ptr != buf.data() + buf.size()) return syntax();
  if (hex && buf.find_first_of("pP") == std::string::npos) return syntax();
  if (r.ec == std::errc::result_out_of_range) {
    std::string q;
    append_quote(q, s);
    return core::fail("strconv.ParseFloat: parsing " + q + ": value out of range");
  }
  if (r.ec != std::errc{}) return syntax();
  return neg ? -v : v;
}

}  // namespace templates::gofmt
