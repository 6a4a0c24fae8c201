// net::HttpServer implementation: an accept coroutine and one coroutine per session, all on
// one strand of the caller's io_context.
//
// Session loop: wait for the next request (idle_timeout on a keep-alive connection, nothing on a
// fresh one), read the header (header_timeout), read the body (body_timeout, body_limit), call
// the handler synchronously, write the response (write_timeout), loop while keep-alive. The
// accept loop enforces max_connections: over it, the longest-idle session (keep-alive, or fresh
// and silent so far) is closed to make room, or the new connection gets a 503 (at most kMaxRejecting of those at once; the
// rest are closed without an answer). stop() closes the acceptors and every open session;
// shutdown() lets the sessions inside a request finish first.
//
// HTTPS listeners: the session first reads the client's first bytes as a plain TCP read
// (idle, under the header deadline); a TLS record (0x16) goes to the handshake with those bytes,
// anything else gets Go's plain-text 400. Each listener holds a shared_ptr to its current
// ssl::context; a new connection checks the files' stamps at most once a second and swaps in a
// freshly loaded context when they changed (sessions keep the context they started with).
#include "net/http_server.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <random>
#include <unordered_map>

#include "core/limit_hits.hpp"
#include "net/asio.hpp"
#include "net/gzip.hpp"

namespace net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
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


// Go's answer to plain HTTP on an HTTPS port (net/http/server.go).
constexpr std::string_view kPlainHttpOnTls =
    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
// The first byte of a TLS record carrying a handshake message (a ClientHello).
constexpr unsigned char kTlsHandshakeRecord = 0x16;
constexpr auto kCertCheckInterval = std::chrono::seconds(1);

// PROXY protocol v2 (https://www.haproxy.org/download/1.8/doc/proxy-protocol.txt): a 12-byte
// signature, version/command, family/protocol, and the length of the address block after it.
constexpr size_t kProxyHeaderSize = 16;
constexpr std::string_view kProxyV2Signature("\r\n\r\n\0\r\nQUIT\n", 12);
constexpr size_t kMaxProxyBlock = 2048;  // VictoriaMetrics' bound (addresses plus TLVs)

// OpenSSL's queued errors as one line (the reasons, innermost last), the queue emptied.
std::string openssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    if (!out.empty()) out += ": ";
    out += reason != nullptr ? reason : "error " + std::to_string(e);
  }
  return out.empty() ? "unknown error" : out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

core::Result<int> tls_version(const std::string& name) {
  const std::string n = upper(name);
  if (n.empty() || n == "TLS12") return TLS1_2_VERSION;
  if (n == "TLS13") return TLS1_3_VERSION;
  if (n == "TLS11") return TLS1_1_VERSION;
  if (n == "TLS10") return TLS1_VERSION;
  return core::fail("unsupported TLS version \"" + name + "\" (want TLS10, TLS11, TLS12 or TLS13)",
                    core::ErrorKind::bad_config);
}

// Go's names (IANA's) to OpenSSL's cipher list; TLS 1.3 suites are accepted and left out, as
// Go ignores them in tls.Config.CipherSuites.
core::Result<std::string> cipher_list(SSL_CTX* probe, const std::vector<std::string>& names) {
  std::string list;
  if (SSL_CTX_set_cipher_list(probe, "ALL:COMPLEMENTOFALL") != 1) {
    return core::fail("cannot list OpenSSL's cipher suites: " + openssl_errors(),
                      core::ErrorKind::bad_config);
  }
  const STACK_OF(SSL_CIPHER)* all = SSL_CTX_get_ciphers(probe);
  for (const std::string& name : names) {
    const std::string want = upper(name);
    const SSL_CIPHER* found = nullptr;
    for (int i = 0; all != nullptr && i < sk_SSL_CIPHER_num(all); ++i) {
      const SSL_CIPHER* c = sk_SSL_CIPHER_value(all, i);
      const char* standard = SSL_CIPHER_standard_name(c);
      if (standard != nullptr && upper(standard) == want) found = c;
    }
    if (found == nullptr) {
      return core::fail("unsupported TLS cipher suite name \"" + name + "\"",
                        core::ErrorKind::bad_config);
    }
    if (std::string_view(SSL_CIPHER_get_version(found)) == "TLSv1.3") continue;
    if (!list.empty()) list += ':';
    list += SSL_CIPHER_get_name(found);
  }
  return list;
}

// Readable as a regular file? The OS's reason otherwise ("no such file or directory").
core::Result<void> check_readable(const char* what, const std::string& path) {
  if (path.empty()) return core::fail(std::string(what) + " is not set", core::ErrorKind::bad_config);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    std::string why = std::strerror(errno);
    if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
    return core::fail("cannot read " + std::string(what) + " \"" + path + "\": " + why,
                      core::ErrorKind::bad_config);
  }
  std::fclose(f);
  return {};
}

core::Result<std::shared_ptr<ssl::context>> make_server_context(const ServerTls& t) {
  if (auto r = check_readable("TLS certificate file", t.cert_file); !r) return core::fail(r.error());
  if (auto r = check_readable("TLS key file", t.key_file); !r) return core::fail(r.error());
  auto version = tls_version(t.min_version);
  if (!version) return core::fail(version.error());
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  ERR_clear_error();
  std::string ciphers;
  if (!t.cipher_suites.empty()) {
    auto list = cipher_list(native, t.cipher_suites);
    if (!list) return core::fail(list.error());
    ciphers = std::move(*list);
    if (ciphers.empty()) {
      SSL_CTX_set_cipher_list(native, "DEFAULT");  // only TLS 1.3 names: back to the default
    } else if (SSL_CTX_set_cipher_list(native, ciphers.c_str()) != 1) {
      return core::fail("cannot use TLS cipher suites: " + openssl_errors(),
                        core::ErrorKind::bad_config);
    }
  }
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_min_proto_version(native, *version) != 1) {
    return core::fail("cannot set the minimum TLS version \"" + t.min_version +
                          "\": " + openssl_errors(),
                      core::ErrorKind::bad_config);
  }
  if (SSL_CTX_use_certificate_chain_file(native, t.cert_file.c_str()) != 1) {
    return core::fail("cannot load TLS certificate from \"" + t.cert_file +
                          "\": " + openssl_errors(),
                      core::ErrorKind::bad_config);
  }
  if (SSL_CTX_use_PrivateKey_file(native, t.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    const std::string why = openssl_errors();
    if (why.find("key values mismatch") != std::string::npos) {
      return core::fail("TLS key \"" + t.key_file + "\" does not match certificate \"" +
                            t.cert_file + "\"",
                        core::ErrorKind::bad_config);
    }
    return core::fail("cannot load TLS key from \"" + t.key_file + "\": " + why,
                      core::ErrorKind::bad_config);
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return core::fail("TLS key \"" + t.key_file + "\" does not match certificate \"" +
                          t.cert_file + "\": " + openssl_errors(),
                      core::ErrorKind::bad_config);
  }
  return ctx;
}

// Checks the 16-byte PROXY protocol v2 header at `p`; the length of the address block that
// follows. LOCAL (a proxy's own health check) is accepted whatever its family; PROXY needs
// TCP over IPv4 (12 address bytes at least) or IPv6 (36).
core::Result<size_t> proxy_block_length(const unsigned char* p) {
  auto bad = [](const std::string& why) {
    return core::fail("proxy protocol: " + why, core::ErrorKind::bad_response);
  };
  if (std::memcmp(p, kProxyV2Signature.data(), kProxyV2Signature.size()) != 0) {
    return bad("the connection does not start with the PROXY protocol v2 signature");
  }
  const unsigned version = p[12] >> 4u;
  const unsigned command = p[12] & 0x0fu;
  const unsigned family = p[13] >> 4u;
  const unsigned proto = p[13] & 0x0fu;
  const size_t length = (static_cast<size_t>(p[14]) << 8u) | p[15];
  if (version != 2) return bad("version " + std::to_string(version) + " (only v2 is supported)");
  if (length > kMaxProxyBlock) {
    return bad("address block of " + std::to_string(length) + " bytes (at most 2048)");
  }
  if (command == 0) return length;
  if (command != 1) return bad("command " + std::to_string(command) + " (want LOCAL or PROXY)");
  if (proto != 1) return bad("protocol " + std::to_string(proto) + " (only TCP is supported)");
  if (family == 1 && length < 12) return bad("IPv4 address block shorter than 12 bytes");
  if (family == 2 && length < 36) return bad("IPv6 address block shorter than 36 bytes");
  if (family != 1 && family != 2) {
    return bad("address family " + std::to_string(family) + " (want IPv4 or IPv6)");
  }
  return length;
}

// What tells a changed certificate or key file: inode (a renamed-over or re-linked file),
// size and modification time.
struct FileStamp {
  bool exists = false;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return FileStamp{true, st.st_ino, st.st_size,
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

// When a connection accepted now reaches -http.connTimeout: timeout plus a random 0-10% of it,
// as VictoriaMetrics does, so that connections opened together do not all close together.
// timeout 0: never.
SteadyClock::time_point conn_age_deadline(std::chrono::milliseconds timeout) {
  if (timeout <= std::chrono::milliseconds::zero()) return SteadyClock::time_point::max();
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_int_distribution<int64_t> jitter(0, timeout.count() / 10);
  return SteadyClock::now() + timeout + std::chrono::milliseconds(jitter(rng));
}

// gzip level of compressed answers: gzhttp.CompressionLevel(1), as VictoriaMetrics.
constexpr int kGzipLevel = 1;

bool iequals(std::string_view a, std::string_view b) { return beast::iequals(a, b); }

// Whether the handler's answer may be compressed at all, before its size is known (gzhttp's
// rules): a status with a body, no Content-Encoding or Content-Range of its own, and a content
// type that is not already compressed.
bool may_compress(const ServerResponse& out) {
  if (out.status < 200 || out.status == 204 || out.status == 304) return false;
  for (const auto& [name, value] : out.headers) {
    if (iequals(name, "Content-Encoding") || iequals(name, "Content-Range")) return false;
  }
  return compressible_content_type(out.content_type);
}

// The answer's body is (or will be) gzip: say so, and drop what no longer describes it.
void mark_gzip(ServerResponse& out) {
  std::erase_if(out.headers, [](const auto& h) {
    return iequals(h.first, "Content-Length") || iequals(h.first, "Accept-Ranges");
  });
  out.headers.emplace_back("Content-Encoding", "gzip");
}

}  // namespace

core::Result<void> check_server_tls(const ServerTls& tls) {
  auto ctx = make_server_context(tls);
  if (!ctx) return core::fail(ctx.error());
  return {};
}

class HttpServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& ioc, RequestHandler handler, ServerOptions options)
      : ioc_(ioc),
        strand_(asio::make_strand(ioc)),
        handler_(std::move(handler)),
        options_(std::move(options)) {}

  core::Result<void> listen(const std::string& addr, const ListenOptions& options) {
    auto fail = [&](const std::string& why) {
      return core::fail("cannot listen on \"" + addr + "\": " + why);
    };
    auto listener = std::make_unique<Listener>(strand_);
    listener->proxy_protocol = options.proxy_protocol;
    if (const ServerTls* tls = options.tls ? &*options.tls : nullptr; tls != nullptr) {
      auto ctx = make_server_context(*tls);
      if (!ctx) return core::fail(ctx.error());
      listener->tls.emplace();
      listener->tls->config = *tls;
      listener->tls->context = std::move(*ctx);
      listener->tls->cert = stamp_of(tls->cert_file);
      listener->tls->key = stamp_of(tls->key_file);
      listener->tls->next_check = SteadyClock::now() + kCertCheckInterval;
    }
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
      if (open_and_bind(*listener, tcp::endpoint(tcp::v6(), static_cast<uint16_t>(port)), true,
                        ec)) {
        return start(std::move(listener));
      }
      if (ec == asio::error::address_in_use) return fail("bind: " + lower_message(ec));
      if (!open_and_bind(*listener, tcp::endpoint(tcp::v4(), static_cast<uint16_t>(port)), false,
                         ec)) {
        return fail(lower_message(ec));
      }
      return start(std::move(listener));
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
    if (!open_and_bind(*listener, endpoint, false, ec)) return fail(lower_message(ec));
    return start(std::move(listener));
  }

  [[nodiscard]] uint16_t port() const { return listeners_.empty() ? 0 : listeners_.front()->port; }
  [[nodiscard]] std::vector<uint16_t> ports() const {
    std::vector<uint16_t> out;
    for (const auto& l : listeners_) out.push_back(l->port);
    return out;
  }
  [[nodiscard]] size_t max_connections() const { return max_connections_; }
  [[nodiscard]] uint64_t accepted() const { return accepted_.load(); }
  [[nodiscard]] uint64_t rejected() const { return rejected_.load(); }
  [[nodiscard]] size_t open() const { return open_.load(); }

  void stop() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->stopped_ = true;
      self->close_acceptors();
      for (auto& [id, session] : self->sessions_) session.close();
      if (self->grace_timer_) self->grace_timer_->cancel();
    });
  }

  void shutdown(std::chrono::milliseconds grace) {
    asio::dispatch(strand_, [self = shared_from_this(), grace] {
      self->stopped_ = true;
      self->close_acceptors();
      // Waiting for a request (or, on HTTPS, for the handshake): nothing to finish. Unless
      // its first bytes are on the socket already, read or not: a request the client sent
      // before the shutdown gets the grace too (the read's completion may simply not have
      // run yet).
      for (auto& [id, session] : self->sessions_) {
        if (session.idle && !session.bytes_waiting()) session.close();
      }
      if (self->sessions_.empty()) return;
      self->grace_timer_.emplace(self->strand_, grace);
      self->grace_timer_->async_wait([self](const beast::error_code& ec) {
        if (ec) return;
        for (auto& [id, session] : self->sessions_) session.close();
      });
    });
  }

 private:
  using Strand = asio::strand<asio::io_context::executor_type>;

  // An HTTPS listener's certificate: the context new connections get, and the files' stamps
  // it was loaded from.
  struct TlsState {
    ServerTls config;
    std::shared_ptr<ssl::context> context;
    FileStamp cert;
    FileStamp key;
    SteadyClock::time_point next_check;
  };

  struct Listener {
    explicit Listener(Strand& strand) : acceptor(strand) {}
    tcp::acceptor acceptor;
    uint16_t port = 0;
    std::optional<TlsState> tls;
    bool proxy_protocol = false;
  };

  // What the accept loop knows of a session: enough to close it, and whether it is only
  // waiting for its next request (the first to go when the cap is reached).
  struct SessionRef {
    beast::tcp_stream* stream = nullptr;
    bool idle = false;
    bool closing = false;
    bool counted = true;  // counts against the cap (false once evicted)
    SteadyClock::time_point idle_since;

    // Bytes received and not yet read.
    [[nodiscard]] bool bytes_waiting() const {
      beast::error_code ec;
      const size_t n = stream->socket().available(ec);
      return !ec && n > 0;
    }

    void close() {
      closing = true;
      beast::error_code ec;
      stream->socket().shutdown(tcp::socket::shutdown_both, ec);
      stream->socket().close(ec);
    }
  };

  void close_acceptors() {
    beast::error_code ec;
    for (auto& l : listeners_) l->acceptor.close(ec);
  }

  static bool open_and_bind(Listener& l, const tcp::endpoint& endpoint, bool dual_stack,
                            beast::error_code& ec) {
    tcp::acceptor& acceptor = l.acceptor;
    if (acceptor.is_open()) acceptor.close(ec);
    acceptor.open(endpoint.protocol(), ec);
    if (ec) return false;
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (endpoint.protocol() == tcp::v6()) {
      acceptor.set_option(asio::ip::v6_only(!dual_stack), ec);
    }
    acceptor.bind(endpoint, ec);
    if (ec) {
      const beast::error_code bind_ec = ec;
      acceptor.close(ec);
      ec = bind_ec;
      return false;
    }
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      const beast::error_code listen_ec = ec;
      acceptor.close(ec);
      ec = listen_ec;
      return false;
    }
    l.port = acceptor.local_endpoint(ec).port();
    return true;
  }

  core::Result<void> start(std::unique_ptr<Listener> listener) {
    stopped_ = false;
    if (max_connections_ == 0) {
      max_connections_ =
          options_.max_connections != 0 ? options_.max_connections : derived_max_connections();
    }
    Listener* l = listener.get();
    listeners_.push_back(std::move(listener));
    asio::co_spawn(strand_, accept_loop(shared_from_this(), l), rethrow_if_error);
    return {};
  }

  // The context for a new HTTPS connection; reloads the certificate when its files changed
  // (checked at most once a second). A failed reload keeps the previous certificate.
  std::shared_ptr<ssl::context> tls_context(TlsState& t) {
    const auto now = SteadyClock::now();
    if (now < t.next_check) return t.context;
    t.next_check = now + kCertCheckInterval;
    const FileStamp cert = stamp_of(t.config.cert_file);
    const FileStamp key = stamp_of(t.config.key_file);
    if (cert == t.cert && key == t.key) return t.context;
    auto fresh = make_server_context(t.config);
    if (!fresh) {
      // Reported once per change of the files, not at every connection.
      t.cert = cert;
      t.key = key;
      if (options_.log_error) {
        options_.log_error("cannot reload the TLS certificate, the previous one stays in use: " +
                           fresh.error().message);
      }
      return t.context;
    }
    t.context = std::move(*fresh);
    t.cert = cert;
    t.key = key;
    if (options_.log_info) {
      options_.log_info("reloaded the TLS certificate from \"" + t.config.cert_file +
                        "\" and key from \"" + t.config.key_file + "\"");
    }
    return t.context;
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

  static asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self, Listener* l) {
    for (;;) {
      beast::error_code ec;
      // Declared, then assigned: g++ 12 miscompiles `T x = co_await ...` for non-trivial T.
      tcp::socket socket(self->strand_);
      socket = co_await l->acceptor.async_accept(self->strand_,
                                                 asio::redirect_error(asio::use_awaitable, ec));
      if (self->stopped_ || !l->acceptor.is_open()) co_return;
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
        if (self->rejecting_ < kMaxRejecting && !l->tls && !l->proxy_protocol) {
          ++self->rejecting_;
          asio::co_spawn(self->strand_, reject(self, std::move(socket)), rethrow_if_error);
        } else {
          // HTTPS: a plain-text 503 would be garbage to a TLS client; close instead (and
          // behind a PROXY protocol proxy, let the proxy see the connection fail).
          socket.close(ec);
        }
        continue;
      }
      ++self->live_;
      std::shared_ptr<ssl::context> ctx;
      if (l->tls) ctx = self->tls_context(*l->tls);
      asio::co_spawn(self->strand_,
                     session(self, std::move(socket), std::move(ctx), l->proxy_protocol),
                     rethrow_if_error);
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

  // Pulls pieces of `out.stream` into `first` until it holds compress_min_size bytes or the
  // stream ends (`more` false). False when the producer threw (logged with the request): no
  // byte has been sent yet, so the client can still get a 500.
  bool look_ahead(const ServerRequest& req, ServerResponse& out, std::string& first, bool& more) {
    std::string piece;
    std::string what;
    try {
      while (more && first.size() < options_.compress_min_size) {
        piece.clear();
        more = out.stream(piece);
        first += piece;
      }
      return true;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "unknown exception";
    }
    if (options_.log_error) {
      options_.log_error("http body producer failed for " + req.method + " " +
                         core::clip(req.target, 256) + ": " + core::clip(what));
    }
    out.stream = nullptr;
    return false;
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

  static asio::awaitable<void> session(std::shared_ptr<Impl> self, tcp::socket socket,
                                       std::shared_ptr<ssl::context> ctx, bool proxy_protocol) {
    if (!ctx) {
      beast::tcp_stream stream(std::move(socket));
      co_await serve(self, stream, stream, false, proxy_protocol);
    } else {
      ssl::stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *ctx);
      co_await serve(self, stream, stream.next_layer(), true, proxy_protocol);
    }
  }

  // One connection: `stream` carries HTTP (the TCP stream itself, or TLS over it); `lowest` is
  // the TCP stream underneath (deadlines, closing).
  template <class Stream>
  static asio::awaitable<void> serve(std::shared_ptr<Impl> self, Stream& stream,
                                     beast::tcp_stream& lowest, bool tls, bool proxy_protocol) {
    const uint64_t id = self->next_session_id_++;
    SessionRef& ref = self->sessions_.emplace(id, SessionRef{&lowest}).first->second;
    ++self->open_;
    beast::flat_buffer buffer;
    beast::error_code ec;
    const ServerOptions& o = self->options_;
    // A fresh connection's first request header (and, on HTTPS, the handshake before it) must
    // arrive within header_timeout of the accept.
    const auto accept_deadline = SteadyClock::now() + o.header_timeout;
    const auto max_age = conn_age_deadline(o.conn_timeout);
    bool open = true;
    if (proxy_protocol) {
      // The PROXY protocol header comes before anything else (TLS included), inside the header
      // deadline, and the session counts as idle meanwhile. The client address it carries is
      // not used: nothing here logs or decides by client address.
      ref.idle = true;
      ref.idle_since = SteadyClock::now();
      lowest.expires_at(accept_deadline);
      size_t need = kProxyHeaderSize;
      bool have_length = false;
      while (open && buffer.size() < need) {
        const size_t n = co_await lowest.async_read_some(
            buffer.prepare(need - buffer.size()), asio::redirect_error(asio::use_awaitable, ec));
        buffer.commit(n);
        if (ec || ref.closing) {
          open = false;
        } else if (!have_length && buffer.size() >= kProxyHeaderSize) {
          const auto length =
              proxy_block_length(static_cast<const unsigned char*>(buffer.data().data()));
          if (!length) {
            if (o.log_error) o.log_error(length.error().message);
            open = false;
          } else {
            need = kProxyHeaderSize + *length;
            have_length = true;
          }
        }
      }
      if (open) buffer.consume(need);
      ref.idle = false;
    }
    if (open && tls) {
      // Idle (evictable) until the handshake is done: a client that connects and never
      // finishes it is the TLS form of a silent connection.
      ref.idle = true;
      ref.idle_since = SteadyClock::now();
      lowest.expires_at(accept_deadline);
      if (buffer.size() == 0) {
        const size_t n = co_await lowest.async_read_some(
            buffer.prepare(4096), asio::redirect_error(asio::use_awaitable, ec));
        buffer.commit(n);
      }
      if (ec || ref.closing) {
        open = false;
      } else if (static_cast<unsigned char>(*static_cast<const char*>(buffer.data().data())) !=
                 kTlsHandshakeRecord) {
        co_await asio::async_write(lowest, asio::buffer(kPlainHttpOnTls.data(), kPlainHttpOnTls.size()),
                                   asio::redirect_error(asio::use_awaitable, ec));
        open = false;
      } else if constexpr (!std::is_same_v<Stream, beast::tcp_stream>) {
        const size_t used = co_await stream.async_handshake(
            ssl::stream_base::server, buffer.data(), asio::redirect_error(asio::use_awaitable, ec));
        buffer.consume(used);
        open = !ec && !ref.closing;
      }
      ref.idle = false;
    }
    for (bool first = true; open && !self->stopped_ && !ref.closing; first = false) {
      // Wait for the first byte of the next request. Keep-alive: up to idle_timeout, and the
      // header deadline starts with that byte. A fresh connection: its header deadline runs
      // from the accept. Either way the session is idle meanwhile, so over the cap it can be
      // evicted: otherwise connections that never send a byte (1,100 of them, each reopened
      // when its deadline closed it) kept /-/healthy answering 503.
      const auto header_deadline = first ? accept_deadline : SteadyClock::now() + o.header_timeout;
      if (buffer.size() == 0) {
        ref.idle = true;
        ref.idle_since = SteadyClock::now();
        if (first) {
          lowest.expires_at(header_deadline);
        } else {
          lowest.expires_after(o.idle_timeout);
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
        lowest.expires_at(header_deadline);
      } else {
        lowest.expires_after(o.header_timeout);
      }
      co_await http::async_read_header(stream, buffer, parser,
                                       asio::redirect_error(asio::use_awaitable, ec));
      if (!ec && !parser.is_done()) {
        lowest.expires_after(o.body_timeout);
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
          lowest.expires_after(o.write_timeout);
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
      const bool head = msg.method() == http::verb::head;
      // Compression as gzhttp decides it: never for HEAD (nginx's bug with gzip HEAD answers),
      // only when the client accepts gzip and the answer qualifies, and only once the body
      // reaches compress_min_size; every answer says Vary: Accept-Encoding.
      bool gzip = o.compress_responses && !head &&
                  accepts_gzip(msg[http::field::accept_encoding]) && may_compress(out);
      std::string head_bytes;  // the look-ahead, sent first
      if (out.stream && gzip) {
        // Whether a streamed answer reaches the minimum size is known only by reading it:
        // take pieces until it does (one piece past the minimum at most) or the stream ends.
        bool more = true;
        if (!self->look_ahead(req, out, head_bytes, more)) {
          out = ServerResponse{500, "text/plain; charset=utf-8", "internal server error\n", {}};
          gzip = false;
        } else if (!more) {
          out.stream = nullptr;  // it all fitted: an ordinary answer with a length
          out.body = std::move(head_bytes);
          head_bytes.clear();
        }
        if (ref.closing) break;
      }
      if (o.compress_responses) out.headers.emplace_back("Vary", "Accept-Encoding");
      if (out.stream) {
        const bool keep_alive =
            co_await write_streamed(self, stream, lowest, ref, msg.version(),
                                    msg.keep_alive() && SteadyClock::now() < max_age, head, out,
                                    std::move(head_bytes), gzip);
        if (!keep_alive) break;
        continue;
      }
      if (gzip && out.body.size() >= o.compress_min_size) {
        auto compressed = GzipDeflater::compress(out.body, kGzipLevel);
        if (compressed) {
          out.body = std::move(*compressed);
          mark_gzip(out);
        } else if (o.log_error) {
          o.log_error("cannot compress the answer to " + req.method + " " +
                      core::clip(req.target, 256) + ": " + compressed.error().message);
        }
      }
      http::response<http::string_body> res{static_cast<http::status>(out.status), msg.version()};
      res.set(http::field::content_type, out.content_type);
      for (auto& [name, value] : out.headers) res.insert(name, value);
      res.body() = std::move(out.body);
      res.keep_alive(msg.keep_alive() && !self->stopped_ && SteadyClock::now() < max_age);
      res.prepare_payload();
      if (head) res.body().clear();
      const bool keep_alive = res.keep_alive();
      lowest.expires_after(o.write_timeout);
      if (head) {
        http::response_serializer<http::string_body> sr{res};
        co_await http::async_write_header(stream, sr,
                                          asio::redirect_error(asio::use_awaitable, ec));
      } else {
        co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec || !keep_alive) break;
    }
    lowest.socket().shutdown(tcp::socket::shutdown_send, ec);
    lowest.close();
    if (ref.counted) --self->live_;
    self->sessions_.erase(id);
    --self->open_;
    if (self->stopped_ && self->sessions_.empty() && self->grace_timer_) {
      self->grace_timer_->cancel();
    }
  }

  // A streamed answer: the header, then one chunk per piece the producer gives, then the last
  // chunk. Every write has write_timeout. Returns whether the connection may be kept alive.
  // HTTP/1.0 has no chunked coding: the pieces go out as they are and the connection closes.
  // `first`: bytes already taken from the producer (the gzip look-ahead), sent before the
  // rest. With `gzip` the pieces go through one streaming deflater and a chunk carries what it
  // gives out (none for a piece it keeps), its trailer in the last one: memory stays one piece
  // plus zlib's fixed state however long the answer.
  template <class Stream>
  static asio::awaitable<bool> write_streamed(std::shared_ptr<Impl> self, Stream& stream,
                                              beast::tcp_stream& lowest, SessionRef& ref,
                                              unsigned version, bool request_keep_alive,
                                              bool head, ServerResponse& out, std::string first,
                                              bool gzip) {
    const ServerOptions& o = self->options_;
    const bool chunked = version >= 11;
    std::optional<GzipDeflater> deflater;
    if (gzip) {
      deflater.emplace(kGzipLevel);
      mark_gzip(out);
    }
    http::response<http::empty_body> res{static_cast<http::status>(out.status), version};
    res.set(http::field::content_type, out.content_type);
    for (auto& [name, value] : out.headers) res.insert(name, value);
    res.keep_alive(chunked && request_keep_alive && !self->stopped_);
    if (chunked) res.chunked(true);
    const bool keep_alive = res.keep_alive();
    beast::error_code ec;
    http::response_serializer<http::empty_body> sr{res};
    lowest.expires_after(o.write_timeout);
    co_await http::async_write_header(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || head) co_return !ec && keep_alive;
    std::string piece = std::move(first);
    std::string compressed;
    bool more = true;
    for (bool pull = piece.empty(); more || !pull; pull = true) {
      if (pull) {
        piece.clear();
        try {
          more = out.stream(piece);
        } catch (const std::exception& e) {
          // The status line is gone: all that is left is to cut the answer short (no last
          // chunk, so the client sees a truncated body, not a complete wrong one).
          if (o.log_error) o.log_error(std::string("http body producer failed: ") + e.what());
          co_return false;
        }
        if (ref.closing) co_return false;
      }
      std::string_view bytes = piece;
      if (deflater) {
        compressed.clear();
        auto done = deflater->write(piece, compressed);
        if (done && !more) done = deflater->finish(compressed);
        if (!done) {
          if (o.log_error) {
            o.log_error("cannot compress a streamed answer: " + done.error().message);
          }
          co_return false;
        }
        bytes = compressed;
      }
      if (bytes.empty()) continue;
      lowest.expires_after(o.write_timeout);
      if (chunked) {
        co_await asio::async_write(stream, http::make_chunk(asio::buffer(bytes)),
                                   asio::redirect_error(asio::use_awaitable, ec));
      } else {
        co_await asio::async_write(stream, asio::buffer(bytes),
                                   asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec || ref.closing) co_return false;
    }
    out.stream = nullptr;  // what it holds (snapshots) goes now, not with the session
    if (chunked) {
      lowest.expires_after(o.write_timeout);
      co_await asio::async_write(stream, http::make_chunk_last(),
                                 asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return !ec && keep_alive;
  }

  asio::io_context& ioc_;
  Strand strand_;
  RequestHandler handler_;
  ServerOptions options_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  size_t max_connections_ = 0;
  uint64_t next_session_id_ = 0;
  bool stopped_ = false;
  // Sessions counted against the cap (open ones minus those being evicted).
  size_t live_ = 0;
  size_t rejecting_ = 0;
  std::unordered_map<uint64_t, SessionRef> sessions_;
  std::optional<asio::steady_timer> grace_timer_;  // shutdown(): closes what is left
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<size_t> open_{0};
};

void collect_body(ServerResponse& resp) {
  if (!resp.stream) return;
  resp.body.clear();
  std::string piece;
  for (bool more = true; more;) {
    piece.clear();
    more = resp.stream(piece);
    resp.body += piece;
  }
  resp.stream = nullptr;
}

HttpServer::HttpServer(asio::io_context& ioc, RequestHandler handler)
    : HttpServer(ioc, std::move(handler), ServerOptions{}) {}

HttpServer::HttpServer(asio::io_context& ioc, RequestHandler handler, ServerOptions options)
    : impl_(std::make_shared<Impl>(ioc, std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() { impl_->stop(); }

core::Result<void> HttpServer::listen(const std::string& listen_addr) {
  return impl_->listen(listen_addr, ListenOptions{});
}

core::Result<void> HttpServer::listen(const std::string& listen_addr, const ServerTls& tls) {
  return impl_->listen(listen_addr, ListenOptions{tls, false});
}

core::Result<void> HttpServer::listen(const std::string& listen_addr,
                                      const ListenOptions& options) {
  return impl_->listen(listen_addr, options);
}

uint16_t HttpServer::port() const { return impl_->port(); }

std::vector<uint16_t> HttpServer::ports() const { return impl_->ports(); }

size_t HttpServer::max_connections() const { return impl_->max_connections(); }

uint64_t HttpServer::connections_accepted() const { return impl_->accepted(); }

uint64_t HttpServer::connections_rejected() const { return impl_->rejected(); }

size_t HttpServer::open_connections() const { return impl_->open(); }

void HttpServer::stop() { impl_->stop(); }

void HttpServer::shutdown(std::chrono::milliseconds grace) { impl_->shutdown(grace); }

}  // namespace net
