#include "core/vm_histogram.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <string>

namespace core {
namespace {

constexpr int kE10Min = -9;
constexpr int kE10Max = 18;
constexpr int kPerDecimal = 18;
constexpr int kBuckets = (kE10Max - kE10Min) * kPerDecimal;

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

// The library's range strings: the bounds come from repeated multiplication by 10^(1/18)
// (not from pow per bucket), so their last digits are the library's own.
const std::array<std::string, kBuckets + 2>& ranges() {
  static const auto r = [] {
    std::array<std::string, kBuckets + 2> out;
    const double mult = std::pow(10.0, 1.0 / kPerDecimal);
    double v = std::pow(10.0, kE10Min);
    std::string start = sci(v);
    out[0] = "0..." + start;
    for (int i = 0; i < kBuckets; ++i) {
      v *= mult;
      std::string end = sci(v);
      out[static_cast<size_t>(i) + 1] = start + "..." + end;
      start = std::move(end);
    }
    out[kBuckets + 1] = sci(std::pow(10.0, kE10Max)) + "...+Inf";
    return out;
  }();
  return r;
}

}  // namespace

void VmHistogram::update(double v) {
  if (std::isnan(v) || v < 0) return;
  const double at = (std::log10(v) - kE10Min) * kPerDecimal;
  int idx = 0;
  if (at < 0) {
    idx = -1;
  } else if (at >= kBuckets) {
    idx = kBuckets;
  } else {
    idx = static_cast<int>(at);
    // A power-of-ten bound belongs to the bucket below it (Prometheus' `le`).
    if (at == static_cast<double>(idx) && idx > 0) --idx;
  }
  ++buckets_[idx];
  sum_ += v;
  ++count_;
}

void VmHistogram::visit(
    const std::function<void(std::string_view vmrange, uint64_t count)>& f) const {
  const auto& r = ranges();
  for (const auto& [idx, n] : buckets_) f(r[static_cast<size_t>(idx + 1)], n);
}

}  // namespace core
