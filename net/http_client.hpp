// net::HttpClient: an HTTP/1.1 client pool on one io_context. Keep-alive connections per
// scheme+host+port, TLS (CA, client cert, server name, skip-verify), a deadline and a
// response-size cap on every request, and one retry when a reused keep-alive connection turns
// out to be closed by the peer. No Beast or Asio types leak out of this header.
//
// Bodies can be streamed: with Request::on_body_chunk set, the body is handed over chunk by
// chunk as it arrives (the datasource parser consumes it incrementally) and Response::body
// stays empty.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace boost::asio {
class io_context;
}

namespace net {

struct TlsOptions {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string server_name;
  bool insecure_skip_verify = false;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method = "GET";
  // Absolute http:// or https:// URL, query string included.
  std::string url;
  Headers headers;
  std::string body;
  std::chrono::milliseconds timeout{30000};
  // 0 = no cap. Exceeding it fails the request with an error that names the cap.
  size_t max_response_bytes = 0;
  // Optional streaming sink: called for each body chunk of a response; an error aborts the
  // request and is returned to the handler. Called only for 2xx responses; other statuses
  // are collected into Response::body (capped) so callers can report them.
  std::function<std::optional<core::Error>(std::string_view chunk)> on_body_chunk;
};

struct Response {
  unsigned status = 0;
  Headers headers;
  std::string body;
};

using ResponseHandler = std::function<void(core::Result<Response>)>;

struct ClientOptions {
  TlsOptions tls;
  size_t max_idle_per_host = 100;
  std::chrono::milliseconds idle_timeout{50000};
  bool keep_alive = true;
  // Requests in flight at once through this client; 0 = unlimited. Extra requests wait in
  // FIFO order.
  size_t max_concurrent = 0;
};

class HttpClient {
 public:
  HttpClient(boost::asio::io_context& ioc, ClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `req`; `done` runs exactly once on the io_context's thread.
  void send(Request req, ResponseHandler done);
  // Closes idle connections and fails queued requests (shutdown).
  void close();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

// Blocking helper for start-up code (rule files from http(s) URLs, tools): runs its own
// io_context. Never call it from the event loop's thread.
core::Result<Response> fetch_blocking(Request req, const ClientOptions& options = {});

}  // namespace net
