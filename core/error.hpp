// core::Error: the one error type every layer returns. The message is what a user reads: it
// names what failed and where (file:line, group, rule, URL without secrets, byte offset).
// The kind (and, for HTTP answers, the status code) is what code reads: retry decisions in the
// notifier and remote write, and the datasource's error texts, never parse the message.
#pragma once

#include "core/expected.hpp"
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace core {

enum class ErrorKind {
  other,         // anything not below (a bug, an unsupported feature)
  timeout,       // a deadline passed (connect, request, query)
  connection,    // connect refused, reset, DNS, TLS handshake, peer closed early
  http_status,   // the peer answered with a non-success status: see Error::http_status
  bad_response,  // the peer's answer could not be parsed or broke the protocol
  too_large,     // a size cap was hit (response body, rule file, rendered value)
  bad_config,    // rule file, flag or config value is invalid
  io,            // a local file could not be read or written
  canceled,      // shutdown or reload canceled the operation
};

[[nodiscard]] constexpr std::string_view to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::other: return "other";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::connection: return "connection";
    case ErrorKind::http_status: return "http_status";
    case ErrorKind::bad_response: return "bad_response";
    case ErrorKind::too_large: return "too_large";
    case ErrorKind::bad_config: return "bad_config";
    case ErrorKind::io: return "io";
    case ErrorKind::canceled: return "canceled";
  }
  return "other";
}

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::other;
  unsigned http_status = 0;  // set with kind == http_status

  Error() = default;
  explicit Error(std::string msg, ErrorKind k = ErrorKind::other, unsigned status = 0)
      : message(std::move(msg)), kind(k), http_status(status) {}

  // Returns a copy of this error with `context` put in front: "context: message". Kind and
  // status are kept.
  [[nodiscard]] Error wrap(std::string_view context) const {
    std::string out;
    out.reserve(context.size() + 2 + message.size());
    out.append(context).append(": ").append(message);
    return Error{std::move(out), kind, http_status};
  }

  // Worth trying again later: timeouts, connection failures, HTTP 429 and 5xx. Other 4xx, bad
  // responses and config errors would fail the same way again.
  [[nodiscard]] bool retryable() const {
    switch (kind) {
      case ErrorKind::timeout:
      case ErrorKind::connection: return true;
      case ErrorKind::http_status: return http_status == 429 || http_status >= 500;
      case ErrorKind::other:
      case ErrorKind::bad_response:
      case ErrorKind::too_large:
      case ErrorKind::bad_config:
      case ErrorKind::io:
      case ErrorKind::canceled: return false;
    }
    return false;
  }
};

template <class T>
using Result = core::expected<T, Error>;

inline core::unexpected<Error> fail(std::string msg, ErrorKind kind = ErrorKind::other) {
  return core::unexpected<Error>(Error{std::move(msg), kind});
}
inline core::unexpected<Error> fail(Error e) { return core::unexpected<Error>(std::move(e)); }

// Peer-supplied text (error bodies, response snippets) kept in logs, lastError, the update
// history and the API is clipped to this many bytes: a datasource answering 5 MiB of HTML
// must not become 5 MiB per log line.
inline constexpr size_t kMaxErrorBody = 2048;

// `text` cut to at most `max` bytes (never inside a UTF-8 sequence), with a note of how much was
// left out: "...(12345 more bytes)".
[[nodiscard]] inline std::string clip(std::string_view text, size_t max = kMaxErrorBody) {
  if (text.size() <= max) return std::string(text);
  size_t cut = max;
  // Back up over UTF-8 continuation bytes (10xxxxxx) so the cut ends on a character boundary.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out(text.substr(0, cut));
  out += "...(";
  out += std::to_string(text.size() - cut);
  out += " more bytes)";
  return out;
}

}  // namespace core
