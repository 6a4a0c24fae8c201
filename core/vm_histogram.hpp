// core::VmHistogram: the histogram of VictoriaMetrics' Go metrics library (metrics.Histogram),
// which vmalert v1.93 uses for vmalert_alerts_send_duration_seconds{addr}. No fixed `le`
// buckets: 18 log-spaced buckets a decade from 1e-9 to 1e18, each written only when not empty as
//   name_bucket{...,vmrange="1.000e-02...1.136e-02"} N
// plus "0...1.000e-09" below and "1.000e+18...+Inf" above, then name_sum and name_count.
// The lower bound is excluded and the upper one included, as Prometheus' `le`.
// Sparse (a map of the buckets hit), so a notifier with a handful of latencies holds a handful
// of counters; not thread-safe (the owner locks).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>

namespace core {

class VmHistogram {
 public:
  // Negative values and NaN are ignored, as in the Go library.
  void update(double v);
  // Calls f(vmrange, count) for every non-empty bucket, lowest first.
  void visit(const std::function<void(std::string_view vmrange, uint64_t count)>& f) const;
  [[nodiscard]] double sum() const { return sum_; }
  [[nodiscard]] uint64_t count() const { return count_; }

 private:
  std::map<int, uint64_t> buckets_;  // -1: below 1e-9; kBuckets: above 1e18
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace core
