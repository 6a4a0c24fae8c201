#include "core/backoff.hpp"

#include <catch2/catch.hpp>
#include <vector>

using namespace std::chrono_literals;

TEST_CASE("backoff doubles from min up to max and restarts after reset", "[core][backoff]") {
  core::Backoff b(1s, 10s);
  std::vector<core::Duration> waits;
  for (int i = 0; i < 6; ++i) waits.push_back(b.next());
  CHECK(waits == std::vector<core::Duration>{1s, 2s, 4s, 8s, 10s, 10s});
  CHECK(b.failures() == 6);
  b.reset();
  CHECK(b.failures() == 0);
  CHECK(b.next() == 1s);
}

TEST_CASE("backoff jitter stays within [w * (1 - j), w] and repeats with its seed",
          "[core][backoff]") {
  core::Backoff a(1s, 8s, 0.5, 42);
  core::Backoff same(1s, 8s, 0.5, 42);
  core::Backoff other(1s, 8s, 0.5, 7);
  bool differs = false;
  for (core::Duration base : {1s, 2s, 4s, 8s, 8s, 8s}) {
    const auto w = a.next();
    CHECK(w <= base);
    CHECK(w >= base / 2);
    CHECK(same.next() == w);
    differs = differs || other.next() != w;
  }
  CHECK(differs);
}
