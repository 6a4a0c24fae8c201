// UTF-8 encoding and decoding of one code point, as Go's unicode/utf8. The caller decides what
// invalid code points become (Go's templates and fmt write U+FFFD; the JSON parser rejects lone
// surrogates first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace core {

inline void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Go's utf8.DecodeRuneInString(s[i:]) for i < s.size(): returns the code point at s[i] and sets
// `size` to its length in bytes. Invalid input (a stray continuation byte, an overlong form, a
// surrogate, a truncated sequence, above U+10FFFF) decodes as U+FFFD with size 1, so a caller
// stepping by `size` visits every byte.
inline uint32_t decode_utf8(std::string_view s, size_t i, size_t& size) {
  const auto c = static_cast<unsigned char>(s[i]);
  size = 1;
  if (c < 0x80) return c;
  auto cont = [&](size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  auto bits = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(s[i + k]) & 0x3F);
  };
  if (c >= 0xC2 && c < 0xE0 && cont(1)) {
    size = 2;
    return ((c & 0x1Fu) << 6) | bits(1);
  }
  if (c >= 0xE0 && c < 0xF0 && cont(1) && cont(2)) {
    const uint32_t r = ((c & 0x0Fu) << 12) | (bits(1) << 6) | bits(2);
    if (r >= 0x800 && (r < 0xD800 || r > 0xDFFF)) {
      size = 3;
      return r;
    }
    return 0xFFFD;
  }
  if (c >= 0xF0 && c < 0xF5 && cont(1) && cont(2) && cont(3)) {
    const uint32_t r = ((c & 0x07u) << 18) | (bits(1) << 12) | (bits(2) << 6) | bits(3);
    if (r >= 0x10000 && r <= 0x10FFFF) {
      size = 4;
      return r;
    }
  }
  return 0xFFFD;
}

}  // namespace core
