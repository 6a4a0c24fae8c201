// Allocation counting for benchmarks: linking bench_alloc replaces global operator new/delete.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alertd_bench {

struct AllocStats {
  uint64_t allocations = 0;
  uint64_t bytes = 0;
  uint64_t live_bytes = 0;
  uint64_t peak_live_bytes = 0;
};

// Counters since process start (relaxed atomics).
AllocStats alloc_stats();
// Sets peak_live_bytes to the current live_bytes, to measure the peak of one operation.
void reset_peak();

}  // namespace alertd_bench
