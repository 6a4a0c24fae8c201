// ASCII case helpers for protocol text (header names, PromQL keywords, URL schemes): locale-free,
// bytes >= 0x80 compare as themselves.
#pragma once

#include <string>
#include <string_view>

namespace core {

[[nodiscard]] constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Case-insensitive (ASCII) equality: "Content-Type" == "content-type".
[[nodiscard]] constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

[[nodiscard]] inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

// True when `needle` occurs in `haystack`, ignoring ASCII case.
[[nodiscard]] constexpr bool icontains(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (iequals(haystack.substr(i, needle.size()), needle)) return true;
  }
  return false;
}

}  // namespace core
