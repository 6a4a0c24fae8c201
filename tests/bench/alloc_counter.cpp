#include "alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<uint64_t> g_allocs{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_live{0};
std::atomic<uint64_t> g_peak{0};

// A header in front of each block remembers its size, so delete can keep live bytes exact.
constexpr size_t kHeader = alignof(std::max_align_t);

void* counted_alloc(size_t n) {
  auto* p = static_cast<unsigned char*>(std::malloc(n + kHeader));
  if (p == nullptr) throw std::bad_alloc();
  *reinterpret_cast<size_t*>(p) = n;
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  const auto live = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  auto peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  return p + kHeader;
}

void counted_free(void* ptr) {
  if (ptr == nullptr) return;
  auto* p = static_cast<unsigned char*>(ptr) - kHeader;
  g_live.fetch_sub(*reinterpret_cast<size_t*>(p), std::memory_order_relaxed);
  std::free(p);
}
}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }

namespace alertd_bench {
AllocStats alloc_stats() {
  return {g_allocs.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed),
          g_live.load(std::memory_order_relaxed), g_peak.load(std::memory_order_relaxed)};
}
void reset_peak() { g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed); }
}  // namespace alertd_bench
