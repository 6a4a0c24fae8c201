#include "app/asio_clock.hpp"

#include "net/asio.hpp"

#include <pthread.h>

namespace app {
namespace asio = boost::asio;

namespace {

class AsioTimer final : public Timer {
 public:
  explicit AsioTimer(asio::io_context& io) : timer_(io) {}
  ~AsioTimer() override {
    *alive_ = false;
    timer_.cancel();
  }
  // Timer
  void start(core::Duration after, std::function<void()> fire) override {
    // A new generation makes a handler that was already queued by cancel() a no-op.
    const uint64_t gen = ++generation_;
    timer_.expires_after(after > core::Duration::zero() ? after : core::Duration::zero());
    timer_.async_wait([this, alive = alive_, gen, fire = std::move(fire)](
                          const boost::system::error_code& ec) {
      if (ec || !*alive || gen != generation_) return;
      fire();
    });
  }
  void cancel() override {
    ++generation_;
    timer_.cancel();
  }

 private:
  asio::steady_timer timer_;
  uint64_t generation_ = 0;
  // Handlers may run after the timer object is gone (cancel queues them): they check this.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

 public:
  AsioTimer(const AsioTimer&) = delete;
  AsioTimer& operator=(const AsioTimer&) = delete;
};

}  // namespace

core::TimePoint AsioClock::now() const {
  return core::TimePoint{std::chrono::duration_cast<core::Duration>(
      std::chrono::system_clock::now().time_since_epoch())};
}

std::chrono::steady_clock::time_point AsioClock::monotonic() const {
  return std::chrono::steady_clock::now();
}

std::unique_ptr<Timer> AsioClock::make_timer() { return std::make_unique<AsioTimer>(io_); }

void AsioClock::post(std::function<void()> fn) { asio::post(io_, std::move(fn)); }

ThreadWorker::ThreadWorker(std::string name) : thread_([state = state_] { loop(state); }) {
  // Thread names are at most 15 bytes: "q:" + the group name's start.
  const std::string short_name = ("q:" + name).substr(0, 15);
  pthread_setname_np(thread_.native_handle(), short_name.c_str());
}

ThreadWorker::~ThreadWorker() {
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
    state_->jobs.clear();
  }
  state_->cv.notify_all();
  // The last owner may go away inside a job on this very thread: it cannot join itself; the
  // thread ends on its own after the job, holding the state it needs.
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void ThreadWorker::run(std::function<void()> job) {
  {
    std::lock_guard lock(state_->mu);
    state_->jobs.push_back(std::move(job));
  }
  state_->cv.notify_one();
}

void ThreadWorker::loop(const std::shared_ptr<State>& state) {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(state->mu);
      state->cv.wait(lock, [&] { return state->stop || !state->jobs.empty(); });
      if (state->stop) return;
      job = std::move(state->jobs.front());
      state->jobs.pop_front();
    }
    job();
  }
}

}  // namespace app
