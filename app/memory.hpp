// Giving memory back to the OS (issue 12 item 2: "after a spike, RSS comes back within 10% of
// where it was"). glibc keeps freed heap memory for reuse; a one-off large answer or API body
// would otherwise stay in RSS for the rest of the run.
//
//  - tune_malloc() (once, at start): allocations of 1 MiB and more get their own mmap, so
//    freeing them unmaps at once; the threshold is fixed (glibc's default moves up to 32 MiB
//    after the first big free, which is exactly the one-off case).
//  - MemoryReleaser::after_work(): after a round or an API answer, if the heap's free bytes
//    grew by more than a threshold since the last trim, malloc_trim(0) returns the free pages.
//    mallinfo2 is cheap (it sums per-bin totals, it does not walk chunks), malloc_trim is
//    called only after a spike.
#pragma once

#include <cstddef>
#include <mutex>

namespace app {

void tune_malloc();

class MemoryReleaser {
 public:
  // Trims when the heap's free bytes exceed the level after the last trim by this much.
  explicit MemoryReleaser(size_t min_growth = size_t{4} << 20) : min_growth_(min_growth) {}
  // Thread-safe. Returns whether it trimmed.
  bool after_work();

 private:
  std::mutex mu_;
  size_t min_growth_;
  size_t free_after_trim_ = 0;
};

// The process-wide releaser (the loop's rounds and the HTTP thread's answers share the heap).
MemoryReleaser& memory_releaser();

}  // namespace app
