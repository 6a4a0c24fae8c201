#include "notifier/alertmanager_payload.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace notifier {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid (overlong, surrogate, > U+10FFFF,
// truncated).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xE0 && b1 < 0xA0) return 0;   // overlong
    if (b0 == 0xED && b1 >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xF0 && b1 < 0x90) return 0;  // overlong
    if (b0 == 0xF4 && b1 >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

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
  return std::all_of(name.begin() + 1, name.end(), is_name_char);
}

std::string sanitize_label_name(std::string_view name) {
  std::string out(name);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 0 ? !is_name_start(out[i]) : !is_name_char(out[i])) out[i] = '_';
  }
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  size_t run = 0;  // start of the pending run of bytes that need no escaping
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '\'' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t len = utf8_sequence_length(s, i);
      if (len != 0) {
        i += len;
        continue;
      }
      out.append(s.substr(run, i - run));
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      run = i;
      continue;
    }
    out.append(s.substr(run, i - run));
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '<': out += "\\u003c"; break;  // qtpl's %q escapes these two for HTML safety
      case '\'': out += "\\u0027"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
    ++i;
    run = i;
  }
  out.append(s.substr(run));
  out += '"';
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
