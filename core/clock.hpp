// core::Clock and core::Timer: the only way the scheduler and the remote-write client see time
// and the event loop (Envoy's TimeSource + dispatcher, reduced to what is needed). An interface
// only, no I/O: the daemon uses app::AsioClock (app/asio_clock.hpp); tests use fakes::ManualLoop
// and run an hour of rounds in milliseconds.
//
// Contract: timers fire and posted functions run on the loop's one thread, never inside the
// call that armed or posted them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "core/time.hpp"

namespace core {

class Timer {
 public:
  virtual ~Timer() = default;
  // Calls `fire` on the loop once `after` has passed (at once when <= 0), replacing any call
  // armed before. Destroying the timer cancels it.
  virtual void start(core::Duration after, std::function<void()> fire) = 0;
  virtual void cancel() = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall clock: evaluation timestamps, activeAt, endsAt.
  [[nodiscard]] virtual core::TimePoint now() const = 0;
  // Monotonic clock: how long something took.
  [[nodiscard]] virtual std::chrono::steady_clock::time_point monotonic() const = 0;
  [[nodiscard]] virtual std::unique_ptr<Timer> make_timer() = 0;
  // Runs `fn` on the loop; callable from any thread.
  virtual void post(std::function<void()> fn) = 0;
};

}  // namespace core
