// Process-wide counters and the /metrics page (Prometheus text format, vmalert's metric
// names: vmalert.md §8 and vmalert-observed.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/snapshot.hpp"
#include "datasource/remote_write.hpp"
#include "notifier/notifier.hpp"

namespace app {

struct GlobalCounters {
  std::atomic<uint64_t> execution_total{0};
  std::atomic<uint64_t> execution_errors_total{0};
  std::atomic<uint64_t> alerts_fired_total{0};
  std::atomic<int> config_last_reload_successful{1};
  std::atomic<uint64_t> config_last_reload_total{0};
  std::atomic<uint64_t> config_last_reload_errors_total{0};
  std::atomic<int64_t> config_last_reload_success_timestamp_seconds{0};
  std::atomic<int64_t> start_time_seconds{0};
};

// Renders every metric. `notifiers` may be empty; `remote_write` is null without
// -remoteWrite.url (then no vmalert_remotewrite_* metric is shown).
[[nodiscard]] std::string render_metrics(const SnapshotStore& store, const GlobalCounters& c,
                                         const std::vector<const notifier::Notifier*>& notifiers,
                                         const datasource::RemoteWriteStats* remote_write = nullptr);

// Appends `v` the way Prometheus' text format prints floats ("NaN", "+Inf", shortest form).
void append_metric_value(std::string& out, double v);

}  // namespace app
