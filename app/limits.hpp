// app::raise_fd_limit: at start, raise the soft RLIMIT_NOFILE to the hard limit, as every Go
// program does since Go 1.19 (vmalert included). With systemd's default soft limit of 1024,
// a thousand idle HTTP connections would otherwise leave no descriptors for the datasource
// and Alertmanager clients.
#pragma once

#include <cstdint>

#include "core/error.hpp"

namespace app {

struct FdLimit {
  uint64_t before = 0;  // soft limit found at start
  uint64_t after = 0;   // soft limit now (== before when it was already at the hard limit)
  uint64_t hard = 0;
};

// Raises the soft limit to the hard one (or, when the hard limit is unlimited, to the kernel's
// fs.nr_open). An error (kind io) leaves the limit unchanged; callers log it and go on.
[[nodiscard]] core::Result<FdLimit> raise_fd_limit();

}  // namespace app
