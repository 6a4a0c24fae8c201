#include "app/metrics.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/limit_hits.hpp"

namespace app {
namespace {

void append_escaped_label(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

struct Writer {
  std::string& out;
  std::string_view current;

  void header(std::string_view name, std::string_view type, std::string_view help) {
    current = name;
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }
  void sample(std::string_view name,
              std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
              double v) {
    out.append(name);
    if (labels.size() > 0) {
      out += '{';
      bool first = true;
      for (const auto& [k, val] : labels) {
        if (!first) out += ',';
        first = false;
        out.append(k).append("=\"");
        append_escaped_label(out, val);
        out += '"';
      }
      out += '}';
    }
    out += ' ';
    append_metric_value(out, v);
    out += '\n';
  }
};

// process_* as the Prometheus Go client and VictoriaMetrics' lib/procutil expose them (from
// /proc/self; families whose source cannot be read are left out).
void append_process_metrics(Writer& w, double start_time_seconds) {
  const ProcessStats st = read_process_stats();
  auto one = [&w](const char* name, const char* type, const char* help, double v) {
    w.header(name, type, help);
    w.sample(name, {}, v);
  };
  if (st.ok) {
    one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
        st.cpu_user_seconds + st.cpu_system_seconds);
    one("process_cpu_seconds_user_total", "counter", "User CPU time spent in seconds.",
        st.cpu_user_seconds);
    one("process_cpu_seconds_system_total", "counter", "System CPU time spent in seconds.",
        st.cpu_system_seconds);
    one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
        st.resident_bytes);
    one("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
        st.virtual_bytes);
    one("process_num_threads", "gauge", "Number of OS threads.", st.threads);
  }
  if (st.resident_peak_bytes > 0) {
    one("process_resident_memory_peak_bytes", "gauge", "Peak resident memory size in bytes.",
        st.resident_peak_bytes);
  }
  if (st.io_ok) {
    one("process_io_read_bytes_total", "counter", "Bytes read by read-like system calls.",
        st.io_read_bytes);
    one("process_io_written_bytes_total", "counter", "Bytes written by write-like system calls.",
        st.io_written_bytes);
    one("process_io_read_syscalls_total", "counter", "Read-like system calls.",
        st.io_read_syscalls);
    one("process_io_write_syscalls_total", "counter", "Write-like system calls.",
        st.io_write_syscalls);
    one("process_io_storage_read_bytes_total", "counter", "Bytes read from storage.",
        st.io_storage_read_bytes);
    one("process_io_storage_written_bytes_total", "counter", "Bytes written to storage.",
        st.io_storage_written_bytes);
  }
  if (st.open_fds >= 0) {
    one("process_open_fds", "gauge", "Number of open file descriptors.", st.open_fds);
  }
  if (st.max_fds >= 0) {
    one("process_max_fds", "gauge", "Maximum number of open file descriptors.", st.max_fds);
  }
  one("process_start_time_seconds", "gauge",
      "Start time of the process since unix epoch in seconds.", start_time_seconds);
}

// The Go metrics library's metrics_push_*{url} (its WriteProcessMetrics writes them after the
// process_* ones). Histograms as vmalert_alerts_send_duration_seconds above: `_bucket{vmrange}`
// in an untyped family of its own, `_sum` and `_count` under the base name.
void append_push_metrics(Writer& w, const std::vector<const PushTargetStats*>& push) {
  auto counter = [&](const char* name, const char* help, auto get) {
    w.header(name, "counter", help);
    for (const auto* t : push) w.sample(name, {{"url", t->url}}, static_cast<double>(get(*t)));
  };
  counter("metrics_push_total", "Pushes of /metrics to -pushmetrics.url (attempts).",
          [](const PushTargetStats& t) { return t.pushes_total.load(); });
  counter("metrics_push_errors_total",
          "Pushes of /metrics that failed (transport error or non-2xx answer).",
          [](const PushTargetStats& t) { return t.errors_total.load(); });
  counter("metrics_push_bytes_pushed_total", "Request body bytes pushed to -pushmetrics.url.",
          [](const PushTargetStats& t) { return t.bytes_pushed_total.load(); });
  auto histogram = [&](const char* base, const char* bucket, const char* help,
                       core::VmHistogram PushTargetStats::*member) {
    w.header(bucket, "untyped",
             std::string(help) + ", VictoriaMetrics histogram buckets (vmrange).");
    for (const auto* t : push) {
      std::lock_guard lock(t->mu);
      (t->*member).visit([&](std::string_view vmrange, uint64_t n) {
        w.sample(bucket, {{"url", t->url}, {"vmrange", vmrange}}, static_cast<double>(n));
      });
    }
    w.header(base, "summary", help);
    const std::string sum = std::string(base) + "_sum";
    const std::string count = std::string(base) + "_count";
    for (const auto* t : push) {
      std::lock_guard lock(t->mu);
      w.sample(sum, {{"url", t->url}}, (t->*member).sum());
      w.sample(count, {{"url", t->url}}, static_cast<double>((t->*member).count()));
    }
  };
  histogram("metrics_push_duration_seconds", "metrics_push_duration_seconds_bucket",
            "Duration of pushes to -pushmetrics.url", &PushTargetStats::duration_seconds);
  histogram("metrics_push_block_size_bytes", "metrics_push_block_size_bytes_bucket",
            "Request body sizes of pushes to -pushmetrics.url", &PushTargetStats::block_size_bytes);
  w.header("metrics_push_interval_seconds", "gauge", "-pushmetrics.interval in seconds.");
  for (const auto* t : push) {
    w.sample("metrics_push_interval_seconds", {{"url", t->url}}, t->interval_seconds);
  }
}

}  // namespace

void append_metric_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, p);
  }
}

std::string render_metrics(const SnapshotStore& store, const GlobalCounters& c,
                           const std::vector<const notifier::Notifier*>& notifiers,
                           const datasource::RemoteWriteStats* remote_write,
                           const std::vector<const PushTargetStats*>& push) {
  std::string out;
  out.reserve(8192);
  Writer w{out, {}};
  const auto groups = store.all();

  w.header("vmalert_iteration_total", "counter", "Evaluation rounds of a group.");
  for (const auto& g : groups)
    w.sample("vmalert_iteration_total", {{"file", g->file}, {"group", g->name}},
             static_cast<double>(g->iterations_total));
  w.header("vmalert_iteration_missed_total", "counter",
           "Evaluation rounds skipped because the previous one took too long.");
  for (const auto& g : groups)
    w.sample("vmalert_iteration_missed_total", {{"file", g->file}, {"group", g->name}},
             static_cast<double>(g->iterations_missed_total));
  w.header("vmalert_iteration_reset_total", "counter",
           "Times the wall clock moved backward between rounds.");
  for (const auto& g : groups)
    w.sample("vmalert_iteration_reset_total", {{"file", g->file}, {"group", g->name}},
             static_cast<double>(g->iterations_reset_total));
  w.header("vmalert_iteration_interval_seconds", "gauge", "Evaluation interval of a group.");
  for (const auto& g : groups)
    w.sample("vmalert_iteration_interval_seconds", {{"file", g->file}, {"group", g->name}},
             std::chrono::duration<double>(g->interval).count());
  w.header("vmalert_group_rule_results_limit", "gauge",
           "Maximum alerts or series per rule of a group (0 = no limit).");
  for (const auto& g : groups)
    w.sample("vmalert_group_rule_results_limit", {{"file", g->file}, {"group", g->name}},
             static_cast<double>(g->limit));
  w.header("vmalert_iteration_duration_seconds", "summary", "Duration of evaluation rounds.");
  for (const auto& g : groups) {
    if (g->iteration_quantiles) {
      for (size_t i = 0; i < RecentQuantiles::kQuantiles.size(); ++i) {
        std::string q;
        append_metric_value(q, RecentQuantiles::kQuantiles[i]);
        w.sample("vmalert_iteration_duration_seconds",
                 {{"file", g->file}, {"group", g->name}, {"quantile", q}},
                 (*g->iteration_quantiles)[i]);
      }
    }
    w.sample("vmalert_iteration_duration_seconds_sum", {{"file", g->file}, {"group", g->name}},
             g->iteration_seconds_sum);
    w.sample("vmalert_iteration_duration_seconds_count", {{"file", g->file}, {"group", g->name}},
             static_cast<double>(g->iterations_total));
  }

  struct PerRule {
    rules::RuleType kind;
    const char* name;
    const char* type;
    const char* help;
    double (*get)(const RuleSnapshot&);
  };
  using rules::RuleType;
  static const PerRule per_rule[] = {
      {RuleType::alerting, "vmalert_alerts_pending", "gauge", "Pending alerts of a rule.",
       [](const RuleSnapshot& r) { return static_cast<double>(r.pending); }},
      {RuleType::alerting, "vmalert_alerts_firing", "gauge", "Firing alerts of a rule.",
       [](const RuleSnapshot& r) { return static_cast<double>(r.firing); }},
      {RuleType::alerting, "vmalert_alerting_rules_errors_total", "counter",
       "Failed evaluations of a rule.",
       [](const RuleSnapshot& r) { return static_cast<double>(r.errors_total); }},
      {RuleType::alerting, "vmalert_alerting_rules_error", "gauge",
       "1 when the last evaluation of a rule failed.",
       [](const RuleSnapshot& r) { return r.last_error.empty() ? 0.0 : 1.0; }},
      {RuleType::alerting, "vmalert_alerting_rules_last_evaluation_samples", "gauge",
       "Series returned by the last evaluation.",
       [](const RuleSnapshot& r) { return static_cast<double>(r.last_samples); }},
      {RuleType::alerting, "vmalert_alerting_rules_last_evaluation_series_fetched", "gauge",
       "Series the datasource scanned in the last evaluation (-1 if it does not say).",
       [](const RuleSnapshot& r) { return static_cast<double>(r.last_series_fetched); }},
      {RuleType::recording, "vmalert_recording_rules_errors_total", "counter",
       "Failed evaluations of a recording rule.",
       [](const RuleSnapshot& r) { return static_cast<double>(r.errors_total); }},
      {RuleType::recording, "vmalert_recording_rules_error", "gauge",
       "1 when the last evaluation of a recording rule failed.",
       [](const RuleSnapshot& r) { return r.last_error.empty() ? 0.0 : 1.0; }},
      {RuleType::recording, "vmalert_recording_rules_last_evaluation_samples", "gauge",
       "Series returned by the last evaluation of a recording rule.",
       [](const RuleSnapshot& r) { return static_cast<double>(r.last_samples); }},
      {RuleType::recording, "vmalert_recording_rules_last_evaluation_series_fetched", "gauge",
       "Series the datasource scanned in the last evaluation (-1 if it does not say).",
       [](const RuleSnapshot& r) { return static_cast<double>(r.last_series_fetched); }},
  };
  for (const auto& m : per_rule) {
    bool any = false;
    for (const auto& g : groups)
      for (const auto& r : g->rules) any = any || r.type == m.kind;
    if (!any) continue;
    w.header(m.name, m.type, m.help);
    const char* name_label = m.kind == RuleType::alerting ? "alertname" : "recording";
    for (const auto& g : groups) {
      for (const auto& r : g->rules) {
        if (r.type != m.kind) continue;
        const auto id = std::to_string(r.id);
        w.sample(m.name, {{name_label, r.name}, {"file", g->file}, {"group", g->name}, {"id", id}},
                 m.get(r));
      }
    }
  }

  w.header("vmalert_alerts_fired_total", "counter", "Alerts that became firing.");
  w.sample("vmalert_alerts_fired_total", {}, static_cast<double>(c.alerts_fired_total.load()));
  w.header("vmalert_execution_total", "counter", "Rule evaluations.");
  w.sample("vmalert_execution_total", {}, static_cast<double>(c.execution_total.load()));
  w.header("vmalert_execution_errors_total", "counter", "Failed rule evaluations.");
  w.sample("vmalert_execution_errors_total", {},
           static_cast<double>(c.execution_errors_total.load()));

  w.header("vmalert_alerts_sent_total", "counter", "Alerts sent (attempts, failed included).");
  for (const auto* n : notifiers)
    w.sample("vmalert_alerts_sent_total", {{"addr", n->addr()}},
             static_cast<double>(n->stats().sent));
  w.header("vmalert_alerts_send_errors_total", "counter", "Alerts whose send failed.");
  for (const auto* n : notifiers)
    w.sample("vmalert_alerts_send_errors_total", {{"addr", n->addr()}},
             static_cast<double>(n->stats().errors));
  std::vector<notifier::NotifierStats> nstats;
  nstats.reserve(notifiers.size());
  for (const auto* n : notifiers) nstats.push_back(n->stats());
  // vmalert's metrics.Histogram: `_bucket{vmrange}` lines (only non-empty buckets), `_sum`,
  // `_count`. The buckets get a family of their own: under the base name's TYPE a parser
  // expecting Prometheus' `le` would reject them (promtool check metrics).
  w.header("vmalert_alerts_send_duration_seconds_bucket", "untyped",
           "Requests to an Alertmanager by duration, VictoriaMetrics histogram buckets (vmrange).");
  for (size_t i = 0; i < notifiers.size(); ++i) {
    const std::string& addr = notifiers[i]->addr();
    nstats[i].send_duration.visit([&](std::string_view vmrange, uint64_t n) {
      w.sample("vmalert_alerts_send_duration_seconds_bucket",
               {{"addr", addr}, {"vmrange", vmrange}}, static_cast<double>(n));
    });
  }
  w.header("vmalert_alerts_send_duration_seconds", "summary",
           "Duration of requests to an Alertmanager.");
  for (size_t i = 0; i < notifiers.size(); ++i) {
    w.sample("vmalert_alerts_send_duration_seconds_sum", {{"addr", notifiers[i]->addr()}},
             nstats[i].send_seconds);
    w.sample("vmalert_alerts_send_duration_seconds_count", {{"addr", notifiers[i]->addr()}},
             static_cast<double>(nstats[i].posts));
  }
  w.header("vmalert_alerts_dropped_total", "counter",
           "Alerts given up on: full queue, retry deadline, refused by the Alertmanager (alertd).");
  for (size_t i = 0; i < notifiers.size(); ++i)
    w.sample("vmalert_alerts_dropped_total", {{"addr", notifiers[i]->addr()}},
             static_cast<double>(nstats[i].dropped));
  w.header("vmalert_alerts_queue_size", "gauge",
           "Alerts waiting to be sent to an Alertmanager (alertd).");
  for (size_t i = 0; i < notifiers.size(); ++i)
    w.sample("vmalert_alerts_queue_size", {{"addr", notifiers[i]->addr()}},
             static_cast<double>(nstats[i].queued));

  if (remote_write != nullptr) {
    const auto& rw = *remote_write;
    auto counter = [&w](const char* name, const char* help, double v) {
      w.header(name, "counter", help);
      w.sample(name, {}, v);
    };
    auto gauge = [&w](const char* name, const char* help, double v) {
      w.header(name, "gauge", help);
      w.sample(name, {}, v);
    };
    auto u = [](const std::atomic<uint64_t>& a) { return static_cast<double>(a.load()); };
    counter("vmalert_remotewrite_total", "Rows handed to remote write.", u(rw.total));
    counter("vmalert_remotewrite_errors_total",
            "Remote write batches dropped after failing, and rows refused by a full queue.",
            u(rw.errors_total));
    counter("vmalert_remotewrite_sent_rows_total", "Rows delivered by remote write.",
            u(rw.sent_rows_total));
    counter("vmalert_remotewrite_sent_bytes_total",
            "Compressed request bytes delivered by remote write.", u(rw.sent_bytes_total));
    counter("vmalert_remotewrite_dropped_rows_total",
            "Rows remote write gave up on (full queue, failed batch, shutdown).",
            u(rw.dropped_rows_total));
    counter("vmalert_remotewrite_send_duration_seconds_total",
            "Time from a batch's first attempt to its outcome, retries included.",
            u(rw.send_duration_ns_total) / 1e9);
    w.header("vmalert_remotewrite_flush_duration_seconds", "summary",
             "Time to encode and compress a batch.");
    w.sample("vmalert_remotewrite_flush_duration_seconds_sum", {},
             u(rw.flush_duration_ns_total) / 1e9);
    w.sample("vmalert_remotewrite_flush_duration_seconds_count", {}, u(rw.flushes_total));
    counter("vmalert_remotewrite_requests_total",
            "Remote write HTTP attempts, retries included (alertd).", u(rw.requests_total));
    gauge("vmalert_remotewrite_queue_size", "Rows waiting to be sent.", u(rw.queue_size));
    gauge("vmalert_remotewrite_queue_capacity", "-remoteWrite.maxQueueSize.",
          static_cast<double>(rw.queue_capacity));
    gauge("vmalert_remotewrite_concurrency", "-remoteWrite.concurrency.",
          static_cast<double>(rw.concurrency));
  }

  w.header("vmalert_config_last_reload_successful", "gauge", "1 when the last reload worked.");
  w.sample("vmalert_config_last_reload_successful", {},
           static_cast<double>(c.config_last_reload_successful.load()));
  w.header("vmalert_config_last_reload_total", "counter", "Reloads requested.");
  w.sample("vmalert_config_last_reload_total", {},
           static_cast<double>(c.config_last_reload_total.load()));
  w.header("vmalert_config_last_reload_errors_total", "counter", "Failed reloads.");
  w.sample("vmalert_config_last_reload_errors_total", {},
           static_cast<double>(c.config_last_reload_errors_total.load()));
  w.header("vmalert_config_last_reload_success_timestamp_seconds", "gauge",
           "Unix time of the last successful (re)load.");
  w.sample("vmalert_config_last_reload_success_timestamp_seconds", {},
           static_cast<double>(c.config_last_reload_success_timestamp_seconds.load()));
  w.header("alertd_limit_hits_total", "counter",
           "Times a limit refused, dropped or cut something (alertd; docs/faults.md, Limits).");
  for (const core::Limit limit : core::kAllLimits) {
    w.sample("alertd_limit_hits_total", {{"limit", core::limit_name(limit)}},
             static_cast<double>(core::limit_hits(limit)));
  }
  const core::Labels::InternStats interned = core::Labels::intern_stats();
  w.header("alertd_interned_label_pairs", "gauge",
           "Distinct name=\"value\" pairs held once for all alerts' label sets (alertd).");
  w.sample("alertd_interned_label_pairs", {}, static_cast<double>(interned.pairs));
  w.header("alertd_interned_label_bytes", "gauge",
           "Heap bytes of the interned label pairs and their table (alertd).");
  w.sample("alertd_interned_label_bytes", {}, static_cast<double>(interned.bytes));
  append_process_metrics(w, static_cast<double>(c.start_time_seconds.load()));
  if (!push.empty()) append_push_metrics(w, push);
  return out;
}

void RecentQuantiles::observe(std::chrono::steady_clock::time_point now, double value) {
  window_.emplace_back(now, value);
  if (window_.size() > kMaxKept) window_.pop_front();
}

std::optional<std::array<double, 5>> RecentQuantiles::quantiles(
    std::chrono::steady_clock::time_point now) {
  while (!window_.empty() && now - window_.front().first > kWindow) window_.pop_front();
  if (window_.empty()) return std::nullopt;
  std::vector<double> values;
  values.reserve(window_.size());
  for (const auto& [t, v] : window_) values.push_back(v);
  std::sort(values.begin(), values.end());
  std::array<double, 5> out{};
  for (size_t i = 0; i < kQuantiles.size(); ++i) {
    const double rank = kQuantiles[i] * static_cast<double>(values.size() - 1);
    out[i] = values[static_cast<size_t>(std::llround(rank))];
  }
  return out;
}

ProcessStats read_process_stats() {
  ProcessStats st;
  if (std::ifstream in("/proc/self/stat"); in) {
    std::string line;
    std::getline(in, line);
    // The command name is in parentheses and may hold spaces: fields count from the last ')'.
    if (const auto close = line.rfind(')'); close != std::string::npos) {
      std::istringstream fields(line.substr(close + 2));
      std::vector<std::string> f{std::istream_iterator<std::string>(fields),
                                 std::istream_iterator<std::string>()};
      // f[0] is field 3 (state): utime 14, stime 15, num_threads 20, vsize 23, rss 24.
      if (f.size() > 21) {
        const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
        const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
        st.cpu_user_seconds = std::strtod(f[11].c_str(), nullptr) / ticks;
        st.cpu_system_seconds = std::strtod(f[12].c_str(), nullptr) / ticks;
        st.threads = std::strtod(f[17].c_str(), nullptr);
        st.virtual_bytes = std::strtod(f[20].c_str(), nullptr);
        st.resident_bytes = std::strtod(f[21].c_str(), nullptr) * page;
        st.ok = true;
      }
    }
  }
  if (std::ifstream in("/proc/self/status"); in) {
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("VmHWM:")) {
        st.resident_peak_bytes = std::strtod(line.c_str() + 6, nullptr) * 1024;
      }
    }
  }
  if (std::ifstream in("/proc/self/io"); in) {
    std::string key;
    double v = 0;
    while (in >> key >> v) {
      if (key == "rchar:") st.io_read_bytes = v;
      if (key == "wchar:") st.io_written_bytes = v;
      if (key == "syscr:") st.io_read_syscalls = v;
      if (key == "syscw:") st.io_write_syscalls = v;
      if (key == "read_bytes:") st.io_storage_read_bytes = v;
      if (key == "write_bytes:") st.io_storage_written_bytes = v;
      st.io_ok = true;
    }
  }
  if (DIR* dir = ::opendir("/proc/self/fd"); dir != nullptr) {
    double n = 0;
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(dir);
    st.open_fds = n - 1;  // not counting the descriptor reading the folder
  }
  if (rlimit lim{}; ::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    st.max_fds = lim.rlim_cur == RLIM_INFINITY ? -1 : static_cast<double>(lim.rlim_cur);
  }
  return st;
}

}  // namespace app
