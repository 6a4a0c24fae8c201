// Auth-key checks for protected endpoints, as VictoriaMetrics' httpserver.CheckAuthFlag:
// with -reloadAuthKey set, /-/reload needs `authKey=<key>` in the query string (or in an
// application/x-www-form-urlencoded POST body); otherwise it answers 401.
#pragma once

#include <optional>
#include <string_view>

#include "net/http_server.hpp"

namespace app {

// nullopt when the request may proceed (no key configured, or the right one given); otherwise
// the 401 answer: "The provided authKey doesn't match -<flag_name>". The comparison takes the
// same time whatever the given key is.
[[nodiscard]] std::optional<net::ServerResponse> check_auth_key(const net::ServerRequest& req,
                                                                std::string_view expected,
                                                                std::string_view flag_name);

}  // namespace app
