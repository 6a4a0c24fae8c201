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

constexpr char kHex[] = "0123456789abcdef";

// Byte classes for JSON string output: copied as is, escaped, or the start of a UTF-8 sequence
// to validate.
constexpr uint8_t kCopy = 0;
constexpr uint8_t kEscape = 1;
constexpr uint8_t kNonAscii = 2;
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (size_t c = 0; c < 0x20; ++c) t[c] = kEscape;
  t['"'] = t['\\'] = t['<'] = t['\''] = kEscape;
  for (size_t c = 0x80; c < 0x100; ++c) t[c] = kNonAscii;
  return t;
}();

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

void append_json_string(std::string& out, std::string_view s) {
  // Worst case: every byte becomes a 6-byte \u00XX escape. Write straight into the buffer.
  const size_t old = out.size();
  out.resize_and_overwrite(old + 6 * s.size() + 2, [&](char* buf, size_t) {
    char* w = buf + old;
    *w++ = '"';
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
      const unsigned char c = p[i];
      const uint8_t cls = kByteClass[c];
      if (cls == kCopy) {
        *w++ = static_cast<char>(c);
        ++i;
        continue;
      }
      if (cls == kNonAscii) {
        const size_t len = utf8_sequence_length(s, i);
        if (len != 0) {
          std::memcpy(w, p + i, len);
          w += len;
          i += len;
        } else {
          std::memcpy(w, "\xEF\xBF\xBD", 3);  // U+FFFD
          w += 3;
          ++i;
        }
        continue;
      }
      *w++ = '\\';
      switch (c) {
        case '"': *w++ = '"'; break;
        case '\\': *w++ = '\\'; break;
        case '\n': *w++ = 'n'; break;
        case '\r': *w++ = 'r'; break;
        case '\t': *w++ = 't'; break;
        case '\b': *w++ = 'b'; break;
        case '\f': *w++ = 'f'; break;
        default:  // other control bytes, and '<' '\'' which qtpl's %q escapes for HTML safety
          std::memcpy(w, "u00", 3);
          w[3] = kHex[c >> 4];
          w[4] = kHex[c & 0xF];
          w += 5;
      }
      ++i;
    }
    *w++ = '"';
    return static_cast<size_t>(w - buf);
  });
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
