// Giving memory back to the OS (issue 12 item 2: "after a spike, RSS comes back within 10% of
// where it was"). glibc keeps freed heap memory for reuse; a one-off large answer or API body
// would otherwise stay in RSS for the rest of the run.
//
//  - tune_malloc() (once, at start): allocations of 1 MiB and more get their own mmap, so
//    freeing them unmaps at once; the threshold is fixed (glibc's default moves up to 32 MiB
//    after the first big free, which is exactly the one-off case).
//  - MemoryReleaser::after_work(): after an API answer (and after_round() after a round), if
//    the heap's free bytes grew by more than a threshold since the last trim, malloc_trim(0)
//    returns the free pages. malloc_trim is called only after a spike. mallinfo2 is not free:
//    it walks every chunk in every free bin (~25 us on the daemon benchmark's heap at 1k
//    alerts, 2.5% of its CPU when each of the many small rounds ended with one), so
//    after_round() checks at most once per `min_check_interval` (a call inside it returns at
//    once; a later round's call does the check).
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>

namespace app {

void tune_malloc();

class MemoryReleaser {
 public:
  // Trims when the heap's free bytes exceed the level after the last trim by this much.
  explicit MemoryReleaser(size_t min_growth = size_t{4} << 20,
                          std::chrono::steady_clock::duration min_check_interval =
                              std::chrono::seconds(1))
      : min_growth_(min_growth), min_check_interval_(min_check_interval) {}
  // Thread-safe. Returns whether it trimmed.
  bool after_work();
  // The same, skipped when the last check was less than `min_check_interval` ago.
  bool after_round();

 private:
  std::mutex mu_;
  size_t min_growth_;
  std::chrono::steady_clock::duration min_check_interval_;
  std::chrono::steady_clock::time_point last_check_{};
  bool check();  // under mu_
  size_t free_after_trim_ = 0;
};

// The process-wide releaser (the loop's rounds and the HTTP thread's answers share the heap).
MemoryReleaser& memory_releaser();

}  // namespace app
