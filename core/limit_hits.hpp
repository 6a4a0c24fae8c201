// Process-wide counts of limit hits. Every bound alertd puts on a queue, a buffered body, a
// connection count or a rendered size counts here each time it refuses, drops or cuts something;
// /metrics shows the counts as alertd_limit_hits_total{limit="<name>"}, every limit present at 0
// from the start so a dashboard sees the series before the first hit. docs/faults.md ("Limits")
// lists each limit with its default, its flag and the memory bound they add up to.
// Lock-free (relaxed atomics): any thread may count.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace core {

enum class Limit {
  notifier_queue,      // -notifier.maxQueueSize: the oldest queued alerts dropped (per alert)
  remote_write_queue,  // -remoteWrite.maxQueueSize: the oldest queued rows dropped (per row)
  response_body,       // a response body over its cap (-datasource.maxResponseSize, ...), or
                       // a gzip body inflating past it
  request_body,        // alertd's port: a request body over the server's body limit (413)
  request_header,      // alertd's port: a request header over the header limit (431)
  connections,         // alertd's port: at the connection cap, one closed to make room or 503
  client_in_flight,    // a request queued behind its client's in-flight cap
                       // (-datasource.maxConcurrentQueries, -remoteWrite.concurrency)
  rule_results,        // -rule.resultsLimit / a group's `limit`: the round failed
  rendered_template,   // one rendered label or annotation over templates::kMaxRenderedBytes
  template_steps,      // one render over templates::kMaxRenderSteps
  rule_file_size,      // a rule file over config::kMaxRuleFileBytes
  state_file_size,     // the -state.path file over its cap at start
};

inline constexpr std::array<Limit, 12> kAllLimits{
    Limit::notifier_queue,   Limit::remote_write_queue, Limit::response_body,
    Limit::request_body,     Limit::request_header,     Limit::connections,
    Limit::client_in_flight, Limit::rule_results,       Limit::rendered_template,
    Limit::template_steps,   Limit::rule_file_size,     Limit::state_file_size};

// The `limit` label value.
[[nodiscard]] std::string_view limit_name(Limit limit);

void count_limit_hit(Limit limit, uint64_t n = 1) noexcept;

// Hits since the process started.
[[nodiscard]] uint64_t limit_hits(Limit limit) noexcept;

}  // namespace core
