// core::Series: one sample of one series on its way to remote write (a recording result,
// ALERTS / ALERTS_FOR_STATE, or a staleness marker). Its labels, __name__ included, are
// `labels` with `overrides` set over them: read them with for_each_label or merged_labels,
// not `labels` alone.
#pragma once

#include <bit>
#include <cstdint>
#include <span>

#include "core/labels.hpp"

namespace core {

struct Series {
  // The series' labels, or with `overrides` the base they are derived from.
  Labels labels;
  double value = 0;
  int64_t timestamp_ms = 0;
  // Labels set over `labels` (one of the same name is replaced), sorted by name, in storage
  // that outlives the series (static). ALERTS and ALERTS_FOR_STATE share their alert's block
  // this way instead of building a block of their own for every round. Empty otherwise.
  std::span<const Label> overrides;

  // f(const Label&) for each label in name order, overrides merged in.
  template <class F>
  void for_each_label(F&& f) const {
    auto it = labels.begin();
    const auto end = labels.end();
    size_t j = 0;
    while (it != end || j < overrides.size()) {
      if (j == overrides.size() || (it != end && (*it).name < overrides[j].name)) {
        f(*it);
        ++it;
        continue;
      }
      if (it != end && (*it).name == overrides[j].name) ++it;
      f(overrides[j]);
      ++j;
    }
  }

  // The labels as one set (tests, logs, the rare comparisons by text).
  [[nodiscard]] Labels merged_labels() const {
    if (overrides.empty()) return labels;
    LabelsBuilder b;
    b.reset(labels);
    for (const auto& l : overrides) b.set(l.name, l.value);
    return b.build();
  }
};

// Prometheus' staleness marker value (a NaN with payload 2: value.StaleNaN).
inline constexpr uint64_t kStaleNaNBits = 0x7ff0000000000002ULL;
[[nodiscard]] inline double stale_nan() { return std::bit_cast<double>(kStaleNaNBits); }
[[nodiscard]] inline bool is_stale_nan(double v) { return std::bit_cast<uint64_t>(v) == kStaleNaNBits; }

}  // namespace core
