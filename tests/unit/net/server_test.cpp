// net::HttpServer hardening: the connection cap (503, idle eviction), header/idle deadlines
// (slowloris), size caps, generic 500s. The server runs on its own io_context thread, as the
// daemon runs it; the clients are plain blocking POSIX sockets with a receive timeout, so a
// server that misbehaves fails the test instead of hanging it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/limit_hits.hpp"
#include "net/asio.hpp"
#include "net/http_server.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// The server's io_context on its own thread(s) for the test's lifetime.
class ServerThread {
 public:
  explicit ServerThread(net::ServerOptions options, net::RequestHandler handler = ok_handler(),
                        int threads = 1)
      : server_(ioc_, std::move(handler), std::move(options)), guard_(asio::make_work_guard(ioc_)) {
    REQUIRE(server_.listen("127.0.0.1:0").has_value());
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }
  ~ServerThread() {
    server_.stop();
    guard_.reset();
    for (auto& t : threads_) t.join();
  }
  static net::RequestHandler ok_handler() {
    return [](const net::ServerRequest& r) {
      return net::ServerResponse{200, "text/plain", "ok " + r.target, {}};
    };
  }
  net::HttpServer& server() { return server_; }
  [[nodiscard]] uint16_t port() const { return server_.port(); }

 private:
  asio::io_context ioc_;
  net::HttpServer server_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

// A blocking loopback client socket; reads give up after 3 s.
class Client {
 public:
  explicit Client(uint16_t port) : Client(port, OffThread{}) { REQUIRE(connected_); }
  // For threads other than the test's: Catch's assertions are not thread-safe, so the caller
  // checks connected() and reports on its own thread.
  struct OffThread {};
  Client(uint16_t port, OffThread) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (fd_ < 0) return;
    timeval tv{3, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  [[nodiscard]] bool connected() const { return connected_; }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void send(std::string_view data) {
    (void)::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
  }
  // Reads one response: header, then Content-Length bytes (or until EOF). nullopt on EOF
  // before any byte, or on the 3 s timeout.
  std::optional<std::string> read_response() {
    for (;;) {
      const size_t end = pending_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        const size_t cl = lower(pending_.substr(0, end)).find("content-length:");
        if (cl != std::string::npos) length = std::stoul(pending_.substr(cl + 15));
        if (pending_.size() >= end + 4 + length) {
          std::string out = pending_.substr(0, end + 4 + length);
          pending_.erase(0, end + 4 + length);
          return out;
        }
      }
      if (!fill()) return std::nullopt;
    }
  }
  // True when the server closed the connection (EOF or reset) within the read timeout.
  bool closed_by_server() {
    char c = 0;
    const ssize_t n = ::recv(fd_, &c, 1, 0);
    if (n == 0) return true;
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK;
  }

 private:
  bool fill() {
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    pending_.append(buf, static_cast<size_t>(n));
    return true;
  }
  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  int fd_;
  bool connected_ = false;
  std::string pending_;
};

std::string get(std::string_view path) {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: test\r\n\r\n";
}

int status_of(const std::optional<std::string>& resp) {
  if (!resp || resp->size() < 12) return 0;
  return std::stoi(resp->substr(9, 3));
}

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 3000ms) {
  const auto end = SteadyClock::now() + limit;
  while (!pred()) {
    if (SteadyClock::now() >= end) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

TEST_CASE("server: over the connection cap a new connection gets 503, others are served",
          "[net][server]") {
  net::ServerOptions o;
  o.max_connections = 3;
  o.header_timeout = 10s;
  ServerThread st(o);
  CHECK(st.server().max_connections() == 3);
  // Three connections in the middle of a request header: busy, not idle.
  Client a(st.port()), b(st.port()), c(st.port());
  for (Client* cl : {&a, &b, &c}) cl->send("GET /partial HTTP/1.1\r\n");
  REQUIRE(eventually([&] { return st.server().open_connections() == 3; }));

  const uint64_t hits = core::limit_hits(core::Limit::connections);
  Client over(st.port());
  over.send(get("/over"));
  const auto rejected = over.read_response();
  CHECK(status_of(rejected) == 503);
  CHECK(core::limit_hits(core::Limit::connections) == hits + 1);
  CHECK_THAT(*rejected, Catch::Contains("Connection: close"));
  CHECK(over.closed_by_server());
  CHECK(st.server().connections_rejected() == 1);

  // The three admitted ones are still served.
  a.send("Host: x\r\n\r\n");
  const auto ra = a.read_response();
  CHECK(status_of(ra) == 200);
  CHECK_THAT(*ra, Catch::EndsWith("ok /partial"));
}

TEST_CASE("server: at the cap a connection that has sent nothing yet makes room",
          "[net][server]") {
  net::ServerOptions o;
  o.max_connections = 2;
  o.header_timeout = 10s;
  ServerThread st(o);
  Client silent(st.port());
  std::this_thread::sleep_for(20ms);  // the older of the two
  Client busy(st.port());
  busy.send("GET /busy HTTP/1.1\r\n");
  REQUIRE(eventually([&] { return st.server().open_connections() == 2; }));

  Client fresh(st.port());
  fresh.send(get("/fresh"));
  CHECK(status_of(fresh.read_response()) == 200);
  CHECK(silent.closed_by_server());
  CHECK(st.server().connections_rejected() == 0);
  busy.send("Host: x\r\n\r\n");
  CHECK(status_of(busy.read_response()) == 200);
}

TEST_CASE("server: at the cap the longest-idle keep-alive connection makes room",
          "[net][server]") {
  net::ServerOptions o;
  o.max_connections = 2;
  o.header_timeout = 10s;
  o.idle_timeout = 10s;
  ServerThread st(o);
  Client idle(st.port()), busy(st.port());
  busy.send("GET /busy HTTP/1.1\r\n");  // mid-request: not idle
  idle.send(get("/first"));
  REQUIRE(status_of(idle.read_response()) == 200);  // now idle on keep-alive
  REQUIRE(eventually([&] { return st.server().open_connections() == 2; }));

  Client fresh(st.port());
  fresh.send(get("/fresh"));
  CHECK(status_of(fresh.read_response()) == 200);
  CHECK(idle.closed_by_server());
  CHECK(st.server().connections_rejected() == 0);
  // `busy` (mid-request, not idle) kept its place and is served.
  busy.send("Host: x\r\n\r\n");
  CHECK(status_of(busy.read_response()) == 200);
}

TEST_CASE("server: a half-sent request header is closed at header_timeout (slowloris)",
          "[net][server]") {
  net::ServerOptions o;
  o.header_timeout = 300ms;
  ServerThread st(o);
  SECTION("nothing sent after connect") {
    Client c(st.port());
    const auto start = SteadyClock::now();
    CHECK(c.closed_by_server());
    CHECK(SteadyClock::now() - start < 2s);
  }
  SECTION("a header trickled one line at a time does not extend the deadline") {
    Client c(st.port());
    const auto start = SteadyClock::now();
    c.send("GET / HTTP/1.1\r\n");
    std::atomic<bool> stop{false};
    std::thread trickle([&] {
      for (int i = 0; i < 30 && !stop; ++i) {
        std::this_thread::sleep_for(50ms);
        c.send("X-Slow: 1\r\n");
      }
    });
    CHECK(c.closed_by_server());
    const auto took = SteadyClock::now() - start;
    stop = true;
    trickle.join();
    CHECK(took < 1200ms);
  }
  SECTION("a keep-alive connection gets a fresh header deadline for its next request") {
    Client c(st.port());
    c.send(get("/1"));
    REQUIRE(status_of(c.read_response()) == 200);
    std::this_thread::sleep_for(500ms);  // idle longer than header_timeout, within idle_timeout
    c.send(get("/2"));
    CHECK(status_of(c.read_response()) == 200);
  }
}

TEST_CASE("server: an idle keep-alive connection is closed at idle_timeout", "[net][server]") {
  net::ServerOptions o;
  o.idle_timeout = 300ms;
  ServerThread st(o);
  Client c(st.port());
  c.send(get("/"));
  REQUIRE(status_of(c.read_response()) == 200);
  const auto start = SteadyClock::now();
  CHECK(c.closed_by_server());
  const auto took = SteadyClock::now() - start;
  CHECK(took >= 250ms);
  CHECK(took < 2s);
  CHECK(eventually([&] { return st.server().open_connections() == 0; }));
}

TEST_CASE("server: a handler exception gives a generic 500 and its text goes to the log",
          "[net][server]") {
  std::mutex mu;
  std::vector<std::string> logged;
  net::ServerOptions o;
  o.log_error = [&](std::string_view m) {
    std::lock_guard lock(mu);
    logged.emplace_back(m);
  };
  ServerThread st(o, [](const net::ServerRequest& r) -> net::ServerResponse {
    if (r.target == "/throw") throw std::runtime_error("db password is hunter2");
    if (r.target == "/throw-int") throw 42;
    return net::ServerResponse{200, "text/plain", "fine", {}};
  });
  Client c(st.port());
  c.send(get("/throw"));
  const auto r = c.read_response();
  CHECK(status_of(r) == 500);
  CHECK_THAT(*r, Catch::EndsWith("\r\n\r\ninternal server error\n"));
  CHECK_THAT(*r, !Catch::Contains("hunter2"));
  c.send(get("/throw-int"));
  CHECK(status_of(c.read_response()) == 500);
  c.send(get("/ok"));  // the connection survives
  CHECK(status_of(c.read_response()) == 200);
  std::lock_guard lock(mu);
  REQUIRE(logged.size() == 2);
  CHECK(logged[0] == "http handler failed for GET /throw: db password is hunter2");
  CHECK(logged[1] == "http handler failed for GET /throw-int: unknown exception");
}

TEST_CASE("server: header cap 431, body cap 413, malformed request 400", "[net][server]") {
  net::ServerOptions o;
  o.header_limit = 1024;
  o.body_limit = 100;
  ServerThread st(o);
  struct Case {
    std::string name;
    std::string request;
    int status;
  };
  const std::vector<Case> cases = {
      {"header too large",
       "GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(2000, 'x') + "\r\n\r\n", 431},
      {"announced body too large",
       "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n", 413},
      {"chunked body too large",
       "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" +
           std::string(64, 'b') + "\r\n40\r\n" + std::string(64, 'b') + "\r\n0\r\n\r\n",
       413},
      {"malformed request line", "GET / HTTP/9\r\n\r\n", 400},
      {"body within the cap", "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n" +
                                  std::string(100, 'b'),
       200},
  };
  const uint64_t header_hits = core::limit_hits(core::Limit::request_header);
  const uint64_t body_hits = core::limit_hits(core::Limit::request_body);
  for (const auto& tc : cases) {
    INFO(tc.name);
    Client c(st.port());
    c.send(tc.request);
    CHECK(status_of(c.read_response()) == tc.status);
    if (tc.status != 200) CHECK(c.closed_by_server());
  }
  CHECK(core::limit_hits(core::Limit::request_header) == header_hits + 1);
  CHECK(core::limit_hits(core::Limit::request_body) == body_hits + 2);
}

TEST_CASE("server: serves from an io_context run by several threads", "[net][server]") {
  ServerThread st({}, ServerThread::ok_handler(), 3);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&, i] {
      Client c(st.port(), Client::OffThread{});
      if (!c.connected()) return;  // counted as 20 failures below
      for (int j = 0; j < 20; ++j) {
        const std::string path = "/" + std::to_string(i) + "/" + std::to_string(j);
        c.send(get(path));
        const auto r = c.read_response();
        if (status_of(r) == 200 && r->ends_with("ok " + path)) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(ok == 160);
}
