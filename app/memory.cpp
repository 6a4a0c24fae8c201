#include "app/memory.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

namespace app {

namespace {

struct Statm {
  size_t resident = 0;  // bytes
  size_t shared = 0;    // bytes of the resident ones backed by files (RssFile + RssShmem)
};

// /proc/self/statm's second and third fields; zeros when unknown.
Statm read_statm() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return {};
  buf[n] = '\0';
  unsigned long long size = 0;
  unsigned long long resident = 0;
  unsigned long long shared = 0;
  if (std::sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) != 3) return {};
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return {static_cast<size_t>(resident) * page, static_cast<size_t>(shared) * page};
}

size_t resident_bytes() { return read_statm().resident; }

using Ranges = std::vector<std::pair<uintptr_t, uintptr_t>>;

// The mappings holding anonymous pages, from /proc/self/smaps: in a read-only segment these are
// pages written after all (a debugger's breakpoint, a hot patch), whose only copy they are.
// Nothing when smaps cannot be read: then nothing is released.
std::optional<Ranges> written_mappings() {
  Ranges out;
  std::FILE* f = std::fopen("/proc/self/smaps", "re");
  if (f == nullptr) return std::nullopt;
  char line[512];
  uintptr_t begin = 0;
  uintptr_t end = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long b = 0;
    unsigned long long e = 0;
    unsigned long long kb = 0;
    if (std::sscanf(line, "%llx-%llx ", &b, &e) == 2) {
      begin = static_cast<uintptr_t>(b);
      end = static_cast<uintptr_t>(e);
    } else if (std::sscanf(line, "Anonymous: %llu kB", &kb) == 1 && kb > 0) {
      out.emplace_back(begin, end);
    }
  }
  std::fclose(f);
  return out;
}

// dl_iterate_phdr's callback: runs with the loader's lock held, so no object is unloaded (and
// its range reused) while its segments are released. `data`: the written_mappings().
int release_object(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  const auto& written = *static_cast<const Ranges*>(data);
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t vdso = ::getauxval(AT_SYSINFO_EHDR);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && vdso != 0 && info->dlpi_addr + ph.p_vaddr <= vdso &&
        vdso < info->dlpi_addr + ph.p_vaddr + ph.p_memsz) {
      return 0;  // the vDSO: the kernel's own pages
    }
    if (ph.p_type != PT_DYNAMIC) continue;
    // Text relocations: the loader wrote into a read-only segment, which then holds the only
    // copy of what it wrote.
    const auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_TEXTREL) return 0;
      if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL) != 0) return 0;
    }
  }
  // The ranges first, then the releases: the program headers sit in the object's first
  // read-only page, and reading them after that page went would bring it back, with the kernel's
  // fault-around (up to 64 kB) beside it, for every object.
  std::array<std::pair<uintptr_t, uintptr_t>, 16> ranges{};
  size_t n = 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && n < ranges.size(); ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0) continue;
    // Whole pages inside the segment only: a page it shares with a writable neighbour keeps
    // that neighbour's data.
    const uintptr_t begin = (info->dlpi_addr + ph.p_vaddr + page - 1) & ~(page - 1);
    const uintptr_t end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz) & ~(page - 1);
    const bool was_written = std::any_of(written.begin(), written.end(), [&](const auto& w) {
      return w.first < end && begin < w.second;
    });
    if (end > begin && !was_written) ranges[n++] = {begin, end};
  }
  for (size_t i = 0; i < n; ++i) {
    // EINVAL for a locked range (mlockall): it stays resident, as asked.
    ::madvise(reinterpret_cast<void*>(ranges[i].first), ranges[i].second - ranges[i].first,
              MADV_DONTNEED);
  }
  return 0;
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

bool malloc_is_libcs() {
  void* const sym = ::dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info{};
  if (sym == nullptr || ::dladdr(sym, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* const base = std::strrchr(info.dli_fname, '/');
  return std::strncmp(base == nullptr ? info.dli_fname : base + 1, "libc.so", 7) == 0;
}

void bind_symbols_at_start(char** argv) {
  // Set beside LD_BIND_NOW by the process that re-executes, read by the re-executed one.
  // Its value is the process name (comm) before the exec: executing /proc/self/exe names the
  // process "exe" (ps, top, pgrep, the journal's _COMM), so the re-executed one takes it back.
  static constexpr const char* kMarker = "ALERTD_BOUND_AT_START";
  if (const char* name = std::getenv(kMarker); name != nullptr) {
    if (*name != '\0') ::prctl(PR_SET_NAME, name, 0, 0, 0);
    // Read by the loader already; what this process starts need not inherit either.
    ::unsetenv("LD_BIND_NOW");
    ::unsetenv(kMarker);
    return;
  }
  if (std::getenv("LD_BIND_NOW") != nullptr) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && *preload != '\0') return;
  // heaptrack's preloaded library takes LD_PRELOAD out of the environment: the exec would drop
  // it. A malloc not from libc means some tool or allocator is in the process; leave it be.
  if (!malloc_is_libcs()) return;
  char name[17] = {};  // PR_GET_NAME writes at most 16 bytes, the terminator included
  if (::prctl(PR_GET_NAME, name, 0, 0, 0) != 0) name[0] = '\0';
  if (::setenv("LD_BIND_NOW", "1", 1) != 0 || ::setenv(kMarker, name, 1) != 0) {
    ::unsetenv("LD_BIND_NOW");
    return;
  }
  ::execv("/proc/self/exe", argv);
  ::unsetenv("LD_BIND_NOW");
  ::unsetenv(kMarker);
}

size_t release_file_pages() {
  const std::optional<Ranges> written = written_mappings();
  if (!written) return 0;
  const Statm before = read_statm();
  ::dl_iterate_phdr(release_object, const_cast<Ranges*>(&*written));
  const Statm after = read_statm();
  return before.shared > after.shared ? before.shared - after.shared : 0;
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

void MemoryReleaser::after_work(bool full) {
  std::unique_lock lock(mu_);
  if (stop_) return;
  last_request_ = std::chrono::steady_clock::now();
  full_pending_ = full_pending_ || full;
  if (pending_) return;
  pending_ = true;
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { run(); });
    return;
  }
  lock.unlock();
  cv_.notify_one();
}

void MemoryReleaser::after_startup(std::chrono::steady_clock::duration again_after) {
  {
    std::lock_guard lock(mu_);
    release_files_ = true;
    release_again_at_ = std::chrono::steady_clock::now() + again_after;
    files_settle_ = again_after;
  }
  after_work(true);
}

void MemoryReleaser::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    // A request, or the second release after_startup() asked for.
    while (!stop_ && !pending_) {
      if (!release_again_at_) {
        cv_.wait(lock);
      } else if (cv_.wait_until(lock, *release_again_at_) == std::cv_status::timeout) {
        last_request_ = std::chrono::steady_clock::now();
        pending_ = true;
      }
    }
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
    if (release_again_at_ && last_check_ >= *release_again_at_) {
      release_again_at_.reset();
      release_files_ = true;
    }
    const bool asked = std::exchange(release_files_, false);
    const bool full = std::exchange(full_pending_, false) || asked;
    const std::optional<std::chrono::steady_clock::duration> settle_files = files_settle_;
    lock.unlock();
    const Statm statm = read_statm();
    bool trimmed = false;
    bool full_check = false;
    {
      std::lock_guard check_lock(check_mu_);
      full_check = full || !steady_at(statm.resident, last_check_);
      if (full_check) trimmed = check();
    }
    // Work the rounds do not do (a refused answer's error path, a first burst of API reads)
    // leaves its code pages resident. The first check once the last asked-for release is
    // `settle_files` old (the rounds have brought back what they use by then) notes the level;
    // a later one that finds the file pages grown beyond it releases them again, at most once
    // per `settle_files` (a spike still running brings some back: the next one takes them).
    const auto now = std::chrono::steady_clock::now();
    bool grown = false;
    if (settle_files && now >= files_released_at_ + *settle_files) {
      const size_t files = statm.shared;
      if (!files_base_) {
        files_base_ = files;
      } else {
        grown = files > *files_base_ + std::max(kMinFileGrowth, *files_base_ / 8);
      }
    }
    std::optional<size_t> released;
    if (asked || grown) {
      released = release_file_pages();
      if (asked) files_base_.reset();  // after startup or a reload: the work may differ
      files_released_at_ = now;
    }
    // Counted once the whole check is done: a caller that saw the count go up sees its effects.
    lock.lock();
    ++checks_;
    if (full_check) ++full_checks_;
    if (trimmed) ++trims_;
    if (released) {
      ++file_releases_;
      file_bytes_released_ = *released;
    }
  }
}

bool MemoryReleaser::check_now() {
  std::lock_guard lock(check_mu_);
  const bool trimmed = check();
  std::lock_guard counts(mu_);
  ++checks_;
  ++full_checks_;
  if (trimmed) ++trims_;
  return trimmed;
}

uint64_t MemoryReleaser::checks() const {
  std::lock_guard lock(mu_);
  return checks_;
}

uint64_t MemoryReleaser::full_checks() const {
  std::lock_guard lock(mu_);
  return full_checks_;
}

uint64_t MemoryReleaser::trims() const {
  std::lock_guard lock(mu_);
  return trims_;
}

uint64_t MemoryReleaser::file_releases() const {
  std::lock_guard lock(mu_);
  return file_releases_;
}

size_t MemoryReleaser::file_bytes_released() const {
  std::lock_guard lock(mu_);
  return file_bytes_released_;
}

bool MemoryReleaser::steady_at(size_t resident, std::chrono::steady_clock::time_point now) const {
  return steady_ && resident != 0 && full_resident_ &&
         resident <= *full_resident_ + full_threshold_ && now - full_at_ < kFullCheckEvery;
}

bool MemoryReleaser::check() {
#if defined(__GLIBC__)
  // Resident bytes beyond those in use (the heap's chunks and the blocks with their own mmap).
  auto slack = [](size_t* in_use, size_t* rss) -> std::optional<size_t> {
    const struct mallinfo2 mi = mallinfo2();
    *rss = resident_bytes();
    if (*rss == 0) return std::nullopt;
    *in_use = mi.uordblks + mi.hblkhd;
    return *rss > *in_use ? *rss - *in_use : 0;
  };
  size_t in_use = 0;
  size_t rss = 0;
  const auto now_slack = slack(&in_use, &rss);
  if (!now_slack) {
    steady_ = false;
    return false;
  }
  // Reuse brought the free level down: that is the new base. It starts at 0, so the first
  // check trims: a base read while a round's free pages were resident would stay too high
  // (a 100k-alert run that first checked after its first rounds never trimmed).
  slack_after_trim_ = std::min(slack_after_trim_, *now_slack);
  const size_t threshold = std::max(min_growth_, in_use / 32);
  const bool trim = *now_slack >= slack_after_trim_ + threshold;
  if (trim) {
    malloc_trim(0);
    slack_after_trim_ = slack(&in_use, &rss).value_or(*now_slack);
  }
  // Steady: nothing to trim, at the resident size the last full check saw. A check in the
  // middle of a spike sees RSS grown, so the one after it is full again and trims.
  steady_ = !trim && full_resident_ && rss <= *full_resident_ + threshold &&
            *full_resident_ <= rss + threshold;
  full_resident_ = rss;
  full_threshold_ = threshold;
  full_at_ = std::chrono::steady_clock::now();
  return trim;
#else
  return false;
#endif
}

MemoryReleaser& memory_releaser() {
  static MemoryReleaser r;
  return r;
}

}  // namespace app
