// Auth-key checks for protected endpoints, as VictoriaMetrics' httpserver.CheckAuthFlag:
// with -reloadAuthKey set, /-/reload needs `authKey=<key>` in the query string (or in an
// application/x-www-form-urlencoded POST body); otherwise it answers 401.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http_server.hpp"

namespace app {

// nullopt when the request may proceed (no key configured, or the right one given); otherwise
// the 401 answer: "The provided authKey doesn't match -<flag_name>". The comparison takes the
// same time whatever the given key is.
[[nodiscard]] std::optional<net::ServerResponse> check_auth_key(const net::ServerRequest& req,
                                                                std::string_view expected,
                                                                std::string_view flag_name);

// What stands in front of every HTTP handler, as VictoriaMetrics' httpserver.handlerWrapper:
//   -http.pathPrefix  every path must start with it (else 400); it is cut off before routing
//   /health, /ping, /-/healthy, /-/ready   answered without auth (probes)
//   /metrics, /flags, /debug/pprof/*
//                     with -metricsAuthKey / -flagsAuthKey / -pprofAuthKey set, the authKey
//                     query arg must match it (basic auth is then not asked); otherwise as
//                     every path. /flags and /debug/pprof/* are answered here (app/pprof.hpp).
//   everything else   with -httpAuth.username set, basic auth (401 with WWW-Authenticate);
//                     /-/reload with -reloadAuthKey set skips it (the handler checks the key)
struct ServerGuard {
  std::string path_prefix;  // normalised: "" or "/foo/bar" (no trailing slash)
  std::string username;
  std::string password;
  std::string metrics_auth_key;
  std::string flags_auth_key;
  std::string pprof_auth_key;
  std::string reload_auth_key;
  std::vector<std::string> flags_lines;  // the /flags body, one "-name=\"value\"" per line
  // -http.header.*: added to every response (empty = not sent).
  std::string header_csp;
  std::string header_frame_options;
  std::string header_hsts;
  // -http.shutdownDelay: while true, /health answers 503 (the handler sees /-/ready itself).
  const std::atomic<bool>* delayed_shutdown = nullptr;
};

[[nodiscard]] net::ServerResponse guarded_request(const ServerGuard& guard,
                                                  const net::ServerRequest& req,
                                                  const net::RequestHandler& next);

}  // namespace app
