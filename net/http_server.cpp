// net::HttpServer implementation: an accept coroutine and one coroutine per session, all on
// one strand of the caller's io_context.
//
// Session loop: wait for the next request (idle_timeout on a keep-alive connection, nothing on a
// fresh one), read the header (header_timeout), read the body (body_timeout, body_limit), call
// the handler synchronously, write the response (write_timeout), loop while keep-alive. The
// accept loop enforces max_connections: over it, the longest-idle session (keep-alive, or fresh
// and silent so far) is closed to make room, or the new connection gets a 503 (at most kMaxRejecting of those at once; the
// rest are closed without an answer). stop() closes the acceptor and every open session.
#include "net/http_server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <exception>
#include <optional>
#include <unordered_map>

#include "core/limit_hits.hpp"
#include "net/asio.hpp"

namespace net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

// Over-cap connections answered 503 at once; beyond this they are closed without an answer.
constexpr size_t kMaxRejecting = 64;
constexpr auto kRejectLinger = std::chrono::seconds(1);
constexpr size_t kDefaultMaxConnections = 1024;

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

size_t derived_max_connections() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
    return kDefaultMaxConnections;
  }
  return std::clamp<size_t>(static_cast<size_t>(rl.rlim_cur / 2), 1, kDefaultMaxConnections);
}

http::response<http::string_body> plain_response(http::status status, std::string body,
                                                 unsigned version = 11) {
  http::response<http::string_body> res{status, version};
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.body() = std::move(body);
  res.keep_alive(false);
  res.prepare_payload();
  return res;
}

}  // namespace

class HttpServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& ioc, RequestHandler handler, ServerOptions options)
      : ioc_(ioc),
        strand_(asio::make_strand(ioc)),
        handler_(std::move(handler)),
        options_(std::move(options)),
        acceptor_(strand_) {}

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
  [[nodiscard]] size_t max_connections() const { return max_connections_; }
  [[nodiscard]] uint64_t accepted() const { return accepted_.load(); }
  [[nodiscard]] uint64_t rejected() const { return rejected_.load(); }
  [[nodiscard]] size_t open() const { return open_.load(); }

  void stop() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->stopped_ = true;
      beast::error_code ec;
      self->acceptor_.close(ec);
      for (auto& [id, session] : self->sessions_) session.close();
    });
  }

 private:
  using Strand = asio::strand<asio::io_context::executor_type>;

  // What the accept loop knows of a session: enough to close it, and whether it is only
  // waiting for its next request (the first to go when the cap is reached).
  struct SessionRef {
    beast::tcp_stream* stream = nullptr;
    bool idle = false;
    bool closing = false;
    bool counted = true;  // counts against the cap (false once evicted)
    SteadyClock::time_point idle_since;

    void close() {
      closing = true;
      beast::error_code ec;
      stream->socket().shutdown(tcp::socket::shutdown_both, ec);
      stream->socket().close(ec);
    }
  };

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
    max_connections_ =
        options_.max_connections != 0 ? options_.max_connections : derived_max_connections();
    asio::co_spawn(strand_, accept_loop(shared_from_this()), rethrow_if_error);
    return {};
  }

  // Closes the longest-idle keep-alive session to make room; false if none is idle.
  bool evict_idle() {
    SessionRef* oldest = nullptr;
    for (auto& [id, session] : sessions_) {
      if (session.idle && !session.closing &&
          (oldest == nullptr || session.idle_since < oldest->idle_since)) {
        oldest = &session;
      }
    }
    if (oldest == nullptr) return false;
    oldest->close();
    oldest->counted = false;
    --live_;
    return true;
  }

  static asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
    for (;;) {
      beast::error_code ec;
      // Declared, then assigned: g++ 12 miscompiles `T x = co_await ...` for non-trivial T.
      tcp::socket socket(self->strand_);
      socket = co_await self->acceptor_.async_accept(
          self->strand_, asio::redirect_error(asio::use_awaitable, ec));
      if (self->stopped_ || !self->acceptor_.is_open()) co_return;
      if (ec) {
        // EMFILE and friends: back off briefly instead of spinning.
        asio::steady_timer pause(self->strand_, std::chrono::milliseconds(50));
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      ++self->accepted_;
      if (self->live_ >= self->max_connections_) core::count_limit_hit(core::Limit::connections);
      if (self->live_ >= self->max_connections_ && !self->evict_idle()) {
        ++self->rejected_;
        if (self->rejecting_ < kMaxRejecting) {
          ++self->rejecting_;
          asio::co_spawn(self->strand_, reject(self, std::move(socket)), rethrow_if_error);
        } else {
          socket.close(ec);
        }
        continue;
      }
      ++self->live_;
      asio::co_spawn(self->strand_, session(self, std::move(socket)), rethrow_if_error);
    }
  }

  // Over the cap: 503 at once (without reading the request), then a short linger reading what
  // the client sent so that closing does not reset the connection before it reads the answer.
  static asio::awaitable<void> reject(std::shared_ptr<Impl> self, tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::error_code ec;
    auto res = plain_response(http::status::service_unavailable,
                              "too many open connections; try again later\n");
    res.set(http::field::retry_after, "1");
    stream.expires_after(kRejectLinger);
    co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
      stream.socket().shutdown(tcp::socket::shutdown_send, ec);
      std::array<char, 4096> sink;
      while (!ec && !self->stopped_) {
        co_await stream.async_read_some(asio::buffer(sink),
                                        asio::redirect_error(asio::use_awaitable, ec));
      }
    }
    stream.close();
    --self->rejecting_;
  }

  ServerResponse call_handler(const ServerRequest& req) {
    std::string what;
    try {
      return handler_(req);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "unknown exception";
    }
    if (options_.log_error) {
      options_.log_error("http handler failed for " + req.method + " " +
                         core::clip(req.target, 256) + ": " + core::clip(what));
    }
    return ServerResponse{500, "text/plain; charset=utf-8", "internal server error\n", {}};
  }

  static asio::awaitable<void> session(std::shared_ptr<Impl> self, tcp::socket socket) {
    const uint64_t id = self->next_session_id_++;
    beast::tcp_stream stream(std::move(socket));
    SessionRef& ref = self->sessions_.emplace(id, SessionRef{&stream}).first->second;
    ++self->open_;
    beast::flat_buffer buffer;
    beast::error_code ec;
    const ServerOptions& o = self->options_;
    for (bool first = true; !self->stopped_ && !ref.closing; first = false) {
      // Wait for the first byte of the next request. Keep-alive: up to idle_timeout, and the
      // header deadline starts with that byte. A fresh connection: its header deadline runs
      // from the accept. Either way the session is idle meanwhile, so over the cap it can be
      // evicted: otherwise connections that never send a byte (1,100 of them, each reopened
      // when its deadline closed it) kept /-/healthy answering 503.
      const auto header_deadline = SteadyClock::now() + o.header_timeout;
      if (buffer.size() == 0) {
        ref.idle = true;
        ref.idle_since = SteadyClock::now();
        if (first) {
          stream.expires_at(header_deadline);
        } else {
          stream.expires_after(o.idle_timeout);
        }
        const size_t n = co_await stream.async_read_some(
            buffer.prepare(4096), asio::redirect_error(asio::use_awaitable, ec));
        buffer.commit(n);
        ref.idle = false;
        if (ec || ref.closing) break;  // EOF, idle or header timeout, evicted, stop()
      }
      http::request_parser<http::string_body> parser;
      parser.header_limit(o.header_limit);
      parser.body_limit(o.body_limit);
      if (first) {
        stream.expires_at(header_deadline);
      } else {
        stream.expires_after(o.header_timeout);
      }
      co_await http::async_read_header(stream, buffer, parser,
                                       asio::redirect_error(asio::use_awaitable, ec));
      if (!ec && !parser.is_done()) {
        stream.expires_after(o.body_timeout);
        co_await http::async_read(stream, buffer, parser,
                                  asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec) {
        // Limits and malformed requests get an answer; EOF, timeouts and stop() do not.
        std::optional<http::response<http::string_body>> res;
        if (ec == http::error::body_limit) {
          core::count_limit_hit(core::Limit::request_body);
          res = plain_response(http::status::payload_too_large,
                               "request body exceeds the limit of " +
                                   std::to_string(o.body_limit) + " bytes\n");
        } else if (ec == http::error::header_limit) {
          core::count_limit_hit(core::Limit::request_header);
          res = plain_response(http::status::request_header_fields_too_large,
                               "request header exceeds the limit of " +
                                   std::to_string(o.header_limit) + " bytes\n");
        } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
                   ec != http::error::end_of_stream && ec != http::error::partial_message) {
          res = plain_response(http::status::bad_request,
                               "bad request: " + lower_message(ec) + "\n");
        }
        if (res && !ref.closing) {
          stream.expires_after(o.write_timeout);
          co_await http::async_write(stream, *res, asio::redirect_error(asio::use_awaitable, ec));
        }
        break;
      }
      const auto& msg = parser.get();
      ServerRequest req;
      req.method = std::string(msg.method_string());
      req.target = std::string(msg.target());
      for (const auto& field : msg) {
        req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      req.body = std::move(parser.get().body());
      ServerResponse out = self->call_handler(req);
      if (ref.closing) break;  // stop() or eviction while the handler ran (multi-threaded ioc)
      http::response<http::string_body> res{static_cast<http::status>(out.status), msg.version()};
      res.set(http::field::content_type, out.content_type);
      for (auto& [name, value] : out.headers) res.insert(name, value);
      const bool head = msg.method() == http::verb::head;
      res.body() = std::move(out.body);
      res.keep_alive(msg.keep_alive() && !self->stopped_);
      res.prepare_payload();
      if (head) res.body().clear();
      const bool keep_alive = res.keep_alive();
      stream.expires_after(o.write_timeout);
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
    if (ref.counted) --self->live_;
    self->sessions_.erase(id);
    --self->open_;
  }

  asio::io_context& ioc_;
  Strand strand_;
  RequestHandler handler_;
  ServerOptions options_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  size_t max_connections_ = 0;
  uint64_t next_session_id_ = 0;
  bool stopped_ = false;
  // Sessions counted against the cap (open ones minus those being evicted).
  size_t live_ = 0;
  size_t rejecting_ = 0;
  std::unordered_map<uint64_t, SessionRef> sessions_;
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<size_t> open_{0};
};

HttpServer::HttpServer(asio::io_context& ioc, RequestHandler handler)
    : HttpServer(ioc, std::move(handler), ServerOptions{}) {}

HttpServer::HttpServer(asio::io_context& ioc, RequestHandler handler, ServerOptions options)
    : impl_(std::make_shared<Impl>(ioc, std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() { impl_->stop(); }

core::Result<void> HttpServer::listen(const std::string& listen_addr) {
  return impl_->listen(listen_addr);
}

uint16_t HttpServer::port() const { return impl_->port(); }

size_t HttpServer::max_connections() const { return impl_->max_connections(); }

uint64_t HttpServer::connections_accepted() const { return impl_->accepted(); }

uint64_t HttpServer::connections_rejected() const { return impl_->rejected(); }

size_t HttpServer::open_connections() const { return impl_->open(); }

void HttpServer::stop() { impl_->stop(); }

}  // namespace net
