// JSON string literals written straight into a buffer, in the two escapings alertd must match
// byte for byte:
//   JsonEscape::qtpl  quicktemplate's JSON string (vmalert's Alertmanager payload): ", \,
//                     \n \r \t \b \f, other control bytes as \u00XX, '<' as \u003c and '\'' as
//                     \u0027.
//   JsonEscape::go    Go's encoding/json (vmalert's HTTP API): ", \, \n \r \t \b \f, other
//                     control bytes as \u00XX, '<' '>' '&' as \u003c \u003e \u0026, U+2028 and
//                     U+2029 as \u2028 \u2029.
// In both, each byte of invalid UTF-8 becomes U+FFFD (Go's encoder does this; quicktemplate copies
// the byte, and Alertmanager's decoder then makes the same replacement), so the output is always
// valid JSON.
#pragma once

#include <string>
#include <string_view>

namespace core {

enum class JsonEscape { qtpl, go };

// Appends `s` as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view s, JsonEscape style);

// Whether append_json_string would write `s` unchanged between the quotes (nothing to escape,
// valid UTF-8): such text can be copied into JSON as it is.
[[nodiscard]] bool json_string_is_verbatim(std::string_view s, JsonEscape style);

}  // namespace core
