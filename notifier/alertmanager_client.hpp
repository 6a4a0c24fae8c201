// notifier::AlertmanagerClient: POSTs alert batches to one Alertmanager (`<url>/api/v2/alerts`)
// through a net::Transport, and counts them. notifier::BlackholeNotifier: counts, sends nothing.
//
// Errors (SendDone and stats().last_error), all prefixed with the target:
//   failed to send alerts to addr "<addr>": Post "<addr>": <transport error>   (net's text)
//   failed to send alerts to addr "<addr>": invalid SC 500 from "<addr>"; response body: <body>
// where <addr> is addr(): the POST URL (vmalert's Addr()) with its userinfo removed and the
// values of secret-looking query arguments replaced by "secret", unless show_url
// (-notifier.showURL). The body is clipped to core::kMaxErrorBody. Any 2xx is success. Errors
// keep the transport's kind (timeout, connection) or are http_status with the code, for the
// retry decision of notifier::DeliveryQueue, which sits in front of the client; the client
// itself does one POST per send() and never retries.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/transport.hpp"
#include "notifier/notifier.hpp"

namespace notifier {

struct AlertmanagerTarget {
  // Base URL as given by -notifier.url (or scheme://addr/path_prefix from -notifier.config);
  // "/api/v2/alerts" is appended to its path, before any query string (alertmanager_post_url).
  // Userinfo in it is sent as basic auth unless an Authorization header is configured.
  std::string url;
  // -notifier.config: `url` is already the POST URL (notifier::build_target), nothing appended.
  bool full_url = false;
  // -notifier.showURL: addr(), metrics, logs and errors show the URL with its secrets.
  bool show_url = false;
  std::chrono::milliseconds timeout{10000};  // -notifier.sendTimeout
  std::string basic_auth_username;           // set: Authorization: Basic ...
  std::string basic_auth_password;
  std::string bearer_token;                  // set (and no basic auth): Authorization: Bearer ...
  std::vector<std::pair<std::string, std::string>> headers;  // -notifier.headers
  // Cap on the (error) response body kept.
  size_t max_response_bytes = 1 << 20;
};

// The URL alerts are POSTed to: `base`'s path (trailing '/' dropped) + "/api/v2/alerts", then
// `base`'s query string; a fragment is dropped.
//   "http://am:9093/"            -> "http://am:9093/api/v2/alerts"
//   "http://am/prefix?tenant=a"  -> "http://am/prefix/api/v2/alerts?tenant=a"
// (vmalert appends after the query string, which moves the path into the last argument.)
[[nodiscard]] std::string alertmanager_post_url(std::string_view base);

// The client must outlive its in-flight requests (the transport's callbacks capture it): stop
// or close the transport and drain the io_context before destroying it.
class AlertmanagerClient final : public Notifier {
 public:
  AlertmanagerClient(net::Transport& http, AlertmanagerTarget target);

  // Notifier
  // Encodes the batch and POSTs it. `headers` (group notifier_headers) override the target's
  // auth and headers of the same name (case-insensitive). An empty batch completes at once.
  void send(std::span<const Alert> alerts,
            const std::vector<std::pair<std::string, std::string>>& headers,
            SendDone done) override;
  [[nodiscard]] std::string addr() const override { return addr_; }
  [[nodiscard]] NotifierStats stats() const override;

 private:
  void on_response(size_t count, core::Result<net::Response> r, const SendDone& done);
  void record_error(size_t count, std::string msg);

  net::Transport& http_;
  AlertmanagerTarget target_;
  std::string post_url_;  // alertmanager_post_url(url): what is sent to, secrets included
  std::string addr_;      // post_url_ as shown (redacted unless show_url)
  std::string auth_header_;  // precomputed Authorization value, may be empty
  size_t body_bytes_per_alert_ = 512;  // the last POST's, for the next body's reserve (loop only)
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> errors_{0};
  mutable std::mutex mu_;  // guards last_error_
  std::string last_error_;
};

// -notifier.blackhole: counts alerts as sent (addr "blackhole") and drops them.
class BlackholeNotifier final : public Notifier {
 public:
  // Notifier
  void send(std::span<const Alert> alerts,
            const std::vector<std::pair<std::string, std::string>>& headers,
            SendDone done) override;
  [[nodiscard]] std::string addr() const override { return "blackhole"; }
  [[nodiscard]] NotifierStats stats() const override;

 private:
  std::atomic<uint64_t> sent_{0};
};

}  // namespace notifier
