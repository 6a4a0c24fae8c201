// Giving memory back to the OS (issue 12 item 2: "after a spike, RSS comes back within 10% of
// where it was"). glibc keeps freed heap memory for reuse; a one-off large answer or API body,
// or the burst a round leaves behind (a round's notifications wait in the delivery queue until
// Alertmanager has them: ~17 MB at 100k alerts), would otherwise stay in RSS until reused.
//
//  - tune_malloc() (once, at start): allocations of 1 MiB and more get their own mmap, so
//    freeing them unmaps at once; the threshold is fixed (glibc's default moves up to 32 MiB
//    after the first big free, which is exactly the one-off case). And one arena: glibc gives
//    each thread that allocates an arena of its own (up to 8 per core), and what the HTTP
//    thread's arena held for one burst of API reads stayed resident (~1.3 MB at 2,000 alerts,
//    where the main heap holds 3.5 MB); the threads besides the loop's allocate little, so
//    sharing the main arena costs no measurable time.
//  - MemoryReleaser::after_work() (after an API answer, a round, a drained notifier queue) only
//    asks for a check: a small thread of the releaser's runs it once the process has been
//    quiet for `settle` (a burst of rounds and POSTs gets one check after its end, not one in
//    the middle of it), and at most once per `min_check_interval`. The caller never waits.
//  - A check compares resident memory (/proc/self/statm) with the heap's bytes in use
//    (mallinfo2): what is resident beyond them is free heap pages (and the process's fixed
//    part). When that slack has grown by more than max(min_growth, 1/32 of the heap in use)
//    since the last trim, malloc_trim(0) returns the free pages. mallinfo2 walks every free
//    chunk (~25 us at 1k alerts, ~100 us at 100k, hot; ~400 us at 1k with the cold caches a
//    check after idle finds on a VM: a few % of a 1k daemon's CPU), hence the rate limit, and
//    the light checks: min_growth is 256 KiB: after a spike, or a round whose buffers left free
//    pages at the heap's top, RSS comes back within ~3% of a 10 MB process (1 MiB let a
//    10k-alert daemon sit ~1 MB above its level).
//  - Light checks. Once two checks in a row found nothing to trim at the same resident size
//    (within the threshold), the process is steady: a check after a round then reads only
//    statm and skips mallinfo2 while RSS stays within the threshold of that size, for up to
//    kFullCheckEvery. RSS growing (a spike, more alerts), after_work(true) (an API answer, whose
//    building freed much without RSS growing) or a trim end the steady state. What only a
//    light check can miss is the heap in use shrinking while RSS stays put (a long backlog
//    drained, many alerts resolved at once): that waits for the next full check, at most
//    kFullCheckEvery later.
//  - release_file_pages() (through after_startup(), once startup or a reload is over, and once
//    more when the first rounds are done): the code and read-only data that startup touched
//    (the dynamic linker's symbol tables, option parsing, yaml-cpp, OpenSSL's set-up) stay
//    mapped, and the kernel maps 64 kB around each page fault: ~10 MB of file pages resident at
//    10k alerts, of which the rounds and the API use ~6. It unmaps every read-only segment of
//    every loaded object; what is used is mapped again from the page cache on its next touch
//    (a minor fault), the rest stays out of the process. The second release drops what only
//    the first rounds used (first-time symbol binding, new alerts, the first notifications).
//    Later, a check also releases them when they have grown by 512 kB (or an eighth) beyond
//    the level the first check after the first rounds saw (three longest intervals after the
//    release at startup or reload), at most once per three longest intervals: the code only a
//    spike ran (a refused answer's error path, a first burst of API reads) leaves too, and the
//    rounds' own code, back by then, does not cause a release.
//  - bind_symbols_at_start() (first thing the daemon does): the libraries bind their calls
//    into each other lazily, at a call's first use, and each such binding looks the name up in
//    the symbol tables of every library before the one defining it. One late first call (a
//    path the first rounds did not take) maps those tables back in, and 64 kB around each:
//    ~1.6 MB at 10k alerts after both releases. The daemon re-executes itself once with
//    LD_BIND_NOW=1, so the loader binds everything before the releases and looks nothing up
//    afterwards. alertd's own calls are bound at start by its link (-z now).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

namespace app {

void tune_malloc();

// Unmaps the resident pages of every read-only segment (code, constants, symbol tables) of the
// executable and its loaded libraries. These pages are never written, so the kernel maps them
// again from the page cache when they are next used. Objects with text relocations, and
// segments with pages written after all (a debugger's breakpoints), are left alone; without
// /proc/self/smaps to tell those, nothing is released. Returns how many bytes of file-backed
// memory left the resident set (0 when unknown).
size_t release_file_pages();

// Re-executes this program (/proc/self/exe, the same argv and PID) with LD_BIND_NOW=1 in its
// environment, so the dynamic loader binds every symbol of every library at start-up. Returns
// in the re-executed process (having given it back the process name the exec took, and taken
// both variables it set out of the environment again, so nothing it starts inherits them),
// and without re-executing when LD_BIND_NOW is set already (to anything, even empty: the
// user's choice), when LD_PRELOAD is (a tool such as valgrind is in the process), when malloc
// is not libc's (heaptrack, which takes itself out of LD_PRELOAD; a sanitizer; another
// allocator), or when the exec fails (no /proc): the process then goes on as it is, only with
// more of its libraries' pages resident.
void bind_symbols_at_start(char** argv);

// Whether the malloc calls resolve to is libc's (not a sanitizer's, a profiler's or another
// allocator's).
[[nodiscard]] bool malloc_is_libcs();

class MemoryReleaser {
 public:
  explicit MemoryReleaser(
      size_t min_growth = size_t{256} << 10,
      std::chrono::steady_clock::duration min_check_interval = std::chrono::seconds(5),
      std::chrono::steady_clock::duration settle = std::chrono::milliseconds(200));
  ~MemoryReleaser();
  MemoryReleaser(const MemoryReleaser&) = delete;
  MemoryReleaser& operator=(const MemoryReleaser&) = delete;

  // Thread-safe and cheap (a lock, a wake-up when none is pending): asks for a check. `full`:
  // the work may have freed much without RSS growing (an API answer), so the check reads the
  // heap's totals even when the process is steady (see the top of this file).
  void after_work(bool full = true);
  // A round is over: a light check when the process is steady.
  void after_round() { after_work(false); }
  // Startup or a reload is over: the next check also runs release_file_pages(), and so does
  // the first check `again_after` later; from then on, so does a check that finds the file
  // pages grown (see the top of this file) once the last release is `again_after` old.
  void after_startup(std::chrono::steady_clock::duration again_after);
  // Runs a check now, on the calling thread; returns whether it trimmed (tests, /debug).
  bool check_now();
  // Checks done (light ones included), full checks done, and trims made so far (tests).
  [[nodiscard]] uint64_t checks() const;
  [[nodiscard]] uint64_t full_checks() const;
  [[nodiscard]] uint64_t trims() const;
  // File-page releases done so far, and the bytes the last one took out of the resident set.
  [[nodiscard]] uint64_t file_releases() const;
  [[nodiscard]] size_t file_bytes_released() const;

 private:
  void run();
  bool check();  // a full check, under check_mu_
  // Under check_mu_: whether the process is steady at `resident` bytes (a light check does).
  [[nodiscard]] bool steady_at(size_t resident, std::chrono::steady_clock::time_point now) const;

  size_t min_growth_;
  std::chrono::steady_clock::duration min_check_interval_;
  std::chrono::steady_clock::duration settle_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
  bool full_pending_ = false;   // after_work(true) since the last check
  bool release_files_ = false;  // after_startup() asked for release_file_pages()
  std::optional<std::chrono::steady_clock::time_point> release_again_at_;
  bool stop_ = false;
  std::chrono::steady_clock::time_point last_request_{};
  std::chrono::steady_clock::time_point last_check_{};
  uint64_t checks_ = 0;
  uint64_t full_checks_ = 0;
  uint64_t trims_ = 0;
  uint64_t file_releases_ = 0;
  size_t file_bytes_released_ = 0;

  // Set by after_startup(): how long after a release of file pages the work has brought back
  // what it uses; unset, file pages are released only when asked.
  std::optional<std::chrono::steady_clock::duration> files_settle_;
  // The releaser thread's own: when file pages were last released, and the file-backed
  // resident bytes the first check files_settle_ after the last asked-for release saw (unset
  // before that check). A later check that finds them grown by kMinFileGrowth (or an eighth)
  // beyond that releases them again, files_settle_ after the last release at the earliest.
  static constexpr size_t kMinFileGrowth = size_t{512} << 10;
  std::optional<size_t> files_base_;
  std::chrono::steady_clock::time_point files_released_at_{};

  std::mutex check_mu_;
  size_t slack_after_trim_ = 0;  // resident bytes beyond the heap in use, after a trim
  // The last full check's resident bytes (after its trim) and threshold, when it was; whether
  // it found nothing to trim at the resident size the one before it saw (within the threshold).
  static constexpr std::chrono::seconds kFullCheckEvery{60};
  std::optional<size_t> full_resident_;
  size_t full_threshold_ = 0;
  std::chrono::steady_clock::time_point full_at_{};
  bool steady_ = false;
  std::thread thread_;           // started on the first request
};

// The process-wide releaser (the loop's rounds and the HTTP thread's answers share the heap).
MemoryReleaser& memory_releaser();

}  // namespace app
