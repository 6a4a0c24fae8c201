#include "core/limit_hits.hpp"

#include <atomic>

namespace core {

namespace {

std::array<std::atomic<uint64_t>, kAllLimits.size()>& hits() {
  static std::array<std::atomic<uint64_t>, kAllLimits.size()> counts{};
  return counts;
}

size_t index(Limit limit) { return static_cast<size_t>(limit); }

}  // namespace

std::string_view limit_name(Limit limit) {
  switch (limit) {
    case Limit::notifier_queue: return "notifier_queue";
    case Limit::remote_write_queue: return "remote_write_queue";
    case Limit::response_body: return "response_body";
    case Limit::request_body: return "request_body";
    case Limit::request_header: return "request_header";
    case Limit::connections: return "connections";
    case Limit::client_in_flight: return "client_in_flight";
    case Limit::rule_results: return "rule_results";
    case Limit::rendered_template: return "rendered_template";
    case Limit::template_steps: return "template_steps";
    case Limit::rule_file_size: return "rule_file_size";
    case Limit::state_file_size: return "state_file_size";
  }
  return "unknown";
}

void count_limit_hit(Limit limit, uint64_t n) noexcept {
  hits()[index(limit)].fetch_add(n, std::memory_order_relaxed);
}

uint64_t limit_hits(Limit limit) noexcept {
  return hits()[index(limit)].load(std::memory_order_relaxed);
}

}  // namespace core
