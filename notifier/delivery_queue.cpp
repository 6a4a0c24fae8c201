#include "notifier/delivery_queue.hpp"

#include <algorithm>
#include <deque>
#include <iterator>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "core/backoff.hpp"
#include "core/hash.hpp"
#include "core/limit_hits.hpp"

namespace notifier {

namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;
using HeadersPtr = std::shared_ptr<const Headers>;

// Alertmanager identifies an alert by its label set; the queue keys it by a 64-bit hash of
// that set. Labels::content_hash, not Alertmanager's own FNV-1a fingerprint: the key never
// leaves the queue, and the byte-at-a-time FNV-1a was 2.3% of alertd's CPU at 1k alerts.
uint64_t fingerprint(const core::Labels& labels) { return labels.content_hash(); }

struct MixHash {
  size_t operator()(uint64_t v) const { return static_cast<size_t>(core::mix64(v)); }
};

std::string seconds_text(core::Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + "s";
}

}  // namespace

struct DeliveryQueue::State : std::enable_shared_from_this<DeliveryQueue::State> {
  struct Entry {
    Alert alert;
    HeadersPtr headers;
    core::TimePoint deadline{};  // given up after this (wall time)
    uint64_t seq = 0;            // place in the queue: older states keep theirs on a retry
  };
  struct Slot {
    std::optional<Entry> queued;
    bool in_flight = false;
  };
  struct Post {
    std::vector<uint64_t> keys;
    std::vector<Alert> alerts;
    std::vector<core::TimePoint> deadlines;
    std::vector<uint64_t> seqs;
    HeadersPtr headers;
    std::chrono::steady_clock::time_point started;
  };

  static constexpr size_t kKeptBuckets = 1024;

  core::Clock* clock = nullptr;
  std::shared_ptr<Notifier> poster;
  DeliveryOptions options;

  // Loop only, except that stats() reads the counters and the sizes under `mu`.
  mutable std::mutex mu;
  std::unordered_map<uint64_t, Slot, MixHash> slots;  // by fingerprint
  // (seq, fingerprint) of the queued states, oldest first. A pair whose slot no longer queues
  // that seq (superseded, taken into a POST, dropped) is stale: left where it is, skipped when
  // met, and swept out once stale pairs outnumber the live ones. No allocation per alert (a
  // std::map here cost a tree node per alert per round); `queued` counts the live pairs.
  std::deque<std::pair<uint64_t, uint64_t>> order;
  size_t queued = 0;
  uint64_t next_seq = 0;
  size_t posts_in_flight = 0;
  uint64_t alerts_in_flight = 0;
  uint64_t dropped = 0;
  uint64_t posts = 0;
  double send_seconds = 0;
  core::VmHistogram send_duration;
  bool waiting = false;  // for the backoff timer
  bool closed = false;
  bool kick_posted = false;
  std::function<void()> on_stopped;  // close()'s: posted when the last POST is answered
  core::Backoff backoff;
  std::unique_ptr<core::Timer> retry_timer;

  void log(bool error, const std::string& message) const {
    if (options.log) options.log(error, message);
  }

  using SlotIt = std::unordered_map<uint64_t, Slot, MixHash>::iterator;

  // Under `mu`. The slot whose queued state the pair (seq, key) of `order` is; end() when the
  // pair is stale.
  SlotIt find_live(const std::pair<uint64_t, uint64_t>& p) {
    const auto it = slots.find(p.second);
    if (it == slots.end() || !it->second.queued || it->second.queued->seq != p.first) {
      return slots.end();
    }
    return it;
  }
  bool live(const std::pair<uint64_t, uint64_t>& p) { return find_live(p) != slots.end(); }

  // Under `mu`. Sweeps stale pairs out of `order` once they outnumber the live ones.
  void compact(bool always = false) {
    while (!order.empty() && !live(order.front())) order.pop_front();
    if (always || order.size() > 2 * queued + 64) {
      std::erase_if(order, [this](const auto& p) { return !live(p); });
    }
  }

  // Under `mu`. Forgets a slot once nothing is queued or in flight for it.
  void release_if_idle(SlotIt it) {
    if (!it->second.queued && !it->second.in_flight) slots.erase(it);
  }

  // Under `mu`. Drops the oldest queued alerts beyond the bound; returns how many.
  size_t trim() {
    size_t n = 0;
    while (queued > options.max_queue_size) {
      const auto it = find_live(order.front());
      order.pop_front();
      if (it == slots.end()) continue;  // stale
      it->second.queued.reset();
      release_if_idle(it);
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
    auto shared_headers = std::make_shared<const Headers>(headers);
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
        for (auto& a : alerts) {
          const uint64_t key = fingerprint(a.labels);
          Slot& slot = slots[key];
          if (slot.queued) --queued;  // superseded by this newer state: its pair goes stale
          core::TimePoint deadline = now + options.retry_max_time;
          if (a.ends_at && *a.ends_at > deadline) deadline = *a.ends_at;
          const uint64_t seq = next_seq++;
          if constexpr (std::is_const_v<std::remove_reference_t<decltype(a)>>) {
            slot.queued = Entry{a, shared_headers, deadline, seq};
          } else {
            slot.queued = Entry{std::move(a), shared_headers, deadline, seq};
          }
          order.emplace_back(seq, key);
          ++queued;
        }
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
        const core::TimePoint now = clock->now();
        // Taken and expired states leave their pairs stale (compact() sweeps them); `done`
        // counts the leading pairs so consumed, dropped here without looking them up again.
        size_t done = 0;
        for (size_t i = 0; i < order.size() && post->keys.size() < options.max_batch_size; ++i) {
          const auto consumed = [&] { done += done == i ? 1 : 0; };
          const auto found = find_live(order[i]);
          if (found == slots.end()) {
            consumed();
            continue;
          }
          const uint64_t key = found->first;
          Slot& slot = found->second;
          if (slot.in_flight) continue;  // an older state is on the wire: this one follows it
          Entry& e = *slot.queued;
          if (e.deadline < now) {
            ++expired;
            slot.queued.reset();
            --queued;
            release_if_idle(found);
            consumed();
            continue;
          }
          if (post->headers && *post->headers != *e.headers) continue;
          if (!post->headers) post->headers = e.headers;
          post->alerts.push_back(std::move(e.alert));
          post->deadlines.push_back(e.deadline);
          post->seqs.push_back(e.seq);
          post->keys.push_back(key);
          slot.queued.reset();
          --queued;
          slot.in_flight = true;
          consumed();
        }
        order.erase(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(done));
        compact();
        dropped += expired;
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
    {
      std::lock_guard lock(mu);
      --posts_in_flight;
      if (closed && posts_in_flight == 0) stopped = std::move(on_stopped);
      alerts_in_flight -= n;
      ++posts;
      send_seconds += took;
      send_duration.update(took);
      // Retried states go back to their old places: no stale pair may then carry the seq
      // they get back, so `order` is swept first and the returning pairs merged in by seq.
      const bool requeue = retry && !closed;
      if (requeue) compact(true);
      std::vector<std::pair<uint64_t, uint64_t>> back;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t key = post.keys[i];
        const auto it = slots.find(key);
        if (it == slots.end()) continue;  // not reached: a slot in flight is kept
        Slot& slot = it->second;
        slot.in_flight = false;
        if (requeue && !slot.queued) {
          slot.queued =
              Entry{std::move(post.alerts[i]), post.headers, post.deadlines[i], post.seqs[i]};
          back.emplace_back(post.seqs[i], key);
          ++queued;
        } else if (err && !slot.queued) {
          ++lost;  // refused, or closed: given up (a newer state queued is not a loss)
        }
        release_if_idle(it);
      }
      if (!back.empty()) {
        std::sort(back.begin(), back.end());
        std::deque<std::pair<uint64_t, uint64_t>> merged;
        std::merge(order.begin(), order.end(), back.begin(), back.end(),
                   std::back_inserter(merged));
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
      if (queued == 0) std::deque<std::pair<uint64_t, uint64_t>>().swap(order);
      // A burst's hash buckets (8 bytes per alert it held) go back with it.
      if (drained && slots.empty() && slots.bucket_count() > kKeptBuckets) {
        std::unordered_map<uint64_t, Slot, MixHash>().swap(slots);
      }
    }
    if (drained && options.on_drained) options.on_drained();
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
      std::deque<std::pair<uint64_t, uint64_t>>().swap(order);
      queued = 0;
      for (auto it = slots.begin(); it != slots.end();) {
        it->second.queued.reset();
        it = it->second.in_flight ? std::next(it) : slots.erase(it);
      }
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

void DeliveryQueue::flush() { state_->pump(); }

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
