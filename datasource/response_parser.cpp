// The streaming query-response parser. Design (numbers in docs/datasource-parser.md):
//   - A small envelope state machine walks the top-level object, `data` and `stats` one JSON
//     "unit" at a time (a structural byte, a key, a scalar, a result element, a skipped value).
//   - Each result element is parsed in place, straight from the chunk, by a hand-written
//     single-pass parser specialised for {"metric":{...},"value":[ts,"v"]} / "values", which
//     copies only label values never seen before into the QueryResult arena.
//   - Every unit parser reports `more` when it reaches the end of the chunk. The unfinished unit
//     is then copied into pending_, and a quote/escape-aware depth scanner finds where it ends
//     in the following chunks (without re-parsing); the unit is then parsed from pending_ with
//     the same code. Only one unit is ever buffered, and the byte stream is always interpreted
//     by the same parser code, so chunking cannot change the result or the error.
#include "datasource/response_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "core/utf8.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace datasource {

namespace {

enum class St : uint8_t { ok, more, bad };

constexpr int kMaxDepth = 128;
constexpr size_t kNpos = static_cast<size_t>(-1);

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }
inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline void skip_ws(const char*& p, const char* e) {
  while (p < e && is_ws(*p)) ++p;
}
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// Characters that can continue a number or a literal (true/false/null).
inline bool is_bare(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' ||
         c == '-' || c == '.';
}

// The first byte in [p, e) that is '"', '\\' or a control character (< 0x20), or e.
// (ALERTD_PARSER_SCALAR_STRINGS and ALERTD_PARSER_NO_LABEL_HINT switch off two optimisations,
// only to measure what they buy: docs/datasource-parser.md.)
inline const char* find_string_special(const char* p, const char* e) {
#if defined(__SSE2__) && !defined(ALERTD_PARSER_SCALAR_STRINGS)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i ctrl_max = _mm_set1_epi8(0x1f);
  while (e - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                   _mm_cmpeq_epi8(_mm_min_epu8(x, ctrl_max), x));
    const int mask = _mm_movemask_epi8(m);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < e) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20) return p;
    ++p;
  }
  return e;
}

using core::append_utf8;

inline uint32_t read_hex4(const char* p) {
  return static_cast<uint32_t>((hex_value(p[0]) << 12) | (hex_value(p[1]) << 8) |
                               (hex_value(p[2]) << 4) | hex_value(p[3]));
}

// Decodes the body of a string already validated by scan_string (escapes well-formed, \u
// followed by 4 hex digits). Returns nullptr, or the position of a lone surrogate.
const char* decode_string(std::string_view raw, std::string& out) {
  out.clear();
  const char* p = raw.data();
  const char* e = p + raw.size();
  while (p < e) {
    const char* bs = static_cast<const char*>(std::memchr(p, '\\', static_cast<size_t>(e - p)));
    if (bs == nullptr) {
      out.append(p, static_cast<size_t>(e - p));
      break;
    }
    out.append(p, static_cast<size_t>(bs - p));
    const char x = bs[1];
    p = bs + 2;
    switch (x) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      default: {  // 'u'
        uint32_t cp = read_hex4(p);
        p += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return bs;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (e - p < 6 || p[0] != '\\' || p[1] != 'u') return bs;
          const uint32_t lo = read_hex4(p + 2);
          if (lo < 0xDC00 || lo > 0xDFFF) return bs;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          p += 6;
        }
        append_utf8(out, cp);
      }
    }
  }
  return nullptr;
}

// Prometheus sample values: Go's strconv.ParseFloat forms, "NaN", "Inf", "+Inf", "-Inf" first.
bool parse_float(std::string_view s, double& v) {
  if (s == "NaN") {
    v = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s == "+Inf" || s == "Inf") {
    v = std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "-Inf") {
    v = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s[0] == '-') return false;
  }
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string quoted_excerpt(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 40)) {
    if (static_cast<unsigned char>(c) < 0x20) {
      out += '?';
    } else {
      out += c;
    }
  }
  if (s.size() > 40) out += "...";
  out += '"';
  return out;
}

// Finds where a JSON value that starts at the first byte scanned ends, across chunks, without
// parsing it: quote/escape-aware bracket depth for strings, objects and arrays; for numbers and
// literals, the first byte that cannot continue them (that delimiter is included, so the unit
// is parsed with it and never needs a further byte).
class ExtentScanner {
 public:
  void start() { *this = ExtentScanner{}; }
  // Returns how many bytes of [p, e) complete the value, or kNpos.
  size_t scan(const char* p, const char* e) {
    const char* s = p;
    if (mode_ == Mode::fresh) {
      if (p == e) return kNpos;
      const char c = *p;
      mode_ = (c == '"' || c == '{' || c == '[') ? Mode::nested : Mode::bare;
      if (mode_ == Mode::bare) ++p;
    }
    if (mode_ == Mode::bare) {
      for (; p < e; ++p) {
        if (!is_bare(*p)) return static_cast<size_t>(p - s) + 1;
      }
      return kNpos;
    }
    for (; p < e; ++p) {
      const char c = *p;
      if (in_string_) {
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          in_string_ = false;
          if (depth_ == 0) return static_cast<size_t>(p - s) + 1;
        }
        continue;
      }
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if (c == '}' || c == ']') {
        // A close at depth 0 is malformed; end here and let the parser report it.
        if (depth_ == 0 || --depth_ == 0) return static_cast<size_t>(p - s) + 1;
      }
    }
    return kNpos;
  }

 private:
  enum class Mode : uint8_t { fresh, nested, bare };
  Mode mode_ = Mode::fresh;
  bool in_string_ = false;
  bool escape_ = false;
  uint64_t depth_ = 0;
};

enum class State : uint8_t {
  start,      // expect '{'
  obj_first,  // after '{': a key or '}'
  obj_key,    // after ',': a key
  obj_colon,  // after a key: ':'
  obj_value,  // after ':': the value of key_
  obj_next,   // after a value: ',' or '}'
  res_first,  // after "result":[ : ']', '{' or a timestamp (scalar/string pair)
  res_elem,   // after ',' in result: '{'
  res_next,   // after an element: ',' or ']'
  pair_comma,
  pair_value,
  pair_end,
  done,
};
enum class Ctx : uint8_t { top, data, stats };
enum class Key : uint8_t {
  other,
  status,
  error_type,
  error,
  is_partial,
  data,
  stats,
  result_type,
  result,
  series_fetched
};

const char* key_name(Key k) {
  switch (k) {
    case Key::other: return "?";
    case Key::status: return "status";
    case Key::error_type: return "errorType";
    case Key::error: return "error";
    case Key::is_partial: return "isPartial";
    case Key::data: return "data";
    case Key::stats: return "stats";
    case Key::result_type: return "resultType";
    case Key::result: return "result";
    case Key::series_fetched: return "seriesFetched";
  }
  return "?";
}

Key classify(Ctx ctx, std::string_view k) {
  switch (ctx) {
    case Ctx::top:
      if (k == "status") return Key::status;
      if (k == "data") return Key::data;
      if (k == "errorType") return Key::error_type;
      if (k == "error") return Key::error;
      if (k == "isPartial") return Key::is_partial;
      if (k == "stats") return Key::stats;
      return Key::other;
    case Ctx::data:
      if (k == "resultType") return Key::result_type;
      if (k == "result") return Key::result;
      return Key::other;
    case Ctx::stats:
      if (k == "seriesFetched") return Key::series_fetched;
      return Key::other;
  }
  return Key::other;
}

const char* expectation(State s) {
  switch (s) {
    case State::start: return "expected '{' (the response object)";
    case State::obj_first: return "expected a key or '}'";
    case State::obj_key: return "expected a key";
    case State::obj_colon: return "expected ':'";
    case State::obj_value: return "expected a value";
    case State::obj_next: return "expected ',' or '}'";
    case State::res_first: return "expected a result element or ']'";
    case State::res_elem: return "expected '{' (a result element)";
    case State::res_next: return "expected ',' or ']' in data.result";
    case State::pair_comma: return "expected ',' after the timestamp";
    case State::pair_value: return "expected a string value";
    case State::pair_end: return "expected ']' closing [timestamp, value]";
    case State::done: return "nothing";
  }
  return "?";
}

}  // namespace

struct InstantParser::Impl {
  core::QueryResult* out = nullptr;

  // Envelope.
  State state = State::start;
  Ctx ctx = Ctx::top;
  Key key = Key::other;
  uint32_t seen[3] = {0, 0, 0};
  std::string status, error_type, error_text, result_type;
  bool saw_value = false, saw_values = false, saw_pair = false;
  uint64_t result_offset = 0;
  int64_t pair_ts = 0;
  std::string pair_value;
  uint64_t pair_value_offset = 0;

  // Stream.
  uint64_t total = 0;
  std::string pending;
  uint64_t pending_offset = 0;
  ExtentScanner scanner;
  bool failed = false;
  bool finished = false;
  core::Error error;
  std::optional<InstantParser::StatusError> status_error;

  // Current buffer, for byte offsets.
  const char* base_ptr = nullptr;
  uint64_t base_off = 0;
  uint64_t err_off = 0;
  std::string err_msg;

  // Element scratch.
  std::string name_scratch, value_scratch, key_scratch;
  std::vector<uint32_t> cur_ids, prev_ids, sort_a, sort_b;
  std::vector<uint32_t> name_stamp;
  uint32_t stamp = 0;
  std::vector<uint64_t> set_slots;  // (hash & high 32) | (series + 1)
  size_t set_count = 0;

  void reset(core::QueryResult& o) {
    out = &o;
    o.clear();
    state = State::start;
    ctx = Ctx::top;
    key = Key::other;
    seen[0] = seen[1] = seen[2] = 0;
    status.clear();
    error_type.clear();
    error_text.clear();
    result_type.clear();
    saw_value = saw_values = saw_pair = false;
    result_offset = 0;
    pair_ts = 0;
    pair_value.clear();
    total = 0;
    pending.clear();
    failed = false;
    finished = false;
    error = core::Error{};
    status_error.reset();
    prev_ids.clear();
    if (set_count != 0) std::fill(set_slots.begin(), set_slots.end(), 0);
    set_count = 0;
  }

  [[nodiscard]] uint64_t off(const char* p) const {
    return base_off + static_cast<uint64_t>(p - base_ptr);
  }
  St bad(const char* p, std::string msg) {
    err_off = off(p);
    err_msg = std::move(msg);
    return St::bad;
  }
  core::Result<void> record(uint64_t at, std::string_view msg) {
    failed = true;
    error = core::Error{"invalid query response at byte " + std::to_string(at) + ": " +
                        std::string(msg)};
    return core::fail(error);
  }

  // ---- unit parsers: p at the unit's first byte; advance p only on St::ok ----

  // p at the opening quote. raw = the bytes between the quotes, escapes validated.
  St scan_string(const char*& p, const char* e, std::string_view& raw, bool& escaped) {
    const char* s = p + 1;
    const char* q = s;
    escaped = false;
    for (;;) {
      q = find_string_special(q, e);
      if (q == e) return St::more;
      const char c = *q;
      if (c == '"') break;
      if (c == '\\') {
        escaped = true;
        if (e - q < 2) return St::more;
        const char x = q[1];
        if (x == 'u') {
          for (int i = 2; i < 6; ++i) {
            if (q + i >= e) return St::more;
            if (hex_value(q[i]) < 0) return bad(q, "invalid \\u escape in string");
          }
          q += 6;
        } else if (x == '"' || x == '\\' || x == '/' || x == 'b' || x == 'f' || x == 'n' ||
                   x == 'r' || x == 't') {
          q += 2;
        } else {
          return bad(q, "invalid escape sequence in string");
        }
        continue;
      }
      return bad(q, "unescaped control character in string");
    }
    raw = std::string_view(s, static_cast<size_t>(q - s));
    p = q + 1;
    return St::ok;
  }

  // A string, decoded: a view of the raw bytes, or of `scratch` when it has escapes.
  St read_string(const char*& p, const char* e, std::string& scratch, std::string_view& out_sv) {
    bool escaped = false;
    const char* s = p;
    std::string_view raw;
    if (const St st = scan_string(p, e, raw, escaped); st != St::ok) return st;
    if (escaped) {
      if (const char* at = decode_string(raw, scratch)) {
        p = s;
        return bad(at, "invalid \\u escape: unpaired UTF-16 surrogate");
      }
      out_sv = scratch;
    } else {
      out_sv = raw;
    }
    return St::ok;
  }

  St parse_literal(const char*& p, const char* e, std::string_view lit) {
    const auto avail = static_cast<size_t>(e - p);
    const size_t n = std::min(avail, lit.size());
    if (std::memcmp(p, lit.data(), n) != 0) return bad(p, "expected a JSON value");
    if (avail < lit.size()) return St::more;
    p += lit.size();
    return St::ok;
  }

  // Validates the JSON number grammar; `end` = the first byte after it (a delimiter must
  // follow inside [p, e), else more).
  St scan_number(const char* p, const char* e, const char*& end, bool& integral) {
    const char* q = p;
    integral = true;
    if (*q == '-') ++q;
    if (q == e) return St::more;
    if (!is_digit(*q)) return bad(q, "invalid number: expected a digit");
    if (*q == '0') {
      ++q;
    } else {
      while (q < e && is_digit(*q)) ++q;
    }
    if (q < e && *q == '.') {
      integral = false;
      ++q;
      if (q == e) return St::more;
      if (!is_digit(*q)) return bad(q, "invalid number: expected a digit after '.'");
      while (q < e && is_digit(*q)) ++q;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
      integral = false;
      ++q;
      if (q < e && (*q == '+' || *q == '-')) ++q;
      if (q == e) return St::more;
      if (!is_digit(*q)) return bad(q, "invalid number: expected an exponent digit");
      while (q < e && is_digit(*q)) ++q;
    }
    if (q == e) return St::more;
    end = q;
    return St::ok;
  }

  // A timestamp in float seconds -> milliseconds, exactly for plain decimals (round half up
  // on the 4th fractional digit), via from_chars for exponent forms.
  St parse_timestamp(const char*& p, const char* e, int64_t& ms) {
    const char* end = nullptr;
    bool integral = false;
    if (const St st = scan_number(p, e, end, integral); st != St::ok) return st;
    const char* q = p;
    const bool neg = *q == '-';
    if (neg) ++q;
    uint64_t ip = 0;
    int digits = 0;
    while (q < end && is_digit(*q)) {
      ip = ip * 10 + static_cast<uint64_t>(*q - '0');
      ++digits;
      ++q;
    }
    const char* frac_end = q;
    if (q < end && *q == '.') {
      ++frac_end;
      while (frac_end < end && is_digit(*frac_end)) ++frac_end;
    }
    if (digits <= 15 && frac_end == end) {
      uint64_t frac = 0;
      int fd = 0;
      bool round_up = false;
      if (q < end) {
        ++q;
        for (; q < end; ++q, ++fd) {
          if (fd < 3) {
            frac = frac * 10 + static_cast<uint64_t>(*q - '0');
          } else if (fd == 3) {
            round_up = *q >= '5';
          }
        }
      }
      for (int i = fd; i < 3; ++i) frac *= 10;
      const auto v = static_cast<int64_t>(ip * 1000 + frac + (round_up ? 1 : 0));
      ms = neg ? -v : v;
    } else {
      double d = 0;
      const auto r = std::from_chars(p, end, d, std::chars_format::general);
      if (r.ec != std::errc() || !(std::fabs(d) < 9.0e15)) {
        return bad(p, "timestamp out of range");
      }
      ms = std::llround(d * 1000.0);
    }
    p = end;
    return St::ok;
  }

  St skip_value(const char*& p, const char* e, int depth) {
    if (depth > kMaxDepth) return bad(p, "JSON nested too deeply");
    const char* q = p;
    switch (*q) {
      case '{':
      case '[': {
        const bool obj = *q == '{';
        const char close = obj ? '}' : ']';
        ++q;
        skip_ws(q, e);
        if (q == e) return St::more;
        if (*q == close) {
          p = q + 1;
          return St::ok;
        }
        for (;;) {
          if (obj) {
            if (*q != '"') return bad(q, "expected a string key");
            std::string_view raw;
            bool esc = false;
            if (const St st = scan_string(q, e, raw, esc); st != St::ok) return st;
            skip_ws(q, e);
            if (q == e) return St::more;
            if (*q != ':') return bad(q, "expected ':' after key");
            ++q;
            skip_ws(q, e);
            if (q == e) return St::more;
          }
          if (const St st = skip_value(q, e, depth + 1); st != St::ok) return st;
          skip_ws(q, e);
          if (q == e) return St::more;
          if (*q == ',') {
            ++q;
            skip_ws(q, e);
            if (q == e) return St::more;
            continue;
          }
          if (*q == close) {
            p = q + 1;
            return St::ok;
          }
          return bad(q, obj ? "expected ',' or '}' in object" : "expected ',' or ']' in array");
        }
      }
      case '"': {
        std::string_view raw;
        bool esc = false;
        if (const St st = scan_string(q, e, raw, esc); st != St::ok) return st;
        if (esc) {
          if (const char* at = decode_string(raw, key_scratch)) {
            return bad(at, "invalid \\u escape: unpaired UTF-16 surrogate");
          }
        }
        p = q;
        return St::ok;
      }
      case 't': return parse_literal(p, e, "true");
      case 'f': return parse_literal(p, e, "false");
      case 'n': return parse_literal(p, e, "null");
      default: {
        if (*q != '-' && !is_digit(*q)) return bad(q, "expected a JSON value");
        const char* end = nullptr;
        bool integral = false;
        if (const St st = scan_number(q, e, end, integral); st != St::ok) return st;
        p = end;
        return St::ok;
      }
    }
  }

  // ---- result elements ----

  // [ts, "value"]; p at '['.
  St parse_sample(const char*& p, const char* e, core::Sample& s) {
    const char* q = p + 1;
    skip_ws(q, e);
    if (q == e) return St::more;
    if (*q != '-' && !is_digit(*q)) return bad(q, "expected a numeric timestamp in [timestamp, \"value\"]");
    if (const St st = parse_timestamp(q, e, s.timestamp_ms); st != St::ok) return st;
    skip_ws(q, e);
    if (q == e) return St::more;
    if (*q != ',') return bad(q, "expected ',' after the timestamp in [timestamp, \"value\"]");
    ++q;
    skip_ws(q, e);
    if (q == e) return St::more;
    if (*q != '"') return bad(q, "expected a string sample value in [timestamp, \"value\"]");
    const char* vs = q;
    std::string_view v;
    if (const St st = read_string(q, e, value_scratch, v); st != St::ok) return st;
    if (!parse_float(v, s.value)) return bad(vs, "expected a numeric sample value, got " + quoted_excerpt(v));
    skip_ws(q, e);
    if (q == e) return St::more;
    if (*q != ']') return bad(q, "expected ']': a sample is [timestamp, \"value\"]");
    p = q + 1;
    return St::ok;
  }

  St parse_metric(const char*& p, const char* e) {
    const char* q = p + 1;
    skip_ws(q, e);
    if (q == e) return St::more;
    if (*q == '}') {
      p = q + 1;
      return St::ok;
    }
    size_t j = 0;
    for (;;) {
      if (*q != '"') return bad(q, "expected a label name string");
      const char* ks = q;
      std::string_view name;
      if (const St st = read_string(q, e, name_scratch, name); st != St::ok) return st;
      skip_ws(q, e);
      if (q == e) return St::more;
      if (*q != ':') return bad(q, "expected ':' after a label name");
      ++q;
      skip_ws(q, e);
      if (q == e) return St::more;
      if (*q != '"') return bad(q, "expected a string label value");
      std::string_view val;
      if (const St st = read_string(q, e, value_scratch, val); st != St::ok) return st;
      // Series in one response usually repeat the previous series' label names in the same
      // order, and most values: try that before hashing.
      uint32_t id = 0;
#if defined(ALERTD_PARSER_NO_LABEL_HINT)
      if (false) {
#else
      if (j < prev_ids.size() && out->name(out->label_name_id(prev_ids[j])) == name) {
#endif
        const uint32_t hint = prev_ids[j];
        id = out->label_value(hint) == val ? hint : out->intern_label(out->label_name_id(hint), val);
      } else {
        id = out->intern_label(out->intern(name), val);
      }
      const uint32_t nid = out->label_name_id(id);
      if (nid >= name_stamp.size()) name_stamp.resize(out->name_count() + 16, 0);
      if (name_stamp[nid] == stamp) return bad(ks, "duplicate label name " + quoted_excerpt(name));
      name_stamp[nid] = stamp;
      cur_ids.push_back(id);
      ++j;
      skip_ws(q, e);
      if (q == e) return St::more;
      if (*q == ',') {
        ++q;
        skip_ws(q, e);
        if (q == e) return St::more;
        continue;
      }
      if (*q == '}') {
        p = q + 1;
        return St::ok;
      }
      return bad(q, "expected ',' or '}' after a label");
    }
  }

  St parse_element_body(const char*& p, const char* e, bool& has_metric, bool& has_value,
                        bool& has_values) {
    const char* q = p + 1;
    skip_ws(q, e);
    if (q == e) return St::more;
    if (*q == '}') {
      p = q + 1;
      return St::ok;
    }
    for (;;) {
      if (*q != '"') return bad(q, "expected a key in a result element");
      const char* ks = q;
      std::string_view k;
      if (const St st = read_string(q, e, key_scratch, k); st != St::ok) return st;
      skip_ws(q, e);
      if (q == e) return St::more;
      if (*q != ':') return bad(q, "expected ':' after a key");
      ++q;
      skip_ws(q, e);
      if (q == e) return St::more;
      if (k == "metric") {
        if (has_metric) return bad(ks, "duplicate key \"metric\" in a result element");
        has_metric = true;
        if (*q != '{') return bad(q, "expected an object for \"metric\"");
        if (const St st = parse_metric(q, e); st != St::ok) return st;
      } else if (k == "value") {
        if (has_value) return bad(ks, "duplicate key \"value\" in a result element");
        has_value = true;
        if (*q != '[') return bad(q, "expected [timestamp, \"value\"] for \"value\"");
        core::Sample s;
        if (const St st = parse_sample(q, e, s); st != St::ok) return st;
        out->add_sample(s);
      } else if (k == "values") {
        if (has_values) return bad(ks, "duplicate key \"values\" in a result element");
        has_values = true;
        if (*q != '[') return bad(q, "expected an array of [timestamp, \"value\"] for \"values\"");
        ++q;
        skip_ws(q, e);
        if (q == e) return St::more;
        if (*q == ']') {
          ++q;
        } else {
          for (;;) {
            if (*q != '[') return bad(q, "expected [timestamp, \"value\"] in \"values\"");
            core::Sample s;
            if (const St st = parse_sample(q, e, s); st != St::ok) return st;
            out->add_sample(s);
            skip_ws(q, e);
            if (q == e) return St::more;
            if (*q == ',') {
              ++q;
              skip_ws(q, e);
              if (q == e) return St::more;
              continue;
            }
            if (*q == ']') {
              ++q;
              break;
            }
            return bad(q, "expected ',' or ']' in \"values\"");
          }
        }
      } else {
        if (const St st = skip_value(q, e, 1); st != St::ok) return st;
      }
      skip_ws(q, e);
      if (q == e) return St::more;
      if (*q == ',') {
        ++q;
        skip_ws(q, e);
        if (q == e) return St::more;
        continue;
      }
      if (*q == '}') {
        p = q + 1;
        return St::ok;
      }
      return bad(q, "expected ',' or '}' in a result element");
    }
  }

  [[nodiscard]] uint64_t set_hash(std::span<const uint32_t> ids) const {
    uint64_t h = 0;
    for (uint32_t id : ids) h += core::mix64(uint64_t{id} + 0x9E3779B97F4A7C15ULL);
    return core::mix64(h ^ ids.size());
  }

  void grow_set_table() {
    const size_t n = set_slots.empty() ? 256 : set_slots.size() * 2;
    set_slots.assign(n, 0);
    const size_t mask = n - 1;
    for (size_t i = 0; i < out->size(); ++i) {
      const uint64_t h = set_hash(out->label_ids(i));
      size_t k = h & mask;
      while (set_slots[k] != 0) k = (k + 1) & mask;
      set_slots[k] = (h & 0xFFFFFFFF00000000ULL) | (i + 1);
    }
  }

  std::string describe_labels(std::span<const uint32_t> ids) const {
    std::string s = "{";
    for (uint32_t id : ids) {
      if (s.size() > 1) s += ", ";
      s += out->name(out->label_name_id(id));
      s += '=';
      s += quoted_excerpt(out->label_value(id));
      if (s.size() > 200) {
        s += ", ...";
        break;
      }
    }
    return s + "}";
  }

  // Returns false when series with the same label set is already in the result.
  bool insert_label_set() {
    if ((set_count + 1) * 2 > set_slots.size()) grow_set_table();
    const uint64_t h = set_hash(cur_ids);
    const uint64_t tag = h & 0xFFFFFFFF00000000ULL;
    const size_t mask = set_slots.size() - 1;
    size_t k = h & mask;
    while (set_slots[k] != 0) {
      if ((set_slots[k] & 0xFFFFFFFF00000000ULL) == tag) {
        const size_t other = (set_slots[k] & 0xFFFFFFFFULL) - 1;
        const auto ids = out->label_ids(other);
        if (ids.size() == cur_ids.size()) {
          sort_a.assign(cur_ids.begin(), cur_ids.end());
          sort_b.assign(ids.begin(), ids.end());
          std::sort(sort_a.begin(), sort_a.end());
          std::sort(sort_b.begin(), sort_b.end());
          if (sort_a == sort_b) return false;
        }
      }
      k = (k + 1) & mask;
    }
    set_slots[k] = tag | (uint64_t{out->size()} + 1);
    ++set_count;
    return true;
  }

  // p at '{'.
  St parse_element(const char*& p, const char* e) {
    out->begin_series();
    cur_ids.clear();
    if (++stamp == 0) {
      std::fill(name_stamp.begin(), name_stamp.end(), 0);
      stamp = 1;
    }
    bool has_metric = false, has_value = false, has_values = false;
    const char* q = p;
    St st = parse_element_body(q, e, has_metric, has_value, has_values);
    if (st == St::ok) {
      if (!has_metric) {
        st = bad(p, "result element has no \"metric\" object");
      } else if (has_value == has_values) {
        st = bad(p, has_value ? "result element has both \"value\" and \"values\""
                              : "result element has neither \"value\" nor \"values\"");
      } else if (has_value && out->samples(out->size()).empty()) {
        st = bad(p, "result element has no sample");  // unreachable: value always adds one
      }
    }
    if (st == St::ok && !insert_label_set()) {
      st = bad(p, "duplicate series " + describe_labels(cur_ids) + " in the result");
    }
    if (st != St::ok) {
      out->abandon_series();
      return st;
    }
    saw_value = saw_value || has_value;
    saw_values = saw_values || has_values;
    out->add_label_refs(cur_ids);
    out->end_series();
    prev_ids.swap(cur_ids);
    p = q;
    return St::ok;
  }

  // ---- envelope ----

  void close_object() {
    if (ctx == Ctx::top) {
      state = State::done;
    } else {
      ctx = Ctx::top;
      state = State::obj_next;
    }
  }

  St value_for_key(const char*& p, const char* e) {
    const char c = *p;
    const char* q = p;
    std::string_view sv;
    switch (key) {
      case Key::status:
      case Key::error_type:
      case Key::error:
      case Key::result_type: {
        std::string& target = key == Key::status       ? status
                              : key == Key::error_type ? error_type
                              : key == Key::error      ? error_text
                                                       : result_type;
        if (c == 'n' && (key == Key::error_type || key == Key::error)) {
          if (const St st = parse_literal(q, e, "null"); st != St::ok) return st;
          break;
        }
        if (c != '"') {
          return bad(p, std::string("expected a string for \"") + key_name(key) + "\"");
        }
        if (const St st = read_string(q, e, key_scratch, sv); st != St::ok) return st;
        target.assign(sv);
        break;
      }
      case Key::is_partial:
        if (c == 't') {
          if (const St st = parse_literal(q, e, "true"); st != St::ok) return st;
          out->is_partial = true;
        } else if (c == 'f') {
          if (const St st = parse_literal(q, e, "false"); st != St::ok) return st;
          out->is_partial = false;
        } else {
          return bad(p, "expected true or false for \"isPartial\"");
        }
        break;
      case Key::data:
      case Key::stats:
        if (c == '{') {
          ctx = key == Key::data ? Ctx::data : Ctx::stats;
          state = State::obj_first;
          p = q + 1;
          return St::ok;
        }
        if (c == 'n') {
          if (const St st = parse_literal(q, e, "null"); st != St::ok) return st;
          break;
        }
        return bad(p, std::string("expected an object for \"") + key_name(key) + "\"");
      case Key::result:
        if (c != '[') return bad(p, "expected an array for \"result\"");
        result_offset = off(p);
        state = State::res_first;
        p = q + 1;
        return St::ok;
      case Key::series_fetched: {
        uint64_t n = 0;
        const char* vs = p;
        if (c == '"') {
          if (const St st = read_string(q, e, key_scratch, sv); st != St::ok) return st;
        } else if (c == '-' || is_digit(c)) {
          const char* end = nullptr;
          bool integral = false;
          if (const St st = scan_number(q, e, end, integral); st != St::ok) return st;
          sv = std::string_view(q, static_cast<size_t>(end - q));
          q = end;
        } else {
          return bad(p, "expected a string or number for \"seriesFetched\"");
        }
        const auto r = std::from_chars(sv.data(), sv.data() + sv.size(), n);
        if (sv.empty() || r.ec != std::errc() || r.ptr != sv.data() + sv.size()) {
          return bad(vs, "expected a non-negative integer for \"seriesFetched\", got " +
                             quoted_excerpt(sv));
        }
        out->series_fetched = n;
        break;
      }
      case Key::other:
        if (const St st = skip_value(q, e, 1); st != St::ok) return st;
        break;
    }
    state = State::obj_next;
    p = q;
    return St::ok;
  }

  // Runs the state machine over [b, e). Returns ok with *stop = e when all was consumed, more
  // with *stop at the start of an unfinished unit, or bad.
  St run(const char* b, const char* e, uint64_t b_off, const char** stop) {
    base_ptr = b;
    base_off = b_off;
    const char* p = b;
    for (;;) {
      skip_ws(p, e);
      if (p == e) {
        *stop = e;
        return St::ok;
      }
      const char c = *p;
      St st = St::ok;
      const char* unit = p;
      switch (state) {
        case State::start:
          if (c != '{') return bad(p, "expected '{' (a JSON object) at the start of the response");
          ++p;
          ctx = Ctx::top;
          state = State::obj_first;
          break;
        case State::obj_first:
          if (c == '}') {
            ++p;
            close_object();
            break;
          }
          [[fallthrough]];
        case State::obj_key: {
          if (c != '"') return bad(p, "expected a string key");
          std::string_view k;
          st = read_string(p, e, key_scratch, k);
          if (st != St::ok) break;
          key = classify(ctx, k);
          if (key != Key::other) {
            const auto bit = 1u << static_cast<unsigned>(key);
            auto& s = seen[static_cast<int>(ctx)];
            if ((s & bit) != 0) {
              return bad(unit, std::string("duplicate key \"") + key_name(key) + "\"");
            }
            s |= bit;
          }
          state = State::obj_colon;
          break;
        }
        case State::obj_colon:
          if (c != ':') return bad(p, "expected ':' after a key");
          ++p;
          state = State::obj_value;
          break;
        case State::obj_value:
          st = value_for_key(p, e);
          break;
        case State::obj_next:
          if (c == ',') {
            ++p;
            state = State::obj_key;
          } else if (c == '}') {
            ++p;
            close_object();
          } else {
            return bad(p, "expected ',' or '}' in an object");
          }
          break;
        case State::res_first:
          if (c == ']') {
            ++p;
            ctx = Ctx::data;
            state = State::obj_next;
            break;
          }
          if (c == '-' || is_digit(c)) {
            st = parse_timestamp(p, e, pair_ts);
            if (st == St::ok) {
              saw_pair = true;
              state = State::pair_comma;
            }
            break;
          }
          if (c != '{') return bad(p, "expected a result element '{', a [timestamp, value] pair or ']'");
          st = parse_element(p, e);
          if (st == St::ok) state = State::res_next;
          break;
        case State::res_elem:
          if (c != '{') return bad(p, "expected '{' (a result element)");
          st = parse_element(p, e);
          if (st == St::ok) state = State::res_next;
          break;
        case State::res_next:
          if (c == ',') {
            ++p;
            state = State::res_elem;
          } else if (c == ']') {
            ++p;
            ctx = Ctx::data;
            state = State::obj_next;
          } else {
            return bad(p, "expected ',' or ']' after a result element");
          }
          break;
        case State::pair_comma:
          if (c != ',') return bad(p, "expected ',' after the timestamp in [timestamp, value]");
          ++p;
          state = State::pair_value;
          break;
        case State::pair_value: {
          if (c != '"') return bad(p, "expected a string value in [timestamp, value]");
          std::string_view v;
          st = read_string(p, e, value_scratch, v);
          if (st == St::ok) {
            pair_value.assign(v);
            pair_value_offset = off(unit);
            state = State::pair_end;
          }
          break;
        }
        case State::pair_end:
          if (c != ']') return bad(p, "expected ']': the result is [timestamp, value]");
          ++p;
          ctx = Ctx::data;
          state = State::obj_next;
          break;
        case State::done:
          return bad(p, "unexpected data after the response object");
      }
      if (st == St::more) {
        *stop = unit;
        return St::more;
      }
      if (st == St::bad) return St::bad;
    }
  }

  core::Result<void> feed(std::string_view chunk) {
    if (failed) return core::fail(error);
    if (out == nullptr) return core::fail("InstantParser::feed called before reset()");
    if (finished) return record(total, "data after the end of the body");
    const char* p = chunk.data();
    const char* e = p + chunk.size();
    const uint64_t chunk_off = total;
    total += chunk.size();
    if (!pending.empty()) {
      const size_t n = scanner.scan(p, e);
      if (n == kNpos) {
        pending.append(p, chunk.size());
        return {};
      }
      pending.append(p, n);
      const char* pb = pending.data();
      const char* pe = pb + pending.size();
      const char* stop = nullptr;
      const St st = run(pb, pe, pending_offset, &stop);
      if (st == St::bad) return record(err_off, err_msg);
      if (st == St::more) return record(pending_offset, "malformed value");  // unreachable
      pending.clear();
      p += n;
    }
    const char* stop = nullptr;
    const St st = run(p, e, chunk_off + static_cast<uint64_t>(p - chunk.data()), &stop);
    if (st == St::bad) return record(err_off, err_msg);
    if (st == St::more) {
      pending.assign(stop, static_cast<size_t>(e - stop));
      pending_offset = chunk_off + static_cast<uint64_t>(stop - chunk.data());
      scanner.start();
      if (scanner.scan(stop, e) != kNpos) return record(pending_offset, "malformed value");  // unreachable
    }
    return {};
  }

  core::Result<void> finish() {
    if (failed) return core::fail(error);
    if (out == nullptr) return core::fail("InstantParser::finish called before reset()");
    if (finished) return {};
    finished = true;
    if (!pending.empty()) {
      const char* pb = pending.data();
      const char* pe = pb + pending.size();
      const char* stop = nullptr;
      const St st = run(pb, pe, pending_offset, &stop);
      if (st == St::bad) return record(err_off, err_msg);
      if (st == St::more) {
        return record(total, "unexpected end of the body (truncated response) in the value "
                             "starting at byte " + std::to_string(pending_offset));
      }
      pending.clear();
    }
    if (state != State::done) {
      return record(total, std::string("unexpected end of the body (truncated response): ") +
                               expectation(state));
    }
    if ((seen[0] & (1u << static_cast<unsigned>(Key::status))) == 0) {
      return record(total, "missing \"status\"");
    }
    if (status == "error") {
      failed = true;
      status_error = InstantParser::StatusError{error_type, error_text};
      error = core::Error{"datasource returned an error: errorType \"" + error_type +
                          "\", error \"" + error_text + "\""};
      return core::fail(error);
    }
    if (status != "success") return record(total, "unknown status " + quoted_excerpt(status));
    if ((seen[0] & (1u << static_cast<unsigned>(Key::data))) == 0) {
      return record(total, "missing \"data\"");
    }
    if ((seen[1] & (1u << static_cast<unsigned>(Key::result_type))) == 0) {
      return record(total, "missing \"data.resultType\"");
    }
    if ((seen[1] & (1u << static_cast<unsigned>(Key::result))) == 0) {
      return record(total, "missing \"data.result\"");
    }
    const bool elements = saw_value || saw_values;
    if (result_type == "vector" || result_type == "matrix") {
      const bool vec = result_type == "vector";
      if (saw_pair) {
        return record(result_offset, "data.result is [timestamp, value] but resultType is " +
                                         result_type);
      }
      if (vec ? saw_values : saw_value) {
        return record(result_offset, vec ? "result elements have \"values\" but resultType is vector"
                                         : "result elements have \"value\" but resultType is matrix");
      }
      out->type = vec ? core::ResultType::vector : core::ResultType::matrix;
      return {};
    }
    if (result_type == "scalar" || result_type == "string") {
      if (!saw_pair || elements || out->size() != 0) {
        return record(result_offset, "data.result must be [timestamp, value] for resultType " +
                                         result_type);
      }
      if (result_type == "scalar") {
        double v = 0;
        if (!parse_float(pair_value, v)) {
          return record(pair_value_offset,
                        "expected a numeric scalar value, got " + quoted_excerpt(pair_value));
        }
        out->type = core::ResultType::scalar;
        out->begin_series();
        out->add_sample(core::Sample{pair_ts, v});
        out->end_series();
      } else {
        out->type = core::ResultType::string;
        out->set_string_value(pair_value);
      }
      return {};
    }
    return record(result_offset, "unknown resultType " + quoted_excerpt(result_type));
  }
};

InstantParser::InstantParser() : impl_(std::make_unique<Impl>()) {}
InstantParser::~InstantParser() = default;
InstantParser::InstantParser(InstantParser&&) noexcept = default;
InstantParser& InstantParser::operator=(InstantParser&&) noexcept = default;

void InstantParser::reset(core::QueryResult& out) { impl_->reset(out); }
core::Result<void> InstantParser::feed(std::string_view chunk) { return impl_->feed(chunk); }
core::Result<void> InstantParser::finish() { return impl_->finish(); }
const InstantParser::StatusError* InstantParser::status_error() const {
  return impl_->status_error ? &*impl_->status_error : nullptr;
}
size_t InstantParser::buffered_bytes() const { return impl_->pending.capacity(); }

core::Result<void> parse_response(std::string_view body, core::QueryResult& out) {
  thread_local InstantParser parser;
  parser.reset(out);
  if (auto r = parser.feed(body); !r) return r;
  return parser.finish();
}

}  // namespace datasource
