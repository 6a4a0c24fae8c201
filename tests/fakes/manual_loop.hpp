// ManualLoop: an app::Clock whose time moves only when the test says so. Timers fire and posted
// functions run inside advance()/run_ready(), in time order, on the test's thread (the default
// start is on a whole minute, so aligned query times equal tick times): an hour of
// group rounds runs in milliseconds and the same way every time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "app/clock.hpp"
#include "core/time.hpp"

namespace fakes {

class ManualLoop final : public app::Clock {
 public:
  explicit ManualLoop(core::TimePoint start = core::from_unix_ms(1'700'000'040'000))
      : now_(start) {}
  // Armed callbacks may own timers (a scheduler keeps itself alive through its timer's
  // callback): destroy them out of the map, which their timers' cancel() then finds empty.
  ~ManualLoop() override {
    auto timers = std::move(timers_);
    timers_.clear();
    timers.clear();
    auto posted = std::move(posted_);
    posted_.clear();
    posted.clear();
  }
  ManualLoop(const ManualLoop&) = delete;
  ManualLoop& operator=(const ManualLoop&) = delete;

  // Clock
  [[nodiscard]] core::TimePoint now() const override { return now_; }
  [[nodiscard]] std::chrono::steady_clock::time_point monotonic() const override {
    return std::chrono::steady_clock::time_point{} + (now_ - start_);
  }
  [[nodiscard]] std::unique_ptr<app::Timer> make_timer() override {
    return std::make_unique<ManualTimer>(*this, next_timer_id_++);
  }
  void post(std::function<void()> fn) override {
    std::lock_guard lock(mu_);
    posted_.push_back(std::move(fn));
  }

  // Runs every posted function (and what they post) at the current time.
  void run_ready() {
    for (;;) {
      std::function<void()> fn;
      {
        std::lock_guard lock(mu_);
        if (posted_.empty()) return;
        fn = std::move(posted_.front());
        posted_.pop_front();
      }
      fn();
    }
  }

  // Moves time forward by `d`, firing every timer that comes due on the way, in order.
  void advance(core::Duration d) {
    const core::TimePoint target = now_ + d;
    for (;;) {
      run_ready();
      auto it = earliest();
      if (it == timers_.end() || it->second.at > target) break;
      now_ = it->second.at;
      auto fire = std::move(it->second.fire);
      timers_.erase(it);
      fire();
    }
    now_ = target;
    run_ready();
  }

  [[nodiscard]] size_t armed_timers() const { return timers_.size(); }
  [[nodiscard]] core::TimePoint start_time() const { return start_; }

 private:
  struct Armed {
    core::TimePoint at{};
    uint64_t seq = 0;
    std::function<void()> fire;
  };

  class ManualTimer final : public app::Timer {
   public:
    ManualTimer(ManualLoop& loop, uint64_t id) : loop_(loop), id_(id) {}
    ~ManualTimer() override { cancel(); }
    // Timer
    void start(core::Duration after, std::function<void()> fire) override {
      if (after < core::Duration::zero()) after = core::Duration::zero();
      loop_.timers_[id_] = Armed{loop_.now_ + after, loop_.seq_++, std::move(fire)};
    }
    void cancel() override { loop_.timers_.erase(id_); }

   private:
    ManualLoop& loop_;
    uint64_t id_;
  };

  std::map<uint64_t, Armed>::iterator earliest() {
    auto best = timers_.end();
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (best == timers_.end() || it->second.at < best->second.at ||
          (it->second.at == best->second.at && it->second.seq < best->second.seq)) {
        best = it;
      }
    }
    return best;
  }

  core::TimePoint now_;
  core::TimePoint start_ = now_;
  std::map<uint64_t, Armed> timers_;
  uint64_t next_timer_id_ = 0;
  uint64_t seq_ = 0;
  std::mutex mu_;
  std::deque<std::function<void()>> posted_;
};

}  // namespace fakes
