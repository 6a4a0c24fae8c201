// net::HttpServer: a small HTTP/1.1 server on one io_context. The handler is a plain
// request -> response function (Beast's advanced server model); the session owns the socket,
// the read deadline and the body limit.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
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
  // A session waiting longer than this for the next request (or the rest of one, keep-alive
  // idle time included) is closed.
  std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};
  // A response that cannot be written within this is abandoned.
  std::chrono::milliseconds write_timeout{std::chrono::seconds(30)};
  // Request bodies above this get 413.
  size_t body_limit = 1 << 20;
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
  // TCP connections accepted so far (tests use it to observe keep-alive reuse).
  [[nodiscard]] uint64_t connections_accepted() const;
  // Stops accepting and closes open sessions.
  void stop();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace net
