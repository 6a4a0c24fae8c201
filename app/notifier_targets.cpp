#include "app/notifier_targets.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

#include "app/memory.hpp"
#include "app/secret_file.hpp"
#include "net/url.hpp"

namespace app {
namespace {

core::unexpected<core::Error> bad(std::string msg) {
  return core::fail(std::move(msg), core::ErrorKind::bad_config);
}

// TLS files are loaded by the client at the first request; a missing one is reported at start.
std::optional<core::Error> check_readable(std::string_view flag, const std::string& path,
                                          const std::string& where) {
  if (path.empty()) return std::nullopt;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return core::Error{std::string(flag) + where + ": cannot read \"" + path +
                           "\": " + std::strerror(errno),
                       core::ErrorKind::bad_config};
  }
  std::fclose(f);
  return std::nullopt;
}

}  // namespace

core::Result<std::vector<NotifierEndpoint>> notifier_endpoints(const Flags& flags) {
  std::vector<NotifierEndpoint> out;
  const auto timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.notifier_send_timeout);
  for (size_t i = 0; i < flags.notifier_url.size(); ++i) {
    const std::string& url = flags.notifier_url[i];
    const std::string shown = flags.notifier_show_url ? url : net::redact_url_secrets(url);
    // " for -notifier.url #2 "http://am2:9093"": which URL a per-URL flag problem is about.
    const std::string where =
        " for -notifier.url #" + std::to_string(i + 1) + " \"" + shown + "\"";
    if (auto parsed = net::parse_url(url); !parsed) {
      return bad("-notifier.url #" + std::to_string(i + 1) + ": " + parsed.error().message);
    }

    NotifierEndpoint e;
    auto& t = e.target;
    t.url = url;
    t.show_url = flags.notifier_show_url;
    t.timeout = timeout;
    t.basic_auth_username = optional_arg(flags.notifier_basic_auth_username, i);
    t.basic_auth_password = optional_arg(flags.notifier_basic_auth_password, i);
    const std::string password_file = optional_arg(flags.notifier_basic_auth_password_file, i);
    if (!password_file.empty()) {
      if (!t.basic_auth_password.empty()) {
        return bad("-notifier.basicAuth.password and -notifier.basicAuth.passwordFile are both "
                   "set" + where);
      }
      auto secret = read_secret_file("-notifier.basicAuth.passwordFile", password_file);
      if (!secret) return core::fail(secret.error());
      t.basic_auth_password = std::move(*secret);
    }
    t.bearer_token = optional_arg(flags.notifier_bearer_token, i);
    const std::string token_file = optional_arg(flags.notifier_bearer_token_file, i);
    if (!token_file.empty()) {
      if (!t.bearer_token.empty()) {
        return bad("-notifier.bearerToken and -notifier.bearerTokenFile are both set" + where);
      }
      auto secret = read_secret_file("-notifier.bearerTokenFile", token_file);
      if (!secret) return core::fail(secret.error());
      t.bearer_token = std::move(*secret);
    }
    const bool basic = !t.basic_auth_username.empty() || !t.basic_auth_password.empty() ||
                       !password_file.empty();
    const bool bearer = !t.bearer_token.empty() || !token_file.empty();
    if (basic && bearer) {
      return bad("-notifier.basicAuth.* and -notifier.bearerToken(File) are both set" + where +
                 ": use one auth method");
    }
    auto oauth2 = oauth2_from_flags(OAuth2Flags{
        "-notifier.oauth2", optional_arg(flags.notifier_oauth2_client_id, i),
        optional_arg(flags.notifier_oauth2_client_secret, i),
        optional_arg(flags.notifier_oauth2_client_secret_file, i),
        optional_arg(flags.notifier_oauth2_scopes, i),
        optional_arg(flags.notifier_oauth2_endpoint_params, i),
        optional_arg(flags.notifier_oauth2_token_url, i), where});
    if (!oauth2) return core::fail(oauth2.error());
    if (*oauth2 && (basic || bearer)) {
      return bad("-notifier.oauth2.* and -notifier.basicAuth.* or -notifier.bearerToken(File) are "
                 "both set" + where + ": use one auth method");
    }
    e.oauth2 = std::move(*oauth2);
    auto headers = net::parse_header_list(optional_arg(flags.notifier_headers, i));
    if (!headers) return bad("-notifier.headers" + where + ": " + headers.error().message);
    t.headers = std::move(*headers);

    e.tls.ca_file = optional_arg(flags.notifier_tls_ca_file, i);
    e.tls.cert_file = optional_arg(flags.notifier_tls_cert_file, i);
    e.tls.key_file = optional_arg(flags.notifier_tls_key_file, i);
    e.tls.server_name = optional_arg(flags.notifier_tls_server_name, i);
    e.tls.insecure_skip_verify = optional_arg(flags.notifier_tls_insecure_skip_verify, i);
    for (const auto& [flag, path] : {std::pair{"-notifier.tlsCAFile", &e.tls.ca_file},
                                     std::pair{"-notifier.tlsCertFile", &e.tls.cert_file},
                                     std::pair{"-notifier.tlsKeyFile", &e.tls.key_file}}) {
      if (auto err = check_readable(flag, *path, where)) return core::fail(std::move(*err));
    }
    out.push_back(std::move(e));
  }
  return out;
}

core::Result<notifier::DeliveryOptions> delivery_options(const Flags& flags) {
  if (flags.notifier_max_queue_size <= 0 || flags.notifier_max_batch_size <= 0 ||
      flags.notifier_concurrency <= 0) {
    return bad(
        "-notifier.maxQueueSize, -notifier.maxBatchSize and -notifier.concurrency must be "
        "positive");
  }
  if (flags.notifier_retry_min_interval <= core::Duration::zero() ||
      flags.notifier_retry_max_interval <= core::Duration::zero() ||
      flags.notifier_retry_max_time <= core::Duration::zero()) {
    return bad(
        "-notifier.retryMinInterval, -notifier.retryMaxInterval and -notifier.retryMaxTime must "
        "be positive");
  }
  notifier::DeliveryOptions o;
  o.max_queue_size = static_cast<size_t>(flags.notifier_max_queue_size);
  o.max_batch_size = static_cast<size_t>(flags.notifier_max_batch_size);
  o.concurrency = static_cast<size_t>(flags.notifier_concurrency);
  // A round's notifications are gone once the queue drains: a chance to give them back. After
  // a backlog (Alertmanager failing), the heap in use shrinks without RSS growing: a full check.
  o.on_drained = [](bool backlog) { memory_releaser().after_work(backlog); };
  o.retry_min_interval = flags.notifier_retry_min_interval;
  o.retry_max_interval = std::max(flags.notifier_retry_max_interval, o.retry_min_interval);
  // A resolved alert's endsAt is in the past: the rule re-sends it every -rule.resendDelay (for
  // 15 minutes), so it is held at least two resend delays, until the next copy replaces it.
  o.retry_max_time = std::max(flags.notifier_retry_max_time, 2 * flags.rule_resend_delay);
  o.log = [](bool error, std::string_view m) {
    if (error) {
      SPDLOG_ERROR("notifier: {}", m);
    } else {
      SPDLOG_WARN("notifier: {}", m);
    }
  };
  return o;
}

core::Result<std::unique_ptr<NotifierClients>> NotifierClients::create(
    boost::asio::io_context& io, core::Clock& clock, const Flags& flags) {
  std::unique_ptr<NotifierClients> out(new NotifierClients());
  if (flags.notifier_blackhole) {
    out->notifiers_.push_back(std::make_shared<notifier::BlackholeNotifier>());
    return out;
  }
  auto delivery = delivery_options(flags);
  if (!delivery) return core::fail(delivery.error());
  auto endpoints = notifier_endpoints(flags);
  if (!endpoints) return core::fail(endpoints.error());
  std::random_device seed;
  for (auto& e : *endpoints) {
    net::ClientOptions options;
    options.tls = std::move(e.tls);
    net::Transport* http =
        out->transports_.emplace_back(std::make_unique<net::HttpClient>(io, options)).get();
    if (e.oauth2) {
      http = out->oauth2_.emplace_back(std::make_unique<OAuth2Transport>(*http, *e.oauth2)).get();
    }
    auto client = std::make_shared<notifier::AlertmanagerClient>(*http, std::move(e.target));
    notifier::DeliveryOptions o = *delivery;
    o.seed = (static_cast<uint64_t>(seed()) << 32) ^ seed();
    auto queue = std::make_shared<notifier::DeliveryQueue>(clock, std::move(client), std::move(o));
    out->queues_.push_back(queue);
    out->notifiers_.push_back(std::move(queue));
  }
  return out;
}

void NotifierClients::close() {
  for (auto& q : queues_) q->close();
  for (auto& t : transports_) t->close();
}

}  // namespace app
