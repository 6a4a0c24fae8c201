#include "app/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include "app/api.hpp"
#include "core/time.hpp"

namespace app {
namespace {

// {"ts":"2026-12-02T10:46:15.123Z","level":"info","msg":"..."}
class JsonFormatter final : public spdlog::formatter {
 public:
  // spdlog::formatter
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string line = "{\"ts\":\"";
    const auto ms = std::chrono::time_point_cast<std::chrono::milliseconds>(msg.time);
    core::append_rfc3339_nano(line, core::TimePoint{ms.time_since_epoch()});
    line += "\",\"level\":";
    const auto lv = spdlog::level::to_string_view(msg.level);
    append_json_string(line, std::string_view(lv.data(), lv.size()));
    line += ",\"msg\":";
    append_json_string(line, std::string_view(msg.payload.data(), msg.payload.size()));
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

spdlog::level::level_enum to_level(const std::string& level) {
  if (level == "DEBUG") return spdlog::level::debug;
  if (level == "WARN") return spdlog::level::warn;
  if (level == "ERROR") return spdlog::level::err;
  if (level == "FATAL" || level == "PANIC") return spdlog::level::critical;
  return spdlog::level::info;
}

}  // namespace

void setup_logging(const std::string& level, const std::string& format) {
  auto logger = std::make_shared<spdlog::logger>(
      "alertd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (format == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ\t%l\t%v", spdlog::pattern_time_type::utc);
  }
  logger->set_level(to_level(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace app
