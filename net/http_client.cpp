// net::HttpClient implementation: one coroutine per request on the caller's io_context.
//
// A request takes a concurrency slot (FIFO queue when max_concurrent is reached), takes an idle
// keep-alive connection for scheme://host:port or dials a new one, writes the request, reads
// the header and then the body piece by piece (buffer_body + read_some, so chunked and
// Content-Length bodies are handed to on_body_chunk as they arrive). One deadline covers dial,
// TLS handshake, write and read. A reused connection that fails before the first response byte
// (the peer closed it while idle) is retried once on a fresh connection.
//
// The response cap is the parser's body_limit: a Content-Length above it fails at the header,
// before any body byte is read; chunked and read-to-EOF bodies fail as soon as they pass it.
// Every error carries a core::ErrorKind (see net/transport.hpp).
#include "net/http_client.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <deque>
#include <type_traits>
#include <unordered_map>

#include "core/limit_hits.hpp"
#include "net/asio.hpp"
#include "net/gzip.hpp"
#include "net/url.hpp"

namespace net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr size_t kReadChunk = 32 * 1024;
// What one read from the socket may take. Beast reads into a dynamic buffer at most its spare
// capacity, and never less than 512 bytes: an empty flat_buffer therefore read answers 512
// bytes at a time (a 4 KB query answer took 7 recvmsg calls and as many trips through the
// event loop). Reserved once per connection, kept across its requests.
constexpr size_t kConnReadBuffer = 16 * 1024;
constexpr uint32_t kHeaderLimit = 64 * 1024;
// A keep-alive connection idle for at least this long is checked for EOF before reuse.
constexpr std::chrono::milliseconds kPeekAfter{1000};

// Go's spelling of the method in errors: `Post "http://...": ...`.
std::string go_method(std::string_view method) {
  std::string out;
  out.reserve(method.size());
  for (size_t i = 0; i < method.size(); ++i) {
    char c = method[i];
    if (i == 0 && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (i > 0 && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.push_back(c);
  }
  return out;
}

std::string format_timeout(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  if (ms > 1000) {
    std::string s = std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
    while (s.back() == '0') s.pop_back();
    return s + "s";
  }
  return std::to_string(ms) + "ms";
}

std::string lower_message(const beast::error_code& ec) {
  std::string m = ec.message();
  if (!m.empty() && m[0] >= 'A' && m[0] <= 'Z' && (m.size() < 2 || !(m[1] >= 'A' && m[1] <= 'Z'))) {
    m[0] = static_cast<char>(m[0] - 'A' + 'a');
  }
  return m;
}

// The peer closed (or reset) a connection: on a reused connection before any response byte,
// the request is retried once.
bool closed_by_peer(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted || ec == ssl::error::stream_truncated;
}

// A failed read or write: the peer breaking HTTP is bad_response, anything else (reset, EOF,
// TLS alert) is connection.
core::ErrorKind io_error_kind(const beast::error_code& ec) {
  if (ec.category() == http::make_error_code(http::error::bad_version).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return core::ErrorKind::bad_response;
  }
  return core::ErrorKind::connection;
}

size_t effective_cap(const Request& req) {
  return req.max_response_bytes == 0 ? kDefaultMaxResponseBytes : req.max_response_bytes;
}

core::unexpected<core::Error> too_large(size_t cap) {
  core::count_limit_hit(core::Limit::response_body);
  return core::fail("response exceeds max size " + std::to_string(cap) + " bytes",
                    core::ErrorKind::too_large);
}

bool is_ip_literal(const std::string& host) {
  beast::error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

// A request's header as HTTP/1.1 text: start line, fields in their order, blank line (what
// http::serializer writes before a body that is not chunked).
std::string serialize_request_head(const http::request<http::empty_body>& msg) {
  const std::string_view method = msg.method_string();
  const std::string_view target = msg.target();
  size_t size = method.size() + target.size() + 16;
  for (const auto& f : msg) size += f.name_string().size() + f.value().size() + 4;
  std::string out;
  out.reserve(size);
  out.append(method).append(" ").append(target);
  const unsigned version = msg.version();
  out.append(" HTTP/");
  out.push_back(static_cast<char>('0' + version / 10));
  out.push_back('.');
  out.push_back(static_cast<char>('0' + version % 10));
  out.append("\r\n");
  for (const auto& f : msg) out.append(f.name_string()).append(": ").append(f.value()).append("\r\n");
  out.append("\r\n");
  return out;
}

struct Connection {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  SteadyClock::time_point idle_since;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  void close() {
    beast::error_code ec;
    lowest().socket().close(ec);
  }
  // An idle keep-alive connection is usable when nothing is waiting to be read: EOF (the peer
  // closed it) or unsolicited bytes both mean it must not be reused. One idle for less than
  // kPeekAfter is taken without the check (a recv syscall per request): a peer that closed it
  // that soon fails the exchange before any response byte, and the request is sent again on a
  // new connection (the retry in execute()).
  bool usable_when_idle(SteadyClock::time_point now) {
    if (buffer.size() != 0 || !lowest().socket().is_open()) return false;
    if (now - idle_since < kPeekAfter) return true;
    char byte = 0;
    const ssize_t n =
        ::recv(lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
};

// Writes what a non-blocking send takes of `wire` now; returns the byte count (0 when the
// socket would block or fails: the async write that follows reports the error).
size_t try_send_now(beast::tcp_stream& stream, const std::array<asio::const_buffer, 2>& wire) {
  beast::error_code ec;
  auto& socket = stream.socket();
  if (!socket.non_blocking()) socket.non_blocking(true, ec);
  if (ec) return 0;
  const size_t n = socket.write_some(wire, ec);
  return ec ? 0 : n;
}

// Asio watches a connecting socket for writability (EPOLLOUT) and keeps watching it once
// connected: every ACK of a request then woke the loop with an edge nothing waits for (requests
// are written with a non-blocking send first, try_send_now), one more trip through the loop per
// request. Registered again (released and assigned), the connected socket is watched for reads
// only, until a write would block (an async write adds writability back, as Asio does). False
// when the socket cannot be registered again (it is closed then).
bool register_without_write_events(beast::tcp_stream& stream) {
  auto& socket = stream.socket();
  beast::error_code ec;
  const tcp::endpoint local = socket.local_endpoint(ec);
  if (ec) return true;  // left as it is: the exchange reports what is wrong with it
  const auto fd = socket.release(ec);
  if (ec) return true;
  socket.assign(local.protocol(), fd, ec);
  if (!ec) return true;
  ::close(fd);
  return false;
}

// What one exchange on a connection learnt, besides its result.
struct ExchangeState {
  bool got_response_bytes = false;
  bool peer_closed = false;
  bool keep_alive = false;
};

}  // namespace

class HttpClient::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& ioc, ClientOptions options)
      : ioc_(ioc), options_(std::move(options)), sweep_timer_(ioc) {}

  void send(Request req, ResponseHandler done) {
    // On the loop's thread the request starts here: co_spawn posts its first step, so `done`
    // still never runs inline, and a hop through the loop (one epoll_wait) is saved. From
    // another thread it is posted to the loop.
    if (ioc_.get_executor().running_in_this_thread()) {
      admit(std::move(req), std::move(done));
      return;
    }
    asio::post(ioc_, [self = shared_from_this(), req = std::move(req),
                      done = std::move(done)]() mutable {
      self->admit(std::move(req), std::move(done));
    });
  }

  void close() {
    asio::dispatch(ioc_, [self = shared_from_this()] {
      self->closed_ = true;
      self->sweep_timer_.cancel();
      for (auto& [key, conns] : self->idle_) {
        for (auto& c : conns) c->close();
      }
      self->idle_.clear();
      for (Connection* c : self->busy_) c->close();
      auto queued = std::move(self->queue_);
      self->queue_.clear();
      for (auto& p : queued) p.done(closed_error(p.req));
    });
  }

 private:
  struct Pending {
    Request req;
    ResponseHandler done;
    SteadyClock::time_point deadline;
  };

  // On the loop: starts `req`, or queues it while max_concurrent requests are in flight.
  void admit(Request req, ResponseHandler done) {
    if (closed_) {
      // post, not a call: `done` must never run inline from send().
      asio::post(ioc_, [req = std::move(req), done = std::move(done)] {
        done(closed_error(req));
      });
      return;
    }
    // The deadline starts now: time spent waiting for a slot counts against the timeout.
    const auto deadline = SteadyClock::now() + req.timeout;
    if (options_.max_concurrent != 0 && active_ >= options_.max_concurrent) {
      core::count_limit_hit(core::Limit::client_in_flight);
      queue_.push_back(Pending{std::move(req), std::move(done), deadline});
      return;
    }
    start(std::move(req), std::move(done), deadline);
  }

  static std::string describe(const Request& req) {
    return go_method(req.method) + " \"" +
           (req.display_url.empty() ? redact_url(req.url) : req.display_url) + "\"";
  }

  static core::unexpected<core::Error> closed_error(const Request& req) {
    return core::fail(describe(req) + ": client is closed", core::ErrorKind::canceled);
  }

  void start(Request req, ResponseHandler done, SteadyClock::time_point deadline) {
    ++active_;
    asio::co_spawn(ioc_, run(shared_from_this(), std::move(req), std::move(done), deadline),
                   [](const std::exception_ptr& e) {
                     if (e) std::rethrow_exception(e);
                   });
  }

  static asio::awaitable<void> run(std::shared_ptr<Impl> self, Request req, ResponseHandler done,
                                   SteadyClock::time_point deadline) {
    // Declared, then assigned: g++ 12 miscompiles `Result<Response> x = co_await ...` here (the
    // Response is copied bitwise out of the callee's frame, which is then freed; valgrind shows
    // the strings pointing into the dead frame).
    core::Result<Response> result = core::fail("no response");
    result = co_await self->execute(req, deadline);
    --self->active_;
    if (!self->queue_.empty() && !self->closed_) {
      Pending next = std::move(self->queue_.front());
      self->queue_.pop_front();
      self->start(std::move(next.req), std::move(next.done), next.deadline);
    }
    done(std::move(result));
  }

  asio::awaitable<core::Result<Response>> execute(Request& req, SteadyClock::time_point deadline) {
    // Sent on the loop's thread, the request was started at once: a close() since then ends it.
    if (closed_) co_return closed_error(req);
    // describe(req) (which parses the URL again to redact it) only on the error paths.
    auto url = parse_url(req.url);
    if (!url) co_return core::fail(core::Error{url.error().message, core::ErrorKind::bad_config});
    if (SteadyClock::now() >= deadline) {
      co_return core::fail(describe(req) + ": timeout after " + format_timeout(req.timeout) +
                               " waiting for one of " + std::to_string(options_.max_concurrent) +
                               " request slots",
                           core::ErrorKind::timeout);
    }
    const std::string key = url->scheme + "://" + url->host_port();
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> conn = take_idle(key);
      const bool reused = conn != nullptr;
      if (!conn) {
        // Declared, then assigned (see run()).
        core::Result<std::unique_ptr<Connection>> dialed = core::fail("not dialed");
        dialed = co_await dial(*url, deadline, req.timeout);
        if (!dialed) co_return core::fail(dialed.error().wrap(describe(req)));
        conn = std::move(*dialed);
      }
      ExchangeState state;
      busy_.push_back(conn.get());
      // (No co_await inside ?: — g++ 12 miscompiles that.)
      core::Result<Response> r = core::fail("no exchange");
      if (conn->tls) {
        r = co_await exchange(*conn->tls, *conn, *url, req, deadline, state);
      } else {
        r = co_await exchange(*conn->plain, *conn, *url, req, deadline, state);
      }
      std::erase(busy_, conn.get());
      if (!r && closed_) co_return closed_error(req);
      if (!r && reused && attempt == 0 && state.peer_closed && !state.got_response_bytes) {
        conn->close();
        continue;
      }
      if (r && state.keep_alive && options_.keep_alive && !closed_) {
        put_idle(key, std::move(conn));
      } else {
        conn->close();
      }
      if (!r) co_return core::fail(r.error().wrap(describe(req)));
      co_return r;
    }
  }

  std::unique_ptr<Connection> take_idle(const std::string& key) {
    auto it = idle_.find(key);
    if (it == idle_.end()) return nullptr;
    auto& conns = it->second;
    const auto now = SteadyClock::now();
    while (!conns.empty()) {
      // Most recently used first: it is the least likely to have been closed by the peer.
      std::unique_ptr<Connection> c = std::move(conns.back());
      conns.pop_back();
      if (!expired(*c, now) && c->usable_when_idle(now)) return c;
      c->close();
    }
    return nullptr;
  }

  // Idle for longer than idle_timeout; a zero idle_timeout keeps idle connections until the
  // peer closes them (Go's IdleConnTimeout 0).
  [[nodiscard]] bool expired(const Connection& c, SteadyClock::time_point now) const {
    return options_.idle_timeout > std::chrono::milliseconds::zero() &&
           now - c.idle_since >= options_.idle_timeout;
  }

  void put_idle(const std::string& key, std::unique_ptr<Connection> conn) {
    auto& conns = idle_[key];
    const auto now = SteadyClock::now();
    // Drop expired ones from the front (oldest first).
    while (!conns.empty() && expired(*conns.front(), now)) {
      conns.front()->close();
      conns.pop_front();
    }
    if (conns.size() >= options_.max_idle_per_host) {
      conn->close();
      return;
    }
    conn->idle_since = now;
    conns.push_back(std::move(conn));
    arm_sweep();
  }

  // While idle connections exist, a timer closes the ones idle for longer than idle_timeout,
  // so a quiet client does not hold sockets the peer has long given up on.
  void arm_sweep() {
    if (sweep_armed_ || closed_ || options_.idle_timeout <= std::chrono::milliseconds::zero()) {
      return;
    }
    sweep_armed_ = true;
    sweep_timer_.expires_after(options_.idle_timeout);
    sweep_timer_.async_wait([weak = weak_from_this()](const beast::error_code& ec) {
      const auto self = weak.lock();
      if (!self) return;
      self->sweep_armed_ = false;
      if (ec || self->closed_) return;
      self->sweep();
    });
  }

  void sweep() {
    const auto now = SteadyClock::now();
    bool any_left = false;
    for (auto it = idle_.begin(); it != idle_.end();) {
      auto& conns = it->second;
      while (!conns.empty() && expired(*conns.front(), now)) {
        conns.front()->close();
        conns.pop_front();
      }
      if (conns.empty()) {
        it = idle_.erase(it);
      } else {
        any_left = true;
        ++it;
      }
    }
    if (any_left) arm_sweep();
  }

  core::Result<ssl::context*> ssl_context() {
    if (ssl_) return &*ssl_;
    if (ssl_error_) return core::fail(*ssl_error_);
    ssl::context ctx(ssl::context::tls_client);
    beast::error_code ec;
    const TlsOptions& t = options_.tls;
    auto failed = [&](std::string what) {
      ssl_error_ = core::Error{std::move(what) + ": " + ec.message(), core::ErrorKind::bad_config};
      return core::fail(*ssl_error_);
    };
    if (!t.ca_file.empty()) {
      ctx.load_verify_file(t.ca_file, ec);
      if (ec) return failed("cannot load TLS CA file \"" + t.ca_file + "\"");
    } else {
      ctx.set_default_verify_paths(ec);
      if (ec) return failed("cannot load the system CA certificates");
    }
    if (!t.cert_file.empty() || !t.key_file.empty()) {
      ctx.use_certificate_chain_file(t.cert_file, ec);
      if (ec) return failed("cannot load TLS client certificate \"" + t.cert_file + "\"");
      ctx.use_private_key_file(t.key_file, ssl::context::pem, ec);
      if (ec) return failed("cannot load TLS client key \"" + t.key_file + "\"");
    }
    ctx.set_verify_mode(t.insecure_skip_verify ? ssl::verify_none : ssl::verify_peer);
    ssl_.emplace(std::move(ctx));
    return &*ssl_;
  }

  asio::awaitable<core::Result<std::unique_ptr<Connection>>> dial(
      const Url& url, SteadyClock::time_point deadline, std::chrono::milliseconds timeout) {
    const std::string where = "dial tcp " + url.host_port();
    auto conn = std::make_unique<Connection>();
    conn->buffer.reserve(kConnReadBuffer);
    if (url.tls()) {
      auto ctx = ssl_context();
      if (!ctx) co_return core::fail(ctx.error());
      conn->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc_, **ctx);
    } else {
      conn->plain = std::make_unique<beast::tcp_stream>(ioc_);
    }

    // Name resolution is not covered by tcp_stream's timer: a separate timer cancels it.
    struct ResolveState {
      explicit ResolveState(asio::io_context& ioc) : resolver(ioc), timer(ioc) {}
      tcp::resolver resolver;
      asio::steady_timer timer;
      bool timed_out = false;
    };
    auto rs = std::make_shared<ResolveState>(ioc_);
    rs->timer.expires_at(deadline);
    rs->timer.async_wait([rs](const beast::error_code& ec) {
      if (!ec) {
        rs->timed_out = true;
        rs->resolver.cancel();
      }
    });
    beast::error_code ec;
    const std::string service = std::to_string(url.port);
    tcp::resolver::results_type endpoints;  // declared, then assigned (see run())
    endpoints = co_await rs->resolver.async_resolve(
        url.host, service, asio::redirect_error(asio::use_awaitable, ec));
    rs->timer.cancel();
    if (rs->timed_out) {
      co_return core::fail(where + ": timeout after " + format_timeout(timeout),
                           core::ErrorKind::timeout);
    }
    if (ec) {
      co_return core::fail("lookup " + url.host + ": " + lower_message(ec),
                           core::ErrorKind::connection);
    }

    beast::tcp_stream& stream = conn->lowest();
    stream.expires_at(deadline);
    co_await stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == beast::error::timeout) {
      co_return core::fail(where + ": timeout after " + format_timeout(timeout),
                           core::ErrorKind::timeout);
    }
    if (ec) {
      co_return core::fail(where + ": connect: " + lower_message(ec), core::ErrorKind::connection);
    }
    stream.socket().set_option(tcp::no_delay(true), ec);
    if (!register_without_write_events(stream)) {
      co_return core::fail(where + ": connect: cannot watch the connected socket",
                           core::ErrorKind::connection);
    }

    if (conn->tls) {
      const TlsOptions& t = options_.tls;
      const std::string name = t.server_name.empty() ? url.host : t.server_name;
      if (!is_ip_literal(name)) {
        SSL_set_tlsext_host_name(conn->tls->native_handle(), name.c_str());
      }
      if (!t.insecure_skip_verify) {
        conn->tls->set_verify_callback(ssl::host_name_verification(name));
      }
      co_await conn->tls->async_handshake(ssl::stream_base::client,
                                          asio::redirect_error(asio::use_awaitable, ec));
      if (ec == beast::error::timeout) {
        co_return core::fail(
            "tls handshake with " + url.host_port() + ": timeout after " + format_timeout(timeout),
            core::ErrorKind::timeout);
      }
      if (ec) {
        std::string msg = "tls handshake with " + url.host_port() + ": " + lower_message(ec);
        const long verify = SSL_get_verify_result(conn->tls->native_handle());
        if (verify != X509_V_OK) {
          msg += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
        } else if (ec.category() == asio::error::get_ssl_category() &&
                   !t.insecure_skip_verify) {
          msg += " (certificate does not match server name \"" + name + "\"?)";
        }
        co_return core::fail(std::move(msg), core::ErrorKind::connection);
      }
    }
    co_return conn;
  }

  template <class Stream>
  asio::awaitable<core::Result<Response>> exchange(Stream& stream, Connection& conn,
                                                   const Url& url, const Request& req,
                                                   SteadyClock::time_point deadline,
                                                   ExchangeState& state) {
    const auto timed_out = [&] {
      return core::fail("timeout after " + format_timeout(req.timeout), core::ErrorKind::timeout);
    };
    http::request<http::empty_body> msg;  // the header: the body is written from `req`
    const http::verb verb = http::string_to_verb(req.method);
    if (verb == http::verb::unknown) {
      msg.method_string(req.method);
    } else {
      msg.method(verb);
    }
    msg.target(url.target);
    msg.version(11);
    const bool default_port = url.port == (url.tls() ? 443 : 80);
    if (default_port) {
      msg.set(http::field::host, url.host.find(':') != std::string::npos
                                     ? "[" + url.host + "]"
                                     : url.host);
    } else {
      msg.set(http::field::host, url.host_port());
    }
    msg.set(http::field::user_agent, "alertd");
    bool has_auth = false;
    bool has_accept_encoding = false;
    for (const auto& [name, value] : req.headers) {
      if (beast::iequals(name, "authorization")) has_auth = true;
      if (beast::iequals(name, "accept-encoding")) has_accept_encoding = true;
      msg.insert(name, value);
    }
    if (req.accept_gzip && !has_accept_encoding) msg.set(http::field::accept_encoding, "gzip");
    if (!has_auth && !url.userinfo.empty()) {
      msg.set(http::field::authorization, basic_auth_from_userinfo(url.userinfo));
    }
    msg.keep_alive(options_.keep_alive);
    // prepare_payload()'s framing for a string body, without copying the body into the
    // message (a POST to Alertmanager carries up to -notifier.maxBatchSize alerts). Either
    // call also drops a `Transfer-Encoding: chunked` from req.headers.
    if (!req.body.empty() || verb == http::verb::options || verb == http::verb::put ||
        verb == http::verb::post) {
      msg.content_length(req.body.size());
    } else {
      msg.chunked(false);
    }

    beast::tcp_stream& lowest = conn.lowest();
    lowest.expires_at(deadline);
    beast::error_code ec;
    // The bytes Beast's serializer would write, as header and body buffers: its buffer sequence
    // (a piece per field name, separator and value) cost more to walk than the request itself.
    const std::string head = serialize_request_head(msg);
    const std::array<asio::const_buffer, 2> wire{asio::buffer(head), asio::buffer(req.body)};
    beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(wire);
    // Plain TCP: one non-blocking send first. A request that fits the socket buffer (nearly all)
    // is then written without the loop hop an async write's completion costs.
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      rest.consume(try_send_now(lowest, wire));
    }
    if (beast::buffer_bytes(rest) != 0) {
      co_await asio::async_write(stream, rest, asio::redirect_error(asio::use_awaitable, ec));
    }
    if (ec) {
      state.peer_closed = closed_by_peer(ec);
      if (ec == beast::error::timeout) co_return timed_out();
      co_return core::fail("write request: " + lower_message(ec), core::ErrorKind::connection);
    }

    const size_t cap = effective_cap(req);
    http::response_parser<http::buffer_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(static_cast<std::uint64_t>(cap));
    if (verb == http::verb::head) parser.skip(true);
    co_await http::async_read_header(stream, conn.buffer, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    state.got_response_bytes = parser.got_some() || conn.buffer.size() != 0;
    // A Content-Length above the cap fails here, with the status line and fields parsed.
    const bool header_over_cap = ec == http::error::body_limit;
    if (ec && !header_over_cap) {
      state.peer_closed = closed_by_peer(ec);
      if (ec == beast::error::timeout) co_return timed_out();
      if (ec == http::error::end_of_stream) {
        co_return core::fail("EOF before the response header", core::ErrorKind::connection);
      }
      co_return core::fail("read response: " + lower_message(ec), io_error_kind(ec));
    }

    Response resp;
    resp.status = parser.get().result_int();
    resp.headers.reserve(
        static_cast<size_t>(std::distance(parser.get().begin(), parser.get().end())));
    for (const auto& field : parser.get()) {
      resp.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    const bool success = resp.status / 100 == 2;
    // Over the cap, a success fails; an error answer keeps its status and what was read (the
    // connection is not reused: the rest of the body is still on it).
    if (header_over_cap) {
      if (success) co_return too_large(cap);
      co_return resp;
    }
    const bool stream_body = req.on_body_chunk && success;
    // A gzip answer to accept_gzip is inflated on the way; the cap then also counts inflated
    // bytes (an error answer is cut at the cap, as uncompressed ones are).
    std::optional<GzipInflater> gunzip;
    if (req.accept_gzip && verb != http::verb::head) {
      const auto ce = parser.get().find(http::field::content_encoding);
      if (ce != parser.get().end() && is_gzip_encoding(ce->value())) {
        gunzip.emplace(cap);
        std::erase_if(resp.headers, [](const auto& h) {
          return beast::iequals(h.first, "content-encoding") ||
                 beast::iequals(h.first, "content-length");
        });
      }
    }
    const auto deliver = [&](std::string_view piece) -> std::optional<core::Error> {
      if (stream_body) return req.on_body_chunk(piece);
      resp.body.append(piece);
      return std::nullopt;
    };
    std::array<char, kReadChunk> buf;
    while (!parser.is_done()) {
      parser.get().body().data = buf.data();
      parser.get().body().size = buf.size();
      // Body bytes already read with the header (a small answer's whole body) are parsed here:
      // async_read_some would post its completion even when it reads nothing.
      bool parsed_buffered = false;
      if (conn.buffer.size() != 0) {
        const size_t used = parser.put(conn.buffer.data(), ec);
        conn.buffer.consume(used);
        parsed_buffered = !ec || ec == http::error::need_buffer;
        // need_more: the rest is on the socket, where async_read_some goes on from here.
        if (ec == http::error::need_more) ec = {};
      }
      if (!parsed_buffered && !ec) {
        co_await http::async_read_some(stream, conn.buffer, parser,
                                       asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec == http::error::need_buffer) ec = {};
      const size_t n = buf.size() - parser.get().body().size;
      if (n != 0) {
        const std::string_view chunk(buf.data(), n);
        if (gunzip) {
          if (auto r = gunzip->feed(chunk, deliver); !r) {
            if (r.error().kind == core::ErrorKind::too_large) {
              if (!success) co_return resp;
              core::count_limit_hit(core::Limit::response_body);
            }
            co_return core::fail(r.error());
          }
        } else if (auto err = deliver(chunk)) {
          co_return core::fail(std::move(*err));
        }
      }
      if (ec == http::error::body_limit) {
        if (success) co_return too_large(cap);
        co_return resp;
      }
      if (ec) {
        if (ec == beast::error::timeout) co_return timed_out();
        co_return core::fail("read response body: " + lower_message(ec), io_error_kind(ec));
      }
      // tcp_stream's timer alone does not end a body that keeps arriving: each read finds data
      // waiting and completes before the expired timer's handler runs, so a never-ending body
      // ran on until the size cap (minutes at a slow rate). The deadline is checked here too.
      if (!parser.is_done() && SteadyClock::now() >= deadline) co_return timed_out();
    }
    if (gunzip) {
      if (auto r = gunzip->finish(); !r) co_return core::fail(r.error());
    }
    state.keep_alive = parser.keep_alive();
    co_return resp;
  }

  asio::io_context& ioc_;
  ClientOptions options_;
  std::optional<ssl::context> ssl_;
  std::optional<core::Error> ssl_error_;
  std::unordered_map<std::string, std::deque<std::unique_ptr<Connection>>> idle_;
  std::vector<Connection*> busy_;  // a few per client: a vector, no node per request
  std::deque<Pending> queue_;
  size_t active_ = 0;
  bool closed_ = false;
  asio::steady_timer sweep_timer_;
  bool sweep_armed_ = false;
};

HttpClient::HttpClient(asio::io_context& ioc, ClientOptions options)
    : impl_(std::make_shared<Impl>(ioc, std::move(options))) {}

HttpClient::~HttpClient() { impl_->close(); }

void HttpClient::send(Request req, ResponseHandler done) {
  impl_->send(std::move(req), std::move(done));
}

void HttpClient::close() { impl_->close(); }

core::Result<Response> fetch_blocking(Request req, const ClientOptions& options) {
  asio::io_context ioc;
  std::optional<core::Result<Response>> out;
  {
    HttpClient client(ioc, options);
    client.send(std::move(req), [&out](core::Result<Response> r) { out = std::move(r); });
    // Not run(): the idle-connection timer would keep it busy for idle_timeout.
    while (!out && ioc.run_one() != 0) {
    }
  }
  ioc.restart();
  ioc.run();  // the client's close()
  if (!out) return core::fail("request did not complete", core::ErrorKind::canceled);
  return std::move(*out);
}

}  // namespace net
