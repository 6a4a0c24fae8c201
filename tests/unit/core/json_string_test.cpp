#include "core/json_string.hpp"

#include <catch2/catch.hpp>

namespace {

std::string go(std::string_view s) {
  std::string out;
  core::append_json_string(out, s, core::JsonEscape::go);
  return out;
}

std::string qtpl(std::string_view s) {
  std::string out = "x";  // appends, never clears
  core::append_json_string(out, s, core::JsonEscape::qtpl);
  return out;
}

}  // namespace

TEST_CASE("json string: Go's encoding/json escaping", "[core][json]") {
  // Expected values as Go 1.22's json.Marshal(string) writes them.
  CHECK(go("") == R"("")");
  CHECK(go("plain text") == R"("plain text")");
  CHECK(go("a\"b\\c") == R"("a\"b\\c")");
  CHECK(go("\n\r\t\b\f") == R"("\n\r\t\b\f")");
  CHECK(go(std::string_view("\x00\x01\x1f", 3)) == R"("\u0000\u0001\u001f")");
  CHECK(go("cpu > 0.9 && x < 1") == R"("cpu \u003e 0.9 \u0026\u0026 x \u003c 1")");
  CHECK(go("it's") == R"("it's")");
  CHECK(go("\xe2\x80\xa8|\xe2\x80\xa9") == R"("\u2028|\u2029")");
  CHECK(go("héllo ✓ 😀") == "\"héllo ✓ 😀\"");
  CHECK(go("\xef\xbf\xbd") == "\"\xef\xbf\xbd\"");  // a real U+FFFD stays
  // Each invalid byte becomes U+FFFD: a stray continuation, a truncated sequence, a surrogate.
  CHECK(go("a\x80z") == "\"a\xef\xbf\xbdz\"");
  CHECK(go("\xe2\x82") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK(go("\xed\xa0\x80") == "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

TEST_CASE("json string: quicktemplate escaping keeps '>' '&' and escapes '\\''", "[core][json]") {
  CHECK(qtpl("a > b & c < d") == R"(x"a > b & c \u003c d")");
  CHECK(qtpl("it's") == R"(x"it\u0027s")");
  CHECK(qtpl("\xe2\x80\xa8") == "x\"\xe2\x80\xa8\"");
  CHECK(qtpl("a\xffz") == "x\"a\xef\xbf\xbdz\"");
}

TEST_CASE("json string: verbatim exactly when the escaper copies the text", "[core][json]") {
  const std::string_view cases[] = {"",         "plain text", "host-1.example:9100", "a\"b",
                                    "back\\",   "tab\there",  "x < y",              "x > y & z",
                                    "it's",     "héllo ✓ 😀", "\xe2\x80\xa8",        "a\x80z",
                                    "\xe2\x82", "\xed\xa0\x80"};
  for (const auto s : cases) {
    for (const auto style : {core::JsonEscape::qtpl, core::JsonEscape::go}) {
      std::string out;
      core::append_json_string(out, s, style);
      const bool copied = out == "\"" + std::string(s) + "\"";
      INFO("text: " << s << " style: " << (style == core::JsonEscape::qtpl ? "qtpl" : "go"));
      CHECK(core::json_string_is_verbatim(s, style) == copied);
    }
  }
  CHECK(core::json_string_is_verbatim("x > y & z", core::JsonEscape::qtpl));
  CHECK_FALSE(core::json_string_is_verbatim("x > y & z", core::JsonEscape::go));
  CHECK(core::json_string_is_verbatim("\xe2\x80\xa8", core::JsonEscape::qtpl));
  CHECK_FALSE(core::json_string_is_verbatim("\xe2\x80\xa8", core::JsonEscape::go));
}
