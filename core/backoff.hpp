// core::Backoff: the waits between retries of a failed send, shared by remote write and the
// notifier delivery queue. Exponential: the n-th wait is min * 2^(n-1), capped at max; with
// jitter j in [0, 1] a wait is drawn uniformly from [w * (1 - j), w] ("equal jitter" at 0.5),
// so senders that failed together do not retry together. The random source is a seeded
// splitmix64: the same seed gives the same waits (tests), the daemon seeds it per sender.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "core/time.hpp"

namespace core {

class Backoff {
 public:
  Backoff() = default;
  Backoff(Duration min, Duration max, double jitter = 0, uint64_t seed = 0)
      : min_(std::max(min, Duration(1))),
        max_(std::max(max, min_)),
        jitter_(std::clamp(jitter, 0.0, 1.0)),
        state_(seed) {}

  // The wait before the next attempt; each call doubles the base, up to max.
  [[nodiscard]] Duration next() {
    const Duration base = current_ == Duration::zero() ? min_ : current_;
    current_ = base >= max_ / 2 ? max_ : base * 2;
    ++failures_;
    if (jitter_ <= 0) return base;
    const double u = static_cast<double>(next_random() >> 11) * 0x1.0p-53;  // [0, 1)
    const double f = 1.0 - jitter_ * u;
    return std::max(Duration(1), std::chrono::duration_cast<Duration>(base * f));
  }
  // After a success: the next failure waits min again.
  void reset() {
    current_ = Duration::zero();
    failures_ = 0;
  }
  // next() calls since the last reset().
  [[nodiscard]] unsigned failures() const { return failures_; }

 private:
  uint64_t next_random() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  Duration min_{std::chrono::seconds(1)};
  Duration max_{std::chrono::seconds(30)};
  double jitter_ = 0;
  uint64_t state_ = 0;
  Duration current_{};
  unsigned failures_ = 0;
};

}  // namespace core
