// notifier::AlertmanagerClient: POSTs alert batches to one Alertmanager (`<url>/api/v2/alerts`)
// through a net::Transport, and counts them. notifier::BlackholeNotifier: counts, sends nothing.
//
// Errors (SendDone and stats().last_error), all prefixed with the target:
//   failed to send alerts to addr "<addr>": Post "<addr>": <transport error>   (net's text)
//   failed to send alerts to addr "<addr>": invalid SC 500 from "<addr>"; response body: <body>
// where <addr> is the full POST URL (vmalert's Addr()). Any 2xx is success. No retries.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/transport.hpp"
#include "notifier/notifier.hpp"

namespace notifier {

struct AlertmanagerTarget {
  // Base URL as given by -notifier.url (or scheme://addr/path_prefix from -notifier.config);
  // "/api/v2/alerts" is appended (a trailing '/' of the base is dropped first).
  std::string url;
  std::chrono::milliseconds timeout{10000};  // -notifier.sendTimeout
  std::string basic_auth_username;           // set: Authorization: Basic ...
  std::string basic_auth_password;
  std::string bearer_token;                  // set (and no basic auth): Authorization: Bearer ...
  std::vector<std::pair<std::string, std::string>> headers;  // -notifier.headers
  // Cap on the (error) response body kept.
  size_t max_response_bytes = 1 << 20;
};

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
  std::string addr_;  // url + /api/v2/alerts
  std::string auth_header_;  // precomputed Authorization value, may be empty
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
