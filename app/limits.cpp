#include "app/limits.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace app {

namespace {

// Linux refuses RLIM_INFINITY for RLIMIT_NOFILE: the ceiling is fs.nr_open.
rlim_t nr_open() {
  std::ifstream in("/proc/sys/fs/nr_open");
  unsigned long long v = 0;
  if (in >> v && v > 0) return static_cast<rlim_t>(v);
  return 1 << 20;
}

}  // namespace

core::Result<FdLimit> raise_fd_limit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    return core::fail(std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno),
                      core::ErrorKind::io);
  }
  FdLimit out{rl.rlim_cur, rl.rlim_cur, rl.rlim_max};
  const rlim_t target = rl.rlim_max == RLIM_INFINITY ? nr_open() : rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= target) return out;
  rl.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
    return core::fail("setrlimit(RLIMIT_NOFILE, " + std::to_string(target) +
                          "): " + std::strerror(errno),
                      core::ErrorKind::io);
  }
  out.after = target;
  return out;
}

}  // namespace app
