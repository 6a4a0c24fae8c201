// net::HttpClient against net::HttpServer and small raw Asio servers (which misbehave on
// purpose: stay silent, close a keep-alive connection, stream chunks slowly, speak TLS), all on
// 127.0.0.1 with kernel-chosen ports.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include "core/limit_hits.hpp"
#include "net/asio.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "net/url.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

template <class Pred>
bool run_until(asio::io_context& ioc, Pred done, std::chrono::milliseconds limit = 5000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    if (ioc.stopped()) ioc.restart();
    ioc.run_one_for(10ms);
  }
  return true;
}

core::Result<net::Response> fetch(asio::io_context& ioc, net::HttpClient& client,
                                  net::Request req) {
  std::optional<core::Result<net::Response>> got;
  int calls = 0;
  client.send(std::move(req), [&](core::Result<net::Response> r) {
    ++calls;
    got = std::move(r);
  });
  REQUIRE(run_until(ioc, [&] { return got.has_value(); }));
  CHECK(calls == 1);
  return std::move(*got);
}

net::Request get(std::string url) {
  net::Request r;
  r.url = std::move(url);
  return r;
}

std::string base(uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

// A raw server: runs `on_conn(socket, index)` for every accepted connection.
class RawServer {
 public:
  using ConnFn = std::function<asio::awaitable<void>(tcp::socket, int)>;
  RawServer(asio::io_context& ioc, ConnFn on_conn)
      : acceptor_(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        on_conn_(std::move(on_conn)) {
    asio::co_spawn(ioc, accept_loop(), asio::detached);
  }
  ~RawServer() {
    beast::error_code ec;
    acceptor_.close(ec);
  }
  [[nodiscard]] uint16_t port() const { return acceptor_.local_endpoint().port(); }
  [[nodiscard]] int accepted() const { return accepted_; }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      beast::error_code ec;
      tcp::socket s(acceptor_.get_executor());  // declared, then assigned (g++ 12)
      s = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      const int index = accepted_++;
      asio::co_spawn(acceptor_.get_executor(), on_conn_(std::move(s), index), asio::detached);
    }
  }
  tcp::acceptor acceptor_;
  ConnFn on_conn_;
  int accepted_ = 0;
};

template <class Stream>
asio::awaitable<bool> read_request(Stream& s, beast::flat_buffer& buf,
                                   http::request<http::string_body>* out = nullptr) {
  http::request<http::string_body> req;
  beast::error_code ec;
  co_await http::async_read(s, buf, req, asio::redirect_error(asio::use_awaitable, ec));
  if (out != nullptr) *out = std::move(req);
  co_return !ec;
}

template <class Stream>
asio::awaitable<void> write_raw(Stream& s, std::string data) {
  beast::error_code ec;
  co_await asio::async_write(s, asio::buffer(data), asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<void> pause(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  beast::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

// Reads and discards until the peer goes away.
asio::awaitable<void> drain(tcp::socket& s) {
  std::array<char, 1024> buf;
  for (;;) {
    beast::error_code ec;
    co_await s.async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
}

const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

uint16_t unused_port() {
  asio::io_context ioc;
  tcp::acceptor a(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "alertd-net-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

}  // namespace

TEST_CASE("keep-alive connections are reused", "[net][client]") {
  asio::io_context ioc;
  net::HttpServer server(ioc, [](const net::ServerRequest& r) {
    return net::ServerResponse{200, "text/plain", "you asked " + r.target, {}};
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  net::HttpClient client(ioc, {});
  for (int i = 0; i < 3; ++i) {
    auto r = fetch(ioc, client, get(base(server.port()) + "/n?i=" + std::to_string(i)));
    REQUIRE(r.has_value());
    CHECK(r->status == 200);
    CHECK(r->body == "you asked /n?i=" + std::to_string(i));
  }
  CHECK(server.connections_accepted() == 1);

  SECTION("unless keep-alive is off") {
    net::ClientOptions opts;
    opts.keep_alive = false;
    net::HttpClient no_reuse(ioc, opts);
    for (int i = 0; i < 2; ++i) {
      REQUIRE(fetch(ioc, no_reuse, get(base(server.port()) + "/")).has_value());
    }
    CHECK(server.connections_accepted() == 3);
  }
}

TEST_CASE("chunked bodies reach on_body_chunk as they arrive", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    if (!co_await read_request(s, buf)) co_return;
    co_await write_raw(s,
                       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n");
    co_await pause(150ms);
    co_await write_raw(s, "5\r\nworld\r\n0\r\n\r\n");
    co_await drain(s);
  });
  net::HttpClient client(ioc, {});
  std::vector<std::string> chunks;
  std::vector<std::chrono::steady_clock::time_point> when;
  net::Request req = get(base(server.port()) + "/");
  req.on_body_chunk = [&](std::string_view c) -> std::optional<core::Error> {
    chunks.emplace_back(c);
    when.push_back(std::chrono::steady_clock::now());
    return std::nullopt;
  };
  auto r = fetch(ioc, client, req);
  REQUIRE(r.has_value());
  CHECK(r->body.empty());
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0] == "hello ");
  CHECK(chunks[1] == "world");
  CHECK(when[1] - when[0] >= 100ms);  // the first chunk was not held back
}

TEST_CASE("large Content-Length bodies stream in pieces and sink errors abort", "[net][client]") {
  asio::io_context ioc;
  const std::string big(300 * 1024, 'x');
  net::HttpServer server(ioc, [&](const net::ServerRequest& r) {
    if (r.target == "/fail") return net::ServerResponse{500, "text/plain", "boom", {}};
    return net::ServerResponse{200, "text/plain", big, {}};
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  net::HttpClient client(ioc, {});
  std::string joined;
  int pieces = 0;
  net::Request req = get(base(server.port()) + "/big");
  req.on_body_chunk = [&](std::string_view c) -> std::optional<core::Error> {
    joined.append(c);
    ++pieces;
    return std::nullopt;
  };
  auto r = fetch(ioc, client, req);
  REQUIRE(r.has_value());
  CHECK(joined == big);
  CHECK(pieces > 1);

  SECTION("non-2xx bodies are collected instead of streamed") {
    net::Request fail_req = req;
    fail_req.url = base(server.port()) + "/fail";
    joined.clear();
    auto f = fetch(ioc, client, fail_req);
    REQUIRE(f.has_value());
    CHECK(f->status == 500);
    CHECK(f->body == "boom");
    CHECK(joined.empty());
  }
  SECTION("an error from the sink aborts the request") {
    req.on_body_chunk = [](std::string_view) -> std::optional<core::Error> {
      return core::Error{"parser says no"};
    };
    auto f = fetch(ioc, client, req);
    REQUIRE_FALSE(f.has_value());
    CHECK_THAT(f.error().message, Catch::Contains("parser says no"));
  }
}

TEST_CASE("a response above max_response_bytes fails with the cap in the message",
          "[net][client]") {
  asio::io_context ioc;
  net::HttpServer server(ioc, [](const net::ServerRequest&) {
    return net::ServerResponse{200, "text/plain", std::string(1000, 'a'), {}};
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  net::HttpClient client(ioc, {});
  net::Request req = get(base(server.port()) + "/");
  req.max_response_bytes = 100;
  const uint64_t hits = core::limit_hits(core::Limit::response_body);
  auto r = fetch(ioc, client, req);
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("response exceeds max size 100 bytes"));
  CHECK(r.error().kind == core::ErrorKind::too_large);
  CHECK(core::limit_hits(core::Limit::response_body) == hits + 1);
  req.max_response_bytes = 1000;
  auto ok = fetch(ioc, client, req);
  REQUIRE(ok.has_value());
  CHECK(ok->body.size() == 1000);
  CHECK(core::limit_hits(core::Limit::response_body) == hits + 1);
}

TEST_CASE("the response cap is the parser's body limit: chunked, to-EOF and error answers",
          "[net][client]") {
  asio::io_context ioc;
  // 0: chunked 2xx of 3 x 400 bytes; 1: 500 with Content-Length 5000; 2: 500 chunked 3 x 400;
  // 3: 200 read to EOF (no length), 1000 bytes.
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!co_await read_request(s, buf, &req)) co_return;
    const std::string chunk = "190\r\n" + std::string(400, 'c') + "\r\n";
    if (req.target() == "/chunked") {
      co_await write_raw(s, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk +
                                chunk + chunk + "0\r\n\r\n");
    } else if (req.target() == "/error-length") {
      co_await write_raw(s, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5000\r\n\r\n" +
                                std::string(5000, 'e'));
    } else if (req.target() == "/error-chunked") {
      co_await write_raw(s, "HTTP/1.1 503 Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                chunk + chunk + chunk + "0\r\n\r\n");
    } else {
      co_await write_raw(s, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" +
                                std::string(1000, 'x'));
    }
    beast::error_code ec;
    s.shutdown(tcp::socket::shutdown_send, ec);
    co_await drain(s);
  });
  net::HttpClient client(ioc, {});
  auto req = [&](std::string path) {
    net::Request r = get(base(server.port()) + path);
    r.max_response_bytes = 1000;
    return r;
  };
  auto chunked = fetch(ioc, client, req("/chunked"));
  REQUIRE_FALSE(chunked.has_value());
  CHECK(chunked.error().kind == core::ErrorKind::too_large);
  CHECK_THAT(chunked.error().message, Catch::Contains("response exceeds max size 1000 bytes"));

  auto to_eof = fetch(ioc, client, req("/eof"));
  REQUIRE(to_eof.has_value());
  CHECK(to_eof->body.size() == 1000);

  // An error answer above the cap keeps its status (the caller reports it), not the body.
  auto error_length = fetch(ioc, client, req("/error-length"));
  REQUIRE(error_length.has_value());
  CHECK(error_length->status == 500);
  CHECK(error_length->body.size() <= 1000);

  auto error_chunked = fetch(ioc, client, req("/error-chunked"));
  REQUIRE(error_chunked.has_value());
  CHECK(error_chunked->status == 503);
  CHECK(error_chunked->body.size() <= 1000);
  CHECK(error_chunked->body.find_first_not_of('c') == std::string::npos);
}

TEST_CASE("max_response_bytes = 0 means the 64 MiB default, not unlimited", "[net][client]") {
  static_assert(net::kDefaultMaxResponseBytes == 64u << 20);
  asio::io_context ioc;
  // Announces 64 MiB + 1 in Content-Length: refused at the header, before any body byte.
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    if (!co_await read_request(s, buf)) co_return;
    co_await write_raw(s, "HTTP/1.1 200 OK\r\nContent-Length: " +
                              std::to_string((64u << 20) + 1) + "\r\n\r\nxx");
    co_await drain(s);
  });
  net::HttpClient client(ioc, {});
  auto r = fetch(ioc, client, get(base(server.port()) + "/"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == core::ErrorKind::too_large);
  CHECK_THAT(r.error().message, Catch::Contains(std::to_string(64u << 20)));
}

TEST_CASE("a malformed response is bad_response", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    if (!co_await read_request(s, buf)) co_return;
    co_await write_raw(s, "HTTP/1.1 2x0 OK\r\n\r\n");
    co_await drain(s);
  });
  net::HttpClient client(ioc, {});
  auto r = fetch(ioc, client, get(base(server.port()) + "/"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == core::ErrorKind::bad_response);
}

TEST_CASE("send() never completes inline, even on a closed client", "[net][client]") {
  asio::io_context ioc;
  net::HttpClient client(ioc, {});
  net::Transport& transport = client;
  transport.close();
  bool done = false;
  transport.send(get("http://127.0.0.1:1/"), [&](core::Result<net::Response> r) {
    CHECK_FALSE(r.has_value());
    done = true;
  });
  CHECK_FALSE(done);
  REQUIRE(run_until(ioc, [&] { return done; }));
}

TEST_CASE("a silent server hits the request deadline", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> { co_await drain(s); });
  net::HttpClient client(ioc, {});
  net::Request req = get(base(server.port()) + "/slow");
  req.method = "POST";
  req.timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  auto r = fetch(ioc, client, req);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message ==
        "Post \"http://127.0.0.1:" + std::to_string(server.port()) + "/slow\": timeout after 200ms");
  CHECK(r.error().kind == core::ErrorKind::timeout);
  CHECK(r.error().retryable());
  CHECK(took >= 190ms);
  CHECK(took < 2s);
}

TEST_CASE("a body that never ends hits the request deadline", "[net][client]") {
  // Bytes keep arriving faster than they are read (a close-delimited body): every read finds
  // data waiting and succeeds at once, yet the request must end at its deadline, not at the
  // size cap (4 GiB here: minutes of reading).
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    if (!co_await read_request(s, buf)) co_return;
    co_await write_raw(s, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n[");
    for (;;) {
      beast::error_code ec;
      const std::string pad(65536, ' ');
      co_await asio::async_write(s, asio::buffer(pad),
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
    }
  });
  net::HttpClient client(ioc, {});
  net::Request req = get(base(server.port()) + "/endless");
  req.timeout = 200ms;
  req.max_response_bytes = size_t{4} << 30;
  const auto start = std::chrono::steady_clock::now();
  auto r = fetch(ioc, client, req);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::EndsWith("/endless\": timeout after 200ms"));
  CHECK(r.error().kind == core::ErrorKind::timeout);
  CHECK(took >= 190ms);
  CHECK(took < 1s);
}

TEST_CASE("send() on the loop's thread, then close(): canceled, nothing dialed", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> { co_await drain(s); });
  net::HttpClient client(ioc, {});
  std::optional<core::Result<net::Response>> got;
  bool inline_done = false;
  asio::post(ioc, [&] {
    client.send(get(base(server.port()) + "/"), [&](core::Result<net::Response> r) {
      got = std::move(r);
    });
    inline_done = got.has_value();
    client.close();
  });
  REQUIRE(run_until(ioc, [&] { return got.has_value(); }));
  CHECK_FALSE(inline_done);
  REQUIRE_FALSE(got->has_value());
  CHECK_THAT(got->error().message, Catch::Contains("client is closed"));
  CHECK(got->error().kind == core::ErrorKind::canceled);
  run_until(ioc, [] { return false; }, 50ms);
  CHECK(server.accepted() == 0);
}

TEST_CASE("a request body larger than the socket buffer arrives whole", "[net][client]") {
  asio::io_context ioc;
  std::string seen;
  RawServer server(ioc, [&](tcp::socket s, int) -> asio::awaitable<void> {
    // Slow to start reading, so the client's first non-blocking send fills the socket
    // buffers and the rest goes by the asynchronous write.
    co_await pause(100ms);
    beast::flat_buffer buf;
    http::request_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    beast::error_code ec;
    co_await http::async_read(s, buf, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      seen = "server: " + ec.message();
      co_return;
    }
    seen = std::move(parser.get().body());
    co_await write_raw(s, kOk);
    co_await drain(s);
  });
  net::HttpClient client(ioc, {});
  net::Request req = get(base(server.port()) + "/big");
  req.method = "POST";
  std::string body(8 << 20, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i * 7919 % 26);
  req.body = body;
  auto r = fetch(ioc, client, std::move(req));
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r.has_value());
  CHECK(r->body == "ok");
  CHECK(seen.size() == body.size());
  CHECK(seen == body);
}

TEST_CASE("a body that comes partly with the header and partly later is whole", "[net][client]") {
  asio::io_context ioc;
  const std::string body(100000, 'z');
  RawServer server(ioc, [&](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    // Content-Length first, then chunked (1000 = 0x3e8, 99000 = 0x182b8). The header and the
    // start of the body in one write; the rest a moment later. (Strings built before each
    // co_await: g++ 12 miscompiles temporaries and ?: inside a co_await's operand.)
    const std::string rest = body.substr(1000);
    const std::string first[2] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + body.substr(0, 1000),
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n" + body.substr(0, 1000) +
            "\r\n"};
    const std::string second[2] = {rest, "182b8\r\n" + rest + "\r\n0\r\n\r\n"};
    for (int i = 0; i < 2; ++i) {
      if (!co_await read_request(s, buf)) co_return;
      co_await write_raw(s, first[i]);
      co_await pause(30ms);
      co_await write_raw(s, second[i]);
    }
    co_await drain(s);
  });
  net::HttpClient client(ioc, {});
  for (int i = 0; i < 2; ++i) {
    auto r = fetch(ioc, client, get(base(server.port()) + "/" + std::to_string(i)));
    REQUIRE(r.has_value());
    CHECK(r->body == body);
  }
  CHECK(server.accepted() == 1);
}

TEST_CASE("a keep-alive connection closed by the peer is retried once", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int index) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    if (!co_await read_request(s, buf)) co_return;
    co_await write_raw(s, kOk);
    if (index == 0) {
      // Read the next request, then hang up without answering (an idle-timeout race).
      co_await read_request(s, buf);
      beast::error_code ec;
      s.shutdown(tcp::socket::shutdown_both, ec);
      s.close(ec);
      co_return;
    }
    co_await drain(s);
  });
  net::HttpClient client(ioc, {});
  auto first = fetch(ioc, client, get(base(server.port()) + "/1"));
  REQUIRE(first.has_value());
  auto second = fetch(ioc, client, get(base(server.port()) + "/2"));
  REQUIRE(second.has_value());
  CHECK(second->body == "ok");
  CHECK(server.accepted() == 2);
}

namespace {

// The events every epoll instance of this process watches `fd` for (an OR over them; its
// /proc/self/fdinfo lines "tfd: FD events: HEX ..."), or nullopt when none watches it.
std::optional<unsigned> epoll_events_of(int fd) {
  std::optional<unsigned> events;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (ec || target.string() != "anon_inode:[eventpoll]") continue;
    std::ifstream info("/proc/self/fdinfo/" + entry.path().filename().string());
    std::string word;
    while (info >> word) {
      if (word != "tfd:") continue;
      int watched = -1;
      std::string label;
      std::string hex;
      info >> watched >> label >> hex;
      if (watched == fd && label == "events:")
        events = events.value_or(0) | std::stoul(hex, nullptr, 16);
    }
  }
  return events;
}

// The fd of this process's TCP socket connected to 127.0.0.1:port (the client's end), or -1.
int client_socket_to(uint16_t port) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(entry.path().filename().c_str());
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    if (peer.sin_family == AF_INET && ntohs(peer.sin_port) == port) return fd;
  }
  return -1;
}

}  // namespace

TEST_CASE("a connected socket is watched for reads only: no wake-up per request's ACK",
          "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    while (co_await read_request(s, buf)) co_await write_raw(s, kOk);
  });
  net::HttpClient client(ioc, {});
  for (int i = 0; i < 3; ++i) {
    auto r = fetch(ioc, client, get(base(server.port()) + "/" + std::to_string(i)));
    REQUIRE(r.has_value());
    CHECK(r->body == "ok");
  }
  CHECK(server.accepted() == 1);
  const int fd = client_socket_to(server.port());
  REQUIRE(fd >= 0);
  const auto events = epoll_events_of(fd);
  REQUIRE(events.has_value());
  INFO("events 0x" << std::hex << *events);
  CHECK((*events & EPOLLIN) != 0);
  CHECK((*events & EPOLLOUT) == 0);
}

TEST_CASE("a fresh connection closed before the response is not retried", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    co_await read_request(s, buf);
    beast::error_code ec;
    s.shutdown(tcp::socket::shutdown_both, ec);
  });
  net::HttpClient client(ioc, {});
  auto r = fetch(ioc, client, get(base(server.port()) + "/"));
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("EOF"));
  CHECK(r.error().kind == core::ErrorKind::connection);
  CHECK(server.accepted() == 1);
}

TEST_CASE("max_concurrent caps requests in flight and queues the rest", "[net][client]") {
  asio::io_context ioc;
  int in_flight = 0;
  int max_in_flight = 0;
  std::vector<std::string> arrivals;
  RawServer server(ioc, [&](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    for (;;) {
      http::request<http::string_body> req;
      if (!co_await read_request(s, buf, &req)) co_return;
      arrivals.emplace_back(req.target());
      max_in_flight = std::max(max_in_flight, ++in_flight);
      co_await pause(80ms);
      --in_flight;
      co_await write_raw(s, kOk);
    }
  });
  net::ClientOptions opts;
  opts.max_concurrent = 2;
  net::HttpClient client(ioc, opts);
  const uint64_t hits = core::limit_hits(core::Limit::client_in_flight);
  int done = 0;
  for (int i = 0; i < 5; ++i) {
    client.send(get(base(server.port()) + "/" + std::to_string(i)),
                [&](core::Result<net::Response> r) {
                  CHECK(r.has_value());
                  ++done;
                });
  }
  REQUIRE(run_until(ioc, [&] { return done == 5; }));
  CHECK(max_in_flight == 2);
  CHECK(core::limit_hits(core::Limit::client_in_flight) == hits + 3);  // three waited
  REQUIRE(arrivals.size() == 5);
  CHECK(std::set<std::string>{arrivals[0], arrivals[1]} == std::set<std::string>{"/0", "/1"});
  CHECK(arrivals[4] == "/4");
}

TEST_CASE("connection refused names the method, the URL and the dial", "[net][client]") {
  asio::io_context ioc;
  net::HttpClient client(ioc, {});
  const uint16_t port = unused_port();
  const std::string p = std::to_string(port);
  auto r = fetch(ioc, client, get("http://user:secret@127.0.0.1:" + p + "/api?x=1"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "Get \"http://127.0.0.1:" + p +
                                 "/api?x=1\": dial tcp 127.0.0.1:" + p +
                                 ": connect: connection refused");
  CHECK(r.error().kind == core::ErrorKind::connection);
  CHECK_THAT(r.error().message, !Catch::Contains("secret"));

  net::Request shown = get("http://127.0.0.1:" + p + "/api?token=abc");
  shown.display_url = "http://127.0.0.1:" + p + "/api?token=secret";
  auto r2 = fetch(ioc, client, shown);
  REQUIRE_FALSE(r2.has_value());
  CHECK_THAT(r2.error().message, Catch::StartsWith("Get \"" + shown.display_url + "\": dial tcp"));
  CHECK_THAT(r2.error().message, !Catch::Contains("abc"));
}

TEST_CASE("URL userinfo becomes basic auth decoded as Go does", "[net][client]") {
  asio::io_context ioc;
  std::vector<std::string> auth;
  net::HttpServer server(ioc, [&](const net::ServerRequest& req) {
    for (const auto& [k, v] : req.headers) {
      if (k == "Authorization" || k == "authorization") auth.push_back(v);
    }
    return net::ServerResponse{200, "text/plain", "ok", {}};
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  net::HttpClient client(ioc, {});
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  // '+' stays '+' (only query strings turn it into a space), %XX is decoded, the first ':'
  // splits user from password.
  REQUIRE(fetch(ioc, client, get("http://us%3Aer:p+ss%40w:rd@" + host + "/")).has_value());
  REQUIRE(auth.size() == 1);
  CHECK(auth[0] == "Basic " + net::base64_encode("us:er:p+ss@w:rd"));
  // An explicit Authorization header wins.
  net::Request req = get("http://u:p@" + host + "/");
  req.headers.emplace_back("Authorization", "Bearer t");
  REQUIRE(fetch(ioc, client, req).has_value());
  REQUIRE(auth.size() == 2);
  CHECK(auth[1] == "Bearer t");
}

TEST_CASE("close() fails queued requests and later sends", "[net][client]") {
  asio::io_context ioc;
  net::HttpClient client(ioc, {});
  client.close();
  auto r = fetch(ioc, client, get("http://127.0.0.1:1/"));
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("client is closed"));
  CHECK(r.error().kind == core::ErrorKind::canceled);
}

TEST_CASE("TLS with a CA made by the test", "[net][client][tls]") {
  TempDir dir;
  const std::string cmd = std::string(ALERTD_PEERS_SH) + " make-certs " + dir.path;
  REQUIRE(std::system(cmd.c_str()) == 0);
  asio::io_context ioc;
  asio::ssl::context server_ctx(asio::ssl::context::tls_server);
  server_ctx.use_certificate_chain_file(dir.path + "/server.crt");
  server_ctx.use_private_key_file(dir.path + "/server.key", asio::ssl::context::pem);
  int handshakes = 0;
  RawServer server(ioc, [&](tcp::socket s, int) -> asio::awaitable<void> {
    asio::ssl::stream<tcp::socket> tls(std::move(s), server_ctx);
    beast::error_code ec;
    co_await tls.async_handshake(asio::ssl::stream_base::server,
                                 asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    ++handshakes;
    beast::flat_buffer buf;
    for (;;) {
      if (!co_await read_request(tls, buf)) co_return;
      co_await write_raw(tls, kOk);
    }
  });
  const std::string p = std::to_string(server.port());

  SECTION("verified against the CA, by IP and by server name, with reuse") {
    net::ClientOptions opts;
    opts.tls.ca_file = dir.path + "/ca.crt";
    net::HttpClient client(ioc, opts);
    for (int i = 0; i < 2; ++i) {
      auto r = fetch(ioc, client, get("https://127.0.0.1:" + p + "/"));
      REQUIRE(r.has_value());
      CHECK(r->body == "ok");
    }
    CHECK(handshakes == 1);
    opts.tls.server_name = "localhost";
    net::HttpClient named(ioc, opts);
    auto r = fetch(ioc, named, get("https://127.0.0.1:" + p + "/"));
    REQUIRE(r.has_value());
  }
  SECTION("a server name that the certificate does not carry fails") {
    net::ClientOptions opts;
    opts.tls.ca_file = dir.path + "/ca.crt";
    opts.tls.server_name = "wrong.example";
    net::HttpClient client(ioc, opts);
    auto r = fetch(ioc, client, get("https://127.0.0.1:" + p + "/"));
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("tls handshake with 127.0.0.1:" + p));
  }
  SECTION("an unknown CA fails unless verification is skipped") {
    net::HttpClient strict(ioc, {});
    auto r = fetch(ioc, strict, get("https://127.0.0.1:" + p + "/"));
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("certificate"));
    net::ClientOptions opts;
    opts.tls.insecure_skip_verify = true;
    net::HttpClient lax(ioc, opts);
    REQUIRE(fetch(ioc, lax, get("https://127.0.0.1:" + p + "/")).has_value());
  }
  SECTION("a missing CA file is reported by name") {
    net::ClientOptions opts;
    opts.tls.ca_file = dir.path + "/nope.crt";
    net::HttpClient client(ioc, opts);
    auto r = fetch(ioc, client, get("https://127.0.0.1:" + p + "/"));
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("cannot load TLS CA file"));
    CHECK_THAT(r.error().message, Catch::Contains("nope.crt"));
  }
}

TEST_CASE("server: 404 from the handler, 413 above the body limit", "[net][server]") {
  asio::io_context ioc;
  net::ServerOptions opts;
  opts.body_limit = 1024;
  std::string seen_body;
  net::HttpServer server(
      ioc,
      [&](const net::ServerRequest& r) {
        seen_body = r.body;
        if (r.target != "/known") return net::ServerResponse{404, "text/plain", "not found\n", {}};
        return net::ServerResponse{200, "application/json", "{}", {{"X-Extra", "1"}}};
      },
      opts);
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  net::HttpClient client(ioc, {});
  auto missing = fetch(ioc, client, get(base(server.port()) + "/nope"));
  REQUIRE(missing.has_value());
  CHECK(missing->status == 404);
  CHECK(missing->body == "not found\n");

  net::Request post = get(base(server.port()) + "/known");
  post.method = "POST";
  post.body = std::string(1000, 'b');
  auto ok = fetch(ioc, client, post);
  REQUIRE(ok.has_value());
  CHECK(ok->status == 200);
  CHECK(seen_body == post.body);
  bool has_extra = false;
  for (const auto& [k, v] : ok->headers) has_extra |= (k == "X-Extra" && v == "1");
  CHECK(has_extra);

  post.body = std::string(4096, 'b');
  const uint64_t hits = core::limit_hits(core::Limit::request_body);
  auto too_big = fetch(ioc, client, post);
  REQUIRE(too_big.has_value());
  CHECK(too_big->status == 413);
  CHECK(core::limit_hits(core::Limit::request_body) == hits + 1);
  CHECK_THAT(too_big->body, Catch::Contains("1024 bytes"));
}

TEST_CASE("server: listen addresses and errors", "[net][server]") {
  asio::io_context ioc;
  auto handler = [](const net::ServerRequest&) { return net::ServerResponse{}; };
  net::HttpServer any(ioc, handler);
  REQUIRE(any.listen(":0").has_value());
  CHECK(any.port() != 0);
  net::HttpServer clash(ioc, handler);
  auto r = clash.listen("127.0.0.1:" + std::to_string(any.port()));
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("address already in use"));
  net::HttpServer bad(ioc, handler);
  auto b = bad.listen("8880");
  REQUIRE_FALSE(b.has_value());
  CHECK_THAT(b.error().message, Catch::Contains("cannot listen on \"8880\""));
  net::HttpServer v6(ioc, handler);
  if (v6.listen("[::1]:0").has_value()) CHECK(v6.port() != 0);
}

TEST_CASE("server: stop() closes keep-alive sessions promptly", "[net][server]") {
  asio::io_context ioc;
  net::HttpServer server(ioc, [](const net::ServerRequest&) { return net::ServerResponse{}; });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  {
    net::HttpClient client(ioc, {});
    REQUIRE(fetch(ioc, client, get(base(server.port()) + "/")).has_value());
  }  // the client's idle connection stays open on the server side
  server.stop();
  ioc.restart();
  const auto start = std::chrono::steady_clock::now();
  ioc.run_for(3s);  // returns as soon as no session is left
  CHECK(std::chrono::steady_clock::now() - start < 1s);
}

TEST_CASE("fetch_blocking runs its own io_context", "[net][client]") {
  asio::io_context server_ioc;
  net::HttpServer server(server_ioc, [](const net::ServerRequest& r) {
    return net::ServerResponse{200, "text/plain", r.method + " " + r.target, {}};
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  auto guard = asio::make_work_guard(server_ioc);
  std::thread t([&] { server_ioc.run(); });
  auto r = net::fetch_blocking(get(base(server.port()) + "/rules.yml"));
  server.stop();
  guard.reset();
  t.join();
  REQUIRE(r.has_value());
  CHECK(r->body == "GET /rules.yml");
}

// After 50 ms idle the connection is taken without the EOF check (kPeekAfter) and the request
// is sent again on a new one when the first attempt finds it closed; the caller sees one answer.
TEST_CASE("an idle connection the peer already closed is not reused", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    if (!co_await read_request(s, buf)) co_return;
    co_await write_raw(s, kOk);  // keep-alive by default, yet the server hangs up at once
    beast::error_code ec;
    s.shutdown(tcp::socket::shutdown_both, ec);
    s.close(ec);
  });
  net::HttpClient client(ioc, {});
  REQUIRE(fetch(ioc, client, get(base(server.port()) + "/1")).has_value());
  run_until(ioc, [] { return false; }, 50ms);  // let the FIN arrive
  auto r = fetch(ioc, client, get(base(server.port()) + "/2"));
  REQUIRE(r.has_value());
  CHECK(r->body == "ok");
  CHECK(server.accepted() == 2);
}

TEST_CASE("IPv6 literal hosts in brackets", "[net][client]") {
  asio::io_context ioc;
  std::string host_header;
  net::HttpServer server(ioc, [&](const net::ServerRequest& r) {
    for (const auto& [k, v] : r.headers) {
      if (k == "Host") host_header = v;
    }
    return net::ServerResponse{200, "text/plain", "v6", {}};
  });
  if (!server.listen("[::1]:0").has_value()) {
    WARN("no IPv6 loopback on this host; skipped");
    return;
  }
  net::HttpClient client(ioc, {});
  const std::string hp = "[::1]:" + std::to_string(server.port());
  auto r = fetch(ioc, client, get("http://" + hp + "/"));
  REQUIRE(r.has_value());
  CHECK(r->body == "v6");
  CHECK(host_header == hp);
}

TEST_CASE("time spent queued for a slot counts against the deadline", "[net][client]") {
  asio::io_context ioc;
  RawServer server(ioc, [](tcp::socket s, int) -> asio::awaitable<void> { co_await drain(s); });
  net::ClientOptions opts;
  opts.max_concurrent = 1;
  net::HttpClient client(ioc, opts);
  std::vector<std::string> errors;
  // The first holds the only slot for 300 ms; the second's 150 ms run out while it waits (with
  // equal timeouts the two deadlines were microseconds apart, and under TSan the second could
  // still be in time when the slot came free).
  for (int i = 0; i < 2; ++i) {
    net::Request req = get(base(server.port()) + "/" + std::to_string(i));
    req.timeout = i == 0 ? 300ms : 150ms;
    client.send(req, [&](core::Result<net::Response> r) {
      REQUIRE_FALSE(r.has_value());
      errors.push_back(r.error().message);
    });
  }
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(run_until(ioc, [&] { return errors.size() == 2; }));
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  CHECK_THAT(errors[0], Catch::EndsWith("/0\": timeout after 300ms"));
  CHECK_THAT(errors[1], Catch::EndsWith("/1\": timeout after 150ms waiting for one of 1 request slots"));
  CHECK(server.accepted() == 1);
}

TEST_CASE("idle connections are closed after idle_timeout", "[net][client]") {
  asio::io_context ioc;
  std::optional<std::chrono::steady_clock::time_point> closed_at;
  RawServer server(ioc, [&](tcp::socket s, int) -> asio::awaitable<void> {
    beast::flat_buffer buf;
    if (!co_await read_request(s, buf)) co_return;
    co_await write_raw(s, kOk);
    co_await drain(s);  // returns when the client closes its idle connection
    closed_at = std::chrono::steady_clock::now();
  });
  net::ClientOptions opts;
  opts.idle_timeout = 100ms;
  net::HttpClient client(ioc, opts);
  REQUIRE(fetch(ioc, client, get(base(server.port()) + "/")).has_value());
  const auto idle_from = std::chrono::steady_clock::now();
  REQUIRE(run_until(ioc, [&] { return closed_at.has_value(); }, 2000ms));
  CHECK(*closed_at - idle_from >= 90ms);
  CHECK(*closed_at - idle_from < 1000ms);
}

TEST_CASE("a zero idle_timeout keeps idle connections until the peer closes them", "[net][client]") {
  asio::io_context ioc;
  net::HttpServer server(ioc, [](const net::ServerRequest&) {
    return net::ServerResponse{200, "text/plain", "ok", {}};
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  net::ClientOptions opts;
  opts.idle_timeout = 0ms;
  net::HttpClient client(ioc, opts);
  REQUIRE(fetch(ioc, client, get(base(server.port()) + "/a")).has_value());
  // Idle for a while: with a zero timeout neither the sweep nor the reuse check drops it.
  const auto until = std::chrono::steady_clock::now() + 300ms;
  run_until(ioc, [&] { return std::chrono::steady_clock::now() >= until; }, 1000ms);
  REQUIRE(fetch(ioc, client, get(base(server.port()) + "/b")).has_value());
  CHECK(server.connections_accepted() == 1);
}

TEST_CASE("max_idle_per_host bounds the idle connections kept per host", "[net][client]") {
  asio::io_context ioc;
  net::HttpServer server(ioc, [](const net::ServerRequest&) {
    return net::ServerResponse{200, "text/plain", "ok", {}};
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  const std::string url = base(server.port()) + "/";

  SECTION("none kept: every request opens a connection") {
    net::ClientOptions opts;
    opts.max_idle_per_host = 0;
    net::HttpClient client(ioc, opts);
    for (int i = 0; i < 3; ++i) REQUIRE(fetch(ioc, client, get(url)).has_value());
    CHECK(server.connections_accepted() == 3);
  }
  SECTION("one kept: of two parallel requests' connections one is reused, one closed") {
    net::ClientOptions opts;
    opts.max_idle_per_host = 1;
    net::HttpClient client(ioc, opts);
    int done = 0;
    for (int i = 0; i < 2; ++i) {
      client.send(get(url), [&](core::Result<net::Response> r) {
        REQUIRE(r.has_value());
        ++done;
      });
    }
    REQUIRE(run_until(ioc, [&] { return done == 2; }));
    CHECK(server.connections_accepted() == 2);
    for (int i = 0; i < 2; ++i) REQUIRE(fetch(ioc, client, get(url)).has_value());
    CHECK(server.connections_accepted() == 2);  // the kept one served both
  }
}
