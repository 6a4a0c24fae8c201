// app::MemoryReleaser: free heap pages that stay resident go back; requests are coalesced.
#include "app/memory.hpp"

#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
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

// Up to `limit` bytes of a file, mapped read-only and read: resident file pages.
class FileMapping {
 public:
  FileMapping(const char* path, size_t limit) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0) size_ = std::min(limit, static_cast<size_t>(st.st_size));
    void* p = size_ > 0 ? ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    ::close(fd);
    if (p == MAP_FAILED) {
      size_ = 0;
      return;
    }
    data_ = static_cast<const volatile unsigned char*>(p);
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    for (size_t i = 0; i < size_; i += page) sum_ += data_[i];
  }
  ~FileMapping() {
    if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  [[nodiscard]] size_t touched() const { return data_ == nullptr ? 0 : size_; }

 private:
  const volatile unsigned char* data_ = nullptr;
  size_t size_ = 0;
  unsigned sum_ = 0;
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

TEST_CASE(
    "memory releaser: a steady process gets light checks; growth, a freeing answer or a "
    "spike ending gets full ones",
    "[app][memory]") {
  app::MemoryReleaser r(size_t{4} << 20, std::chrono::milliseconds(0),
                        std::chrono::milliseconds(0));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // One check after a round (`full` false) or after an answer (true); the counts after it.
  auto check = [&](bool full) {
    const uint64_t before = r.checks();
    if (full) {
      r.after_work(true);
    } else {
      r.after_round();
    }
    while (r.checks() == before && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    REQUIRE(r.checks() == before + 1);
  };
  check(false);  // the first check reads the heap (and trims what is free)
  check(false);  // nothing to trim at the same resident size: steady
  CHECK(r.full_checks() == 2);
  const uint64_t trims = r.trims();
  check(false);
  check(false);
  CHECK(r.full_checks() == 2);  // light: statm only
  check(true);                  // an answer may have freed much
  CHECK(r.full_checks() == 3);
  check(false);
  CHECK(r.full_checks() == 3);
  // A spike in use at a check: RSS grew, so the heap is read (nothing to trim yet) ...
  std::vector<std::unique_ptr<char[]>> kept;
  {
    std::vector<std::unique_ptr<char[]>> spike;
    for (int i = 0; i < 48 * 1024; ++i) {
      auto& v = (i % 16 == 0) ? kept : spike;
      v.emplace_back(new char[1024]);
      for (int j = 0; j < 1024; j += 64) v.back()[j] = static_cast<char>(i + j);
    }
    check(false);
    CHECK(r.full_checks() == 4);
    if (kGlibcMalloc) CHECK(r.trims() == trims);
  }
  // ... and once it is over, RSS has not moved but the check after it is full again: it trims.
  const size_t before = rss();
  check(false);
  CHECK(r.full_checks() == 5);
  if (kGlibcMalloc) {
    CHECK(r.trims() == trims + 1);
    INFO("RSS before " << before << ", after " << rss());
    CHECK(rss() + (size_t{20} << 20) < before);
  }
  CHECK(kept.size() == 3 * 1024);
}

TEST_CASE("memory releaser: destroyed with a check pending", "[app][memory]") {
  auto r = std::make_unique<app::MemoryReleaser>(size_t{4} << 20, std::chrono::hours(1),
                                                 std::chrono::hours(1));
  r->after_work();
  r->after_work();
  r.reset();  // joins at once: the wait is cut short
  SUCCEED("destructor returned");
}

namespace {

// FNV-1a over the bytes of the test binary's own read-only segments (its code and constants).
struct ReadOnlySum {
  uint64_t hash = 1469598103934665603ull;
  size_t bytes = 0;
};

// Reads every byte, the redzones ASan puts around constants included.
__attribute__((no_sanitize_address)) int sum_executable(struct dl_phdr_info* info, size_t /*size*/,
                                                        void* data) {
  auto* sum = static_cast<ReadOnlySum*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    for (size_t j = 0; j < ph.p_memsz; ++j) sum->hash = (sum->hash ^ p[j]) * 1099511628211ull;
    sum->bytes += ph.p_memsz;
  }
  return 1;  // the first object is the executable
}

ReadOnlySum executable_sum() {
  ReadOnlySum sum;
  dl_iterate_phdr(sum_executable, &sum);
  return sum;
}

}  // namespace

TEST_CASE("release_file_pages: read-only pages leave RSS, and read back the same",
          "[app][memory]") {
  const ReadOnlySum before = executable_sum();  // every read-only page of the binary resident
  REQUIRE(before.bytes > (size_t{1} << 20));
  const size_t rss_before = rss();
  const size_t released = app::release_file_pages();
  const size_t rss_after = rss();
  INFO("released " << released << " bytes; RSS " << rss_before << " -> " << rss_after);
  // At least the binary's own pages, just read in full, left the resident set.
  CHECK(released >= before.bytes / 2);
  CHECK(rss_after + before.bytes / 2 <= rss_before);
  // Read again, from the page cache: the same bytes. Code in the binary and in libraries runs.
  const ReadOnlySum again = executable_sum();
  CHECK(again.bytes == before.bytes);
  CHECK(again.hash == before.hash);
  std::vector<std::string> words{"pear", "apple", "fig"};
  std::sort(words.begin(), words.end());
  CHECK(words == std::vector<std::string>{"apple", "fig", "pear"});
  CHECK(std::to_string(1.5) == "1.500000");
}

TEST_CASE("memory releaser: after_startup() releases file pages once, at its next check",
          "[app][memory]") {
  app::MemoryReleaser r(size_t{4} << 20, std::chrono::milliseconds(0),
                        std::chrono::milliseconds(20));
  (void)executable_sum();  // the binary's pages resident
  r.after_startup(std::chrono::hours(1));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (r.file_releases() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(r.file_releases() == 1);
  CHECK(r.file_bytes_released() > 0);
  // A plain request checks the heap only.
  const uint64_t checks = r.checks();
  r.after_work();
  while (r.checks() == checks && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(r.checks() == checks + 1);
  CHECK(r.file_releases() == 1);
}

TEST_CASE("memory releaser: after_startup() releases again once the first rounds are done",
          "[app][memory]") {
  app::MemoryReleaser r(size_t{4} << 20, std::chrono::milliseconds(0),
                        std::chrono::milliseconds(20));
  r.after_startup(std::chrono::milliseconds(300));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (r.file_releases() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(r.file_releases() == 1);
  (void)executable_sum();  // the binary's pages resident again
  // No request comes: the second release runs on its own, once.
  while (r.file_releases() == 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(r.file_releases() == 2);
  CHECK(r.file_bytes_released() > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(r.file_releases() == 2);
}

TEST_CASE("memory releaser: file pages that grew after the first rounds are released again",
          "[app][memory]") {
  app::MemoryReleaser r(size_t{4} << 20, std::chrono::milliseconds(0),
                        std::chrono::milliseconds(20));
  // Long enough that reading a 16 MB mapping and a check fit in it on a loaded machine.
  const auto settle = std::chrono::seconds(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto check = [&] {
    const uint64_t before = r.checks();
    r.after_work();
    while (r.checks() == before && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(r.checks() == before + 1);
  };
  r.after_startup(settle);
  while (r.file_releases() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(r.file_releases() == 2);  // after startup, and once the first rounds are done
  check();                          // the level the work brings back
  {
    // Work the rounds do not do brings file pages in: 16 MB of a file read through a mapping
    // of its own (a release leaves it alone: the count tells). Too soon after the last
    // release: not released.
    FileMapping file("/proc/self/exe", size_t{16} << 20);
    REQUIRE(file.touched() >= (size_t{8} << 20));
    if (std::chrono::steady_clock::now() < deadline) check();
    CHECK(r.file_releases() == 2);
  }
  std::this_thread::sleep_for(settle + std::chrono::milliseconds(50));
  check();  // settled: notes the level
  {
    FileMapping file("/proc/self/exe", size_t{16} << 20);
    REQUIRE(file.touched() >= (size_t{8} << 20));
    check();
  }
  CHECK(r.file_releases() == 3);
  {
    // Grown again at once (a spike still running): too soon after that release, left for the
    // first check `settle` after it.
    FileMapping file("/proc/self/exe", size_t{16} << 20);
    REQUIRE(file.touched() >= (size_t{8} << 20));
    check();
    CHECK(r.file_releases() == 3);
    std::this_thread::sleep_for(settle + std::chrono::milliseconds(50));
    check();
  }
  CHECK(r.file_releases() == 4);
  std::this_thread::sleep_for(settle + std::chrono::milliseconds(50));
  check();  // nothing grew beyond the level noted: nothing to release
  CHECK(r.file_releases() == 4);
}

namespace {

// The first whole page of the test binary's code.
int first_code_page(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0 || ph.p_memsz < 3 * page) continue;
    *static_cast<uintptr_t*>(data) = (info->dlpi_addr + ph.p_vaddr + page - 1) & ~(page - 1);
    return 1;
  }
  return 1;
}

// Writes the byte at `p` back to itself. Not instrumented: ThreadSanitizer has no writable
// shadow for code.
__attribute__((noinline, no_sanitize("address", "thread"))) void rewrite_byte(uintptr_t p) {
  auto* b = reinterpret_cast<volatile unsigned char*>(p);
  *b = *b;
}

// /proc/self/pagemap: whether the page at `addr` is mapped, and whether it is the file's page
// (false: an anonymous copy).
struct PageState {
  bool present = false;
  bool file = false;
};
PageState page_state(uintptr_t addr) {
  PageState st;
  std::FILE* f = std::fopen("/proc/self/pagemap", "re");
  if (f == nullptr) return st;
  uint64_t entry = 0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  if (std::fseek(f, static_cast<long>(addr / page * sizeof(entry)), SEEK_SET) == 0 &&
      std::fread(&entry, sizeof(entry), 1, f) == 1) {
    st.present = (entry >> 63) & 1;
    st.file = (entry >> 61) & 1;
  }
  std::fclose(f);
  return st;
}

}  // namespace

TEST_CASE("release_file_pages: a written page of code stays (a debugger's breakpoint)",
          "[app][memory]") {
  uintptr_t code = 0;
  dl_iterate_phdr(first_code_page, &code);
  REQUIRE(code != 0);
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // As a debugger does: write into the code (here the byte that is there), which makes the page
  // an anonymous copy. The page stays executable: it may hold the PLT that calls mprotect.
  REQUIRE(::mprotect(reinterpret_cast<void*>(code), page, PROT_READ | PROT_WRITE | PROT_EXEC) == 0);
  rewrite_byte(code);
  REQUIRE(::mprotect(reinterpret_cast<void*>(code), page, PROT_READ | PROT_EXEC) == 0);
  const PageState written = page_state(code);
  REQUIRE(written.present);
  CHECK_FALSE(written.file);
  (void)app::release_file_pages();
  const PageState after = page_state(code);
  CHECK(after.present);  // still the written copy: not dropped (that would undo the write)
  CHECK_FALSE(after.file);
}

namespace {

// The page holding libc's program headers (what dl_iterate_phdr hands out), 0 if not found.
int libc_phdr_page(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "/libc.so") == nullptr) return 0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  // Read, so the page is resident whatever an earlier release did.
  const volatile ElfW(Word) type = info->dlpi_phdr[0].p_type;
  (void)type;
  *static_cast<uintptr_t*>(data) = reinterpret_cast<uintptr_t>(info->dlpi_phdr) & ~(page - 1);
  return 1;
}

}  // namespace

TEST_CASE("release_file_pages: the program headers it reads stay released", "[app][memory]") {
  // It reads every object's program headers, which sit in the object's first read-only page;
  // reading them after that page went brought it back (and up to 64 kB around it) each time.
  uintptr_t phdr = 0;
  dl_iterate_phdr(libc_phdr_page, &phdr);
  REQUIRE(phdr != 0);
  REQUIRE(page_state(phdr).present);  // just read; page_state's calls are bound from here on
  (void)app::release_file_pages();
  CHECK_FALSE(page_state(phdr).present);
}

// Run by the test below in the re-executed test binary: what the daemon finds after
// bind_symbols_at_start() re-executed it.
TEST_CASE("bind_symbols_at_start: the re-executed process", "[.bind_child]") {
  const char* bind_now = std::getenv("LD_BIND_NOW");
  REQUIRE(bind_now != nullptr);
  REQUIRE(std::string(bind_now) == "1");
  app::bind_symbols_at_start(nullptr);  // the re-executed side: returns at once
  REQUIRE(std::getenv("LD_BIND_NOW") == nullptr);
  REQUIRE(std::getenv("ALERTD_BOUND_AT_START") == nullptr);
  char name[17] = {};
  REQUIRE(::prctl(PR_GET_NAME, name, 0, 0, 0) == 0);
  REQUIRE(std::string(name) == "bind-parent");  // not "exe", the exec's
  std::_Exit(42);  // the parent's proof that this ran and passed (Catch exits 0 for no test)
}

TEST_CASE(
    "bind_symbols_at_start: re-executes once with LD_BIND_NOW=1 under the same name, "
    "then cleans up",
    "[app][memory]") {
  ::unsetenv("LD_BIND_NOW");
  ::unsetenv("ALERTD_BOUND_AT_START");
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && *preload != '\0') {
    WARN("LD_PRELOAD is set (" << preload << "): bind_symbols_at_start() leaves such a process be");
    return;
  }
  if (!app::malloc_is_libcs()) {
    WARN("malloc is not libc's (a sanitizer build): bind_symbols_at_start() leaves it be");
    return;
  }
  std::string name = "bind_symbols_at_start: the re-executed process";
  std::string self = "unit_app";
  char* child_argv[] = {self.data(), name.data(), nullptr};
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Quiet: the parent checks the exit status.
    std::FILE* null = std::freopen("/dev/null", "w", stdout);
    (void)null;
    ::prctl(PR_SET_NAME, "bind-parent", 0, 0, 0);  // the name the re-executed child keeps
    app::bind_symbols_at_start(child_argv);
    ::_exit(97);  // not re-executed
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 42);  // 97: no exec; 0 or 1: the child's test did not pass
  CHECK(std::getenv("LD_BIND_NOW") == nullptr);  // this process untouched
}

TEST_CASE("malloc_is_libcs: false only where a sanitizer replaced malloc", "[app][memory]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  CHECK_FALSE(app::malloc_is_libcs());
#else
  CHECK(app::malloc_is_libcs());
#endif
}

TEST_CASE("bind_symbols_at_start: leaves LD_BIND_NOW the user set, and preloaded tools, be",
          "[app][memory]") {
  ::setenv("LD_BIND_NOW", "", 1);
  app::bind_symbols_at_start(nullptr);  // returns: no exec with a null argv
  CHECK(std::string(std::getenv("LD_BIND_NOW")) == "");
  ::unsetenv("LD_BIND_NOW");
  const char* preload = std::getenv("LD_PRELOAD");
  const std::string saved = preload == nullptr ? "" : preload;
  ::setenv("LD_PRELOAD", "libnothing.so", 1);
  app::bind_symbols_at_start(nullptr);
  CHECK(std::getenv("LD_BIND_NOW") == nullptr);
  if (preload == nullptr) {
    ::unsetenv("LD_PRELOAD");
  } else {
    ::setenv("LD_PRELOAD", saved.c_str(), 1);
  }
}
