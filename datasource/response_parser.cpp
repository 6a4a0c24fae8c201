// The streaming query-response parser: RapidJSON SAX splitting plus a RapidJSON DOM per result
// element (the design vmalert uses in Go as "std+fastjson"; numbers in docs/datasource-parser.md).
//   - Envelope. A small state machine walks the top-level object, `data` and `stats` one JSON
//     "unit" at a time (a structural byte, a key, a scalar, a skipped value, a result element).
//     Every key and value is parsed by rapidjson::Reader (SAX) with a handler that keeps what the
//     envelope needs (strings, literals, raw numbers, a depth limit for skipped values).
//   - Elements. Each element of data.result is delimited by a quote/escape-aware SIMD scan,
//     copied into a reused buffer and parsed in situ by rapidjson::Reader. Its SAX events pass
//     through ElementRouter (shape checks with byte offsets, exact timestamps, sample values)
//     into a rapidjson::Document built in one reused MemoryPoolAllocator that is cleared, not
//     freed, between elements. Labels, values and timestamps are then extracted from the
//     document into the compact, interned core::QueryResult.
//   - Streaming. A unit that reaches the end of a chunk reports `more`: it is copied into
//     pending_, a quote/escape-aware depth scanner (no parsing) finds where it ends in the
//     following chunks, and it is then parsed from pending_ by the same code. At most one unit
//     is buffered, and the same code interprets the same bytes whatever the split, so the
//     result or the error (message and offset) is the same for every chunking.
//     Why this and not a stackful reader (Boost.Context) running one Reader::Parse over a
//     chunk stream: RapidJSON 1.1 as packaged cannot resume between tokens (no
//     IterativeParseNext), so the stackful reader would be the only other way, and it would
//     read every byte through a bounded stream, char by char: no SSE2 string scanning (which
//     needs a contiguous, NUL-terminated buffer), every string copied twice (reader stack, then
//     the document's pool), no in-situ parsing. Measured (callgrind, instant_response.json):
//     one RapidJSON SAX pass over such a stream costs 40.1 instructions/byte before any DOM
//     work (rapidjson_sax in tests/bench), above the 40/byte floor on its own, while the scan,
//     copy and in-situ parse here cost about half of that per byte; the bytes rescanned at
//     chunk boundaries are at most one element per chunk (chunked within ~1% of whole).
//     libboost_context is also not among the project's packages.
#include "datasource/response_parser.hpp"

#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/hash.hpp"

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
inline uint32_t read_hex4(const char* p) {
  return static_cast<uint32_t>((hex_value(p[0]) << 12) | (hex_value(p[1]) << 8) |
                               (hex_value(p[2]) << 4) | hex_value(p[3]));
}

// RapidJSON decodes a lone low surrogate escape (\uDC00-\uDFFF) to 3 bytes; the response
// contract rejects it. Called on bytes RapidJSON accepted (so every backslash starts a valid
// escape inside a string and high surrogates are paired): the first lone low surrogate, or
// nullptr.
const char* find_lone_low_surrogate(const char* p, const char* e) {
  for (;;) {
    const char* bs = static_cast<const char*>(std::memchr(p, '\\', static_cast<size_t>(e - p)));
    if (bs == nullptr || e - bs < 2) return nullptr;
    if (bs[1] != 'u' || e - bs < 6) {
      p = bs + 2;
      continue;
    }
    const uint32_t cp = read_hex4(bs + 2);
    if (cp >= 0xDC00 && cp <= 0xDFFF) return bs;
    p = bs + ((cp >= 0xD800 && cp <= 0xDBFF) ? 12 : 6);
    if (p > e) return nullptr;
  }
}

// One byte of the depth scan: ExtentScanner's steps, with its state in the arguments. Returns
// true when the value ends at this byte.
inline bool extent_step(char c, bool& in_string, bool& escape, uint64_t& depth) {
  if (in_string) {
    if (escape) {
      escape = false;
    } else if (c == '\\') {
      escape = true;
    } else if (c == '"') {
      in_string = false;
    }
    return false;
  }
  if (c == '"') {
    in_string = true;
  } else if (c == '{' || c == '[') {
    ++depth;
  } else if (c == '}' || c == ']') {
    return depth == 0 || --depth == 0;
  }
  return false;
}

#if defined(__SSE2__)
// Bit i set where block[i] is one of the bytes of `set`, for the 64 bytes at p.
template <int N>
inline uint64_t block_mask(const __m128i (&x)[4], const char (&set)[N]) {
  uint64_t out = 0;
  for (int k = 0; k < 4; ++k) {
    __m128i m = _mm_cmpeq_epi8(x[k], _mm_set1_epi8(set[0]));
    for (int i = 1; i < N; ++i) m = _mm_or_si128(m, _mm_cmpeq_epi8(x[k], _mm_set1_epi8(set[i])));
    out |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(m))) << (16 * k);
  }
  return out;
}
#endif

// Length of the object or array starting at p (quote/escape-aware depth scan, no parsing), or
// kNpos when it does not end in [p, e). Agrees with ExtentScanner on every input.
// 64 bytes at a time: masks of quotes, backslashes, opening and closing brackets; without a
// backslash in the block, the bytes inside strings are the prefix XOR of the quote mask (each
// quote toggles), and only the brackets outside strings are then visited one by one. A block
// with a backslash (rare in label values), and the last bytes short of a block, go byte by byte.
size_t value_extent(const char* p, const char* e) {
  const char* q = p;
  bool in_string = false;
  bool escape = false;
  uint64_t depth = 0;
#if defined(__SSE2__)
  static constexpr char kQuote[] = {'"'};
  static constexpr char kBackslash[] = {'\\'};
  static constexpr char kOpen[] = {'{', '['};
  static constexpr char kClose[] = {'}', ']'};
  while (e - q >= 64) {
    __m128i x[4];
    for (int k = 0; k < 4; ++k)
      x[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k));
    if (escape || block_mask(x, kBackslash) != 0) {
      for (int i = 0; i < 64; ++i) {
        if (extent_step(q[i], in_string, escape, depth)) return static_cast<size_t>(q + i + 1 - p);
      }
      q += 64;
      continue;
    }
    // Bit i of `inside`: byte i is in a string or is its opening quote (a closing quote is not).
    uint64_t inside = block_mask(x, kQuote);
    inside ^= inside << 1;
    inside ^= inside << 2;
    inside ^= inside << 4;
    inside ^= inside << 8;
    inside ^= inside << 16;
    inside ^= inside << 32;
    if (in_string) inside = ~inside;
    in_string = (inside >> 63) != 0;
    const uint64_t open = block_mask(x, kOpen) & ~inside;
    const uint64_t close = block_mask(x, kClose) & ~inside;
    for (uint64_t b = open | close; b != 0; b &= b - 1) {
      const int i = std::countr_zero(b);
      if ((open >> i) & 1) {
        ++depth;
      } else if (depth == 0 || --depth == 0) {
        return static_cast<size_t>(q + i + 1 - p);
      }
    }
    q += 64;
  }
#endif
  for (; q < e; ++q) {
    if (extent_step(*q, in_string, escape, depth)) return static_cast<size_t>(q + 1 - p);
  }
  return kNpos;
}

// Timestamps: float seconds -> milliseconds, exactly for plain decimals (round half up on the
// 4th fractional digit), via from_chars for exponent forms. `num` is a JSON number RapidJSON
// validated.
bool timestamp_ms(std::string_view num, int64_t& ms) {
  const char* p = num.data();
  const char* end = p + num.size();
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
    return true;
  }
  double d = 0;
  const auto r = std::from_chars(p, end, d, std::chars_format::general);
  if (r.ec != std::errc() || !(std::fabs(d) < 9.0e15)) return false;
  ms = std::llround(d * 1000.0);
  return true;
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
      // A string value ends at its closing quote. (A close at depth 0 is malformed; it ends
      // the value there and the parser reports it.)
      const bool was_in_string = in_string_;
      if (extent_step(*p, in_string_, escape_, depth_) ||
          (was_in_string && !in_string_ && depth_ == 0)) {
        return static_cast<size_t>(p - s) + 1;
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

// ---- RapidJSON plumbing ----

using Pool = rapidjson::MemoryPoolAllocator<rapidjson::CrtAllocator>;
using ElemDoc = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, Pool>;
using ElemValue = ElemDoc::ValueType;
using Reader = rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::CrtAllocator>;
// Numbers stay text: timestamps are converted exactly here, and a number RapidJSON could not
// hold (1e999 in an unknown field) is not an error, as before.
constexpr unsigned kUnitFlags = rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseNumbersAsStringsFlag;
constexpr unsigned kElementFlags = kUnitFlags | rapidjson::kParseInsituFlag;

// The stream over an element's buffer: RapidJSON's in-situ stream, with its own string and
// whitespace scans (specialized below). parse_element puts 17 NULs after the element, so a
// 16-byte load from any byte up to the first NUL stays inside the buffer, and a string is
// scanned 16 bytes at a time from its first byte. RapidJSON's scan, written for any buffer,
// goes byte by byte up to a 16-byte boundary first: for label names and values, most of them
// shorter than 16 bytes, that is the whole string.
struct ElementStream : rapidjson::InsituStringStream {
  using rapidjson::InsituStringStream::InsituStringStream;
};

}  // namespace
}  // namespace datasource

namespace rapidjson {

// Copied by value inside the reader's functions, as InsituStringStream is.
template <>
struct StreamTraits<datasource::ElementStream> {
  enum { copyOptimization = 1 };
};

// Result elements are usually compact: one compare when no whitespace follows (every JSON
// whitespace byte is <= ' ').
template <>
[[gnu::always_inline]] inline void SkipWhitespace(datasource::ElementStream& is) {
  const char c = *is.src_;
  if (static_cast<unsigned char>(c) > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t'))
    return;
#if defined(RAPIDJSON_SSE2)
  is.src_ = const_cast<char*>(SkipWhitespace_SIMD(is.src_));
#else
  do ++is.src_;
  while (*is.src_ == ' ' || *is.src_ == '\n' || *is.src_ == '\r' || *is.src_ == '\t');
#endif
}

#if defined(RAPIDJSON_SSE2)
// Skips (nothing unescaped yet: src == dst) or moves back (after an escape) the bytes before
// the first '"', '\\' or control byte (< 0x20), 16 at a time; the reader handles that byte.
// The '\0' after the element stops it at the latest.
template <>
template <>
inline void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ScanCopyUnescapedString(
    datasource::ElementStream& is, datasource::ElementStream&) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control = _mm_set1_epi8(0x1F);
  char* p = is.src_;
  char* q = is.dst_;
  for (;;) {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(s, quote), _mm_cmpeq_epi8(s, backslash)),
                     _mm_cmpeq_epi8(_mm_max_epu8(s, control), control));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(stop));
    if (mask != 0) {
      const int k = std::countr_zero(mask);
      if (p != q) std::memmove(q, p, static_cast<size_t>(k));
      is.src_ = p + k;
      is.dst_ = q + k;
      return;
    }
    // q is behind p: the 16 bytes stored end before the next ones are loaded.
    if (p != q) _mm_storeu_si128(reinterpret_cast<__m128i*>(q), s);
    p += 16;
    q += 16;
  }
}
#endif

}  // namespace rapidjson

namespace datasource {
namespace {

// A read-only stream over [begin, end) that remembers whether the reader looked past the end:
// then the unit is unfinished (`more`), whatever RapidJSON concluded from the '\0' it was given.
struct BoundedStream {
  using Ch = char;
  const char* begin;
  const char* cur;
  const char* end;
  mutable bool hit_end = false;
  Ch Peek() const {
    if (cur == end) [[unlikely]] {
      hit_end = true;
      return '\0';
    }
    return *cur;
  }
  Ch Take() {
    if (cur == end) [[unlikely]] {
      hit_end = true;
      return '\0';
    }
    return *cur++;
  }
  [[nodiscard]] size_t Tell() const { return static_cast<size_t>(cur - begin); }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }
};

// One envelope value: keeps its kind and text (strings and raw numbers); bounds the depth of
// skipped values.
struct UnitHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, UnitHandler> {
  enum class Kind : uint8_t { none, null, boolean, number, string, container };
  Kind kind = Kind::none;
  bool boolean = false;
  std::string* text = nullptr;
  const BoundedStream* stream = nullptr;
  int depth = 0;
  size_t deep_at = kNpos;  // offset in the unit of the container that nested too deeply

  void start(std::string* t, const BoundedStream* s) {
    kind = Kind::none;
    text = t;
    stream = s;
    depth = 0;
    deep_at = kNpos;
  }
  bool top(Kind k) {
    if (depth == 0) kind = k;
    return true;
  }
  bool Null() { return top(Kind::null); }
  bool Bool(bool b) {
    if (depth == 0) boolean = b;
    return top(Kind::boolean);
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (depth == 0) text->assign(s, n);
    return top(Kind::number);
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (depth == 0) text->assign(s, n);
    return top(Kind::string);
  }
  bool Key(const char*, rapidjson::SizeType, bool) { return true; }
  bool open() {
    top(Kind::container);
    if (++depth > kMaxDepth) {
      deep_at = stream->Tell() - 1;
      return false;
    }
    return true;
  }
  bool StartObject() { return open(); }
  bool StartArray() { return open(); }
  bool EndObject(rapidjson::SizeType) {
    --depth;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth;
    return true;
  }
};

// Messages for RapidJSON's string and number errors (the same wording everywhere).
const char* lexical_error(rapidjson::ParseErrorCode code, char at) {
  switch (code) {
    case rapidjson::kParseErrorStringUnicodeEscapeInvalidHex: return "invalid \\u escape in string";
    case rapidjson::kParseErrorStringUnicodeSurrogateInvalid:
      return "invalid \\u escape: unpaired UTF-16 surrogate";
    case rapidjson::kParseErrorStringEscapeInvalid:
      return at == '\\' ? "invalid escape sequence in string" : "unescaped control character in string";
    case rapidjson::kParseErrorStringMissQuotationMark: return "unescaped control character in string";
    case rapidjson::kParseErrorStringInvalidEncoding: return "invalid encoding in string";
    case rapidjson::kParseErrorNumberMissFraction: return "invalid number: expected a digit after '.'";
    case rapidjson::kParseErrorNumberMissExponent: return "invalid number: expected an exponent digit";
    case rapidjson::kParseErrorNumberTooBig: return "number too big";  // beyond a double
    default: return nullptr;
  }
}

// Messages for RapidJSON's errors in an envelope value or a skipped value.
std::string unit_error(rapidjson::ParseErrorCode code, char at) {
  if (const char* m = lexical_error(code, at)) return m;
  switch (code) {
    case rapidjson::kParseErrorObjectMissName: return "expected a string key";
    case rapidjson::kParseErrorObjectMissColon: return "expected ':' after key";
    case rapidjson::kParseErrorObjectMissCommaOrCurlyBracket: return "expected ',' or '}' in object";
    case rapidjson::kParseErrorArrayMissCommaOrSquareBracket: return "expected ',' or ']' in array";
    case rapidjson::kParseErrorDocumentEmpty:
    case rapidjson::kParseErrorValueInvalid: return "expected a JSON value";
    default: return std::string("invalid JSON: ") + rapidjson::GetParseError_En(code);
  }
}

// Sits between rapidjson::Reader and the element's Document: checks the element's shape as the
// events arrive (where byte offsets are known), converts timestamps (raw numbers, exactly) and
// sample values (strings) to numbers, and forwards every event to the Document. Offsets are
// relative to the element buffer.
class ElementRouter {
 public:
  using SizeType = rapidjson::SizeType;
  enum class Field : uint8_t { none, metric, value, values, other };

  ElementRouter(ElemDoc& doc, const rapidjson::InsituStringStream& in, const char* base,
                std::vector<uint32_t>& label_key_offsets)
      : doc_(doc), in_(in), base_(base), key_offsets_(label_key_offsets) {
    key_offsets_.clear();
  }

  // Shape facts the extraction relies on.
  bool has_metric = false, has_value = false, has_values = false;
  SizeType metric_index = 0, value_index = 0, values_index = 0;
  // Set when a handler returned false.
  size_t error_offset = 0;
  std::string error;

  // The message for a RapidJSON syntax error at the current position.
  [[nodiscard]] std::string syntax_error(rapidjson::ParseErrorCode code, char at) const {
    const bool in_sample = sample_depth_ != 0 && depth_ == sample_depth_;
    if (code == rapidjson::kParseErrorNumberTooBig && in_sample && sample_index_ == 0) {
      return "timestamp out of range";
    }
    if (const char* m = lexical_error(code, at)) return m;
    const bool in_element = depth_ == 1;
    const bool in_metric = depth_ == 2 && field_ == Field::metric;
    const bool in_values = depth_ == 2 && field_ == Field::values && !in_sample;
    switch (code) {
      case rapidjson::kParseErrorObjectMissName:
        return in_element ? "expected a key in a result element"
                          : in_metric ? "expected a label name string" : "expected a string key";
      case rapidjson::kParseErrorObjectMissColon:
        return in_metric ? "expected ':' after a label name" : "expected ':' after a key";
      case rapidjson::kParseErrorObjectMissCommaOrCurlyBracket:
        return in_element ? "expected ',' or '}' in a result element"
                          : in_metric ? "expected ',' or '}' after a label" : "expected ',' or '}' in object";
      case rapidjson::kParseErrorArrayMissCommaOrSquareBracket:
        if (in_sample) {
          return sample_index_ <= 1 ? "expected ',' after the timestamp in [timestamp, \"value\"]"
                                    : "expected ']': a sample is [timestamp, \"value\"]";
        }
        return in_values ? "expected ',' or ']' in \"values\"" : "expected ',' or ']' in array";
      case rapidjson::kParseErrorValueInvalid:
      case rapidjson::kParseErrorDocumentEmpty: {
        if (in_sample) {
          return sample_index_ == 0   ? "expected a numeric timestamp in [timestamp, \"value\"]"
                 : sample_index_ == 1 ? "expected a string sample value in [timestamp, \"value\"]"
                                      : "expected ']': a sample is [timestamp, \"value\"]";
        }
        if (in_metric) return "expected a string label value";
        if (in_values) return "expected [timestamp, \"value\"] in \"values\"";
        if (in_element) {
          switch (field_) {
            case Field::metric: return "expected an object for \"metric\"";
            case Field::value: return "expected [timestamp, \"value\"] for \"value\"";
            case Field::values: return "expected an array of [timestamp, \"value\"] for \"values\"";
            case Field::none:
            case Field::other: break;
          }
        }
        return "expected a JSON value";
      }
      default: return std::string("invalid JSON: ") + rapidjson::GetParseError_En(code);
    }
  }

  // Reader handler.
  bool Null() { return check(Kind::literal, pos() - 4) && doc_.Null(); }
  bool Bool(bool b) { return check(Kind::literal, pos() - (b ? 4 : 5)) && doc_.Bool(b); }
  bool Int(int) { return false; }  // numbers arrive as RawNumber (kParseNumbersAsStringsFlag)
  bool Uint(unsigned) { return false; }
  bool Int64(int64_t) { return false; }
  bool Uint64(uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* s, SizeType n, bool) {
    // In situ, s points at the number in the buffer (not NUL-terminated).
    const size_t off = static_cast<size_t>(s - base_);
    const bool timestamp = sample_depth_ != 0 && depth_ == sample_depth_ && sample_index_ == 0;
    if (!check(Kind::number, off)) return false;
    if (!timestamp) return doc_.Null();  // a number in an unknown field: never read
    int64_t ms = 0;
    if (!timestamp_ms(std::string_view(base_ + off, n), ms)) return fail(off, "timestamp out of range");
    return doc_.Int64(ms);
  }
  bool String(const char* s, SizeType n, bool) {
    const size_t off = static_cast<size_t>(s - base_) - 1;
    const bool sample_value = sample_depth_ != 0 && depth_ == sample_depth_ && sample_index_ == 1;
    if (!check(Kind::string, off)) return false;
    if (!sample_value) return doc_.String(s, n, false);
    double v = 0;
    if (!parse_float(std::string_view(s, n), v)) {
      return fail(off, "expected a numeric sample value, got " + quoted_excerpt(std::string_view(s, n)));
    }
    return doc_.Double(v);
  }
  bool Key(const char* s, SizeType n, bool) {
    const size_t off = static_cast<size_t>(s - base_) - 1;
    if (depth_ == 1) {
      const std::string_view k(s, n);
      field_ = Field::other;
      if (k == "metric") {
        if (has_metric) return fail(off, "duplicate key \"metric\" in a result element");
        has_metric = true;
        metric_index = members_;
        field_ = Field::metric;
      } else if (k == "value") {
        if (has_value) return fail(off, "duplicate key \"value\" in a result element");
        has_value = true;
        value_index = members_;
        field_ = Field::value;
      } else if (k == "values") {
        if (has_values) return fail(off, "duplicate key \"values\" in a result element");
        has_values = true;
        values_index = members_;
        field_ = Field::values;
      }
      ++members_;
    } else if (depth_ == 2 && field_ == Field::metric) {
      key_offsets_.push_back(static_cast<uint32_t>(off));
    }
    return doc_.Key(s, n, false);
  }
  bool StartObject() {
    if (!check(Kind::object, pos() - 1) || !open()) return false;
    return doc_.StartObject();
  }
  bool StartArray() {
    const size_t off = pos() - 1;
    if (!check(Kind::array, off) || !open()) return false;
    // A sample array: the value of "value", or an element of "values".
    if ((depth_ == 2 && field_ == Field::value) || (depth_ == 3 && field_ == Field::values)) {
      sample_depth_ = depth_;
      sample_index_ = 0;
    }
    return doc_.StartArray();
  }
  bool EndObject(SizeType n) {
    --depth_;
    return doc_.EndObject(n);
  }
  bool EndArray(SizeType n) {
    if (sample_depth_ != 0 && depth_ == sample_depth_) {
      const size_t off = pos() - 1;
      if (sample_index_ == 0) return fail(off, "expected a numeric timestamp in [timestamp, \"value\"]");
      if (sample_index_ == 1) return fail(off, "expected ',' after the timestamp in [timestamp, \"value\"]");
      sample_depth_ = 0;
    }
    --depth_;
    return doc_.EndArray(n);
  }

 private:
  enum class Kind : uint8_t { object, array, string, number, literal };

  // Bytes the reader has consumed (InsituStringStream::Tell is not const).
  [[nodiscard]] size_t pos() const { return static_cast<size_t>(in_.src_ - in_.head_); }

  bool fail(size_t off, std::string msg) {
    error_offset = off;
    error = std::move(msg);
    return false;
  }
  bool open() {
    if (++depth_ > kMaxDepth + 1) return fail(pos() - 1, "JSON nested too deeply");
    return true;
  }
  // Where the delimiter before a value is (for "expected ']'" after a complete sample).
  [[nodiscard]] size_t delimiter_before(size_t off) const {
    while (off > 0 && is_ws(base_[off - 1])) --off;
    return off > 0 ? off - 1 : 0;
  }
  // Shape checks at the start of every value.
  bool check(Kind k, size_t off) {
    if (sample_depth_ != 0 && depth_ == sample_depth_) {
      switch (sample_index_++) {
        case 0:
          return k == Kind::number || fail(off, "expected a numeric timestamp in [timestamp, \"value\"]");
        case 1:
          return k == Kind::string || fail(off, "expected a string sample value in [timestamp, \"value\"]");
        default: return fail(delimiter_before(off), "expected ']': a sample is [timestamp, \"value\"]");
      }
    }
    if (depth_ == 1) {
      switch (field_) {
        case Field::metric: return k == Kind::object || fail(off, "expected an object for \"metric\"");
        case Field::value:
          return k == Kind::array || fail(off, "expected [timestamp, \"value\"] for \"value\"");
        case Field::values:
          return k == Kind::array ||
                 fail(off, "expected an array of [timestamp, \"value\"] for \"values\"");
        case Field::none:
        case Field::other: return true;
      }
    }
    if (depth_ == 2 && field_ == Field::metric) {
      return k == Kind::string || fail(off, "expected a string label value");
    }
    if (depth_ == 2 && field_ == Field::values) {
      return k == Kind::array || fail(off, "expected [timestamp, \"value\"] in \"values\"");
    }
    return true;
  }

  ElemDoc& doc_;
  const rapidjson::InsituStringStream& in_;
  const char* base_;
  std::vector<uint32_t>& key_offsets_;
  int depth_ = 0;
  Field field_ = Field::none;
  SizeType members_ = 0;
  int sample_depth_ = 0;
  int sample_index_ = 0;
};

// A MemoryPoolAllocator on a buffer we own: Clear() keeps the buffer, and fit() grows it when an
// element needed more, so a warm parser allocates nothing.
class Arena {
 public:
  explicit Arena(size_t size) { reserve(size); }
  Pool& pool() { return *pool_; }
  void clear() { pool_->Clear(); }
  void fit() {
    if (pool_->Capacity() > size_) reserve(std::bit_ceil(pool_->Capacity()));
  }
  [[nodiscard]] size_t capacity() const { return size_; }

 private:
  void reserve(size_t size) {
    pool_.reset();
    buffer_ = std::make_unique<char[]>(size);
    size_ = size;
    pool_.emplace(buffer_.get(), size_, kOverflowChunk);
  }
  // Chunks taken beyond the buffer while a large element is built (then fit() grows the
  // buffer): small, so the grown buffer stays close to what the element needed.
  static constexpr size_t kOverflowChunk = 4 * 1024;
  std::unique_ptr<char[]> buffer_;
  size_t size_ = 0;
  std::optional<Pool> pool_;
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

  // RapidJSON: the envelope's reader and handler; the element's reader, in-situ buffer and
  // document with its two arenas (values and strings; the document's build stack).
  Reader unit_reader;
  UnitHandler unit_handler;
  std::string key_scratch, value_scratch, number_scratch;
  Reader element_reader;
  std::string element;
  Arena arena{8 * 1024};        // a 400-byte, 11-label element needs ~1.5 KiB
  Arena stack_arena{4 * 1024};
  ElemDoc doc{&arena.pool(), 1024, &stack_arena.pool()};
  std::vector<uint32_t> label_key_offsets;

  // Element scratch.
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

  // ---- envelope units: one JSON value each, parsed by rapidjson::Reader ----

  // p at the value's first byte; advances p only on St::ok. Strings and raw numbers at the top
  // of the value land in `text`.
  St read_unit(const char*& p, const char* e, std::string& text) {
    BoundedStream s{p, p, e};
    unit_handler.start(&text, &s);
    const bool ok = !unit_reader.Parse<kUnitFlags>(s, unit_handler).IsError();
    if (s.hit_end) return St::more;
    if (!ok) {
      const auto code = unit_reader.GetParseErrorCode();
      if (code == rapidjson::kParseErrorTermination) return bad(p + unit_handler.deep_at, "JSON nested too deeply");
      const size_t at = unit_reader.GetErrorOffset();
      return bad(p + at, unit_error(code, p[at]));
    }
    if (const char* at = find_lone_low_surrogate(p, s.cur)) {
      return bad(at, "invalid \\u escape: unpaired UTF-16 surrogate");
    }
    p = s.cur;
    return St::ok;
  }

  // A string (p at its quote), decoded into `scratch`.
  St read_string(const char*& p, const char* e, std::string& scratch, std::string_view& out_sv) {
    if (const St st = read_unit(p, e, scratch); st != St::ok) return st;
    out_sv = scratch;
    return St::ok;
  }

  // true/false/null (p at its first letter, which chose `lit`).
  St parse_literal(const char*& p, const char* e, std::string_view lit) {
    const char* s = p;
    if (const St st = read_unit(p, e, number_scratch); st != St::ok) return st;
    const auto kind = lit == "null" ? UnitHandler::Kind::null : UnitHandler::Kind::boolean;
    if (unit_handler.kind != kind) {
      p = s;
      return bad(s, "expected a JSON value");
    }
    return St::ok;
  }

  // A number (p at '-' or a digit), as its text.
  St read_number(const char*& p, const char* e, std::string_view& text) {
    if (const St st = read_unit(p, e, number_scratch); st != St::ok) return st;
    text = number_scratch;
    return St::ok;
  }

  St parse_timestamp(const char*& p, const char* e, int64_t& ms) {
    const char* s = p;
    std::string_view num;
    if (const St st = read_number(p, e, num); st != St::ok) {
      if (st == St::bad && err_msg == "number too big") err_msg = "timestamp out of range";
      return st;
    }
    if (!timestamp_ms(num, ms)) {
      p = s;
      return bad(s, "timestamp out of range");
    }
    return St::ok;
  }

  // Any JSON value (an unknown key's), checked and dropped.
  St skip_value(const char*& p, const char* e, int) { return read_unit(p, e, value_scratch); }

  // ---- result elements ----

  // p at '{'. The element is delimited, copied and parsed in situ into `doc`, then extracted.
  St parse_element(const char*& p, const char* e) {
    const size_t n = value_extent(p, e);
    if (n == kNpos) return St::more;
    // NUL terminator, plus room for RapidJSON's 16-byte SSE2 reads.
    element.assign(p, n);
    element.append(17, '\0');
    char* base = element.data();
    arena.clear();
    stack_arena.clear();
    ElementStream in(base);
    ElementRouter router(doc, in, base, label_key_offsets);
    bool parsed = false;
    auto build = [&](ElemDoc&) {
      parsed = !element_reader.Parse<kElementFlags>(in, router).IsError();
      return parsed;
    };
    doc.Populate(build);
    if (!parsed) {
      const auto code = element_reader.GetParseErrorCode();
      if (code == rapidjson::kParseErrorTermination) return bad(p + router.error_offset, router.error);
      const size_t at = element_reader.GetErrorOffset();
      if (at >= n) return bad(p + n, "unexpected end of a result element");  // unreachable
      return bad(p + at, router.syntax_error(code, p[at]));
    }
    if (const char* at = find_lone_low_surrogate(p, p + n)) {
      return bad(at, "invalid \\u escape: unpaired UTF-16 surrogate");
    }
    if (!router.has_metric) return bad(p, "result element has no \"metric\" object");
    if (router.has_value == router.has_values) {
      return bad(p, router.has_value ? "result element has both \"value\" and \"values\""
                                     : "result element has neither \"value\" nor \"values\"");
    }
    const St st = extract(p, router);
    arena.fit();
    stack_arena.fit();
    if (st != St::ok) return st;
    saw_value = saw_value || router.has_value;
    saw_values = saw_values || router.has_values;
    p += n;
    return St::ok;
  }

  // The element's document into the result: labels interned (previous-series hint first),
  // samples, then the duplicate checks.
  St extract(const char* p, const ElementRouter& router) {
    out->begin_series();
    cur_ids.clear();
    if (++stamp == 0) {
      std::fill(name_stamp.begin(), name_stamp.end(), 0);
      stamp = 1;
    }
    const auto members = doc.MemberBegin();
    const ElemValue& metric = members[router.metric_index].value;
    size_t j = 0;
    for (auto it = metric.MemberBegin(); it != metric.MemberEnd(); ++it, ++j) {
      const std::string_view name(it->name.GetString(), it->name.GetStringLength());
      const std::string_view val(it->value.GetString(), it->value.GetStringLength());
      // Series in one response usually repeat the previous series' label names in the same
      // order, and most values: try that before hashing.
      uint32_t id = 0;
      if (j < prev_ids.size() && out->name(out->label_name_id(prev_ids[j])) == name) {
        const uint32_t hint = prev_ids[j];
        id = out->label_value(hint) == val ? hint : out->intern_label(out->label_name_id(hint), val);
      } else {
        id = out->intern_label(out->intern(name), val);
      }
      const uint32_t nid = out->label_name_id(id);
      if (nid >= name_stamp.size()) name_stamp.resize(out->name_count() + 16, 0);
      if (name_stamp[nid] == stamp) {
        out->abandon_series();
        return bad(p + label_key_offsets[j], "duplicate label name " + quoted_excerpt(name));
      }
      name_stamp[nid] = stamp;
      cur_ids.push_back(id);
    }
    const auto add = [this](const ElemValue& s) {
      core::Sample smp;
      smp.timestamp_ms = s[0].GetInt64();
      smp.value = s[1].GetDouble();
      out->add_sample(smp);
    };
    if (router.has_value) {
      add(members[router.value_index].value);
    } else {
      for (const auto& s : members[router.values_index].value.GetArray()) add(s);
    }
    if (!insert_label_set()) {
      out->abandon_series();
      return bad(p, "duplicate series " + describe_labels(cur_ids) + " in the result");
    }
    out->add_label_refs(cur_ids);
    out->end_series();
    prev_ids.swap(cur_ids);
    return St::ok;
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
          if (const St st = read_number(q, e, sv); st != St::ok) return st;
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
size_t InstantParser::buffered_bytes() const {
  const Impl& m = *impl_;
  auto ids = [](const std::vector<uint32_t>& v) { return v.capacity() * sizeof(uint32_t); };
  return m.pending.capacity() + m.element.capacity() + m.key_scratch.capacity() +
         m.value_scratch.capacity() + m.number_scratch.capacity() + m.arena.capacity() +
         m.stack_arena.capacity() + ids(m.label_key_offsets) + ids(m.cur_ids) + ids(m.prev_ids) +
         ids(m.sort_a) + ids(m.sort_b) + ids(m.name_stamp) +
         m.set_slots.capacity() * sizeof(uint64_t);
}

core::Result<void> parse_response(std::string_view body, core::QueryResult& out) {
  thread_local auto parser = std::make_unique<InstantParser>();
  parser->reset(out);
  auto r = parser->feed(body);
  core::Result<void> done = r ? parser->finish() : std::move(r);
  // Not kept at the size of a big answer for the rest of the thread's life.
  if (parser->buffered_bytes() > InstantParser::kReuseMaxBytes) {
    parser = std::make_unique<InstantParser>();
  }
  return done;
}

}  // namespace datasource
