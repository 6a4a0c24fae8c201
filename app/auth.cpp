#include "app/auth.hpp"

#include <strings.h>

#include <string>

#include "app/pprof.hpp"
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

namespace {

std::optional<net::ServerResponse> check_basic_auth(const ServerGuard& guard,
                                                    const net::ServerRequest& req) {
  if (guard.username.empty()) return std::nullopt;
  const std::string expected =
      "Basic " + net::base64_encode(guard.username + ":" + guard.password);
  for (const auto& [name, value] : req.headers) {
    if (name.size() == 13 && ::strncasecmp(name.data(), "authorization", 13) == 0 &&
        constant_time_equal(expected, value)) {
      return std::nullopt;
    }
  }
  net::ServerResponse denied;
  denied.status = 401;
  denied.body = "Unauthorized\n";
  denied.headers.emplace_back("WWW-Authenticate", "Basic realm=\"Restricted\"");
  return denied;
}

}  // namespace

namespace {

net::ServerResponse route(const ServerGuard& guard, const net::ServerRequest& req,
                          const net::RequestHandler& next) {
  const net::ServerRequest* r = &req;
  net::ServerRequest trimmed;
  if (!guard.path_prefix.empty()) {
    const std::string_view target = req.target;
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == guard.path_prefix) {
      net::ServerResponse redirect;
      redirect.status = 302;
      redirect.headers.emplace_back("Location", guard.path_prefix + "/");
      return redirect;
    }
    if (!target.starts_with(guard.path_prefix + "/")) {
      net::ServerResponse bad;
      bad.status = 400;
      bad.body = "missing -http.pathPrefix=\"" + guard.path_prefix + "\" in the requested path \"" +
                 std::string(path) + "\"\n";
      return bad;
    }
    trimmed = req;
    trimmed.target.erase(0, guard.path_prefix.size());
    r = &trimmed;
  }
  const std::string_view target = r->target;
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/health" && guard.delayed_shutdown != nullptr && guard.delayed_shutdown->load()) {
    net::ServerResponse unhealthy;
    unhealthy.status = 503;
    unhealthy.body = "The server is in delayed shutdown mode\n";
    return unhealthy;
  }
  if (path == "/health" || path == "/ping" || path == "/-/healthy" || path == "/-/ready") {
    return next(*r);
  }
  constexpr std::string_view kPprof = "/debug/pprof/";
  const bool pprof = path.starts_with(kPprof);
  if (path == "/metrics" || path == "/flags" || pprof) {
    const std::string& key = pprof                ? guard.pprof_auth_key
                             : path == "/metrics" ? guard.metrics_auth_key
                                                  : guard.flags_auth_key;
    const std::string_view flag = pprof                ? "pprofAuthKey"
                                  : path == "/metrics" ? "metricsAuthKey"
                                                       : "flagsAuthKey";
    if (!key.empty()) {
      if (auto denied = check_auth_key(*r, key, flag)) return *denied;
    } else if (auto denied = check_basic_auth(guard, *r)) {
      return *denied;
    }
    if (pprof) return pprof_response(path.substr(kPprof.size()));
    if (path == "/metrics") return next(*r);
    net::ServerResponse flags;
    for (const auto& line : guard.flags_lines) flags.body.append(line).append("\n");
    return flags;
  }
  if (!(path == "/-/reload" && !guard.reload_auth_key.empty())) {
    if (auto denied = check_basic_auth(guard, *r)) return *denied;
  }
  return next(*r);
}

}  // namespace

net::ServerResponse guarded_request(const ServerGuard& guard, const net::ServerRequest& req,
                                    const net::RequestHandler& next) {
  net::ServerResponse resp = route(guard, req, next);
  if (!guard.header_csp.empty()) resp.headers.emplace_back("Content-Security-Policy", guard.header_csp);
  if (!guard.header_frame_options.empty()) {
    resp.headers.emplace_back("X-Frame-Options", guard.header_frame_options);
  }
  if (!guard.header_hsts.empty()) {
    resp.headers.emplace_back("Strict-Transport-Security", guard.header_hsts);
  }
  return resp;
}

}  // namespace app
