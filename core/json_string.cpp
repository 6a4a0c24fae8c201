#include "core/json_string.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "core/utf8.hpp"

namespace core {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Byte classes: copied as is, escaped, or the start of a UTF-8 sequence to validate.
constexpr uint8_t kCopy = 0;
constexpr uint8_t kEscape = 1;
constexpr uint8_t kNonAscii = 2;

constexpr std::array<uint8_t, 256> byte_classes(JsonEscape style) {
  std::array<uint8_t, 256> t{};
  for (size_t c = 0; c < 0x20; ++c) t[c] = kEscape;
  t['"'] = t['\\'] = t['<'] = kEscape;
  if (style == JsonEscape::qtpl) {
    t['\''] = kEscape;
  } else {
    t['>'] = t['&'] = kEscape;
  }
  for (size_t c = 0x80; c < 0x100; ++c) t[c] = kNonAscii;
  return t;
}

constexpr auto kQtplClass = byte_classes(JsonEscape::qtpl);
constexpr auto kGoClass = byte_classes(JsonEscape::go);

}  // namespace

bool json_string_is_verbatim(std::string_view s, JsonEscape style) {
  const auto& cls_of = style == JsonEscape::qtpl ? kQtplClass : kGoClass;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t cls = cls_of[p[i]];
    if (cls == kCopy) {
      ++i;
      continue;
    }
    if (cls == kEscape) return false;
    size_t len = 0;
    const uint32_t cp = decode_utf8(s, i, len);
    if (cp == 0xFFFD && len == 1) return false;
    if (style == JsonEscape::go && (cp == 0x2028 || cp == 0x2029)) return false;
    i += len;
  }
  return true;
}

void append_json_string(std::string& out, std::string_view s, JsonEscape style) {
  const auto& cls_of = style == JsonEscape::qtpl ? kQtplClass : kGoClass;
  // Worst case: every byte becomes a 6-byte escape (a lone invalid byte becomes 3 bytes of
  // U+FFFD, U+2028 six bytes for three). Write straight into the buffer.
  const size_t old = out.size();
  out.resize_and_overwrite(old + 6 * s.size() + 2, [&](char* buf, size_t) {
    char* w = buf + old;
    *w++ = '"';
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
      const unsigned char c = p[i];
      const uint8_t cls = cls_of[c];
      if (cls == kCopy) {
        *w++ = static_cast<char>(c);
        ++i;
        continue;
      }
      if (cls == kNonAscii) {
        size_t len = 0;
        const uint32_t cp = decode_utf8(s, i, len);
        if (cp == 0xFFFD && len == 1) {
          std::memcpy(w, "\xEF\xBF\xBD", 3);
          w += 3;
        } else if (style == JsonEscape::go && (cp == 0x2028 || cp == 0x2029)) {
          std::memcpy(w, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
          w += 6;
        } else {
          std::memcpy(w, p + i, len);
          w += len;
        }
        i += len;
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
        default:  // other control bytes and the HTML-safety escapes
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

}  // namespace core
