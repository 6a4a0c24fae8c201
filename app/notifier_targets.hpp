// -notifier.url and its per-URL flags, turned into Alertmanager clients.
//
// Every -notifier.* auth, header and TLS flag is an array index-matched to -notifier.url, as
// vmalert's flagutil arrays: the i-th value goes with the i-th URL, a single value goes with
// every URL (app::optional_arg). Secret files are read once, here, at start
// (app::read_secret_file). A URL's own userinfo ("http://user:pass@am") is sent as basic auth
// when no -notifier.basicAuth.* / bearer flag applies to it.
#pragma once

#include <memory>
#include <vector>

#include "app/flags.hpp"
#include "app/oauth2.hpp"
#include "core/error.hpp"
#include "net/http_client.hpp"
#include "core/clock.hpp"
#include "notifier/alertmanager_client.hpp"
#include "notifier/delivery_queue.hpp"

namespace app {

struct NotifierEndpoint {
  notifier::AlertmanagerTarget target;
  net::TlsOptions tls;
  std::optional<OAuth2Settings> oauth2;  // -notifier.oauth2.*
};

// One endpoint per -notifier.url. Errors (kind bad_config) name the flag, and the URL by its
// position and redacted text: a bad URL, password and passwordFile (or bearerToken and
// bearerTokenFile) both set, basic auth and a bearer token both set, an unreadable secret or
// TLS file, a bad -notifier.headers entry, incomplete -notifier.oauth2.* or oauth2 with basic
// auth or a bearer token.
[[nodiscard]] core::Result<std::vector<NotifierEndpoint>> notifier_endpoints(const Flags& flags);

// The delivery-queue options from -notifier.maxQueueSize, .maxBatchSize, .concurrency,
// .retryMinInterval, .retryMaxInterval, .retryMaxTime (bad_config when one is not positive);
// retryMaxTime is raised to twice -rule.resendDelay when that is longer.
// Failures are logged (retries at WARN, losses at ERROR).
[[nodiscard]] core::Result<notifier::DeliveryOptions> delivery_options(const Flags& flags);

// The notifiers the daemon sends to (-notifier.blackhole, or per -notifier.url an
// AlertmanagerClient behind its own DeliveryQueue), each URL with an HTTP client of its own
// because TLS settings are per URL. Owns the clients: keep it alive until the loop has drained,
// after close().
class NotifierClients {
 public:
  // `clock` runs the queues' retry timers: the loop `io` runs.
  [[nodiscard]] static core::Result<std::unique_ptr<NotifierClients>> create(
      boost::asio::io_context& io, core::Clock& clock, const Flags& flags);

  [[nodiscard]] const std::vector<std::shared_ptr<notifier::Notifier>>& notifiers() const {
    return notifiers_;
  }
  // Drops what the queues hold, fails requests in flight and closes connections (shutdown).
  void close();

 private:
  NotifierClients() = default;

  std::vector<std::unique_ptr<net::HttpClient>> transports_;
  // After transports_: destroyed first (each wraps one of them).
  std::vector<std::unique_ptr<OAuth2Transport>> oauth2_;
  std::vector<std::shared_ptr<notifier::Notifier>> notifiers_;
  std::vector<std::shared_ptr<notifier::DeliveryQueue>> queues_;
};

}  // namespace app
