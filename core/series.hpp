// core::Series: one sample of one series on its way to remote write (a recording result,
// ALERTS / ALERTS_FOR_STATE, or a staleness marker). `labels` include __name__.
#pragma once

#include <bit>
#include <cstdint>

#include "core/labels.hpp"

namespace core {

struct Series {
  Labels labels;
  double value = 0;
  int64_t timestamp_ms = 0;
};

// Prometheus' staleness marker value (a NaN with payload 2: value.StaleNaN).
inline constexpr uint64_t kStaleNaNBits = 0x7ff0000000000002ULL;
[[nodiscard]] inline double stale_nan() { return std::bit_cast<double>(kStaleNaNBits); }
[[nodiscard]] inline bool is_stale_nan(double v) { return std::bit_cast<uint64_t>(v) == kStaleNaNBits; }

}  // namespace core
