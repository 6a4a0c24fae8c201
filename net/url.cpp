// URL parsing and encoding helpers (no I/O).
#include "net/url.hpp"

#include <charconv>

#include "core/strings.hpp"

namespace net {

std::string Url::host_port() const {
  std::string out;
  if (host.find(':') != std::string::npos) {
    out.append("[").append(host).append("]");
  } else {
    out.append(host);
  }
  out.append(":").append(std::to_string(port));
  return out;
}

namespace {

std::string_view trim_blank(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Go's validUserinfo (RFC 3986 unreserved, sub-delims, ':', '%', '@'), then every '%' must
// start a valid escape (Go's unescape in encodeUserPassword mode).
bool valid_userinfo(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-._:~!$&'()*+,;=%@").find(c) != std::string_view::npos;
    if (!ok) return false;
    if (c == '%' &&
        (i + 2 >= s.size() || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0)) {
      return false;
    }
  }
  return true;
}

// %XX-decoding without the query rule ('+' stays '+'); invalid escapes are kept verbatim.
std::string userinfo_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

std::string basic_auth_from_userinfo(std::string_view userinfo) {
  const size_t colon = userinfo.find(':');
  std::string plain = userinfo_unescape(userinfo.substr(0, colon));
  plain.push_back(':');
  if (colon != std::string_view::npos) plain += userinfo_unescape(userinfo.substr(colon + 1));
  return "Basic " + base64_encode(plain);
}

bool looks_secret(std::string_view name) {
  for (const char* word : {"auth", "pass", "key", "secret", "token"}) {
    if (core::icontains(name, word)) return true;
  }
  return false;
}

std::string redact_url_secrets(std::string_view url) {
  std::string out = redact_url(url);
  const size_t hash = out.find('#');
  const size_t qmark = out.find('?');
  if (qmark == std::string::npos || (hash != std::string::npos && hash < qmark)) return out;
  const size_t query_end = hash == std::string::npos ? out.size() : hash;
  std::string redacted = out.substr(0, qmark + 1);
  std::string_view query = std::string_view(out).substr(qmark + 1, query_end - qmark - 1);
  bool first = true;
  while (true) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!first) redacted.push_back('&');
    first = false;
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && looks_secret(query_unescape(pair.substr(0, eq)))) {
      redacted.append(pair.substr(0, eq + 1)).append("secret");
    } else {
      redacted.append(pair);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  redacted.append(std::string_view(out).substr(query_end));
  return redacted;
}

std::string redact_url(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t auth_begin = scheme_end + 3;
  size_t auth_end = url.find_first_of("/?#", auth_begin);
  if (auth_end == std::string_view::npos) auth_end = url.size();
  const std::string_view authority = url.substr(auth_begin, auth_end - auth_begin);
  const size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, auth_begin));
  out.append(authority.substr(at + 1)).append(url.substr(auth_end));
  return out;
}

core::Result<Url> parse_url(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return core::fail("invalid URL \"" + redact_url(url) + "\": " + std::string(why),
                      core::ErrorKind::bad_config);
  };
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return bad("missing scheme (want http:// or https://)");
  Url out;
  out.scheme = core::ascii_lower(url.substr(0, scheme_end));
  if (out.scheme != "http" && out.scheme != "https") {
    return bad("unsupported scheme \"" + out.scheme + "\" (want http or https)");
  }
  const size_t auth_begin = scheme_end + 3;
  size_t auth_end = url.find_first_of("/?#", auth_begin);
  if (auth_end == std::string_view::npos) auth_end = url.size();
  std::string_view authority = url.substr(auth_begin, auth_end - auth_begin);
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    out.userinfo = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
    if (!valid_userinfo(out.userinfo)) return bad("invalid userinfo");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("missing ']' in IPv6 host");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad("unexpected text after IPv6 host");
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      out.host = std::string(authority.substr(0, colon));
      port_text = authority.substr(colon + 1);
    } else {
      out.host = std::string(authority);
    }
  }
  if (out.host.empty()) return bad("missing host");
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || ptr != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      return bad("invalid port \"" + std::string(port_text) + "\"");
    }
    out.port = static_cast<uint16_t>(port);
  } else {
    out.port = out.tls() ? 443 : 80;
  }
  std::string_view rest = url.substr(auth_end);
  const size_t hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  if (rest.empty() || rest.front() == '?') out.target.push_back('/');
  out.target.append(rest);
  return out;
}

void append_query_escaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
}

std::string query_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_query_escaped(out, s);
  return out;
}

std::string query_unescape(std::string_view s) {
  const auto hex = hex_value;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() &&
               hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string base64_encode(std::string_view data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const uint32_t v = (static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16) |
                       (static_cast<uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8) |
                       static_cast<uint32_t>(static_cast<unsigned char>(data[i + 2]));
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  const size_t rest = data.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16;
    if (rest == 2) v |= static_cast<uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

core::Result<std::vector<std::pair<std::string, std::string>>> parse_header_list(
    std::string_view list) {
  std::vector<std::pair<std::string, std::string>> out;
  if (trim_blank(list).empty()) return out;
  size_t index = 0;
  while (true) {
    const size_t sep = list.find("^^");
    const std::string_view item = list.substr(0, sep);
    ++index;
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return core::fail("header #" + std::to_string(index) +
                            " has no ':'; expecting \"Name: value\" entries separated by \"^^\"",
                        core::ErrorKind::bad_config);
    }
    const std::string_view name = trim_blank(item.substr(0, colon));
    if (name.empty()) {
      return core::fail("header #" + std::to_string(index) + " has an empty name",
                        core::ErrorKind::bad_config);
    }
    out.emplace_back(std::string(name), std::string(trim_blank(item.substr(colon + 1))));
    if (sep == std::string_view::npos) break;
    list.remove_prefix(sep + 2);
  }
  return out;
}

}  // namespace net
