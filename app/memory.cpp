#include "app/memory.hpp"

#include <malloc.h>

#include <algorithm>

namespace app {

void tune_malloc() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Free space at the top of the heap beyond this goes back at once on free().
  mallopt(M_TRIM_THRESHOLD, 4 << 20);
#endif
}

bool MemoryReleaser::after_work() {
  std::lock_guard lock(mu_);
  return check();
}

bool MemoryReleaser::after_round() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (last_check_ != std::chrono::steady_clock::time_point{} &&
      now - last_check_ < min_check_interval_) {
    return false;
  }
  return check();
}

bool MemoryReleaser::check() {
#if defined(__GLIBC__)
  last_check_ = std::chrono::steady_clock::now();
  const struct mallinfo2 mi = mallinfo2();
  const size_t free_bytes = mi.fordblks;
  // Reuse brought the free level down: that is the new base.
  free_after_trim_ = std::min(free_after_trim_, free_bytes);
  const size_t threshold = std::max(min_growth_, mi.uordblks / 10);
  if (free_bytes < free_after_trim_ + threshold) return false;
  malloc_trim(0);
  free_after_trim_ = mallinfo2().fordblks;
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
