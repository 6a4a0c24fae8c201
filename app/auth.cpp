#include "app/auth.hpp"

#include <strings.h>

#include <string>

#include "net/url.hpp"

namespace app {

namespace {

// The first value of `name` in an urlencoded "a=1&b=2" list.
std::optional<std::string> form_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (net::query_unescape(pair.substr(0, eq)) != name) continue;
    return eq == std::string_view::npos ? std::string{} : net::query_unescape(pair.substr(eq + 1));
  }
  return std::nullopt;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (b.empty() ? 0 : b[i % b.size()]));
  }
  return diff == 0;
}

bool is_form(const net::ServerRequest& req) {
  for (const auto& [name, value] : req.headers) {
    if (name.size() == 12 && ::strncasecmp(name.data(), "content-type", 12) == 0) {
      return value.starts_with("application/x-www-form-urlencoded");
    }
  }
  return false;
}

}  // namespace

std::optional<net::ServerResponse> check_auth_key(const net::ServerRequest& req,
                                                  std::string_view expected,
                                                  std::string_view flag_name) {
  if (expected.empty()) return std::nullopt;
  std::optional<std::string> given;
  if (const size_t q = req.target.find('?'); q != std::string::npos) {
    given = form_value(std::string_view(req.target).substr(q + 1), "authKey");
  }
  if (!given && req.method == "POST" && is_form(req)) given = form_value(req.body, "authKey");
  if (given && constant_time_equal(expected, *given)) return std::nullopt;
  net::ServerResponse denied;
  denied.status = 401;
  denied.body = "The provided authKey doesn't match -" + std::string(flag_name) + "\n";
  return denied;
}

}  // namespace app
