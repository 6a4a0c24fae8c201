// net::HttpClient: the net::Transport implementation, an HTTP/1.1 client pool on one
// io_context. Keep-alive connections per scheme+host+port, TLS (CA, client cert, server name,
// skip-verify), a deadline and a response-size cap (Beast's parser body_limit) on every
// request, and one retry when a reused keep-alive connection turns out to be closed by the
// peer. No Beast or Asio types leak out of this header; only app/ (and tests) include it.
//
// Bodies can be streamed: with Request::on_body_chunk set, the body is handed over chunk by
// chunk as it arrives (the datasource parser consumes it incrementally) and Response::body
// stays empty.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "core/error.hpp"
#include "net/transport.hpp"

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

struct ClientOptions {
  TlsOptions tls;
  // Idle keep-alive connections kept per scheme+host+port (0 = none kept).
  size_t max_idle_per_host = 100;
  // An idle connection older than this is closed; zero = kept until the peer closes it.
  std::chrono::milliseconds idle_timeout{50000};
  // false: `Connection: close` on every request, one connection per request.
  bool keep_alive = true;
  // Requests in flight at once through this client; 0 = unlimited. Extra requests wait in
  // FIFO order.
  size_t max_concurrent = 0;
};

class HttpClient final : public Transport {
 public:
  HttpClient(boost::asio::io_context& ioc, ClientOptions options);
  ~HttpClient() override;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /* Transport */
  // `done` runs exactly once on the io_context's thread, never inline.
  void send(Request req, ResponseHandler done) override;
  // Closes idle connections and fails queued and in-flight requests (shutdown).
  void close() override;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

// Blocking helper for start-up code (rule files from http(s) URLs, tools): runs its own
// io_context. Never call it from the event loop's thread.
core::Result<Response> fetch_blocking(Request req, const ClientOptions& options = {});

}  // namespace net
