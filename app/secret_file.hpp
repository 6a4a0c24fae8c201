// app::read_secret_file: the one reader of secret files named by flags (-*.basicAuth.passwordFile,
// -*.bearerTokenFile, ...). Read once, at start: the value is the file's text with trailing
// whitespace removed (as vmalert's promauth trims it). Errors (kind bad_config) name the flag and
// the file and say why: `-notifier.bearerTokenFile: cannot read "/x": No such file or directory`.
// The secret itself never appears in an error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace app {

// Larger files are refused: a secret is a line, not /dev/zero.
inline constexpr size_t kMaxSecretFileBytes = size_t{64} << 10;

[[nodiscard]] core::Result<std::string> read_secret_file(std::string_view flag,
                                                         const std::string& path);

}  // namespace app
