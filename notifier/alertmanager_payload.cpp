#include "notifier/alertmanager_payload.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace notifier {
namespace {

// 1: may start a label name, 2: may continue one.
constexpr std::array<uint8_t, 256> kNameClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<size_t>(c)] = 3;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<size_t>(c)] = 3;
  for (int c = '0'; c <= '9'; ++c) t[static_cast<size_t>(c)] = 2;
  t['_'] = t[':'] = 3;
  return t;
}();

bool is_name_start(char c) { return (kNameClass[static_cast<unsigned char>(c)] & 1) != 0; }
bool is_name_char(char c) { return (kNameClass[static_cast<unsigned char>(c)] & 2) != 0; }

void append_object(std::string& out, const core::Labels& items, bool sanitize) {
  out += '{';
  bool first = true;
  auto write = [&](std::string_view k, std::string_view v) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, k);
    out += ':';
    append_json_string(out, v);
  };
  bool all_valid = true;
  if (sanitize) {
    for (const auto& l : items) {
      if (!is_valid_label_name(l.name)) {
        all_valid = false;
        break;
      }
    }
  }
  if (all_valid) {
    for (const auto& l : items) write(l.name, l.value);
  } else {
    // Rare: sanitize, then sort again since '_' may reorder names; a later duplicate wins,
    // like a Go map assignment.
    std::vector<std::pair<std::string, std::string_view>> fixed;
    fixed.reserve(items.size());
    for (const auto& l : items) fixed.emplace_back(sanitize_label_name(l.name), l.value);
    std::stable_sort(fixed.begin(), fixed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < fixed.size(); ++i) {
      if (i + 1 < fixed.size() && fixed[i + 1].first == fixed[i].first) continue;
      write(fixed[i].first, fixed[i].second);
    }
  }
  out += '}';
}

}  // namespace

bool is_valid_label_name(std::string_view name) {
  if (name.empty() || !is_name_start(name[0])) return false;
  for (size_t i = 1; i < name.size(); ++i) {
    if (!is_name_char(name[i])) return false;
  }
  return true;
}

std::string sanitize_label_name(std::string_view name) {
  std::string out(name);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 0 ? !is_name_start(out[i]) : !is_name_char(out[i])) out[i] = '_';
  }
  return out;
}

void encode_alerts(std::span<const Alert> alerts, std::string& out) {
  out += '[';
  bool first = true;
  for (const auto& a : alerts) {
    if (!first) out += ',';
    first = false;
    out += "{\"startsAt\":\"";
    core::append_rfc3339_nano(out, a.starts_at);
    out += "\",\"generatorURL\":";
    append_json_string(out, a.generator_url);
    if (a.ends_at && *a.ends_at != core::TimePoint{}) {
      out += ",\"endsAt\":\"";
      core::append_rfc3339_nano(out, *a.ends_at);
      out += '"';
    }
    out += ",\"labels\": ";
    append_object(out, a.labels, true);
    out += ",\"annotations\": ";
    append_object(out, a.annotations, false);
    out += '}';
  }
  out += ']';
}

}  // namespace notifier
