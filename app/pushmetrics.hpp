// app::MetricsPusher: -pushmetrics.*, vmalert's lib/pushmetrics on VictoriaMetrics/metrics'
// InitPushExtWithOptions. Every -pushmetrics.interval the text served at /metrics is sent to
// every -pushmetrics.url:
//   - `GET` with the body (the Go library's request method, which VictoriaMetrics' and
//     vmagent's /api/v1/import/prometheus accept), `Content-Type: text/plain`, then the
//     -pushmetrics.header fields, then `Content-Encoding: gzip` unless
//     -pushmetrics.disableCompression; user:password@ in the URL becomes basic auth;
//   - -pushmetrics.extraLabel is put into every sample line (add_extra_labels);
//   - the first push is one interval after start, as Go's time.Ticker; a push still in flight
//     at the next tick makes that URL skip the tick (one push per URL at a time), and each
//     push has the interval as its deadline (the Go library's http.Client.Timeout);
//   - a failure (transport error or non-2xx) is counted (metrics_push_errors_total) and not
//     retried: the next tick pushes fresh figures. alertd logs a failure when its text differs
//     from the previous one and once when pushes work again, not every tick as the Go library.
//   - no final push at shutdown (vmalert has none).
// The pusher runs on one loop (core::Clock): the daemon gives it the HTTP server's thread,
// which renders /metrics for scrapes too, so neither rendering nor compression delays
// evaluation or its queries.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "app/metrics.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/time.hpp"
#include "net/transport.hpp"

namespace app {

// Checks one -pushmetrics.extraLabel value as the Go library's validateTags: one or more
// `name="value"` separated by ',' (names [a-zA-Z_:.][a-zA-Z0-9_:.]*, `\"` escapes in values).
// Returns an error text, "" when valid.
[[nodiscard]] std::string check_extra_labels(std::string_view labels);

// Checks one -pushmetrics.header value: "Name: value" (a ':' is required; name not empty).
[[nodiscard]] std::string check_push_header(std::string_view header);

// Checks one -pushmetrics.url: an absolute http:// or https:// URL with a host. The error text
// never repeats the URL's password.
[[nodiscard]] std::string check_push_url(std::string_view url);

// The Go library's addExtraLabels: every line trimmed of blanks, empty lines dropped, comment
// lines ('#') kept as they are; `extra` (comma-separated `name="value"`) goes first inside an
// existing `{...}` followed by ',' (`m{a="1"} 2` -> `m{extra,a="1"} 2`), else as `{extra}` before
// the last space (`m 2` -> `m{extra} 2`). A line without a space is kept unchanged (the Go
// library panics there; alertd's /metrics never writes one).
[[nodiscard]] std::string add_extra_labels(std::string_view text, std::string_view extra);

// Go's url.URL.Redacted(): the password replaced by "xxxxx", the user name kept
// ("http://u:p@h/x" -> "http://u:xxxxx@h/x"). The `url` label of metrics_push_* and logs use it.
[[nodiscard]] std::string go_redacted_url(std::string_view url);

struct PushOptions {
  std::vector<std::string> urls;
  core::Duration interval = std::chrono::seconds(10);
  std::vector<std::string> extra_labels;  // each checked by check_extra_labels
  std::vector<std::string> headers;       // each checked by check_push_header
  bool disable_compression = false;
  // Largest answer body kept (an error answer is logged with it, cut to this size).
  size_t max_response_bytes = 64 * 1024;
};

class MetricsPusher {
 public:
  // `render` returns the /metrics text; it runs on `clock`'s loop. `http` and `clock` must
  // outlive the pusher; so must pending requests' handlers (close `http` before destroying).
  MetricsPusher(core::Clock& clock, net::Transport& http, PushOptions options,
                std::function<std::string()> render);
  ~MetricsPusher();
  MetricsPusher(const MetricsPusher&) = delete;
  MetricsPusher& operator=(const MetricsPusher&) = delete;

  // Arms the first tick, one interval from now. Call on the loop.
  void start();
  // No more ticks; pushes in flight finish (or fail when the transport is closed). Call on the
  // loop.
  void stop();

  // One entry per URL, in -pushmetrics.url order, for /metrics (thread-safe to read).
  [[nodiscard]] std::vector<const PushTargetStats*> stats() const;

 private:
  struct Target;
  void do_tick();
  void on_pushed(Target& target, std::chrono::steady_clock::time_point started,
                 core::Result<net::Response> result);

  core::Clock& clock_;
  net::Transport& http_;
  PushOptions options_;
  std::string extra_labels_;  // options_.extra_labels joined with ','
  net::Headers headers_;      // parsed options_.headers
  std::function<std::string()> render_;
  std::vector<std::unique_ptr<Target>> targets_;
  std::unique_ptr<core::Timer> timer_;
  std::chrono::steady_clock::time_point next_tick_{};
  bool stopped_ = false;
  // Handlers of requests in flight hold a weak reference: a pusher destroyed first is skipped.
  std::shared_ptr<MetricsPusher*> alive_;
};

}  // namespace app
