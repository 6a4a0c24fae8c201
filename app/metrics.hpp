// Process-wide counters and the /metrics page (Prometheus text format, vmalert's metric
// names: vmalert.md §8 and vmalert-observed.md).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <optional>
#include <utility>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/snapshot.hpp"
#include "core/vm_histogram.hpp"
#include "datasource/remote_write.hpp"
#include "notifier/notifier.hpp"

namespace app {

// The quantiles of vmalert's summaries (VictoriaMetrics/metrics Summary): 0.5, 0.9, 0.97, 0.99
// and 1 over what was observed in the last 5 minutes (at most kMaxKept observations).
class RecentQuantiles {
 public:
  static constexpr std::array<double, 5> kQuantiles{0.5, 0.9, 0.97, 0.99, 1};
  static constexpr std::chrono::seconds kWindow{300};
  static constexpr size_t kMaxKept = 4096;

  void observe(std::chrono::steady_clock::time_point now, double value);
  // Nearest-rank quantiles of the window; nullopt when it is empty.
  [[nodiscard]] std::optional<std::array<double, 5>> quantiles(
      std::chrono::steady_clock::time_point now);

 private:
  std::deque<std::pair<std::chrono::steady_clock::time_point, double>> window_;
};

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

// One -pushmetrics.url's figures (app/pushmetrics.hpp), shown as the Go metrics library's
// metrics_push_*{url} families.
struct PushTargetStats {
  std::string url;  // go_redacted_url(): the password replaced by "xxxxx"
  double interval_seconds = 0;
  std::atomic<uint64_t> pushes_total{0};  // attempts, as the Go library counts them
  std::atomic<uint64_t> errors_total{0};
  std::atomic<uint64_t> bytes_pushed_total{0};  // request bodies (compressed when they are)
  mutable std::mutex mu;                        // guards the two histograms
  core::VmHistogram duration_seconds;
  core::VmHistogram block_size_bytes;
};

// Renders every metric. `notifiers` may be empty; `remote_write` is null without
// -remoteWrite.url (then no vmalert_remotewrite_* metric is shown); `push` is empty without
// -pushmetrics.url (then no metrics_push_* metric is shown).
[[nodiscard]] std::string render_metrics(const SnapshotStore& store, const GlobalCounters& c,
                                         const std::vector<const notifier::Notifier*>& notifiers,
                                         const datasource::RemoteWriteStats* remote_write = nullptr,
                                         const std::vector<const PushTargetStats*>& push = {});

// The process' own figures from /proc/self (Linux); fields left at -1 / 0 when unreadable.
struct ProcessStats {
  bool ok = false;  // /proc/self/stat was read
  double cpu_user_seconds = 0;
  double cpu_system_seconds = 0;
  double resident_bytes = 0;
  double resident_peak_bytes = 0;
  double virtual_bytes = 0;
  double threads = 0;
  double open_fds = -1;
  double max_fds = -1;  // soft RLIMIT_NOFILE; -1 when unlimited or unknown
  bool io_ok = false;   // /proc/self/io was read (not always permitted in containers)
  double io_read_bytes = 0;
  double io_written_bytes = 0;
  double io_read_syscalls = 0;
  double io_write_syscalls = 0;
  double io_storage_read_bytes = 0;
  double io_storage_written_bytes = 0;
};
[[nodiscard]] ProcessStats read_process_stats();

// Appends `v` the way Prometheus' text format prints floats ("NaN", "+Inf", shortest form).
void append_metric_value(std::string& out, double v);

}  // namespace app
