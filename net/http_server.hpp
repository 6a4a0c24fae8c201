// net::HttpServer: a small HTTP/1.1 server on one io_context. The handler is a plain
// request -> response function (Beast's advanced server model); the session owns the socket,
// the read deadline and the body limit.
#pragma once

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

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& ioc, RequestHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. `listen_addr` is vmalert's form: ":8880", "127.0.0.1:8880",
  // "[::1]:8880"; port 0 picks a free port (see port()).
  core::Result<void> listen(const std::string& listen_addr);
  [[nodiscard]] uint16_t port() const;
  // Stops accepting and closes open sessions.
  void stop();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace net
