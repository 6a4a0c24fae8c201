#include "notifier/delivery_queue.hpp"

#include <algorithm>
#include <deque>
#include <iterator>
#include <mutex>
#include <optional>
#include <type_traits>

#include "core/backoff.hpp"
#include "core/hash.hpp"
#include "core/limit_hits.hpp"
#include "notifier/slot_table.hpp"

namespace notifier {

namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;
using HeadersPtr = std::shared_ptr<const Headers>;

// Alertmanager identifies an alert by its label set; the queue keys it by a 64-bit hash of
// that set. Labels::content_hash, not Alertmanager's own FNV-1a fingerprint: the key never
// leaves the queue, and the byte-at-a-time FNV-1a was 2.3% of alertd's CPU at 1k alerts.
uint64_t fingerprint(const core::Labels& labels) { return labels.content_hash(); }

std::string seconds_text(core::Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + "s";
}

}  // namespace

struct DeliveryQueue::State : std::enable_shared_from_this<DeliveryQueue::State> {
  using Slot = SlotTable::Slot;
  // A queued state of an alert.
  struct Entry {
    Alert alert;
    HeadersPtr headers;
    core::TimePoint deadline{};  // given up after this (wall time)
    uint64_t seq = 0;            // place in the queue: older states keep theirs on a retry
    uint64_t key = 0;            // the alert's fingerprint
  };
  struct Post {
    std::vector<uint64_t> keys;
    std::vector<Alert> alerts;
    std::vector<core::TimePoint> deadlines;
    std::vector<uint64_t> seqs;
    HeadersPtr headers;
    std::chrono::steady_clock::time_point started;
  };

  static constexpr size_t kKeptCells = 1024;

  const HeadersPtr no_headers = std::make_shared<const Headers>();

  core::Clock* clock = nullptr;
  std::shared_ptr<Notifier> poster;
  DeliveryOptions options;

  // Loop only, except that stats() reads the counters and the sizes under `mu`.
  mutable std::mutex mu;
  SlotTable slots;  // by fingerprint
  // The queued states, oldest (lowest seq) first. An entry whose slot no longer queues its seq
  // (superseded, taken into a POST, dropped) is stale: left where it is, skipped when met, and
  // swept out once stale entries outnumber the live ones; a superseded or expired state's alert
  // is freed at once. `queued` counts the live entries.
  std::deque<Entry> order;
  size_t queued = 0;
  // Most slots held since the last drain, and in the burst before it: the table is sized for
  // that when a burst starts (growing it alert by alert cost a rehash at each doubling).
  size_t peak = 0;
  size_t last_peak = 0;
  uint64_t next_seq = 0;
  size_t posts_in_flight = 0;
  uint64_t alerts_in_flight = 0;
  uint64_t dropped = 0;
  uint64_t posts = 0;
  double send_seconds = 0;
  core::VmHistogram send_duration;
  bool waiting = false;  // for the backoff timer
  bool failed_since_drain = false;  // a POST failed since the queue last drained
  bool closed = false;
  bool kick_posted = false;
  // flush() asked for everything queued to go; cleared once it all has. Until then an answered
  // POST starts the next; without it only full batches leave, so a round's alerts are not sent
  // in pieces as other groups' POSTs are answered (at 10k alerts a round went out in ~60 POSTs
  // instead of 10, by timing alone).
  bool flush_wanted = false;
  std::function<void()> on_stopped;  // close()'s: posted when the last POST is answered
  core::Backoff backoff;
  std::unique_ptr<core::Timer> retry_timer;

  void log(bool error, const std::string& message) const {
    if (options.log) options.log(error, message);
  }

  // Under `mu`. The slot whose queued state `e` is; null when `e` is stale.
  Slot* find_live(const Entry& e) {
    Slot* s = slots.find(e.key);
    return s != nullptr && s->queued && s->seq == e.seq ? s : nullptr;
  }
  bool live(const Entry& e) { return find_live(e) != nullptr; }

  // Under `mu`. Sweeps stale entries out of `order` once they outnumber the live ones.
  void compact(bool always = false) {
    while (!order.empty() && !live(order.front())) order.pop_front();
    if (always || order.size() > 2 * queued + 64) {
      std::erase_if(order, [this](const Entry& e) { return !live(e); });
    }
  }

  // Under `mu`. Frees the alert of the queued state `seq`, superseded: `order` is sorted by
  // seq, so a queue held through an outage keeps one state per alert, not one per round.
  void free_superseded(uint64_t seq) {
    const auto it = std::lower_bound(order.begin(), order.end(), seq,
                                     [](const Entry& e, uint64_t v) { return e.seq < v; });
    if (it != order.end() && it->seq == seq) {
      it->alert = Alert{};
      it->headers.reset();
    }
  }

  // Under `mu`. Forgets a slot once nothing is queued or in flight for it (other Slot pointers
  // are then invalid).
  void release_if_idle(Slot* s) {
    if (!s->queued && !s->in_flight) slots.erase(s);
  }

  // Under `mu`. Drops the oldest queued alerts beyond the bound; returns how many.
  size_t trim() {
    size_t n = 0;
    while (queued > options.max_queue_size) {
      Slot* s = find_live(order.front());
      order.pop_front();
      if (s == nullptr) continue;  // stale
      s->queued = false;
      release_if_idle(s);
      --queued;
      ++n;
    }
    dropped += n;
    return n;
  }

  // `Span` is std::span<const Alert> (copied in) or std::span<Alert> (moved in).
  template <class Span>
  void enqueue(Span alerts, const Headers& headers) {
    if (alerts.empty()) return;
    // Nearly every group sends no headers of its own: those batches share one empty list.
    HeadersPtr shared_headers =
        headers.empty() ? no_headers : std::make_shared<const Headers>(headers);
    const core::TimePoint now = clock->now();
    size_t full_drops = 0;
    size_t refused = 0;
    bool kick = false;
    {
      std::lock_guard lock(mu);
      if (closed) {
        refused = alerts.size();
        dropped += refused;
      } else {
        if (slots.size() == 0) slots.reserve(std::max(last_peak, alerts.size()));
        for (auto& a : alerts) {
          const uint64_t key = fingerprint(a.labels);
          Slot& slot = slots.get(key);
          if (slot.queued) {  // superseded by this newer state: its entry goes stale
            free_superseded(slot.seq);
            --queued;
          }
          core::TimePoint deadline = now + options.retry_max_time;
          if (a.ends_at && *a.ends_at > deadline) deadline = *a.ends_at;
          const uint64_t seq = next_seq++;
          slot.queue(seq);
          if constexpr (std::is_const_v<std::remove_reference_t<decltype(a)>>) {
            order.push_back(Entry{a, shared_headers, deadline, seq, key});
          } else {
            order.push_back(Entry{std::move(a), shared_headers, deadline, seq, key});
          }
          ++queued;
        }
        peak = std::max(peak, slots.size());
        full_drops = trim();
        compact();
        if (queued >= options.max_batch_size && !kick_posted) kick = kick_posted = true;
      }
    }
    if (refused > 0)
      log(true, "dropped " + std::to_string(refused) + " alert(s) for " + poster->addr() +
                    ": the notifier is closed");
    if (full_drops > 0) {
      core::count_limit_hit(core::Limit::notifier_queue, full_drops);
      log(true, "notifier queue for " + poster->addr() + " is full (" +
                    std::to_string(options.max_queue_size) +
                    " alerts, -notifier.maxQueueSize): dropped the " + std::to_string(full_drops) +
                    " oldest alert(s)");
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

  // Starts POSTs while a slot is free, no backoff wait runs and something is queued.
  void pump() {
    for (;;) {
      auto post = std::make_shared<Post>();
      size_t expired = 0;
      {
        std::lock_guard lock(mu);
        if (closed || waiting || posts_in_flight >= options.concurrency) break;
        if (!flush_wanted && queued < options.max_batch_size) break;
        // One allocation per column instead of a doubling per power of two up to the batch.
        const size_t want = std::min(queued, options.max_batch_size);
        post->keys.reserve(want);
        post->alerts.reserve(want);
        post->deadlines.reserve(want);
        post->seqs.reserve(want);
        const core::TimePoint now = clock->now();
        // Taken and expired states leave their pairs stale (compact() sweeps them); `done`
        // counts the leading pairs so consumed, dropped here without looking them up again.
        size_t done = 0;
        for (size_t i = 0; i < order.size() && post->keys.size() < options.max_batch_size; ++i) {
          const auto consumed = [&] { done += done == i ? 1 : 0; };
          Entry& e = order[i];
          Slot* slot = find_live(e);
          if (slot == nullptr) {
            consumed();
            continue;
          }
          if (slot->in_flight) continue;  // an older state is on the wire: this one follows it
          if (e.deadline < now) {
            ++expired;
            slot->queued = false;
            --queued;
            release_if_idle(slot);
            e.alert = Alert{};
            consumed();
            continue;
          }
          if (post->headers && *post->headers != *e.headers) continue;
          if (!post->headers) post->headers = e.headers;
          post->alerts.push_back(std::move(e.alert));
          post->deadlines.push_back(e.deadline);
          post->seqs.push_back(e.seq);
          post->keys.push_back(e.key);
          slot->queued = false;
          --queued;
          slot->in_flight = true;
          consumed();
        }
        order.erase(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(done));
        compact();
        dropped += expired;
        if (queued == 0) flush_wanted = false;
        if (!post->keys.empty()) {
          ++posts_in_flight;
          alerts_in_flight += post->keys.size();
        }
      }
      if (expired > 0) {
        log(true, "gave up on " + std::to_string(expired) + " alert(s) for " + poster->addr() +
                      ": not accepted within -notifier.retryMaxTime and past their endsAt");
      }
      if (post->keys.empty()) break;
      post->started = clock->monotonic();
      poster->send(post->alerts, *post->headers,
                   [self = shared_from_this(), post](std::optional<core::Error> err) {
                     self->on_done(*post, std::move(err));
                   });
    }
  }

  void on_done(Post& post, std::optional<core::Error> err) {
    const double took = std::chrono::duration<double>(clock->monotonic() - post.started).count();
    const size_t n = post.keys.size();
    const bool retry = err && err->retryable();
    core::Duration wait{};
    size_t lost = 0;
    std::function<void()> stopped;
    bool drained = false;
    bool backlog = false;
    {
      std::lock_guard lock(mu);
      --posts_in_flight;
      failed_since_drain = failed_since_drain || err.has_value();
      if (closed && posts_in_flight == 0) stopped = std::move(on_stopped);
      alerts_in_flight -= n;
      ++posts;
      send_seconds += took;
      send_duration.update(took);
      // Retried states go back to their old places: no stale entry may then carry the seq
      // they get back, so `order` is swept first and the returning entries merged in by seq.
      const bool requeue = retry && !closed;
      if (requeue) compact(true);
      std::vector<Entry> back;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t key = post.keys[i];
        Slot* slot = slots.find(key);
        if (slot == nullptr) continue;  // not reached: a slot in flight is kept
        slot->in_flight = false;
        if (requeue && !slot->queued) {
          slot->queue(post.seqs[i]);
          back.push_back(
              Entry{std::move(post.alerts[i]), post.headers, post.deadlines[i], post.seqs[i], key});
          ++queued;
        } else if (err && !slot->queued) {
          ++lost;  // refused, or closed: given up (a newer state queued is not a loss)
        }
        release_if_idle(slot);
      }
      if (!back.empty()) {
        flush_wanted = true;  // they were flushed once: the retry sends them without another
        const auto by_seq = [](const Entry& a, const Entry& b) { return a.seq < b.seq; };
        std::sort(back.begin(), back.end(), by_seq);
        std::deque<Entry> merged;
        std::merge(std::make_move_iterator(order.begin()), std::make_move_iterator(order.end()),
                   std::make_move_iterator(back.begin()), std::make_move_iterator(back.end()),
                   std::back_inserter(merged), by_seq);
        order.swap(merged);
      }
      dropped += lost;
      if (!err) {
        backoff.reset();
      } else if (retry && !closed) {
        lost += trim();
        if (!waiting) {
          waiting = true;
          wait = backoff.next();
        }
      }
      drained = posts_in_flight == 0 && queued == 0;
      if (drained) backlog = std::exchange(failed_since_drain, false);
      if (queued == 0) std::deque<Entry>().swap(order);
      // A burst's table (21-43 bytes per alert it held) goes back with it; the next burst
      // starts at this one's size.
      if (drained && slots.size() == 0) {
        last_peak = peak;
        peak = 0;
        if (slots.capacity() > kKeptCells) slots.release();
      }
    }
    if (drained && options.on_drained) options.on_drained(backlog);
    if (err) {
      std::string msg = err->message;
      if (retry && wait > core::Duration::zero()) {
        msg += "; " + std::to_string(n) + " alert(s) kept, retrying in " + seconds_text(wait);
      } else if (retry) {
        msg += "; " + std::to_string(n) + " alert(s) kept for the retry";
      }
      if (lost > 0) msg += "; dropped " + std::to_string(lost) + " alert(s)";
      log(!retry, msg);
    }
    if (stopped) {
      clock->post(std::move(stopped));
      return;
    }
    if (wait > core::Duration::zero()) {
      retry_timer->start(wait, [weak = weak_from_this()] {
        if (auto self = weak.lock()) {
          {
            std::lock_guard lock(self->mu);
            self->waiting = false;
          }
          self->pump();
        }
      });
      return;
    }
    pump();
  }

  void close(std::function<void()> stopped) {
    size_t lost = 0;
    bool stopped_now = false;
    {
      std::lock_guard lock(mu);
      if (stopped && posts_in_flight > 0) {
        on_stopped = std::move(stopped);
      } else {
        stopped_now = static_cast<bool>(stopped);
      }
      closed = true;  // a second close() finds nothing left to drop
      waiting = false;
      lost = queued;
      dropped += lost;
      std::deque<Entry>().swap(order);
      queued = 0;
      slots.erase_if([](Slot& s) {
        s.queued = false;
        return !s.in_flight;
      });
    }
    retry_timer->cancel();
    if (lost > 0) {
      log(true, "dropped " + std::to_string(lost) + " queued alert(s) for " + poster->addr() +
                    " at shutdown");
    }
    if (stopped_now) clock->post(std::move(stopped));
  }
};

DeliveryQueue::DeliveryQueue(core::Clock& clock, std::shared_ptr<Notifier> poster,
                             DeliveryOptions options)
    : state_(std::make_shared<State>()) {
  if (options.max_queue_size == 0) options.max_queue_size = 1;
  if (options.max_batch_size == 0) options.max_batch_size = 1;
  if (options.concurrency == 0) options.concurrency = 1;
  state_->clock = &clock;
  state_->poster = std::move(poster);
  state_->backoff = core::Backoff(options.retry_min_interval, options.retry_max_interval,
                                  options.jitter, options.seed);
  state_->options = std::move(options);
  state_->retry_timer = clock.make_timer();
}

DeliveryQueue::~DeliveryQueue() { state_->retry_timer->cancel(); }

void DeliveryQueue::send(std::span<const Alert> alerts, const Headers& headers, SendDone done) {
  state_->enqueue(alerts, headers);
  if (done) done(std::nullopt);
}

void DeliveryQueue::send_owned(std::vector<Alert> alerts, const Headers& headers, SendDone done) {
  state_->enqueue(std::span<Alert>(alerts), headers);
  if (done) done(std::nullopt);
}

void DeliveryQueue::flush() {
  {
    std::lock_guard lock(state_->mu);
    state_->flush_wanted = true;
  }
  state_->pump();
}

void DeliveryQueue::close(std::function<void()> on_stopped) {
  state_->close(std::move(on_stopped));
}

std::string DeliveryQueue::addr() const { return state_->poster->addr(); }

std::string DeliveryQueue::kind() const { return state_->poster->kind(); }

core::Labels DeliveryQueue::target_labels() const { return state_->poster->target_labels(); }

NotifierStats DeliveryQueue::stats() const {
  NotifierStats s = state_->poster->stats();
  std::lock_guard lock(state_->mu);
  s.dropped = state_->dropped;
  s.queued = state_->queued;
  s.in_flight = state_->alerts_in_flight;
  s.posts = state_->posts;
  s.send_seconds = state_->send_seconds;
  s.send_duration = state_->send_duration;
  return s;
}

}  // namespace notifier
