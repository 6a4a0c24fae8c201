// The daemon's app::Clock on an Asio io_context, and app::Worker as a thread of its own.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "app/clock.hpp"
#include "app/scheduler.hpp"

namespace boost::asio {
class io_context;
}

namespace app {

class AsioClock final : public Clock {
 public:
  explicit AsioClock(boost::asio::io_context& io) : io_(io) {}
  // Clock
  [[nodiscard]] core::TimePoint now() const override;
  [[nodiscard]] std::chrono::steady_clock::time_point monotonic() const override;
  [[nodiscard]] std::unique_ptr<Timer> make_timer() override;
  void post(std::function<void()> fn) override;

 private:
  boost::asio::io_context& io_;
};

// One thread running jobs in order. The queue is bounded by the group's rule count (a group
// hands it at most one job per rule and round); destruction finishes the running job and drops
// the rest.
class ThreadWorker final : public Worker {
 public:
  explicit ThreadWorker(std::string name);
  ~ThreadWorker() override;
  // Worker
  void run(std::function<void()> job) override;

 private:
  // Shared with the thread, which may outlive this object (see the destructor).
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    bool stop = false;
  };
  static void loop(const std::shared_ptr<State>& state);
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::thread thread_;
};

}  // namespace app
