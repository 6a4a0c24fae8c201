// app::MemoryReleaser: free heap pages that stay resident go back; requests are coalesced.
#include "app/memory.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "app/metrics.hpp"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcMalloc = false;  // the sanitizer's allocator: malloc_trim has nothing to do
#else
constexpr bool kGlibcMalloc = true;
#endif

size_t rss() { return static_cast<size_t>(app::read_process_stats().resident_bytes); }

// 48 MB in 1 KiB blocks, written to, then all but every 16th freed: 15 KiB holes between the
// kept blocks, whole free pages that stay resident (the kept blocks hold the heap's top, so
// free() has nothing to give back by itself).
struct Holes {
  std::vector<std::unique_ptr<char[]>> kept;
  Holes() {
    std::vector<std::unique_ptr<char[]>> freed;
    for (int i = 0; i < 48 * 1024; ++i) {
      auto& v = (i % 16 == 0) ? kept : freed;
      v.emplace_back(new char[1024]);
      for (int j = 0; j < 1024; j += 64) v.back()[j] = static_cast<char>(i + j);
    }
  }
};

}  // namespace

TEST_CASE("memory releaser: resident free heap pages go back", "[app][memory]") {
  app::MemoryReleaser r(size_t{4} << 20, std::chrono::seconds(0), std::chrono::seconds(0));
  r.check_now();  // the first check trims whatever is free: the base is what is left
  Holes holes;
  const size_t before = rss();
  const bool trimmed = r.check_now();
  const size_t after = rss();
  CHECK(r.checks() == 2);
  if (kGlibcMalloc) {
    CHECK(trimmed);
    // The holes' whole pages (~3 of each 15 KiB hole, ~30 MB in all) leave RSS.
    INFO("RSS before " << before << ", after " << after);
    CHECK(after + (size_t{20} << 20) < before);
    CHECK(r.trims() == 2);
    // Nothing more to give back: a second check does not trim again.
    CHECK_FALSE(r.check_now());
  }
  CHECK(holes.kept.size() == 3 * 1024);
}

TEST_CASE("memory releaser: requests are coalesced into one check", "[app][memory]") {
  app::MemoryReleaser r(size_t{4} << 20, std::chrono::milliseconds(100),
                        std::chrono::milliseconds(50));
  for (int i = 0; i < 100; ++i) r.after_work();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (r.checks() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(r.checks() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(r.checks() == 1);  // no request since: no further check
  r.after_work();
  r.after_round();
  while (r.checks() == 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(r.checks() == 2);
}

TEST_CASE("memory releaser: destroyed with a check pending", "[app][memory]") {
  auto r = std::make_unique<app::MemoryReleaser>(size_t{4} << 20, std::chrono::hours(1),
                                                 std::chrono::hours(1));
  r->after_work();
  r->after_work();
  r.reset();  // joins at once: the wait is cut short
  SUCCEED("destructor returned");
}
