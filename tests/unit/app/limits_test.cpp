// app::raise_fd_limit against the test process's own RLIMIT_NOFILE.
#include "app/limits.hpp"

#include <sys/resource.h>

#include <catch2/catch.hpp>

TEST_CASE("raise_fd_limit lifts the soft limit to the hard one", "[app][limits]") {
  rlimit rl{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &rl) == 0);
  const rlim_t low = rl.rlim_max == RLIM_INFINITY ? 256 : std::min<rlim_t>(256, rl.rlim_max);
  rl.rlim_cur = low;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &rl) == 0);

  const auto r = app::raise_fd_limit();
  REQUIRE(r.has_value());
  CHECK(r->before == low);
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &rl) == 0);
  CHECK(r->after == rl.rlim_cur);
  if (rl.rlim_max != RLIM_INFINITY) CHECK(rl.rlim_cur == rl.rlim_max);
  CHECK(rl.rlim_cur >= low);

  // Already at the limit: nothing changes.
  const auto again = app::raise_fd_limit();
  REQUIRE(again.has_value());
  CHECK(again->before == again->after);
}
