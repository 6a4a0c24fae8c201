// core::Error: the one error type every layer returns. The message is what a user reads: it
// names what failed and where (file:line, group, rule, URL without secrets, byte offset).
#pragma once

#include "core/expected.hpp"
#include <string>
#include <string_view>
#include <utility>

namespace core {

struct Error {
  std::string message;

  Error() = default;
  explicit Error(std::string msg) : message(std::move(msg)) {}

  // Returns a copy of this error with `context` put in front: "context: message".
  [[nodiscard]] Error wrap(std::string_view context) const {
    std::string out;
    out.reserve(context.size() + 2 + message.size());
    out.append(context).append(": ").append(message);
    return Error{std::move(out)};
  }
};

template <class T>
using Result = core::expected<T, Error>;

inline core::unexpected<Error> fail(std::string msg) { return core::unexpected<Error>(Error{std::move(msg)}); }
inline core::unexpected<Error> fail(Error e) { return core::unexpected<Error>(std::move(e)); }

}  // namespace core
