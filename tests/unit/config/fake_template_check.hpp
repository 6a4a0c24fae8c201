// A stand-in for templates::check_template: rejects an empty action `{{ }}`, unbalanced
// delimiters and the function name `unknown`, which is what the corpus's bad files contain.
#pragma once

#include <optional>
#include <string_view>

#include "core/error.hpp"

namespace config_test {

inline std::optional<core::Error> fake_template_check(std::string_view text) {
  size_t pos = 0;
  while ((pos = text.find("{{", pos)) != std::string_view::npos) {
    const size_t close = text.find("}}", pos + 2);
    if (close == std::string_view::npos) return core::Error{"template: :1: unclosed action"};
    std::string_view inside = text.substr(pos + 2, close - pos - 2);
    if (!inside.empty() && inside.front() == '-') inside.remove_prefix(1);
    if (!inside.empty() && inside.back() == '-') inside.remove_suffix(1);
    if (inside.find_first_not_of(" \t\n") == std::string_view::npos) {
      return core::Error{"template: :1: missing value for command"};
    }
    if (inside.find("unknown") != std::string_view::npos) {
      return core::Error{"template: :1: function \"unknown\" not defined"};
    }
    pos = close + 2;
  }
  return std::nullopt;
}

}  // namespace config_test
