#include "templates/funcs.hpp"

#include <arpa/inet.h>
#include <re2/re2.h>

#include <cmath>
#include <memory>
#include <unordered_map>

#include "core/utf8.hpp"
#include "templates/go_fmt.hpp"

namespace templates::tmplfn {
namespace {

void g4(std::string& out, double v) { gofmt::append_float(out, v, 'g', 4); }

void encode(std::string& out, uint32_t r) { core::append_utf8(out, r); }

// Simple case mapping (Go's unicode.ToUpper/ToLower) for the scripts rule files use.
uint32_t upper(uint32_t r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') ? r - 32 : r;
  if (r == 0xB5) return 0x39C;
  if ((r >= 0xE0 && r <= 0xFE && r != 0xF7)) return r - 32;
  if (r == 0xFF) return 0x178;
  if (r == 0x131) return 'I';
  if (r == 0x17F) return 'S';
  if ((r >= 0x100 && r <= 0x12F) || (r >= 0x132 && r <= 0x137) || (r >= 0x14A && r <= 0x177)) {
    return (r & 1) ? r - 1 : r;
  }
  if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17E)) return (r & 1) ? r : r - 1;
  if (r == 0x3AC) return 0x386;
  if (r >= 0x3AD && r <= 0x3AF) return r - 37;
  if (r == 0x3C2) return 0x3A3;
  if (r >= 0x3B1 && r <= 0x3CB) return r - 32;
  if (r == 0x3CC) return 0x38C;
  if (r == 0x3CD || r == 0x3CE) return r - 63;
  if (r >= 0x430 && r <= 0x44F) return r - 32;
  if (r >= 0x450 && r <= 0x45F) return r - 80;
  if ((r >= 0x460 && r <= 0x481) || (r >= 0x48A && r <= 0x4BF)) return (r & 1) ? r - 1 : r;
  return r;
}

uint32_t lower(uint32_t r) {
  if (r < 0x80) return (r >= 'A' && r <= 'Z') ? r + 32 : r;
  if (r >= 0xC0 && r <= 0xDE && r != 0xD7) return r + 32;
  if (r == 0x130) return 'i';
  if (r == 0x178) return 0xFF;
  if ((r >= 0x100 && r <= 0x12F) || (r >= 0x132 && r <= 0x137) || (r >= 0x14A && r <= 0x177)) {
    return (r & 1) ? r : r + 1;
  }
  if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17E)) return (r & 1) ? r + 1 : r;
  if (r == 0x386) return 0x3AC;
  if (r >= 0x388 && r <= 0x38A) return r + 37;
  if (r == 0x38C) return 0x3CC;
  if (r == 0x38E || r == 0x38F) return r + 63;
  if (r >= 0x391 && r <= 0x3AB && r != 0x3A2) return r + 32;
  if (r >= 0x410 && r <= 0x42F) return r + 32;
  if (r >= 0x400 && r <= 0x40F) return r + 80;
  if ((r >= 0x460 && r <= 0x481) || (r >= 0x48A && r <= 0x4BF)) return (r & 1) ? r : r + 1;
  return r;
}

bool is_space_rune(uint32_t r) {
  return r == ' ' || (r >= 0x09 && r <= 0x0D) || r == 0x85 || r == 0xA0 || r == 0x1680 ||
         (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 || r == 0x202F ||
         r == 0x205F || r == 0x3000;
}

template <class F>
std::string map_runes(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t w = 0;
    const uint32_t r = core::decode_utf8(s, i, w);
    encode(out, f(r));
    i += w;
  }
  return out;
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

struct SplitHostPort {
  bool ok = false;
  std::string_view host, port;
};

SplitHostPort split_host_port(std::string_view hp) {
  SplitHostPort r;
  const size_t i = hp.rfind(':');
  if (i == std::string_view::npos) return r;
  size_t j = 0, k = 0;
  if (!hp.empty() && hp[0] == '[') {
    const size_t end = hp.find(']');
    if (end == std::string_view::npos) return r;
    if (end + 1 == hp.size()) return r;
    if (end + 1 != i) return r;
    r.host = hp.substr(1, end - 1);
    j = 1;
    k = end + 1;
  } else {
    r.host = hp.substr(0, i);
    if (r.host.find(':') != std::string_view::npos) return r;
  }
  if (hp.find('[', j) != std::string_view::npos) return r;
  if (hp.find(']', k) != std::string_view::npos) return r;
  r.port = hp.substr(i + 1);
  r.ok = true;
  return r;
}

bool parse_ip(std::string_view s) {
  const std::string z(s);
  unsigned char buf[16];
  if (inet_pton(AF_INET, z.c_str(), buf) == 1) return true;
  return inet_pton(AF_INET6, z.c_str(), buf) == 1;
}

const re2::RE2* compile(std::string_view pattern, std::string& err) {
  thread_local std::unordered_map<std::string, std::unique_ptr<re2::RE2>> cache;
  auto it = cache.find(std::string(pattern));
  if (it != cache.end()) {
    if (!it->second->ok()) {
      err = it->second->error();
      return nullptr;
    }
    return it->second.get();
  }
  if (cache.size() > 512) cache.clear();
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), opts);
  const re2::RE2* p = re.get();
  cache.emplace(std::string(pattern), std::move(re));
  if (!p->ok()) {
    err = p->error();
    return nullptr;
  }
  return p;
}

bool is_name_char(uint32_t r) {
  return r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') ||
         r >= 0x80;
}

// Go's regexp.Regexp.expand for a template with $1, ${1}, $name, ${name}, $$.
void expand(std::string& out, std::string_view tmpl, const re2::RE2& re,
            const std::vector<re2::StringPiece>& m) {
  while (!tmpl.empty()) {
    const size_t d = tmpl.find('$');
    if (d == std::string_view::npos) break;
    out.append(tmpl.substr(0, d));
    tmpl.remove_prefix(d + 1);
    if (!tmpl.empty() && tmpl[0] == '$') {
      out.push_back('$');
      tmpl.remove_prefix(1);
      continue;
    }
    // extract
    std::string_view str = tmpl;
    bool brace = false;
    if (!str.empty() && str[0] == '{') {
      brace = true;
      str.remove_prefix(1);
    }
    size_t i = 0;
    while (i < str.size()) {
      size_t w = 0;
      const uint32_t r = core::decode_utf8(str, i, w);
      if (!is_name_char(r)) break;
      i += w;
    }
    if (i == 0 || (brace && (i >= str.size() || str[i] != '}'))) {
      out.push_back('$');
      continue;
    }
    const std::string_view name = str.substr(0, i);
    if (brace) ++i;
    tmpl = str.substr(i);
    long num = 0;
    for (char c : name) {
      if (c < '0' || c > '9' || num >= 100000000) {
        num = -1;
        break;
      }
      num = num * 10 + (c - '0');
    }
    if (name[0] == '0' && name.size() > 1) num = -1;
    if (num >= 0) {
      if (static_cast<size_t>(num) < m.size() && m[static_cast<size_t>(num)].data() != nullptr) {
        out.append(m[static_cast<size_t>(num)].data(), m[static_cast<size_t>(num)].size());
      }
    } else {
      const auto& names = re.NamedCapturingGroups();
      auto it = names.find(std::string(name));
      if (it != names.end() && static_cast<size_t>(it->second) < m.size() &&
          m[static_cast<size_t>(it->second)].data() != nullptr) {
        out.append(m[static_cast<size_t>(it->second)].data(), m[static_cast<size_t>(it->second)].size());
      }
    }
  }
  out.append(tmpl);
}

}  // namespace

void humanize(std::string& out, double v) {
  if (v == 0 || std::isnan(v) || std::isinf(v)) {
    g4(out, v);
    return;
  }
  static const char* const kBig[] = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
  static const char* const kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  const char* prefix = "";
  if (std::fabs(v) >= 1) {
    for (const char* p : kBig) {
      if (std::fabs(v) < 1000) break;
      prefix = p;
      v /= 1000;
    }
  } else {
    for (const char* p : kSmall) {
      if (std::fabs(v) >= 1) break;
      prefix = p;
      v *= 1000;
    }
  }
  g4(out, v);
  out.append(prefix);
}

void humanize1024(std::string& out, double v) {
  if (std::fabs(v) <= 1 || std::isnan(v) || std::isinf(v)) {
    g4(out, v);
    return;
  }
  static const char* const kUnits[] = {"ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"};
  const char* prefix = "";
  for (const char* p : kUnits) {
    if (std::fabs(v) < 1024) break;
    prefix = p;
    v /= 1024;
  }
  g4(out, v);
  out.append(prefix);
}

void humanize_duration(std::string& out, double v) {
  if (std::isnan(v) || std::isinf(v)) {
    g4(out, v);
    return;
  }
  if (v == 0) {
    g4(out, v);
    out.push_back('s');
    return;
  }
  if (std::fabs(v) >= 1) {
    const char* sign = "";
    if (v < 0) {
      sign = "-";
      v = -v;
    }
    const auto n = v >= 9.2e18 ? INT64_MIN : static_cast<int64_t>(v);
    const int64_t seconds = n % 60, minutes = (n / 60) % 60, hours = (n / 60 / 60) % 24,
                  days = n / 60 / 60 / 24;
    out.append(sign);
    auto num = [&](int64_t x, const char* unit) {
      gofmt::append_int(out, x);
      out.append(unit);
    };
    if (days != 0) {
      num(days, "d ");
      num(hours, "h ");
      num(minutes, "m ");
      num(seconds, "s");
      return;
    }
    if (hours != 0) {
      num(hours, "h ");
      num(minutes, "m ");
      num(seconds, "s");
      return;
    }
    if (minutes != 0) {
      num(minutes, "m ");
      num(seconds, "s");
      return;
    }
    g4(out, v);
    out.push_back('s');
    return;
  }
  static const char* const kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  const char* prefix = "";
  for (const char* p : kSmall) {
    if (std::fabs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  g4(out, v);
  out.append(prefix);
  out.push_back('s');
}

void humanize_percentage(std::string& out, double v) {
  g4(out, v * 100);
  out.push_back('%');
}

void unix_float_to_time(double v, int64_t& sec, int64_t& nsec) {
  const double ms = v * 1e3;
  // Go's int64(float) on amd64 yields INT64_MIN when out of range.
  const int64_t msi = (ms >= -9.223372036854775e18 && ms < 9.223372036854775e18) ? static_cast<int64_t>(ms)
                                                                               : INT64_MIN;
  sec = msi / 1000;
  nsec = (msi % 1000) * 1000000;
  if (nsec < 0) {
    nsec += 1000000000;
    --sec;
  }
}

std::string title(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  uint32_t prev = ' ';
  size_t i = 0;
  auto is_sep = [](uint32_t r) {
    if (r <= 0x7F) {
      return !((r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r == '_');
    }
    return is_space_rune(r);
  };
  while (i < s.size()) {
    size_t w = 0;
    const uint32_t r = core::decode_utf8(s, i, w);
    encode(out, is_sep(prev) ? upper(r) : r);
    prev = r;
    i += w;
  }
  return out;
}

std::string to_upper(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    }
    return out;
  }
  return map_runes(s, upper);
}

std::string to_lower(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return out;
  }
  return map_runes(s, lower);
}

namespace {
void url_escape(std::string& out, std::string_view s, bool query) {
  static const char* hex = "0123456789ABCDEF";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    bool escape = !unreserved;
    if (!query && (c == '$' || c == '&' || c == '+' || c == ':' || c == '=' || c == '@')) {
      escape = false;
    }
    if (!escape) {
      out.push_back(ch);
    } else if (c == ' ' && query) {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
    }
  }
}
}  // namespace

void query_escape(std::string& out, std::string_view s) { url_escape(out, s, true); }
void path_escape(std::string& out, std::string_view s) { url_escape(out, s, false); }

void html_builtin(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '"': out.append("&#34;"); break;
      case '\'': out.append("&#39;"); break;
      case '&': out.append("&amp;"); break;
      case '<': out.append("&lt;"); break;
      case '>': out.append("&gt;"); break;
      case '\0': out.append("\xEF\xBF\xBD"); break;
      default: out.push_back(c);
    }
  }
}

void js_builtin(std::string& out, std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\\': out.append("\\\\"); break;
        case '\'': out.append("\\'"); break;
        case '"': out.append("\\\""); break;
        case '<': out.append("\\u003C"); break;
        case '>': out.append("\\u003E"); break;
        case '&': out.append("\\u0026"); break;
        case '=': out.append("\\u003D"); break;
        default:
          if (c < ' ') {
            out.append("\\u00");
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0xF]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    size_t w = 0;
    const uint32_t r = core::decode_utf8(s, i, w);
    if (r == 0xFFFD && w == 1) {
      out.append("\\uFFFD");
    } else {
      out.append(s.substr(i, w));
    }
    i += w;
  }
}

void html_escape(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '<': out.append("&lt;"); break;
      case '>': out.append("&gt;"); break;
      case '"': out.append("&quot;"); break;
      case '\'': out.append("&#39;"); break;
      case '&': out.append("&amp;"); break;
      default: out.push_back(c);
    }
  }
}

void quotes_escape(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '<': out.append("\\u003c"); break;
      case '\'': out.append("\\u0027"); break;
      default:
        if (c < 0x20) {
          out.append("\\u00");
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xF]);
        } else {
          out.push_back(ch);
        }
    }
  }
}

void crlf_escape(std::string& out, std::string_view s) {
  for (char c : s) {
    if (c == '\n') {
      out.append("\\n");
    } else if (c == '\r') {
      out.append("\\r");
    } else {
      out.push_back(c);
    }
  }
}

std::string_view strip_port(std::string_view hp) {
  auto r = split_host_port(hp);
  return r.ok ? r.host : hp;
}

std::string strip_domain(std::string_view hp) {
  auto r = split_host_port(hp);
  std::string_view host = r.ok ? r.host : hp;
  std::string_view port = r.ok ? r.port : std::string_view{};
  if (parse_ip(host)) return std::string(hp);
  host = host.substr(0, host.find('.'));
  if (port.empty()) return std::string(host);
  std::string out;
  if (host.find(':') != std::string_view::npos) {
    out.push_back('[');
    out.append(host).push_back(']');
  } else {
    out = std::string(host);
  }
  out.push_back(':');
  out.append(port);
  return out;
}

std::string_view url_path(std::string_view url) {
  size_t p = url.find("://");
  size_t start = 0;
  if (p != std::string_view::npos) {
    start = url.find('/', p + 3);
    if (start == std::string_view::npos) return {};
  }
  std::string_view rest = url.substr(start);
  const size_t end = rest.find_first_of("?#");
  return rest.substr(0, end);
}

core::Result<bool> regex_match(std::string_view pattern, std::string_view text) {
  std::string err;
  const re2::RE2* re = compile(pattern, err);
  if (re == nullptr) return core::fail("error parsing regexp: " + err);
  return re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re);
}

core::Result<std::string> regex_replace_all(std::string_view pattern, std::string_view repl,
                                            std::string_view src, size_t max_size) {
  std::string err;
  const re2::RE2* re = compile(pattern, err);
  if (re == nullptr) {
    std::string q;
    gofmt::append_quote(q, pattern);
    return core::fail("regexp: Compile(" + q + "): error parsing regexp: " + err);
  }
  const int ngroups = re->NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> m(static_cast<size_t>(ngroups));
  std::string out;
  const re2::StringPiece text(src.data(), src.size());
  size_t last_match_end = 0;
  size_t search_pos = 0;
  while (search_pos <= src.size()) {
    if (!re->Match(text, search_pos, src.size(), re2::RE2::UNANCHORED, m.data(), ngroups)) break;
    const size_t a0 = static_cast<size_t>(m[0].data() - src.data());
    const size_t a1 = a0 + m[0].size();
    out.append(src.substr(last_match_end, a0 - last_match_end));
    if (a1 > last_match_end || a0 == 0) expand(out, repl, *re, m);
    if (out.size() > max_size) {
      return core::fail("result exceeds " + std::to_string(max_size) + " bytes");
    }
    last_match_end = a1;
    size_t width = 0;
    if (search_pos < src.size()) {
      core::decode_utf8(src, search_pos, width);
    }
    if (search_pos + width > a1) {
      search_pos += width;
    } else if (search_pos + 1 > a1) {
      ++search_pos;
    } else {
      search_pos = a1;
    }
  }
  out.append(src.substr(last_match_end));
  if (out.size() > max_size) return core::fail("result exceeds " + std::to_string(max_size) + " bytes");
  return out;
}

}  // namespace templates::tmplfn
