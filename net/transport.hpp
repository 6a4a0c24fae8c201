// net::Transport: the HTTP transport interface datasource/, notifier/ and remote write send
// through. No Boost types: a library that holds a Transport& links the header-only `net_api`
// target and never sees Beast or Asio; app/ builds the implementation (net::HttpClient) and
// tests pass a fake (tests/fakes/fake_transport.hpp).
//
// Contract of every implementation:
//   - send() completes `done` exactly once, on the implementation's own thread (for
//     net::HttpClient: the thread running its io_context), never inline from send();
//   - an HTTP answer is never an error here: any status comes back as a Response and the
//     caller decides what it means;
//   - errors carry a core::ErrorKind: timeout (the request's deadline passed), connection
//     (DNS, connect, TLS handshake, reset, peer closed early), too_large (the response body
//     exceeds max_response_bytes), bad_response (the peer broke HTTP), bad_config (bad URL or
//     TLS files), canceled (close() was called), or the kind returned by on_body_chunk.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace net {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The response cap used when Request::max_response_bytes is 0: large enough for any sane
// query answer or error page, small enough that a runaway peer cannot exhaust memory.
inline constexpr size_t kDefaultMaxResponseBytes = size_t{64} << 20;  // 64 MiB

struct Request {
  std::string method = "GET";
  // Absolute http:// or https:// URL, query string included.
  std::string url;
  // How errors name the URL (`Post "<display_url>": ...`), with secrets already hidden by the
  // caller; empty = `url` without its userinfo.
  std::string display_url;
  Headers headers;
  std::string body;
  // One deadline for the whole exchange: waiting for a slot, dial, TLS, write and read.
  std::chrono::milliseconds timeout{30000};
  // Largest response body accepted; 0 = kDefaultMaxResponseBytes (never unlimited). A 2xx
  // body above it fails the request (ErrorKind::too_large, the message names the cap); a
  // non-2xx body above it is cut to the cap and returned with its status.
  size_t max_response_bytes = 0;
  // Optional streaming sink: called for each body chunk of a 2xx response; an error aborts the
  // request and is returned to the handler. Other statuses are collected into Response::body
  // (capped) so callers can report them.
  std::function<std::optional<core::Error>(std::string_view chunk)> on_body_chunk;
  // Ask for a compressed answer (`Accept-Encoding: gzip`, unless `headers` has one) and, when
  // it comes with `Content-Encoding: gzip`, inflate it chunk by chunk before on_body_chunk /
  // Response::body, as Go's http.Transport does. max_response_bytes then caps the inflated
  // bytes as well as the bytes on the wire (a gzip bomb fails with too_large), and the
  // Content-Encoding and Content-Length fields are dropped from Response::headers.
  bool accept_gzip = false;
};

struct Response {
  unsigned status = 0;
  Headers headers;
  std::string body;
};

using ResponseHandler = std::function<void(core::Result<Response>)>;

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends `req`; `done` runs exactly once (see the contract above).
  virtual void send(Request req, ResponseHandler done) = 0;
  // Fails queued requests with ErrorKind::canceled and closes idle connections (shutdown).
  virtual void close() = 0;
};

}  // namespace net
