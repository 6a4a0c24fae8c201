// datasource::SeriesWriter: where recording results and the ALERTS / ALERTS_FOR_STATE series
// go (remote write). Never blocks the caller: an implementation queues, batches and sends on its
// own, dropping (and counting) what does not fit its bounded queue.
#pragma once

#include <span>

#include "core/series.hpp"

namespace datasource {

class SeriesWriter {
 public:
  virtual ~SeriesWriter() = default;
  virtual void write(std::span<const core::Series> series) = 0;
};

// No remote write configured: series are not even built (GroupContext::emit_series = false);
// anything written anyway is dropped.
class NullSeriesWriter final : public SeriesWriter {
 public:
  // SeriesWriter
  void write(std::span<const core::Series>) override {}
};

}  // namespace datasource
