#include "notifier/relabel.hpp"

#include <locale.h>
#include <re2/re2.h>
#include <wctype.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <map>
#include <string_view>
#include <utility>

#include "core/utf8.hpp"
#include "notifier/alertmanager_payload.hpp"

namespace notifier {
namespace {

// ---- md5 (RFC 1321), for hashmod: Prometheus hashes with crypto/md5 ----

constexpr std::array<uint32_t, 64> kMd5K{
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391};
constexpr std::array<int, 16> kMd5S{7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};

struct Md5 {
  std::array<uint32_t, 4> h{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};

  void block(const unsigned char* p) {
    std::array<uint32_t, 16> m{};
    for (size_t i = 0; i < 16; ++i) {
      m[i] = static_cast<uint32_t>(p[4 * i]) | static_cast<uint32_t>(p[4 * i + 1]) << 8 |
             static_cast<uint32_t>(p[4 * i + 2]) << 16 | static_cast<uint32_t>(p[4 * i + 3]) << 24;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (size_t i = 0; i < 64; ++i) {
      uint32_t f = 0;
      size_t g = 0;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
      }
      f = f + a + kMd5K[i] + m[g];
      a = d;
      d = c;
      c = b;
      const int s = kMd5S[(i / 16) * 4 + i % 4];
      b = b + ((f << s) | (f >> (32 - s)));
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
  }
};

// The last 8 bytes of md5(data) as a big-endian integer: Prometheus' hashmod input.
uint64_t md5_low64(std::string_view data) {
  Md5 md;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 64) {
    md.block(p);
    p += 64;
    n -= 64;
  }
  std::array<unsigned char, 128> tail{};
  if (n > 0) std::memcpy(tail.data(), p, n);
  tail[n] = 0x80;
  const size_t total = n + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  for (size_t i = 0; i < 8; ++i) tail[total - 8 + i] = static_cast<unsigned char>(bits >> (8 * i));
  md.block(tail.data());
  if (total == 128) md.block(tail.data() + 64);
  // Digest bytes 8..15 are h[2] and h[3], each little-endian.
  std::array<unsigned char, 8> low{};
  for (size_t w = 0; w < 2; ++w) {
    for (size_t i = 0; i < 4; ++i) low[4 * w + i] = static_cast<unsigned char>(md.h[2 + w] >> (8 * i));
  }
  uint64_t out = 0;
  for (unsigned char byte : low) out = (out << 8) | byte;
  return out;
}

// ---- xxhash64 (seed 0), for vmalert-compatible hashmod (cespare/xxhash's Sum64) ----

constexpr uint64_t kXxP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kXxP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kXxP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kXxP4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kXxP5 = 0x27D4EB2F165667C5ULL;

constexpr uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t read_le(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

uint64_t xx_round(uint64_t acc, uint64_t input) {
  acc += input * kXxP2;
  return rotl64(acc, 31) * kXxP1;
}

uint64_t xx_merge(uint64_t acc, uint64_t v) {
  acc ^= xx_round(0, v);
  return acc * kXxP1 + kXxP4;
}

uint64_t xxhash64(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const unsigned char* const end = p + data.size();
  uint64_t h = 0;
  if (data.size() >= 32) {
    uint64_t v1 = kXxP1 + kXxP2;
    uint64_t v2 = kXxP2;
    uint64_t v3 = 0;
    uint64_t v4 = 0 - kXxP1;
    while (end - p >= 32) {
      v1 = xx_round(v1, read_le(p, 8));
      v2 = xx_round(v2, read_le(p + 8, 8));
      v3 = xx_round(v3, read_le(p + 16, 8));
      v4 = xx_round(v4, read_le(p + 24, 8));
      p += 32;
    }
    h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = xx_merge(h, v1);
    h = xx_merge(h, v2);
    h = xx_merge(h, v3);
    h = xx_merge(h, v4);
  } else {
    h = kXxP5;
  }
  h += static_cast<uint64_t>(data.size());
  while (end - p >= 8) {
    h ^= xx_round(0, read_le(p, 8));
    h = rotl64(h, 27) * kXxP1 + kXxP4;
    p += 8;
  }
  if (end - p >= 4) {
    h ^= read_le(p, 4) * kXxP1;
    h = rotl64(h, 23) * kXxP2 + kXxP3;
    p += 4;
  }
  while (p < end) {
    h ^= static_cast<uint64_t>(*p) * kXxP5;
    h = rotl64(h, 11) * kXxP1;
    ++p;
  }
  h ^= h >> 33;
  h *= kXxP2;
  h ^= h >> 29;
  h *= kXxP3;
  h ^= h >> 32;
  return h;
}

// ---- UTF-8 and case mapping, as Go's strings.ToLower / ToUpper ----

locale_t utf8_locale() {
  // glibc's C.UTF-8 carries Unicode's simple case mappings (what Go's unicode.ToLower uses).
  static const locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return loc;
}

void map_case(std::string_view in, bool upper, std::string& out) {
  out.clear();
  bool ascii = true;
  for (char c : in) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    out.assign(in);
    for (char& c : out) {
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return;
  }
  const locale_t loc = utf8_locale();
  for (size_t i = 0; i < in.size();) {
    size_t len = 1;
    const uint32_t cp = core::decode_utf8(in, i, len);
    i += len;
    uint32_t mapped = cp;
    if (loc != static_cast<locale_t>(nullptr)) {
      const auto w = static_cast<wint_t>(cp);
      mapped = static_cast<uint32_t>(upper ? towupper_l(w, loc) : towlower_l(w, loc));
    } else if (cp < 0x80) {
      if (upper && cp >= 'a' && cp <= 'z') mapped = cp - 'a' + 'A';
      if (!upper && cp >= 'A' && cp <= 'Z') mapped = cp - 'A' + 'a';
    }
    core::append_utf8(out, mapped);
  }
}

// ---- replacement templates: Go's regexp.Expand, compiled once ----

bool is_name_byte(unsigned char c) {
  // Go takes Unicode letters and digits; every non-ASCII byte counts here (a non-letter symbol
  // right after `$name` is the only case where this differs).
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c >= 0x80;
}

class Template {
 public:
  Template() = default;
  Template(std::string_view tmpl, const re2::RE2& re) {
    const std::map<std::string, int>& names = re.NamedCapturingGroups();
    const int groups = re.NumberOfCapturingGroups();
    has_ref_ = tmpl.find('$') != std::string_view::npos;
    std::string literal;
    auto flush = [&] {
      if (literal.empty()) return;
      parts_.push_back(Part{static_cast<uint32_t>(text_.size()),
                            static_cast<uint32_t>(literal.size()), -1});
      text_ += literal;
      literal.clear();
    };
    size_t i = 0;
    while (i < tmpl.size()) {
      const char c = tmpl[i];
      if (c != '$') {
        literal += c;
        ++i;
        continue;
      }
      ++i;  // past '$'
      if (i < tmpl.size() && tmpl[i] == '$') {
        literal += '$';
        ++i;
        continue;
      }
      // extract(): `name` or `{name}`, name = letters, digits, '_'.
      size_t j = i;
      const bool brace = j < tmpl.size() && tmpl[j] == '{';
      if (brace) ++j;
      const size_t name_start = j;
      while (j < tmpl.size() && is_name_byte(static_cast<unsigned char>(tmpl[j]))) ++j;
      const std::string_view name = tmpl.substr(name_start, j - name_start);
      bool ok = !name.empty();
      if (ok && brace) {
        if (j >= tmpl.size() || tmpl[j] != '}') {
          ok = false;
        } else {
          ++j;
        }
      }
      if (!ok) {
        literal += '$';  // malformed: the '$' is text, scanning goes on after it
        continue;
      }
      i = j;
      int num = 0;
      for (char d : name) {
        if (d < '0' || d > '9' || num >= 100000000) {
          num = -1;
          break;
        }
        num = num * 10 + (d - '0');
      }
      if (name.size() > 1 && name[0] == '0') num = -1;
      int group = -1;
      if (num >= 0) {
        if (num <= groups) group = num;
      } else if (auto it = names.find(std::string(name)); it != names.end()) {
        group = it->second;
      }
      if (group < 0) continue;  // out of range or unknown name: expands to nothing
      flush();
      parts_.push_back(Part{0, 0, group});
      max_group_ = std::max(max_group_, group);
    }
    flush();
  }

  [[nodiscard]] bool has_ref() const { return has_ref_; }
  [[nodiscard]] int max_group() const { return max_group_; }

  // `groups[g]` is group g's text (data() == nullptr when the group did not take part).
  void expand(const re2::StringPiece* groups, std::string& out) const {
    out.clear();
    for (const Part& p : parts_) {
      if (p.group < 0) {
        out.append(text_, p.offset, p.length);
      } else if (groups[p.group].data() != nullptr) {
        out.append(groups[p.group].data(), groups[p.group].size());
      }
    }
  }

 private:
  struct Part {
    uint32_t offset;
    uint32_t length;
    int group;  // -1: literal text_[offset, offset+length)
  };
  std::string text_;
  std::vector<Part> parts_;
  int max_group_ = -1;
  bool has_ref_ = false;
};

// Regexes that are alternations of literals and `literal.*` prefixes ("prod|staging",
// "tmp_.*|__.*", ".*"), the common shapes in relabel configs, are matched without RE2: a plain
// comparison is several times faster than RE2's per-call setup. Only used where no capture
// group is needed.
class LiteralMatcher {
 public:
  static std::optional<LiteralMatcher> from(std::string_view regex) {
    LiteralMatcher m;
    size_t start = 0;
    while (true) {
      const size_t bar = regex.find('|', start);
      std::string_view alt = regex.substr(start, bar == std::string_view::npos ? regex.npos : bar - start);
      bool prefix = false;
      if (alt.size() >= 2 && alt.substr(alt.size() - 2) == ".*") {
        alt.remove_suffix(2);
        prefix = true;
      }
      if (alt.find_first_of("\\.+*?()[]{}^$") != std::string_view::npos) return std::nullopt;
      m.alts_.push_back(Alt{std::string(alt), prefix});
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    return m;
  }

  [[nodiscard]] bool match(std::string_view text) const {
    for (const Alt& a : alts_) {
      if (a.prefix) {
        // `.` does not match a newline (no `s` flag).
        if (text.starts_with(a.text) && text.find('\n', a.text.size()) == std::string_view::npos) {
          return true;
        }
      } else if (text == a.text) {
        return true;
      }
    }
    return false;
  }

 private:
  struct Alt {
    std::string text;
    bool prefix;
  };
  std::vector<Alt> alts_;
};

// Per-thread scratch: apply() reuses these, so a warm thread allocates only for real changes.
struct Scratch {
  std::string joined;
  std::string target;
  std::string value;
  std::vector<re2::StringPiece> groups;
  std::vector<std::pair<std::string, std::string>> renames;
  size_t rename_count = 0;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Sets name=value, deleting the label when value is empty (Prometheus' Builder.Set); does not
// touch the set when the value is already there. name/value must not point into `labels`.
void set_label(core::Labels& labels, std::string_view name, std::string_view value) {
  if (value.empty()) {
    labels.erase(name);
    return;
  }
  const auto current = labels.get(name);
  if (current && *current == value) return;
  labels.set(name, value);
}

core::Error config_error(std::string msg) { return core::Error{std::move(msg), core::ErrorKind::bad_config}; }

}  // namespace

struct RelabelRules::Rule {
  core::RelabelConfig config;
  std::unique_ptr<re2::RE2> re;
  bool default_regex = true;
  HashmodHash hash = HashmodHash::md5;
  std::optional<LiteralMatcher> literal;  // set when the regex is literal alternatives
  // RE2's PossibleMatchRange: every match m has range_min <= m <= range_max, so text outside
  // the range is rejected without running the regex (label names in labelmap, mostly).
  bool has_range = false;
  std::string range_min;
  std::string range_max;

  bool outside_range(std::string_view text) const {
    return has_range && (text < std::string_view(range_min) || text > std::string_view(range_max));
  }
  Template target;
  Template replacement;
  int submatches = 0;  // groups the templates need, plus group 0

  // The source labels' values joined with the separator; may point into `labels`.
  std::string_view joined(const core::Labels& labels, std::string& buf) const {
    const auto& names = config.source_labels;
    if (names.size() == 1) return labels.get(names[0]).value_or(std::string_view{});
    buf.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) buf += config.separator;
      if (auto v = labels.get(names[i])) buf.append(*v);
    }
    return buf;
  }

  bool matches(std::string_view text) const {
    if (literal) return literal->match(text);
    if (outside_range(text)) return false;
    return re->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), re2::RE2::ANCHOR_BOTH,
                     nullptr, 0);
  }

  bool apply(core::Labels& labels) const;
};

bool RelabelRules::Rule::apply(core::Labels& labels) const {
  using A = core::RelabelAction;
  Scratch& s = scratch();
  switch (config.action) {
    case A::drop:
      return !matches(joined(labels, s.joined));
    case A::keep:
      return matches(joined(labels, s.joined));
    case A::dropequal:
      return labels.get(config.target_label).value_or(std::string_view{}) !=
             joined(labels, s.joined);
    case A::keepequal:
      return labels.get(config.target_label).value_or(std::string_view{}) ==
             joined(labels, s.joined);
    case A::replace: {
      const std::string_view val = joined(labels, s.joined);
      if (val.empty() && default_regex && !target.has_ref() && !replacement.has_ref()) {
        set_label(labels, config.target_label, config.replacement);
        return true;
      }
      if (s.groups.size() < static_cast<size_t>(submatches)) s.groups.resize(static_cast<size_t>(submatches));
      const bool matched =
          submatches == 0 ? matches(val)
                          : !outside_range(val) && re->Match(re2::StringPiece(val.data(), val.size()), 0, val.size(),
                                      re2::RE2::ANCHOR_BOTH, s.groups.data(), submatches);
      if (!matched) {
        return true;  // no match: no replacement
      }
      std::string_view name = config.target_label;
      if (target.has_ref()) {
        target.expand(s.groups.data(), s.target);
        if (!core::is_valid_label_name(s.target)) return true;
        name = s.target;
      }
      replacement.expand(s.groups.data(), s.value);
      set_label(labels, name, s.value);
      return true;
    }
    case A::lowercase:
    case A::uppercase:
      map_case(joined(labels, s.joined), config.action == A::uppercase, s.value);
      set_label(labels, config.target_label, s.value);
      return true;
    case A::hashmod: {
      const std::string_view val = joined(labels, s.joined);
      const uint64_t h = hash == HashmodHash::md5 ? md5_low64(val) : xxhash64(val);
      const uint64_t mod = h % config.modulus;
      std::array<char, 24> buf{};
      const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), mod);
      const auto len = static_cast<size_t>(res.ptr - buf.data());
      set_label(labels, config.target_label, std::string_view(buf.data(), len));
      return true;
    }
    case A::labelmap: {
      // Every name is matched against the set as it was before this rule (Prometheus ranges
      // over the builder's original labels).
      s.rename_count = 0;
      if (s.groups.size() < static_cast<size_t>(submatches)) s.groups.resize(static_cast<size_t>(submatches));
      for (const core::Label& l : labels) {
        if (outside_range(l.name)) continue;
        if (!re->Match(re2::StringPiece(l.name.data(), l.name.size()), 0, l.name.size(),
                       re2::RE2::ANCHOR_BOTH, s.groups.data(), submatches)) {
          continue;
        }
        if (s.renames.size() <= s.rename_count) s.renames.emplace_back();
        auto& [name, value] = s.renames[s.rename_count++];
        replacement.expand(s.groups.data(), name);
        value.assign(l.value);
      }
      for (size_t i = 0; i < s.rename_count; ++i) {
        const auto& [name, value] = s.renames[i];
        if (!name.empty()) set_label(labels, name, value);
      }
      return true;
    }
    case A::labeldrop:
    case A::labelkeep: {
      const bool keep_matching = config.action == A::labelkeep;
      s.rename_count = 0;  // names to erase, collected first: erasing moves the labels
      for (const core::Label& l : labels) {
        if (matches(l.name) == keep_matching) continue;
        if (s.renames.size() <= s.rename_count) s.renames.emplace_back();
        s.renames[s.rename_count++].first.assign(l.name);
      }
      for (size_t i = 0; i < s.rename_count; ++i) labels.erase(s.renames[i].first);
      return true;
    }
  }
  return true;
}

RelabelRules::RelabelRules() = default;
RelabelRules::~RelabelRules() = default;
RelabelRules::RelabelRules(RelabelRules&&) noexcept = default;
RelabelRules& RelabelRules::operator=(RelabelRules&&) noexcept = default;

namespace {

std::string_view go_error_text(re2::RE2::ErrorCode code) {
  switch (code) {
    case re2::RE2::NoError: return "no error";
    case re2::RE2::ErrorInternal: return "internal error";
    case re2::RE2::ErrorBadEscape: return "invalid escape sequence";
    case re2::RE2::ErrorBadCharClass: return "invalid character class";
    case re2::RE2::ErrorBadCharRange: return "invalid character class range";
    case re2::RE2::ErrorMissingBracket: return "missing closing ]";
    case re2::RE2::ErrorMissingParen: return "missing closing )";
    case re2::RE2::ErrorUnexpectedParen: return "unexpected )";
    case re2::RE2::ErrorTrailingBackslash: return "trailing backslash at end of expression";
    case re2::RE2::ErrorRepeatArgument: return "missing argument to repetition operator";
    case re2::RE2::ErrorRepeatSize: return "invalid repeat count";
    case re2::RE2::ErrorRepeatOp: return "invalid nested repetition operator";
    case re2::RE2::ErrorBadPerlOp: return "invalid or unsupported Perl syntax";
    case re2::RE2::ErrorBadUTF8: return "invalid UTF-8";
    case re2::RE2::ErrorBadNamedCapture: return "invalid named capture";
    case re2::RE2::ErrorPatternTooLarge: return "expression too large";
  }
  return "invalid regexp";
}

core::Result<std::unique_ptr<re2::RE2>> compile_regex(std::string_view regex) {
  std::string anchored = "^(?:";
  anchored.append(regex);
  anchored += ")$";
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(anchored, opts);
  if (!re->ok()) {
    // Go's regexp error text (what Prometheus prints), with RE2's offending fragment.
    return core::fail(config_error("error parsing regexp: " + std::string(go_error_text(re->error_code())) +
                                   ": `" + re->error_arg() + "`"));
  }
  return re;
}

}  // namespace

std::optional<core::Error> check_relabel_config(const core::RelabelConfig& config) {
  if (auto err = core::validate_relabel_config(config)) return err;
  auto re = compile_regex(config.regex_or_default());
  if (!re) return re.error();
  return std::nullopt;
}

core::Result<RelabelRules> RelabelRules::compile(std::span<const core::RelabelConfig> configs,
                                                 RelabelOptions options) {
  RelabelRules out;
  out.rules_.reserve(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    const core::RelabelConfig& c = configs[i];
    auto context = [&] { return "relabel config #" + std::to_string(i + 1); };
    if (auto err = core::validate_relabel_config(c)) return core::fail(err->wrap(context()));
    auto re = compile_regex(c.regex_or_default());
    if (!re) return core::fail(re.error().wrap(context()));
    auto rule = std::make_unique<Rule>();
    rule->config = c;
    rule->re = std::move(*re);
    rule->default_regex = !c.regex.has_value();
    rule->hash = options.hashmod;
    rule->literal = LiteralMatcher::from(c.regex_or_default());
    rule->has_range = rule->re->PossibleMatchRange(&rule->range_min, &rule->range_max, 16);
    if (c.action == core::RelabelAction::replace) {
      rule->target = Template(c.target_label, *rule->re);
    }
    if (c.action == core::RelabelAction::replace || c.action == core::RelabelAction::labelmap) {
      rule->replacement = Template(c.replacement, *rule->re);
    }
    rule->submatches = std::max(rule->target.max_group(), rule->replacement.max_group()) + 1;
    out.rules_.push_back(std::move(rule));
  }
  return out;
}

bool RelabelRules::apply(core::Labels& labels) const {
  for (const auto& rule : rules_) {
    if (!rule->apply(labels)) return false;
  }
  return true;
}

bool relabel_alert(core::Labels& labels, std::initializer_list<const RelabelRules*> lists) {
  bool all_valid = true;
  for (const core::Label& l : labels) all_valid = all_valid && is_valid_label_name(l.name);
  if (!all_valid) {
    // Rare: rebuild with sanitized names; a later duplicate wins, as the encoder does.
    core::Labels fixed;
    fixed.reserve(labels.size());
    for (const core::Label& l : labels) fixed.set(sanitize_label_name(l.name), l.value);
    labels = std::move(fixed);
  }
  for (const RelabelRules* rules : lists) {
    if (rules != nullptr && !rules->apply(labels)) return false;
  }
  return !labels.empty();
}

std::optional<core::Labels> RelabelRules::process(core::Labels labels) const {
  if (!apply(labels)) return std::nullopt;
  return labels;
}

}  // namespace notifier
