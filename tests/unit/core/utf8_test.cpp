// core::decode_utf8 is Go's utf8.DecodeRuneInString: every invalid form decodes as (U+FFFD, 1).
#include "core/utf8.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

TEST_CASE("decode_utf8 decodes as Go's utf8.DecodeRuneInString", "[core][utf8]") {
  struct Row {
    std::string in;
    uint32_t cp;
    size_t size;
  };
  const std::vector<Row> rows = {
      {"a", 'a', 1},
      {std::string("\0", 1), 0, 1},
      {"\xC3\xA9", 0xE9, 2},               // é
      {"\xE2\x82\xAC", 0x20AC, 3},         // €
      {"\xF0\x9F\x98\x80", 0x1F600, 4},    // 😀
      {"\xF4\x8F\xBF\xBF", 0x10FFFF, 4},   // the last code point
      {"\x80", 0xFFFD, 1},                 // stray continuation byte
      {"\xC0\xAF", 0xFFFD, 1},             // overlong '/'
      {"\xC1\xBF", 0xFFFD, 1},             // overlong
      {"\xE0\x80\xAF", 0xFFFD, 1},         // overlong in 3 bytes
      {"\xED\xA0\x80", 0xFFFD, 1},         // surrogate U+D800
      {"\xF0\x80\x80\xAF", 0xFFFD, 1},     // overlong in 4 bytes
      {"\xF4\x90\x80\x80", 0xFFFD, 1},     // above U+10FFFF
      {"\xF5\x80\x80\x80", 0xFFFD, 1},
      {"\xE2\x82", 0xFFFD, 1},             // truncated
      {"\xC3", 0xFFFD, 1},
      {"\xC3(", 0xFFFD, 1},                // continuation missing
  };
  for (const auto& r : rows) {
    INFO(r.cp);
    size_t size = 99;
    CHECK(core::decode_utf8(r.in, 0, size) == r.cp);
    CHECK(size == r.size);
  }
}

TEST_CASE("decode_utf8 steps through mixed text and round-trips with append_utf8", "[core][utf8]") {
  const std::string text = "a\xC3\xA9\xFF\xE2\x82\xAC";
  std::vector<uint32_t> cps;
  std::string back;
  for (size_t i = 0, size = 0; i < text.size(); i += size) {
    cps.push_back(core::decode_utf8(text, i, size));
    core::append_utf8(back, cps.back());
  }
  CHECK(cps == std::vector<uint32_t>{'a', 0xE9, 0xFFFD, 0x20AC});
  CHECK(back == "a\xC3\xA9\xEF\xBF\xBD\xE2\x82\xAC");
}
