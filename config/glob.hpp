// Doublestar globs for `-rule` (vmalert's fslocal uses github.com/bmatcuk/doublestar):
// `*` any run of characters except '/', `?` one such character, `[abc]`/`[a-z]`/`[!x]`/`[^x]`
// a class, `{a,b}` alternatives, `\` escapes, and a whole segment `**` zero or more
// directories.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace config {

// True when `pattern` has any glob meta character.
[[nodiscard]] bool has_glob_meta(std::string_view pattern);

// Matches a '/'-separated path against a pattern (both relative or both absolute).
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view path);

// Regular files (symlinks followed) matching `pattern`, sorted. An unreadable base directory
// is an error; no match is an empty list.
[[nodiscard]] core::Result<std::vector<std::string>> glob_files(std::string_view pattern);

}  // namespace config
