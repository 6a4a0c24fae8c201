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
// Answers are gzip-compressed for clients that accept it (ServerOptions::compress_responses,
// the rules of VictoriaMetrics' lib/httpserver), streamed answers incrementally.
// It listens on one or more addresses (listen() once per address), each plain HTTP or HTTPS
// (ServerTls); all of them share the connection cap and the limits above. On an HTTPS
// listener the TLS handshake runs inside the header deadline and counts as idle (a client that
// never finishes it is closed at header_timeout, and evicted first at the cap); a plain HTTP
// request there gets Go's "400 Client sent an HTTP request to an HTTPS server". The certificate
// and key files are checked at most once a second (at a new connection) and reloaded when they
// changed; a reload that fails keeps the previous certificate and is reported to log_error.
// Everything runs on a strand of the io_context it is given: the io_context may be run by any
// number of threads, and it need not be the evaluation loop's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
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

struct ServerRequest {
  std::string method;
  std::string target;  // path plus "?query" as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// Produces a response body piece by piece while it is being sent: each call appends the next
// piece (a few tens of kB, never the whole body) to `out`, which arrives empty, and returns
// whether more follows. Called on the server's strand between socket writes, so it must not
// block; it keeps whatever it reads alive itself (an immutable snapshot, say).
using BodyProducer = std::function<bool(std::string& out)>;

struct ServerResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set: the body is `stream`'s pieces (and `body` is ignored), sent as HTTP/1.1 chunked
  // transfer coding, one chunk per piece, so the whole body never exists in memory. An HTTP/1.0
  // client gets the pieces without a length and the connection is closed after them.
  BodyProducer stream;
};

// The whole body of `resp`: `stream` drained into `body` (and cleared). For callers that need
// the body at once (tests, small answers); the server never does this.
void collect_body(ServerResponse& resp);

using RequestHandler = std::function<ServerResponse(const ServerRequest&)>;

// HTTPS on one listener: vmalert's -tls, -tlsCertFile, -tlsKeyFile, -tlsMinVersion and
// -tlsCipherSuites (lib/httpserver, lib/netutil/tls.go).
struct ServerTls {
  std::string cert_file;  // PEM certificate chain
  std::string key_file;   // PEM private key
  // "TLS10", "TLS11", "TLS12", "TLS13" (any case); empty = TLS12, as vmalert.
  std::string min_version;
  // Go's crypto/tls names (IANA, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256), any case; they
  // restrict TLS 1.2 and older. TLS 1.3 names are accepted and change nothing, as in Go.
  // Empty: OpenSSL's defaults.
  std::vector<std::string> cipher_suites;
};

// What one listen() address serves: HTTPS when `tls` is set; with `proxy_protocol` every
// connection must start with a PROXY protocol v2 header (HAProxy's binary form, as
// VictoriaMetrics' -httpListenAddr.useProxyProtocol: v2 only, TCP over IPv4/IPv6, or LOCAL),
// read inside the header deadline; a connection without it is closed (log_error says why).
struct ListenOptions {
  std::optional<ServerTls> tls;
  bool proxy_protocol = false;
};

// Checks a ServerTls the way listen() does (files readable, certificate and key valid and
// matching, version and cipher names known) without listening: for start-up errors that name
// the file.
[[nodiscard]] core::Result<void> check_server_tls(const ServerTls& tls);

struct ServerOptions {
  // Connections served at once; 0 = min(1024, soft RLIMIT_NOFILE / 2), computed at listen()
  // (so raise the fd limit first: app::raise_fd_limit()).
  size_t max_connections = 0;
  // From accept (or from the first byte of a request on a keep-alive connection) to the end of
  // the request header: a half-sent request (slowloris) is closed after this.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(5)};
  // A keep-alive connection waiting this long for its next request is closed
  // (-http.idleConnTimeout).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};
  // A connection older than this (plus a random 0-10% of it, so that connections opened
  // together do not all close together) gets `Connection: close` on its next response and is
  // closed after it, never in the middle of a request (-http.connTimeout, as VictoriaMetrics'
  // lib/httpserver). 0: no age limit.
  std::chrono::milliseconds conn_timeout{0};
  // From the end of the header to the end of the body.
  std::chrono::milliseconds body_timeout{std::chrono::seconds(10)};
  // A response that cannot be written within this is abandoned.
  std::chrono::milliseconds write_timeout{std::chrono::seconds(30)};
  // Request bodies above this get 413, headers above header_limit get 431.
  size_t body_limit = 1 << 20;
  uint32_t header_limit = 64 * 1024;
  // gzip-compressed answers, as VictoriaMetrics' lib/httpserver (klauspost's gzhttp at level
  // 1; -http.disableResponseCompression turns it off): when the request's Accept-Encoding
  // accepts gzip (q > 0), the method is not HEAD, the status has a body (not 1xx, 204, 304),
  // the handler set no Content-Encoding or Content-Range, the content type is not an already
  // compressed one (compressible_content_type()) and the body has at least compress_min_size
  // bytes, the body goes out gzip with `Content-Encoding: gzip` (Content-Length for a whole
  // body; a streamed one is read ahead to the minimum, then compressed piece by piece into
  // chunks). Every handler answer carries `Vary: Accept-Encoding` while this is on.
  bool compress_responses = true;
  size_t compress_min_size = 1024;  // gzhttp's DefaultMinSize
  // Where handler exceptions and failed certificate reloads are reported (with method and
  // target); the client only sees a generic 500. Unset: they are dropped. Called on the
  // server's strand.
  std::function<void(std::string_view message)> log_error;
  // Where a reloaded certificate is announced. Called on the server's strand.
  std::function<void(std::string_view message)> log_info;
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& ioc, RequestHandler handler);
  HttpServer(boost::asio::io_context& ioc, RequestHandler handler, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. `listen_addr` is vmalert's form: ":8880", "127.0.0.1:8880",
  // "[::1]:8880"; port 0 picks a free port (see port()). Call once per address; with `tls`
  // the address serves HTTPS (the certificate is loaded here: an error names the file).
  core::Result<void> listen(const std::string& listen_addr);
  core::Result<void> listen(const std::string& listen_addr, const ServerTls& tls);
  core::Result<void> listen(const std::string& listen_addr, const ListenOptions& options);
  // The port of the first listener, and of each listener in listen() order.
  [[nodiscard]] uint16_t port() const;
  [[nodiscard]] std::vector<uint16_t> ports() const;
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
  // Go's http.Server.Shutdown: stops accepting, closes the connections waiting for a request,
  // lets those in a request finish it (their response says Connection: close) and closes
  // what is left after `grace`. Asynchronous like stop(); once every session has ended the
  // server holds no work on the io_context (so io_context::run() returns).
  void shutdown(std::chrono::milliseconds grace);

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace net
