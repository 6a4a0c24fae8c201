// datasource::RemoteWriter: Prometheus remote write v1 (vmalert's remotewrite/client.go, in the
// Prometheus format only): recording results and ALERTS / ALERTS_FOR_STATE with their staleness
// markers, POSTed as a snappy-block-compressed protobuf prometheus.WriteRequest with
// `Content-Encoding: snappy`, `Content-Type: application/x-protobuf` and
// `X-Prometheus-Remote-Write-Version: 0.1.0` to <url>/api/v1/write (the path is not appended
// with -remoteWrite.disablePathAppend).
//
// Contract:
//   - write() never blocks evaluation and may be called from any thread: it appends to a bounded
//     queue (-remoteWrite.maxQueueSize rows); when the queue is full the OLDEST rows are dropped
//     and counted (vmalert refuses the newest instead: the newest state is the one worth
//     keeping, and a stale marker must not be lost behind an old sample).
//   - Everything else runs on the clock's loop: a batch leaves when -remoteWrite.maxBatchSize rows
//     are queued or every -remoteWrite.flushInterval, with at most -remoteWrite.concurrency
//     requests (including their retry waits) in flight.
//   - 2xx is success. 429, 5xx and transport errors (timeout, connection) are retried with
//     exponential backoff starting at -remoteWrite.retryMinInterval, for at most
//     -remoteWrite.retryMaxTime since the first attempt; then the batch is dropped and counted.
//     Other statuses (400, 401, 404, ...) drop the batch at once (the spec forbids retrying them).
//   - drain() sends what is queued, bounded in time (shutdown); what is left is counted dropped.
//   - Errors and the URL shown in logs never carry userinfo; with show_url unset, secret-looking
//     query args are hidden too. Header values never appear.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/series.hpp"
#include "core/time.hpp"
#include "datasource/remote_write_wire.hpp"
#include "datasource/series_writer.hpp"
#include "net/transport.hpp"

namespace datasource {

struct RemoteWriteOptions {
  // -remoteWrite.url, e.g. "http://127.0.0.1:9090" (then /api/v1/write is appended).
  std::string url;
  // -remoteWrite.disablePathAppend: POST to `url` as given.
  bool disable_path_append = false;
  // -remoteWrite.headers: "Name: value^^Name2: value2".
  std::string headers;
  // -remoteWrite.basicAuth.* and -remoteWrite.bearerToken (files already read by the caller).
  std::string basic_auth_username;
  std::string basic_auth_password;
  std::string bearer_token;
  // -remoteWrite.maxQueueSize: rows held while waiting to be sent.
  size_t max_queue_size = 100'000;
  // -remoteWrite.maxBatchSize: rows per request.
  size_t max_batch_size = 10'000;
  // -remoteWrite.flushInterval: a partial batch leaves at least this often.
  core::Duration flush_interval = std::chrono::seconds(2);
  // -remoteWrite.concurrency: requests in flight (a request waiting for its retry counts).
  size_t concurrency = 1;
  // -remoteWrite.retryMinInterval / -remoteWrite.retryMaxTime.
  core::Duration retry_min_interval = std::chrono::seconds(1);
  core::Duration retry_max_time = std::chrono::seconds(30);
  // -remoteWrite.sendTimeout: deadline of one request.
  std::chrono::milliseconds send_timeout{30000};
  // -remoteWrite.showURL: show secret-looking query args in logs.
  bool show_url = false;
  // Where failures are reported (the daemon logs them; `error` false = a retry will follow);
  // may be empty.
  std::function<void(bool error, std::string_view message)> log;
};

// The vmalert_remotewrite_* metrics (vmalert.md §6); readable from any thread.
struct RemoteWriteStats {
  std::atomic<uint64_t> total{0};          // rows handed to write()
  std::atomic<uint64_t> errors_total{0};   // dropped batches and rows refused by a full queue
  std::atomic<uint64_t> sent_rows_total{0};
  std::atomic<uint64_t> sent_bytes_total{0};  // compressed request bodies delivered
  std::atomic<uint64_t> dropped_rows_total{0};
  std::atomic<uint64_t> requests_total{0};     // HTTP attempts, retries included
  std::atomic<uint64_t> send_duration_ns_total{0};  // first attempt to outcome, per batch
  std::atomic<uint64_t> flush_duration_ns_total{0};  // encoding + compression
  std::atomic<uint64_t> flushes_total{0};
  std::atomic<uint64_t> queue_size{0};
  uint64_t queue_capacity = 0;
  uint64_t concurrency = 0;
};

class RemoteWriter final : public SeriesWriter {
 public:
  // Validates the options (URL, headers, one auth method) and arms the flush timer. `transport`
  // and `clock` must outlive the writer; transport completions must run on the clock's loop.
  static core::Result<std::unique_ptr<RemoteWriter>> create(net::Transport& transport,
                                                            core::Clock& clock,
                                                            RemoteWriteOptions options);
  ~RemoteWriter() override;
  RemoteWriter(const RemoteWriter&) = delete;
  RemoteWriter& operator=(const RemoteWriter&) = delete;

  /* SeriesWriter */
  void write(std::span<const core::Series> series) override;

  // Sends every queued row now (full batches, concurrency permitting), on the loop.
  void flush();
  // Backpressure for a producer that must not lose rows (replay): runs `fn` on the loop once
  // `rows` more fit in the queue (or it is empty). Several producers may wait at once; they are
  // woken in the order they asked, each only when the rows promised to those before it fit too.
  void when_room(size_t rows, std::function<void()> fn);
  // Shutdown: stops the flush timer, sends everything queued and calls `done` on the loop once
  // nothing is queued or in flight, or once `limit` has passed (what is left is counted
  // dropped). Rows written afterwards are dropped and counted.
  void drain(core::Duration limit, std::function<void()> done);

  [[nodiscard]] const RemoteWriteStats& stats() const;
  // The URL requests go to, as logs show it (no userinfo; secrets hidden unless show_url).
  [[nodiscard]] const std::string& display_url() const;

  struct State;

 private:
  explicit RemoteWriter(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace datasource
