// net::HttpServer implementation: an accept coroutine and one coroutine per session, all on
// the caller's io_context. A session reads a request (deadline = read_timeout, body capped at
// body_limit), calls the handler synchronously, writes the response (write_timeout) and loops
// while the connection is keep-alive. stop() closes the acceptor and every open session.
#include "net/http_server.hpp"

#include <charconv>
#include <unordered_map>

#include "net/asio.hpp"

namespace net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr uint32_t kHeaderLimit = 64 * 1024;

std::string lower_message(const beast::error_code& ec) {
  std::string m = ec.message();
  if (!m.empty() && m[0] >= 'A' && m[0] <= 'Z' && (m.size() < 2 || !(m[1] >= 'A' && m[1] <= 'Z'))) {
    m[0] = static_cast<char>(m[0] - 'A' + 'a');
  }
  return m;
}

void rethrow_if_error(const std::exception_ptr& e) {
  if (e) std::rethrow_exception(e);
}

}  // namespace

class HttpServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& ioc, RequestHandler handler, ServerOptions options)
      : ioc_(ioc), handler_(std::move(handler)), options_(options), acceptor_(ioc) {}

  core::Result<void> listen(const std::string& addr) {
    auto fail = [&](const std::string& why) {
      return core::fail("cannot listen on \"" + addr + "\": " + why);
    };
    const size_t colon = addr.rfind(':');
    if (colon == std::string::npos) return fail("missing port (want host:port or :port)");
    std::string host = addr.substr(0, colon);
    const std::string port_text = addr.substr(colon + 1);
    unsigned port = 0;
    const auto [ptr, ec_port] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec_port != std::errc{} || ptr != port_text.data() + port_text.size() ||
        port > 65535) {
      return fail("invalid port \"" + port_text + "\"");
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    beast::error_code ec;
    tcp::endpoint endpoint;
    if (host.empty()) {
      // ":8880": every interface, IPv6 and IPv4 when the host has IPv6.
      if (open_and_bind(tcp::endpoint(tcp::v6(), static_cast<uint16_t>(port)), true, ec)) {
        return start();
      }
      if (ec == asio::error::address_in_use) return fail("bind: " + lower_message(ec));
      if (!open_and_bind(tcp::endpoint(tcp::v4(), static_cast<uint16_t>(port)), false, ec)) {
        return fail(lower_message(ec));
      }
      return start();
    }
    const auto address = asio::ip::make_address(host, ec);
    if (!ec) {
      endpoint = tcp::endpoint(address, static_cast<uint16_t>(port));
    } else {
      tcp::resolver resolver(ioc_);
      auto results = resolver.resolve(host, port_text, ec);
      if (ec || results.empty()) return fail("lookup " + host + ": " + lower_message(ec));
      endpoint = results.begin()->endpoint();
    }
    if (!open_and_bind(endpoint, false, ec)) return fail(lower_message(ec));
    return start();
  }

  [[nodiscard]] uint16_t port() const { return port_; }
  [[nodiscard]] uint64_t accepted() const { return accepted_; }

  void stop() {
    asio::dispatch(ioc_, [self = shared_from_this()] {
      self->stopped_ = true;
      beast::error_code ec;
      self->acceptor_.close(ec);
      for (auto& [id, stream] : self->sessions_) {
        stream->socket().shutdown(tcp::socket::shutdown_both, ec);
        stream->socket().close(ec);
      }
    });
  }

 private:
  bool open_and_bind(const tcp::endpoint& endpoint, bool dual_stack, beast::error_code& ec) {
    if (acceptor_.is_open()) acceptor_.close(ec);
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) return false;
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (endpoint.protocol() == tcp::v6()) {
      acceptor_.set_option(asio::ip::v6_only(!dual_stack), ec);
    }
    acceptor_.bind(endpoint, ec);
    if (ec) {
      const beast::error_code bind_ec = ec;
      acceptor_.close(ec);
      ec = bind_ec;
      if (ec != asio::error::address_in_use) return false;
      return false;
    }
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      const beast::error_code listen_ec = ec;
      acceptor_.close(ec);
      ec = listen_ec;
      return false;
    }
    port_ = acceptor_.local_endpoint(ec).port();
    return true;
  }

  core::Result<void> start() {
    stopped_ = false;
    asio::co_spawn(ioc_, accept_loop(shared_from_this()), rethrow_if_error);
    return {};
  }

  static asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
    for (;;) {
      beast::error_code ec;
      // Declared, then assigned: g++ 12 miscompiles `T x = co_await ...` for non-trivial T.
      tcp::socket socket(self->ioc_);
      socket = co_await self->acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (self->stopped_ || !self->acceptor_.is_open()) co_return;
      if (ec) {
        // EMFILE and friends: back off briefly instead of spinning.
        asio::steady_timer pause(self->ioc_, std::chrono::milliseconds(50));
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      ++self->accepted_;
      asio::co_spawn(self->ioc_, session(self, std::move(socket)), rethrow_if_error);
    }
  }

  static asio::awaitable<void> session(std::shared_ptr<Impl> self, tcp::socket socket) {
    const uint64_t id = self->next_session_id_++;
    beast::tcp_stream stream(std::move(socket));
    self->sessions_.emplace(id, &stream);
    beast::flat_buffer buffer;
    beast::error_code ec;
    while (!self->stopped_) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(kHeaderLimit);
      parser.body_limit(self->options_.body_limit);
      stream.expires_after(self->options_.read_timeout);
      co_await http::async_read(stream, buffer, parser,
                                asio::redirect_error(asio::use_awaitable, ec));
      if (ec == http::error::body_limit) {
        http::response<http::string_body> res{http::status::payload_too_large, 11};
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "request body exceeds the limit of " +
                     std::to_string(self->options_.body_limit) + " bytes\n";
        res.keep_alive(false);
        res.prepare_payload();
        stream.expires_after(self->options_.write_timeout);
        co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
        break;
      }
      if (ec) break;  // EOF, timeout, malformed request, stop()
      const auto& msg = parser.get();
      ServerRequest req;
      req.method = std::string(msg.method_string());
      req.target = std::string(msg.target());
      for (const auto& field : msg) {
        req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      req.body = std::move(parser.get().body());
      ServerResponse out;
      try {
        out = self->handler_(req);
      } catch (const std::exception& e) {
        out = ServerResponse{500, "text/plain; charset=utf-8",
                             std::string("internal error: ") + e.what() + "\n", {}};
      }
      http::response<http::string_body> res{static_cast<http::status>(out.status), msg.version()};
      res.set(http::field::content_type, out.content_type);
      for (auto& [name, value] : out.headers) res.insert(name, value);
      const bool head = msg.method() == http::verb::head;
      res.body() = std::move(out.body);
      res.keep_alive(msg.keep_alive() && !self->stopped_);
      res.prepare_payload();
      if (head) res.body().clear();
      const bool keep_alive = res.keep_alive();
      stream.expires_after(self->options_.write_timeout);
      if (head) {
        http::response_serializer<http::string_body> sr{res};
        co_await http::async_write_header(stream, sr,
                                          asio::redirect_error(asio::use_awaitable, ec));
      } else {
        co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec || !keep_alive) break;
    }
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.close();
    self->sessions_.erase(id);
  }

  asio::io_context& ioc_;
  RequestHandler handler_;
  ServerOptions options_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  uint64_t accepted_ = 0;
  uint64_t next_session_id_ = 0;
  bool stopped_ = false;
  std::unordered_map<uint64_t, beast::tcp_stream*> sessions_;
};

HttpServer::HttpServer(asio::io_context& ioc, RequestHandler handler)
    : HttpServer(ioc, std::move(handler), ServerOptions{}) {}

HttpServer::HttpServer(asio::io_context& ioc, RequestHandler handler, ServerOptions options)
    : impl_(std::make_shared<Impl>(ioc, std::move(handler), options)) {}

HttpServer::~HttpServer() { impl_->stop(); }

core::Result<void> HttpServer::listen(const std::string& listen_addr) {
  return impl_->listen(listen_addr);
}

uint16_t HttpServer::port() const { return impl_->port(); }

uint64_t HttpServer::connections_accepted() const { return impl_->accepted(); }

void HttpServer::stop() { impl_->stop(); }

}  // namespace net
