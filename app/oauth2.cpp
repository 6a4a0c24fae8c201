#include "app/oauth2.hpp"

#include <algorithm>
#include <charconv>
#include <deque>
#include <map>
#include <mutex>

#include <rapidjson/document.h>

#include "app/secret_file.hpp"
#include "core/strings.hpp"
#include "net/url.hpp"

namespace app {
namespace {

// Go's oauth2 renews a token this long before it expires.
constexpr std::chrono::seconds kExpiryDelta{10};

core::unexpected<core::Error> bad_config(std::string msg) {
  return core::fail(std::move(msg), core::ErrorKind::bad_config);
}

std::string token_type(std::string_view t) {
  if (t.empty() || core::iequals(t, "bearer")) return "Bearer";
  if (core::iequals(t, "mac")) return "MAC";
  if (core::iequals(t, "basic")) return "Basic";
  return std::string(t);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::chrono::seconds> expires(long long secs) {
  if (secs <= 0) return std::nullopt;
  return std::chrono::seconds(secs);
}

}  // namespace

core::Result<OAuth2Settings> oauth2_settings(const config::OAuth2Config& c) {
  OAuth2Settings s;
  s.client_id = c.client_id;
  s.client_secret = c.client_secret;
  if (!c.client_secret_file.empty()) {
    auto secret = read_secret_file("oauth2.client_secret_file", c.client_secret_file);
    if (!secret) return core::fail(secret.error());
    s.client_secret = std::move(*secret);
  }
  s.token_url = c.token_url;
  s.scopes = c.scopes;
  s.endpoint_params = c.endpoint_params;
  return s;
}

core::Result<std::optional<OAuth2Settings>> oauth2_from_flags(const OAuth2Flags& f) {
  if (f.client_id.empty() && f.client_secret.empty() && f.client_secret_file.empty() &&
      f.scopes.empty() && f.endpoint_params.empty() && f.token_url.empty()) {
    return std::optional<OAuth2Settings>{};
  }
  const std::string p(f.prefix);
  if (f.token_url.empty()) return bad_config(p + ".tokenUrl is not set" + f.where);
  if (f.client_id.empty()) return bad_config(p + ".clientID is not set" + f.where);
  if (!f.client_secret.empty() && !f.client_secret_file.empty()) {
    return bad_config(p + ".clientSecret and " + p + ".clientSecretFile are both set" + f.where);
  }
  if (auto u = net::parse_url(f.token_url); !u) {
    return bad_config(p + ".tokenUrl" + f.where + ": " + u.error().message);
  }
  OAuth2Settings s;
  s.client_id = f.client_id;
  s.client_secret = f.client_secret;
  if (!f.client_secret_file.empty()) {
    auto secret = read_secret_file(p + ".clientSecretFile", f.client_secret_file);
    if (!secret) return core::fail(secret.error());
    s.client_secret = std::move(*secret);
  }
  s.token_url = f.token_url;
  for (std::string_view rest = f.scopes; !rest.empty();) {
    const auto semi = rest.find(';');
    std::string_view scope = rest.substr(0, semi);
    if (!scope.empty()) s.scopes.emplace_back(scope);
    if (semi == std::string_view::npos) break;
    rest.remove_prefix(semi + 1);
  }
  if (!f.endpoint_params.empty()) {
    rapidjson::Document doc;
    doc.Parse(f.endpoint_params.data(), f.endpoint_params.size());
    if (doc.HasParseError() || !doc.IsObject()) {
      return bad_config(p + ".endpointParams" + f.where +
                        ": want a JSON object of strings, e.g. {\"audience\":\"x\"}");
    }
    for (const auto& m : doc.GetObject()) {
      if (!m.value.IsString()) {
        return bad_config(p + ".endpointParams" + f.where + ": the value of \"" +
                          m.name.GetString() + "\" is not a string");
      }
      s.endpoint_params.emplace_back(m.name.GetString(), m.value.GetString());
    }
    std::sort(s.endpoint_params.begin(), s.endpoint_params.end());
  }
  return std::optional<OAuth2Settings>(std::move(s));
}

std::string oauth2_token_form(const OAuth2Settings& s, bool in_params) {
  // url.Values.Encode: keys sorted; endpoint params override the standard ones.
  std::map<std::string, std::string> form;
  form["grant_type"] = "client_credentials";
  if (!s.scopes.empty()) {
    std::string joined;
    for (const auto& scope : s.scopes) joined.append(joined.empty() ? "" : " ").append(scope);
    form["scope"] = joined;
  }
  for (const auto& [k, v] : s.endpoint_params) form[k] = v;
  if (in_params) {
    form["client_id"] = s.client_id;
    if (!s.client_secret.empty()) form["client_secret"] = s.client_secret;
  }
  std::string out;
  for (const auto& [k, v] : form) {
    if (!out.empty()) out.push_back('&');
    net::append_query_escaped(out, k);
    out.push_back('=');
    net::append_query_escaped(out, v);
  }
  return out;
}

core::Result<OAuth2Token> parse_oauth2_token(std::string_view body, std::string_view content_type) {
  OAuth2Token t;
  std::string_view type;
  const auto semi = content_type.find(';');
  const std::string_view media = trim(content_type.substr(0, semi));
  std::string type_owned;
  if (core::iequals(media, "application/x-www-form-urlencoded") ||
      core::iequals(media, "text/plain")) {
    for (std::string_view rest = body; !rest.empty();) {
      const auto amp = rest.find('&');
      const std::string_view kv = rest.substr(0, amp);
      const auto eq = kv.find('=');
      const std::string key = net::query_unescape(kv.substr(0, eq));
      const std::string value =
          eq == std::string_view::npos ? std::string() : net::query_unescape(kv.substr(eq + 1));
      if (key == "access_token") {
        t.access_token = value;
      } else if (key == "token_type") {
        type_owned = value;
      } else if (key == "expires_in") {
        long long secs = 0;
        std::from_chars(value.data(), value.data() + value.size(), secs);
        t.expires_in = expires(secs);
      }
      if (amp == std::string_view::npos) break;
      rest.remove_prefix(amp + 1);
    }
    type = type_owned;
  } else {
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError() || !doc.IsObject()) {
      return core::fail("cannot parse the token endpoint's answer as JSON",
                        core::ErrorKind::bad_response);
    }
    if (auto it = doc.FindMember("access_token"); it != doc.MemberEnd() && it->value.IsString()) {
      t.access_token = it->value.GetString();
    }
    if (auto it = doc.FindMember("token_type"); it != doc.MemberEnd() && it->value.IsString()) {
      type_owned = it->value.GetString();
      type = type_owned;
    }
    if (auto it = doc.FindMember("expires_in"); it != doc.MemberEnd()) {
      // A number, or (some servers) a string holding one, as Go's expirationTime accepts.
      if (it->value.IsNumber()) {
        t.expires_in = expires(static_cast<long long>(it->value.GetDouble()));
      } else if (it->value.IsString()) {
        const std::string_view v(it->value.GetString(), it->value.GetStringLength());
        long long secs = 0;
        std::from_chars(v.data(), v.data() + v.size(), secs);
        t.expires_in = expires(secs);
      }
    }
  }
  if (t.access_token.empty()) {
    return core::fail("server response missing access_token", core::ErrorKind::bad_response);
  }
  t.type = token_type(type);
  return t;
}

// --- OAuth2Transport ---

struct OAuth2Transport::State : std::enable_shared_from_this<OAuth2Transport::State> {
  net::Transport& next;
  OAuth2Settings settings;
  Now now;

  std::mutex mu;
  std::string authorization;  // "Bearer abc"; empty: none yet
  std::optional<std::chrono::steady_clock::time_point> renew_at;  // nullopt: never expires
  bool fetching = false;
  bool in_params = false;  // the server wants client id and secret in the form
  bool closed = false;
  std::deque<std::pair<net::Request, net::ResponseHandler>> waiting;

  State(net::Transport& n, OAuth2Settings s, Now clock)
      : next(n), settings(std::move(s)), now(std::move(clock)) {}

  static void authorize(net::Request& req, const std::string& value) {
    std::erase_if(req.headers, [](const auto& h) { return core::iequals(h.first, "Authorization"); });
    req.headers.emplace_back("Authorization", value);
  }

  void fetch(bool params, std::chrono::milliseconds timeout) {
    net::Request req;
    req.method = "POST";
    req.url = settings.token_url;
    req.display_url = net::redact_url(settings.token_url);
    req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    req.headers.emplace_back("Accept", "application/json");
    if (!params) {
      req.headers.emplace_back(
          "Authorization", "Basic " + net::base64_encode(net::query_escape(settings.client_id) +
                                                          ":" +
                                                          net::query_escape(settings.client_secret)));
    }
    req.body = oauth2_token_form(settings, params);
    req.timeout = timeout;
    req.max_response_bytes = size_t{1} << 20;
    next.send(std::move(req), [self = shared_from_this(), params,
                               timeout](core::Result<net::Response> r) {
      self->on_token(std::move(r), params, timeout);
    });
  }

  void on_token(core::Result<net::Response> r, bool params, std::chrono::milliseconds timeout) {
    const std::string what =
        "oauth2: cannot fetch token from \"" + net::redact_url(settings.token_url) + "\"";
    std::optional<core::Error> error;
    std::optional<OAuth2Token> token;
    if (!r) {
      error = r.error().wrap(what);
    } else if (r->status < 200 || r->status > 299) {
      // Go's auto-detection: a refused basic-auth attempt is tried again with the credentials
      // in the form.
      bool probe = false;
      {
        std::lock_guard lock(mu);
        probe = !params && !in_params && !closed;
      }
      if (probe) {
        fetch(true, timeout);
        return;
      }
      std::string body = r->body.substr(0, 512);
      error = core::Error{what + ": unexpected status " + std::to_string(r->status) +
                              (body.empty() ? "" : ": " + body),
                          core::ErrorKind::http_status, r->status};
    } else {
      std::string content_type;
      for (const auto& [k, v] : r->headers) {
        if (core::iequals(k, "Content-Type")) content_type = v;
      }
      auto t = parse_oauth2_token(r->body, content_type);
      if (t) {
        token = std::move(*t);
      } else {
        error = t.error().wrap(what);
      }
    }
    std::deque<std::pair<net::Request, net::ResponseHandler>> go;
    std::string fresh;
    {
      std::lock_guard lock(mu);
      fetching = false;
      go.swap(waiting);
      if (token) {
        if (params) in_params = true;
        authorization = token->type + " " + token->access_token;
        renew_at.reset();
        if (token->expires_in) renew_at = now() + *token->expires_in - kExpiryDelta;
        fresh = authorization;
      }
    }
    for (auto& [req, done] : go) {
      if (error) {
        done(core::fail(*error));
        continue;
      }
      authorize(req, fresh);
      next.send(std::move(req), std::move(done));
    }
  }
};

OAuth2Transport::OAuth2Transport(net::Transport& next, OAuth2Settings settings, Now now)
    : state_(std::make_shared<State>(
          next, std::move(settings),
          now ? std::move(now) : Now([] { return std::chrono::steady_clock::now(); }))) {}

OAuth2Transport::~OAuth2Transport() = default;

void OAuth2Transport::send(net::Request req, net::ResponseHandler done) {
  auto& s = *state_;
  std::string authorization;
  bool queued = false;
  bool start = false;
  bool in_params = false;
  const auto timeout = req.timeout;
  {
    std::lock_guard lock(s.mu);
    if (!s.closed && (s.authorization.empty() || (s.renew_at && s.now() >= *s.renew_at))) {
      s.waiting.emplace_back(std::move(req), std::move(done));
      queued = true;
      start = !s.fetching;
      s.fetching = true;
      in_params = s.in_params;
    } else {
      authorization = s.authorization;  // closed: sent as is, `next` fails it as canceled
    }
  }
  if (queued) {
    if (start) s.fetch(in_params, timeout);
    return;
  }
  if (!authorization.empty()) State::authorize(req, authorization);
  s.next.send(std::move(req), std::move(done));
}

void OAuth2Transport::close() {
  auto& s = *state_;
  std::deque<std::pair<net::Request, net::ResponseHandler>> go;
  {
    std::lock_guard lock(s.mu);
    s.closed = true;
    go.swap(s.waiting);
  }
  for (auto& [req, done] : go) done(core::fail("client is closed", core::ErrorKind::canceled));
  s.next.close();
}

}  // namespace app
