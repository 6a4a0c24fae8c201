// core::VmHistogram against VictoriaMetrics' metrics.Histogram bucket layout.
#include "core/vm_histogram.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace {

std::vector<std::pair<std::string, uint64_t>> buckets(const core::VmHistogram& h) {
  std::vector<std::pair<std::string, uint64_t>> out;
  h.visit([&](std::string_view r, uint64_t n) { out.emplace_back(std::string(r), n); });
  return out;
}

}  // namespace

TEST_CASE("vm histogram: vmrange buckets as VictoriaMetrics writes them", "[core][histogram]") {
  core::VmHistogram h;
  CHECK(buckets(h).empty());
  h.update(0.0123);  // 1.0e-2 * 10^(k/18): the 1.136e-02...1.292e-02 bucket
  h.update(0.0124);
  h.update(1);       // a power of ten belongs to the bucket below it (`le`)
  h.update(0);       // below 1e-9
  h.update(1e19);    // above 1e18
  h.update(-1);      // ignored
  h.update(std::nan(""));
  const std::vector<std::pair<std::string, uint64_t>> want = {
      {"0...1.000e-09", 1},
      {"1.136e-02...1.292e-02", 2},
      {"8.799e-01...1.000e+00", 1},
      {"1.000e+18...+Inf", 1},
  };
  CHECK(buckets(h) == want);
  CHECK(h.count() == 5);
  CHECK(h.sum() == Approx(0.0123 + 0.0124 + 1 + 1e19));
}
