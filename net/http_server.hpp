// net::HttpServer: a small HTTP/1.1 server. The handler is a plain request -> response function
// (Beast's advanced server model); the session owns the socket, the deadlines and the limits.
//
// It cannot be starved or made to starve the process:
//   - at most max_connections sessions at once. A connection over the cap first closes the
//     longest-idle keep-alive session, if there is one; otherwise it gets `503` and is closed;
//   - a request header must arrive within header_timeout of the connection (or, on a keep-alive
//     connection, of its first byte); the body within body_timeout; a keep-alive connection
//     idle for idle_timeout is closed; a response not written within write_timeout is dropped;
//   - header and body sizes are capped (431 and 413), a malformed request gets 400;
//   - a handler exception gets a generic `500 internal server error`; its text goes to
//     log_error, never to the client.
// Everything runs on a strand of the io_context it is given: the io_context may be run by any
// number of threads, and it need not be the evaluation loop's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace boost::asio {
class io_context;
}

namespace net {

struct ServerRequest {
  std::string method;
  std::string target;  // path plus "?query" as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct ServerResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

using RequestHandler = std::function<ServerResponse(const ServerRequest&)>;

struct ServerOptions {
  // Connections served at once; 0 = min(1024, soft RLIMIT_NOFILE / 2), computed at listen()
  // (so raise the fd limit first: app::raise_fd_limit()).
  size_t max_connections = 0;
  // From accept (or from the first byte of a request on a keep-alive connection) to the end of
  // the request header: a half-sent request (slowloris) is closed after this.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(5)};
  // A keep-alive connection waiting this long for its next request is closed.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(15)};
  // From the end of the header to the end of the body.
  std::chrono::milliseconds body_timeout{std::chrono::seconds(10)};
  // A response that cannot be written within this is abandoned.
  std::chrono::milliseconds write_timeout{std::chrono::seconds(30)};
  // Request bodies above this get 413, headers above header_limit get 431.
  size_t body_limit = 1 << 20;
  uint32_t header_limit = 64 * 1024;
  // Where handler exceptions are reported (with method and target); the client only sees a
  // generic 500. Unset: they are dropped. Called on the server's strand.
  std::function<void(std::string_view message)> log_error;
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& ioc, RequestHandler handler);
  HttpServer(boost::asio::io_context& ioc, RequestHandler handler, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. `listen_addr` is vmalert's form: ":8880", "127.0.0.1:8880",
  // "[::1]:8880"; port 0 picks a free port (see port()).
  core::Result<void> listen(const std::string& listen_addr);
  [[nodiscard]] uint16_t port() const;
  // The connection cap in force (after listen(): max_connections or its derived default).
  [[nodiscard]] size_t max_connections() const;
  // TCP connections accepted so far, including rejected ones (tests observe keep-alive reuse).
  [[nodiscard]] uint64_t connections_accepted() const;
  // Connections answered 503 (or closed at once) because the cap was reached.
  [[nodiscard]] uint64_t connections_rejected() const;
  // Sessions open now.
  [[nodiscard]] size_t open_connections() const;
  // Stops accepting and closes open sessions. Asynchronous: a handler may still be running on
  // the io_context's thread; stop that thread (or drain the io_context) before destroying what
  // the handler references.
  void stop();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace net
