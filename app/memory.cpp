#include "app/memory.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace app {

namespace {

// Resident bytes of the process (/proc/self/statm's second field), 0 when unknown.
size_t resident_bytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long size = 0;
  unsigned long long resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return static_cast<size_t>(resident) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

void tune_malloc() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Free space at the top of the heap beyond this goes back at once on free().
  mallopt(M_TRIM_THRESHOLD, 4 << 20);
  // One arena for every thread, unless the user chose a number (MALLOC_ARENA_MAX or
  // GLIBC_TUNABLES=glibc.malloc.arena_max).
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr &&
      (tunables == nullptr || std::strstr(tunables, "arena_max") == nullptr)) {
    mallopt(M_ARENA_MAX, 1);
  }
#endif
}

MemoryReleaser::MemoryReleaser(size_t min_growth,
                               std::chrono::steady_clock::duration min_check_interval,
                               std::chrono::steady_clock::duration settle)
    : min_growth_(min_growth), min_check_interval_(min_check_interval), settle_(settle) {}

MemoryReleaser::~MemoryReleaser() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void MemoryReleaser::after_work() {
  std::unique_lock lock(mu_);
  if (stop_) return;
  last_request_ = std::chrono::steady_clock::now();
  if (pending_) return;
  pending_ = true;
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { run(); });
    return;
  }
  lock.unlock();
  cv_.notify_one();
}

void MemoryReleaser::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || pending_; });
    if (stop_) return;
    // Wait until requests have stopped coming for `settle`, and the last check is
    // `min_check_interval` old.
    for (;;) {
      const auto due = std::max(last_request_ + settle_, last_check_ + min_check_interval_);
      if (std::chrono::steady_clock::now() >= due) break;
      if (cv_.wait_until(lock, due, [this] { return stop_; })) return;
    }
    pending_ = false;
    last_check_ = std::chrono::steady_clock::now();
    lock.unlock();
    check_now();
    lock.lock();
  }
}

bool MemoryReleaser::check_now() {
  std::lock_guard lock(check_mu_);
  const bool trimmed = check();
  std::lock_guard counts(mu_);
  ++checks_;
  if (trimmed) ++trims_;
  return trimmed;
}

uint64_t MemoryReleaser::checks() const {
  std::lock_guard lock(mu_);
  return checks_;
}

uint64_t MemoryReleaser::trims() const {
  std::lock_guard lock(mu_);
  return trims_;
}

bool MemoryReleaser::check() {
#if defined(__GLIBC__)
  // Resident bytes beyond those in use (the heap's chunks and the blocks with their own mmap).
  auto slack = [](size_t* in_use) -> std::optional<size_t> {
    const struct mallinfo2 mi = mallinfo2();
    const size_t rss = resident_bytes();
    if (rss == 0) return std::nullopt;
    *in_use = mi.uordblks + mi.hblkhd;
    return rss > *in_use ? rss - *in_use : 0;
  };
  size_t in_use = 0;
  const auto now_slack = slack(&in_use);
  if (!now_slack) return false;
  // Reuse brought the free level down: that is the new base. It starts at 0, so the first
  // check trims: a base read while a round's free pages were resident would stay too high
  // (a 100k-alert run that first checked after its first rounds never trimmed).
  slack_after_trim_ = std::min(slack_after_trim_, *now_slack);
  const size_t threshold = std::max(min_growth_, in_use / 32);
  if (*now_slack < slack_after_trim_ + threshold) return false;
  malloc_trim(0);
  slack_after_trim_ = slack(&in_use).value_or(*now_slack);
  return true;
#else
  return false;
#endif
}

MemoryReleaser& memory_releaser() {
  static MemoryReleaser r;
  return r;
}

}  // namespace app
