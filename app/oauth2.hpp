// OAuth2 client credentials (RFC 6749 §4.4) in front of any net::Transport, as Go's
// golang.org/x/oauth2/clientcredentials does for vmalert's -datasource.oauth2.*,
// -remoteWrite.oauth2.*, -remoteRead.oauth2.*, -notifier.oauth2.* and the notifier config's
// `oauth2`.
//
// OAuth2Transport::send adds `Authorization: <type> <access_token>` to each request. The token
// is fetched with a POST to token_url (form: grant_type=client_credentials, scope = the scopes
// joined by spaces, the endpoint params; the client id and secret as HTTP basic auth, each
// query-escaped, and, if the server refuses that, in the form, remembered: Go's auth style
// auto-detection), through the wrapped transport itself. It is cached until 10 s before its
// `expires_in` (never, without one) and fetched again on the next request after that. Requests
// that arrive while a token is being fetched wait for it; one fetch serves them all.
//
// Errors: a token that cannot be fetched fails the waiting requests with
// `oauth2: cannot fetch token from "<token_url>": ...`, keeping the kind of the failure
// (timeout, connection; http_status with the token endpoint's status; bad_response for an
// answer without access_token), so the notifier's retry rules treat it like the request's own.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/notifier_config.hpp"
#include "core/error.hpp"
#include "net/transport.hpp"

namespace app {

struct OAuth2Settings {
  std::string client_id;
  std::string client_secret;
  std::string token_url;
  std::vector<std::string> scopes;
  std::vector<std::pair<std::string, std::string>> endpoint_params;
  friend bool operator==(const OAuth2Settings&, const OAuth2Settings&) = default;
};

// From the notifier config's `oauth2` (client_secret_file read now).
[[nodiscard]] core::Result<OAuth2Settings> oauth2_settings(const config::OAuth2Config& c);

// From the -PREFIX.oauth2.* flags; nullopt when none is set. `scopes` is ';'-separated,
// `endpoint_params` a JSON object of strings ({"audience": "x"}). Errors (kind bad_config)
// name the flags: no tokenUrl or clientID, both clientSecret and clientSecretFile, an unreadable
// secret file, bad endpointParams JSON.
struct OAuth2Flags {
  std::string_view prefix;  // "-datasource.oauth2" (and " for -notifier.url #2 ..." context)
  std::string client_id;
  std::string client_secret;
  std::string client_secret_file;
  std::string scopes;
  std::string endpoint_params;
  std::string token_url;
  std::string where;  // appended to error messages (e.g. which -notifier.url)
};
[[nodiscard]] core::Result<std::optional<OAuth2Settings>> oauth2_from_flags(const OAuth2Flags& f);

// The token request's body for `settings` (`in_params`: client id and secret in the form).
[[nodiscard]] std::string oauth2_token_form(const OAuth2Settings& settings, bool in_params);

struct OAuth2Token {
  std::string access_token;
  std::string type = "Bearer";  // as Go's Token.Type(): bearer/mac/basic capitalized
  std::optional<std::chrono::seconds> expires_in;
};
// A token endpoint's 2xx answer: JSON, or a form (application/x-www-form-urlencoded or
// text/plain Content-Type) as Go's oauth2 also reads. No access_token: bad_response.
[[nodiscard]] core::Result<OAuth2Token> parse_oauth2_token(std::string_view body,
                                                           std::string_view content_type);

class OAuth2Transport final : public net::Transport {
 public:
  using Now = std::function<std::chrono::steady_clock::time_point()>;
  // `next` carries both the token requests and the authorized ones; it must outlive every
  // request sent here.
  OAuth2Transport(net::Transport& next, OAuth2Settings settings, Now now = {});
  ~OAuth2Transport() override;
  OAuth2Transport(const OAuth2Transport&) = delete;
  OAuth2Transport& operator=(const OAuth2Transport&) = delete;

  /* Transport */
  void send(net::Request req, net::ResponseHandler done) override;
  // Fails the requests waiting for a token (canceled) and closes `next`.
  void close() override;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace app
