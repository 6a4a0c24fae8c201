#include "datasource/remote_write.hpp"

#include <algorithm>
#include <deque>
#include <list>
#include <mutex>
#include <utility>
#include <vector>

#include "core/backoff.hpp"
#include "core/limit_hits.hpp"
#include "core/strings.hpp"
#include "datasource/http_querier.hpp"
#include "net/url.hpp"

namespace datasource {

namespace {

// The largest answer read from the receiver: only error texts are of interest.
constexpr size_t kMaxResponseBytes = 64 * 1024;

// -remoteWrite.url plus /api/v1/write before the query string (Go's path.Join on URL.Path).
std::string write_endpoint(std::string_view url, bool disable_path_append) {
  const size_t hash = url.find('#');
  if (hash != std::string_view::npos) url = url.substr(0, hash);
  if (disable_path_append) return std::string(url);
  const size_t qmark = url.find('?');
  std::string_view path = url.substr(0, qmark);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::string out(path);
  out += "/api/v1/write";
  if (qmark != std::string_view::npos) out.append(url.substr(qmark));
  return out;
}

int64_t ns(core::Duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

}  // namespace

struct RemoteWriter::State : std::enable_shared_from_this<RemoteWriter::State> {
  struct Batch {
    std::string body;
    size_t rows = 0;
    unsigned attempts = 0;
    std::chrono::steady_clock::time_point first_attempt;
    core::Backoff backoff;
    std::unique_ptr<core::Timer> retry_timer;
    bool waiting = false;  // for its retry timer
  };

  net::Transport* transport = nullptr;
  core::Clock* clock = nullptr;
  RemoteWriteOptions options;
  std::string endpoint;
  std::string shown_url;
  net::Headers headers;
  RemoteWriteStats stats;

  // Shared with write() callers on any thread.
  std::mutex mu;
  std::deque<core::Series> queue;
  bool kick_posted = false;
  bool closed = false;  // drained: nothing more is accepted

  // Loop only.
  WriteRequestEncoder encoder;
  std::unique_ptr<core::Timer> flush_timer;
  std::unique_ptr<core::Timer> drain_timer;
  std::list<std::shared_ptr<Batch>> active;
  bool flush_due = false;
  bool draining = false;
  std::function<void()> drain_done;
  // when_room callers, first come first served: (rows, fn).
  std::deque<std::pair<size_t, std::function<void()>>> room_waiters;

  // `rows` more fit in the queue after `promised` rows already let in; an empty queue takes any
  // first write.
  bool has_room(size_t rows, size_t promised = 0) {
    std::lock_guard lock(mu);
    if (queue.empty() && promised == 0) return true;
    return queue.size() + promised + rows <= options.max_queue_size;
  }

  void when_room(size_t rows, std::function<void()> fn) {
    if (room_waiters.empty() && has_room(rows)) {
      clock->post(std::move(fn));
      return;
    }
    room_waiters.emplace_back(rows, std::move(fn));
  }

  // Wakes the waiters in order while the queue has room for each (all of them once draining:
  // what they write then is dropped and counted, but nobody waits forever).
  void wake_room_waiters() {
    size_t promised = 0;  // rows the woken waiters will add before they run
    while (!room_waiters.empty()) {
      auto& [rows, fn] = room_waiters.front();
      if (!draining && !has_room(rows, promised)) break;
      promised += rows;
      clock->post(std::move(fn));
      room_waiters.pop_front();
    }
  }

  void log(bool error, const std::string& message) const {
    if (options.log) options.log(error, message);
  }

  void arm_flush_timer() {
    if (draining) return;
    flush_timer->start(options.flush_interval, [weak = weak_from_this()] {
      if (auto self = weak.lock()) {
        self->flush_due = true;
        self->pump();
        self->arm_flush_timer();
      }
    });
  }

  void write(std::span<const core::Series> series) {
    stats.total.fetch_add(series.size(), std::memory_order_relaxed);
    size_t dropped = 0;
    bool kick = false;
    size_t queued = 0;
    {
      std::lock_guard lock(mu);
      if (closed) {
        dropped = series.size();
      } else {
        queue.insert(queue.end(), series.begin(), series.end());
        if (queue.size() > options.max_queue_size) {
          dropped = queue.size() - options.max_queue_size;
          queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(dropped));
          core::count_limit_hit(core::Limit::remote_write_queue, dropped);
        }
        if (queue.size() >= options.max_batch_size && !kick_posted) {
          kick_posted = true;
          kick = true;
        }
      }
      queued = queue.size();
    }
    stats.queue_size.store(queued, std::memory_order_relaxed);
    if (dropped > 0) {
      stats.dropped_rows_total.fetch_add(dropped, std::memory_order_relaxed);
      stats.errors_total.fetch_add(dropped, std::memory_order_relaxed);
      log(true, "remote write queue is full (" + std::to_string(options.max_queue_size) +
                    " rows, -remoteWrite.maxQueueSize): dropped the " + std::to_string(dropped) +
                    " oldest row(s)");
    }
    if (kick) {
      clock->post([weak = weak_from_this()] {
        if (auto self = weak.lock()) {
          {
            std::lock_guard lock(self->mu);
            self->kick_posted = false;
          }
          self->pump();
        }
      });
    }
  }

  // Starts batches while a slot is free and something is due.
  void pump() {
    while (active.size() < options.concurrency) {
      std::vector<core::Series> rows;
      {
        std::lock_guard lock(mu);
        if (queue.empty()) {
          flush_due = false;
          break;
        }
        if (!flush_due && !draining && queue.size() < options.max_batch_size) break;
        const size_t n = std::min(queue.size(), options.max_batch_size);
        rows.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          rows.push_back(std::move(queue.front()));
          queue.pop_front();
        }
        stats.queue_size.store(queue.size(), std::memory_order_relaxed);
      }
      start_batch(rows);
    }
    wake_room_waiters();
    check_drained();
  }

  void start_batch(std::span<const core::Series> rows) {
    auto batch = std::make_shared<Batch>();
    const auto t0 = clock->monotonic();
    encoder.encode(rows, batch->body);
    const auto t1 = clock->monotonic();
    stats.flush_duration_ns_total.fetch_add(static_cast<uint64_t>(ns(t1 - t0)),
                                            std::memory_order_relaxed);
    stats.flushes_total.fetch_add(1, std::memory_order_relaxed);
    batch->rows = rows.size();
    batch->first_attempt = t1;
    batch->backoff = core::Backoff(std::min(options.retry_min_interval, options.retry_max_time),
                                   options.retry_max_time);
    batch->retry_timer = clock->make_timer();
    active.push_back(batch);
    send(batch);
  }

  void send(const std::shared_ptr<Batch>& batch) {
    batch->waiting = false;
    ++batch->attempts;
    net::Request req;
    req.method = "POST";
    req.url = endpoint;
    req.display_url = shown_url;
    req.headers = headers;
    req.body = batch->body;
    req.timeout = options.send_timeout;
    req.max_response_bytes = kMaxResponseBytes;
    stats.requests_total.fetch_add(1, std::memory_order_relaxed);
    transport->send(std::move(req), [self = shared_from_this(), batch](core::Result<net::Response> r) {
      self->on_sent(batch, std::move(r));
    });
  }

  void on_sent(const std::shared_ptr<Batch>& batch, core::Result<net::Response> r) {
    if (r && r->status / 100 == 2) {
      stats.sent_rows_total.fetch_add(batch->rows, std::memory_order_relaxed);
      stats.sent_bytes_total.fetch_add(batch->body.size(), std::memory_order_relaxed);
      finish(batch);
      return;
    }
    core::Error err;
    if (r) {
      err = core::Error{"unexpected response code " + std::to_string(r->status) + " for " +
                            shown_url + ". Response body \"" + core::clip(r->body) + "\"",
                        core::ErrorKind::http_status, r->status};
    } else {
      err = std::move(r.error());
    }
    const bool retryable = err.retryable() && !closed_now();
    log(!retryable, "attempt " + std::to_string(batch->attempts) +
                        " to send remote-write request failed: " + err.message +
                        " (retriable: " + (retryable ? "true" : "false") + ")");
    if (retryable) {
      const auto elapsed = clock->monotonic() - batch->first_attempt;
      const core::Duration left =
          std::chrono::duration_cast<core::Duration>(options.retry_max_time - elapsed);
      if (left > core::Duration::zero()) {
        const core::Duration wait = std::min(batch->backoff.next(), left);
        batch->waiting = true;
        batch->retry_timer->start(wait, [weak = weak_from_this(), wb = std::weak_ptr<Batch>(batch)] {
          auto self = weak.lock();
          auto b = wb.lock();
          if (self && b) self->send(b);
        });
        return;
      }
    }
    drop(*batch);
    finish(batch);
  }

  bool closed_now() {
    std::lock_guard lock(mu);
    return closed;
  }

  void drop(const Batch& batch) {
    stats.errors_total.fetch_add(1, std::memory_order_relaxed);
    stats.dropped_rows_total.fetch_add(batch.rows, std::memory_order_relaxed);
    log(true, "attempts to send remote-write request failed - dropping " +
                  std::to_string(batch.rows) + " time series");
  }

  void finish(const std::shared_ptr<Batch>& batch) {
    stats.send_duration_ns_total.fetch_add(
        static_cast<uint64_t>(ns(clock->monotonic() - batch->first_attempt)),
        std::memory_order_relaxed);
    active.remove(batch);
    pump();
  }

  void drain(core::Duration limit, std::function<void()> done) {
    draining = true;
    flush_timer->cancel();
    drain_done = std::move(done);
    drain_timer = clock->make_timer();
    drain_timer->start(limit, [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->on_drain_deadline();
    });
    pump();
  }

  void check_drained() {
    if (!draining || !drain_done || !active.empty()) return;
    {
      std::lock_guard lock(mu);
      if (!queue.empty()) return;
      closed = true;
    }
    complete_drain();
  }

  void on_drain_deadline() {
    if (!drain_done) return;
    size_t left = 0;
    {
      std::lock_guard lock(mu);
      closed = true;
      left = queue.size();
      queue.clear();
    }
    stats.queue_size.store(0, std::memory_order_relaxed);
    // Batches waiting for a retry are given up now; those on the wire are counted when the
    // transport answers or cancels them.
    for (auto it = active.begin(); it != active.end();) {
      if ((*it)->waiting) {
        (*it)->retry_timer->cancel();
        left += (*it)->rows;
        stats.errors_total.fetch_add(1, std::memory_order_relaxed);
        it = active.erase(it);
      } else {
        ++it;
      }
    }
    if (left > 0) {
      stats.dropped_rows_total.fetch_add(left, std::memory_order_relaxed);
      log(true, "remote write: shutdown deadline passed, dropping " + std::to_string(left) +
                    " unsent row(s)");
    }
    complete_drain();
  }

  void complete_drain() {
    if (drain_timer) drain_timer->cancel();
    auto done = std::move(drain_done);
    drain_done = nullptr;
    if (done) done();
  }
};

core::Result<std::unique_ptr<RemoteWriter>> RemoteWriter::create(net::Transport& transport,
                                                                 core::Clock& clock,
                                                                 RemoteWriteOptions options) {
  auto state = std::make_shared<State>();
  state->transport = &transport;
  state->clock = &clock;
  if (options.url.find_first_not_of(" \t") == std::string::npos) {
    return core::fail("-remoteWrite.url is empty", core::ErrorKind::bad_config);
  }
  state->endpoint = write_endpoint(options.url, options.disable_path_append);
  if (auto parsed = net::parse_url(state->endpoint); !parsed) {
    return core::fail(parsed.error().wrap("-remoteWrite.url"));
  }
  state->shown_url = options.show_url ? net::redact_url(state->endpoint)
                                      : net::redact_url_secrets(state->endpoint);
  if (options.max_batch_size == 0) options.max_batch_size = 1;
  if (options.max_queue_size == 0) options.max_queue_size = 1;
  if (options.concurrency == 0) options.concurrency = 1;
  if (options.flush_interval <= core::Duration::zero()) {
    return core::fail("-remoteWrite.flushInterval must be positive", core::ErrorKind::bad_config);
  }

  state->headers = {{"Content-Encoding", "snappy"},
                    {"Content-Type", "application/x-protobuf"},
                    {"X-Prometheus-Remote-Write-Version", "0.1.0"}};
  const bool basic = !options.basic_auth_username.empty() || !options.basic_auth_password.empty();
  if (basic && !options.bearer_token.empty()) {
    return core::fail(
        "-remoteWrite: at most one of basic auth (username/password) and bearer token can be set",
        core::ErrorKind::bad_config);
  }
  if (basic) {
    state->headers.emplace_back(
        "Authorization", "Basic " + net::base64_encode(options.basic_auth_username + ":" +
                                                       options.basic_auth_password));
  } else if (!options.bearer_token.empty()) {
    state->headers.emplace_back("Authorization", "Bearer " + options.bearer_token);
  }
  auto extra = parse_header_list(options.headers);
  if (!extra) return core::fail(extra.error().wrap("-remoteWrite.headers"));
  for (auto& [name, value] : *extra) {
    bool replaced = false;
    for (auto& h : state->headers) {
      if (core::iequals(h.first, name)) {
        h.second = value;
        replaced = true;
      }
    }
    if (!replaced) state->headers.emplace_back(std::move(name), std::move(value));
  }
  state->stats.queue_capacity = options.max_queue_size;
  state->stats.concurrency = options.concurrency;
  state->options = std::move(options);
  state->flush_timer = clock.make_timer();
  state->arm_flush_timer();
  return std::unique_ptr<RemoteWriter>(new RemoteWriter(std::move(state)));
}

RemoteWriter::RemoteWriter(std::shared_ptr<State> state) : state_(std::move(state)) {}

RemoteWriter::~RemoteWriter() {
  // Timers die with the state once no transport callback holds it; cancel them now so nothing
  // fires for a writer that is gone.
  state_->flush_timer->cancel();
  if (state_->drain_timer) state_->drain_timer->cancel();
  for (auto& b : state_->active) b->retry_timer->cancel();
}

void RemoteWriter::write(std::span<const core::Series> series) { state_->write(series); }

void RemoteWriter::flush() {
  state_->flush_due = true;
  state_->pump();
}

void RemoteWriter::when_room(size_t rows, std::function<void()> fn) {
  state_->when_room(rows, std::move(fn));
}

void RemoteWriter::drain(core::Duration limit, std::function<void()> done) {
  state_->drain(limit, std::move(done));
}

const RemoteWriteStats& RemoteWriter::stats() const { return state_->stats; }

const std::string& RemoteWriter::display_url() const { return state_->shown_url; }

}  // namespace datasource
