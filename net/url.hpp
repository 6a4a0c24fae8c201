// net::Url: the parts of an absolute http(s) URL that the client needs, plus the helpers that
// keep secrets out of messages (redact_url) and build query strings (query_escape).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace net {

struct Url {
  std::string scheme;    // "http" or "https"
  std::string host;      // without brackets for IPv6 literals: "::1"
  uint16_t port = 0;     // explicit or the scheme's default
  std::string target;    // path plus "?query", "/" when empty; no fragment
  std::string userinfo;  // "user:pass" as written (escapes kept) when present; never print it

  [[nodiscard]] bool tls() const { return scheme == "https"; }
  // "host:port" with IPv6 literals in brackets: the Host header and the pool key use it.
  [[nodiscard]] std::string host_port() const;
};

// Parses "http://[user:pass@]host[:port][/path][?query][#fragment]" (https too). The userinfo
// is checked as Go's url.Parse does (allowed characters, valid %XX escapes). Errors name the URL
// with its userinfo removed and have kind bad_config.
core::Result<Url> parse_url(std::string_view url);

// The Authorization value for a URL's userinfo, as Go's http.Client sends it: user and password
// split at the first ':', each %XX-decoded ('+' stays '+'), "Basic base64(user:password)".
std::string basic_auth_from_userinfo(std::string_view userinfo);

// The URL without userinfo ("http://user:pass@h/x" -> "http://h/x"); unparsable input is
// returned with everything before the last '@' of its authority removed.
std::string redact_url(std::string_view url);

// A query argument or header whose name contains auth, pass, key, secret or token (any case):
// vmalert's UI hides such headers; alertd also hides such query arguments in URLs it shows.
bool looks_secret(std::string_view name);

// redact_url, and the value of every query argument whose name looks_secret() replaced by
// "secret": "http://u:p@am/x?token=abc&a=1" -> "http://am/x?token=secret&a=1". The rest of
// the URL is kept as written.
std::string redact_url_secrets(std::string_view url);

// Percent-encodes a query component as Go's url.QueryEscape does (space -> '+').
std::string query_escape(std::string_view s);
void append_query_escaped(std::string& out, std::string_view s);

// Percent-decoding of a query component ('+' -> space); invalid escapes are kept verbatim.
std::string query_unescape(std::string_view s);

// Splits a -*.headers flag value ("K: v^^K2: v2"), names and values trimmed of blanks; an
// entry without ':' is an error (kind bad_config) that names its position but not its content
// (values may be secrets).
core::Result<std::vector<std::pair<std::string, std::string>>> parse_header_list(
    std::string_view list);

// Standard base64 with padding (basic auth headers).
std::string base64_encode(std::string_view data);

}  // namespace net
