// net::HttpServer hardening: the connection cap (503, idle eviction), header/idle deadlines
// (slowloris), size caps, generic 500s. The server runs on its own io_context thread, as the
// daemon runs it; the clients are plain blocking POSIX sockets with a receive timeout, so a
// server that misbehaves fails the test instead of hanging it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/limit_hits.hpp"
#include "net/asio.hpp"
#include "net/gzip.hpp"
#include "net/http_server.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// The server's io_context on its own thread(s) for the test's lifetime.
class ServerThread {
 public:
  explicit ServerThread(net::ServerOptions options, net::RequestHandler handler = ok_handler(),
                        int threads = 1, const net::ServerTls* tls = nullptr)
      : server_(ioc_, std::move(handler), std::move(options)), guard_(asio::make_work_guard(ioc_)) {
    if (tls != nullptr) {
      const auto listening = server_.listen("127.0.0.1:0", *tls);
      INFO((listening ? std::string() : listening.error().message));
      REQUIRE(listening.has_value());
    } else {
      REQUIRE(server_.listen("127.0.0.1:0").has_value());
    }
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
  // A chunked response: the header, the decoded body and the number of chunks (the last,
  // empty one not counted). nullopt on EOF or timeout before the last chunk.
  struct Chunked {
    std::string header;
    std::string body;
    int chunks = 0;
  };
  std::optional<Chunked> read_chunked_response() {
    Chunked out;
    size_t end = 0;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    out.header = pending_.substr(0, end + 4);
    pending_.erase(0, end + 4);
    for (;;) {
      size_t line = 0;
      while ((line = pending_.find("\r\n")) == std::string::npos) {
        if (!fill()) return std::nullopt;
      }
      const size_t size = std::stoul(pending_.substr(0, line), nullptr, 16);
      while (pending_.size() < line + 2 + size + 2) {
        if (!fill()) return std::nullopt;
      }
      if (pending_.compare(line + 2 + size, 2, "\r\n") != 0) return std::nullopt;
      out.body += pending_.substr(line + 2, size);
      pending_.erase(0, line + 2 + size + 2);
      if (size == 0) return out;
      ++out.chunks;
    }
  }
  // Everything until the server closes the connection (nullopt on the read timeout).
  std::optional<std::string> read_to_eof() {
    for (;;) {
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) break;
      if (n < 0) return std::nullopt;
      pending_.append(buf, static_cast<size_t>(n));
    }
    std::string out = std::move(pending_);
    pending_.clear();
    return out;
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

TEST_CASE("server: a connection past conn_timeout is closed after its next response",
          "[net][server]") {
  net::ServerOptions o;
  o.conn_timeout = 300ms;  // closes at 300-330 ms of age
  ServerThread st(o);
  Client c(st.port());
  c.send(get("/1"));
  const std::string young = c.read_response().value_or("");
  REQUIRE(status_of(young) == 200);
  CHECK(young.find("Connection: close") == std::string::npos);
  std::this_thread::sleep_for(400ms);
  // Not closed while idle within idle_timeout: the request in progress is answered in full,
  // with Connection: close, and then the connection ends.
  c.send(get("/2"));
  const std::string old = c.read_response().value_or("");
  CHECK(status_of(old) == 200);
  CHECK(old.find("Connection: close") != std::string::npos);
  CHECK(c.closed_by_server());
  CHECK(eventually([&] { return st.server().open_connections() == 0; }));
}

TEST_CASE("server: conn_timeout 0 keeps a connection for any number of requests",
          "[net][server]") {
  net::ServerOptions o;
  o.conn_timeout = 0ms;
  ServerThread st(o);
  Client c(st.port());
  for (int i = 0; i < 3; ++i) {
    c.send(get("/" + std::to_string(i)));
    const std::string r = c.read_response().value_or("");
    REQUIRE(status_of(r) == 200);
    CHECK(r.find("Connection: close") == std::string::npos);
    std::this_thread::sleep_for(100ms);
  }
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

// ---- HTTPS (-tls) --------------------------------------------------------------------------
// Certificates come from `openssl req` and the client is curl, as a user would check it.

namespace {

// Runs a shell command; its stdout, and its exit status in `status`.
std::string run(const std::string& cmd, int* status = nullptr) {
  std::string out;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  if (status != nullptr) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/alertd-tls-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

// A self-signed ECDSA certificate for 127.0.0.1 and localhost: <name>.crt and <name>.key.
void make_cert(const TempDir& dir, const std::string& name, const std::string& cn) {
  int status = -1;
  const std::string out = run(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
      "-subj /CN=" + cn + " -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout " +
          dir.file(name + ".key") + " -out " + dir.file(name + ".crt") + " 2>&1",
      &status);
  INFO(out);
  REQUIRE(status == 0);
}

net::ServerTls tls_of(const TempDir& dir, const std::string& name) {
  net::ServerTls t;
  t.cert_file = dir.file(name + ".crt");
  t.key_file = dir.file(name + ".key");
  return t;
}

// curl over HTTPS trusting `ca`; the body, or "" with the exit status in `status`.
std::string curl_https(uint16_t port, const std::string& ca, const std::string& path,
                       const std::string& extra = "", int* status = nullptr) {
  return run("curl -sS --max-time 5 --cacert " + ca + " " + extra + " https://127.0.0.1:" +
                 std::to_string(port) + path + " 2>/dev/null",
             status);
}

void copy_file(const std::string& from, const std::string& to) {
  // Written whole to a temporary name, then renamed over: what cert-manager and friends do.
  std::filesystem::copy_file(from, to + ".tmp", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(to + ".tmp", to);
}

}  // namespace

TEST_CASE("server: HTTPS with -tls: curl gets answers, plain HTTP gets Go's 400", "[net][tls]") {
  TempDir dir;
  make_cert(dir, "a", "alertd-a");
  const auto tls = tls_of(dir, "a");
  ServerThread st({}, ServerThread::ok_handler(), 1, &tls);
  int status = -1;
  CHECK(curl_https(st.port(), dir.file("a.crt"), "/-/healthy", "", &status) == "ok /-/healthy");
  CHECK(status == 0);
  // Keep-alive over TLS: two requests on one connection (curl fetches the extra URL first).
  CHECK(curl_https(st.port(), dir.file("a.crt"), "/1", "https://127.0.0.1:" +
                                                        std::to_string(st.port()) + "/2") ==
        "ok /2ok /1");
  CHECK(st.server().connections_accepted() == 2);
  // An untrusted certificate is refused by the client.
  (void)run("curl -sS --max-time 5 https://127.0.0.1:" + std::to_string(st.port()) +
                "/ >/dev/null 2>&1",
            &status);
  CHECK(status == 60);  // CURLE_PEER_FAILED_VERIFICATION
  // Plain HTTP to the HTTPS port: a clean answer, then the connection is closed.
  Client plain(st.port());
  plain.send(get("/-/healthy"));
  const auto resp = plain.read_response();
  REQUIRE(resp);
  CHECK_THAT(*resp, Catch::StartsWith("HTTP/1.0 400 Bad Request\r\n"));
  CHECK(plain.closed_by_server());
  (void)run("curl -sS --max-time 5 http://127.0.0.1:" + std::to_string(st.port()) +
                "/ 2>/dev/null",
            &status);
  CHECK(status == 0);  // curl reads the 400 (HTTP/1.0 without a length: ends at close)
}

TEST_CASE("server: -tlsMinVersion TLS13 refuses a TLS 1.2 client", "[net][tls]") {
  TempDir dir;
  make_cert(dir, "a", "alertd-a");
  auto tls = tls_of(dir, "a");
  tls.min_version = "tls13";
  ServerThread st({}, ServerThread::ok_handler(), 1, &tls);
  int status = -1;
  CHECK(curl_https(st.port(), dir.file("a.crt"), "/x", "--tls-max 1.2", &status).empty());
  CHECK(status == 35);  // CURLE_SSL_CONNECT_ERROR
  CHECK(curl_https(st.port(), dir.file("a.crt"), "/x", "--tlsv1.3", &status) == "ok /x");
  CHECK(status == 0);
}

TEST_CASE("server: TLS settings are checked with errors naming the file", "[net][tls]") {
  TempDir dir;
  make_cert(dir, "a", "alertd-a");
  make_cert(dir, "b", "alertd-b");
  std::ofstream(dir.file("garbage.crt")) << "not a certificate\n";
  auto ok = tls_of(dir, "a");
  CHECK(net::check_server_tls(ok).has_value());

  auto missing = ok;
  missing.cert_file = dir.file("missing.crt");
  auto r = net::check_server_tls(missing);
  REQUIRE(!r);
  CHECK_THAT(r.error().message, Catch::Contains("cannot read TLS certificate file \"" +
                                                dir.file("missing.crt") +
                                                "\": no such file or directory"));
  auto no_key = ok;
  no_key.key_file = dir.file("missing.key");
  r = net::check_server_tls(no_key);
  REQUIRE(!r);
  CHECK_THAT(r.error().message, Catch::Contains("TLS key file \"" + dir.file("missing.key")));
  auto garbage = ok;
  garbage.cert_file = dir.file("garbage.crt");
  r = net::check_server_tls(garbage);
  REQUIRE(!r);
  CHECK_THAT(r.error().message,
             Catch::Contains("cannot load TLS certificate from \"" + dir.file("garbage.crt")));
  auto mismatch = ok;
  mismatch.key_file = dir.file("b.key");
  r = net::check_server_tls(mismatch);
  REQUIRE(!r);
  CHECK_THAT(r.error().message, Catch::Contains("does not match certificate"));
  auto version = ok;
  version.min_version = "TLS14";
  r = net::check_server_tls(version);
  REQUIRE(!r);
  CHECK_THAT(r.error().message, Catch::Contains("unsupported TLS version \"TLS14\""));
  auto ciphers = ok;
  ciphers.cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "tls_aes_128_gcm_sha256"};
  CHECK(net::check_server_tls(ciphers).has_value());
  ciphers.cipher_suites = {"TLS_NOT_A_SUITE"};
  r = net::check_server_tls(ciphers);
  REQUIRE(!r);
  CHECK_THAT(r.error().message, Catch::Contains("unsupported TLS cipher suite name"));
}

TEST_CASE("server: -tlsCipherSuites limits TLS 1.2 to the suites named", "[net][tls]") {
  TempDir dir;
  make_cert(dir, "a", "alertd-a");
  auto tls = tls_of(dir, "a");
  tls.cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"};
  ServerThread st({}, ServerThread::ok_handler(), 1, &tls);
  int status = -1;
  CHECK(curl_https(st.port(), dir.file("a.crt"), "/x",
                   "--tls-max 1.2 --ciphers ECDHE-ECDSA-AES256-GCM-SHA384", &status) == "ok /x");
  CHECK(curl_https(st.port(), dir.file("a.crt"), "/x",
                   "--tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-GCM-SHA256", &status)
            .empty());
  CHECK(status == 35);
}

TEST_CASE("server: a changed certificate file is picked up, a broken one keeps the old",
          "[net][tls]") {
  TempDir dir;
  make_cert(dir, "a", "alertd-a");
  make_cert(dir, "b", "alertd-b");
  copy_file(dir.file("a.crt"), dir.file("live.crt"));
  copy_file(dir.file("a.key"), dir.file("live.key"));
  std::mutex mu;
  std::vector<std::string> errors;
  std::vector<std::string> infos;
  net::ServerOptions o;
  o.log_error = [&](std::string_view m) {
    std::lock_guard lock(mu);
    errors.emplace_back(m);
  };
  o.log_info = [&](std::string_view m) {
    std::lock_guard lock(mu);
    infos.emplace_back(m);
  };
  const auto tls = tls_of(dir, "live");
  ServerThread st(o, ServerThread::ok_handler(), 1, &tls);
  CHECK(curl_https(st.port(), dir.file("a.crt"), "/a") == "ok /a");
  CHECK(curl_https(st.port(), dir.file("b.crt"), "/b").empty());

  copy_file(dir.file("b.key"), dir.file("live.key"));
  copy_file(dir.file("b.crt"), dir.file("live.crt"));
  std::this_thread::sleep_for(1100ms);  // files are checked at most once a second
  CHECK(curl_https(st.port(), dir.file("b.crt"), "/b") == "ok /b");
  {
    std::lock_guard lock(mu);
    REQUIRE(infos.size() == 1);
    CHECK_THAT(infos[0], Catch::Contains("reloaded the TLS certificate"));
  }

  std::ofstream(dir.file("broken.crt")) << "-----BEGIN CERTIFICATE-----\nAAAA\n";
  copy_file(dir.file("broken.crt"), dir.file("live.crt"));
  std::this_thread::sleep_for(1100ms);
  CHECK(curl_https(st.port(), dir.file("b.crt"), "/still-b") == "ok /still-b");
  std::this_thread::sleep_for(1100ms);
  CHECK(curl_https(st.port(), dir.file("b.crt"), "/still-b") == "ok /still-b");
  std::lock_guard lock(mu);
  REQUIRE(errors.size() == 1);  // once per change, not per connection
  CHECK_THAT(errors[0], Catch::Contains("cannot reload the TLS certificate") &&
                            Catch::Contains(dir.file("live.crt")));
}

TEST_CASE("server: a TLS client that never finishes the handshake is closed and evicted",
          "[net][tls]") {
  TempDir dir;
  make_cert(dir, "a", "alertd-a");
  const auto tls = tls_of(dir, "a");
  net::ServerOptions o;
  o.header_timeout = 400ms;
  o.max_connections = 2;
  SECTION("closed at header_timeout") {
    ServerThread st(o, ServerThread::ok_handler(), 1, &tls);
    Client silent(st.port());
    Client partial(st.port());
    partial.send(std::string_view("\x16\x03\x01\x02\x00\x01", 6));  // a ClientHello's start
    const auto start = SteadyClock::now();
    CHECK(silent.closed_by_server());
    CHECK(partial.closed_by_server());
    CHECK(SteadyClock::now() - start < 1500ms);
  }
  SECTION("at the cap, stalled handshakes make room") {
    o.header_timeout = 10s;
    ServerThread st(o, ServerThread::ok_handler(), 1, &tls);
    Client silent(st.port());
    Client partial(st.port());
    partial.send(std::string_view("\x16\x03\x01\x02\x00\x01", 6));
    REQUIRE(eventually([&] { return st.server().open_connections() == 2; }));
    CHECK(curl_https(st.port(), dir.file("a.crt"), "/fresh") == "ok /fresh");
    CHECK(st.server().connections_rejected() == 0);
    CHECK(silent.closed_by_server());
  }
  SECTION("header and body limits hold over TLS") {
    o.body_limit = 1000;
    ServerThread st(o, ServerThread::ok_handler(), 1, &tls);
    int status = -1;
    const std::string big(5000, 'x');
    std::ofstream(dir.file("big")) << big;
    const std::string code =
        curl_https(st.port(), dir.file("a.crt"), "/post",
                   "-o /dev/null -w '%{http_code}' --data-binary @" + dir.file("big"), &status);
    CHECK(code == "413");
  }
}

TEST_CASE("server: several listeners, plain and HTTPS, share one server", "[net][tls]") {
  TempDir dir;
  make_cert(dir, "a", "alertd-a");
  asio::io_context ioc;
  net::HttpServer server(ioc, ServerThread::ok_handler());
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  REQUIRE(server.listen("127.0.0.1:0", tls_of(dir, "a")).has_value());
  const auto ports = server.ports();
  REQUIRE(ports.size() == 2);
  CHECK(ports[0] == server.port());
  CHECK(ports[0] != ports[1]);
  std::thread t([&] { ioc.run(); });
  Client plain(ports[0]);
  plain.send(get("/plain"));
  CHECK(status_of(plain.read_response()) == 200);
  CHECK(curl_https(ports[1], dir.file("a.crt"), "/tls") == "ok /tls");
  server.shutdown(1s);
  t.join();  // run() returns: the server left no work behind
  CHECK(server.connections_accepted() == 2);
}

TEST_CASE("server: shutdown lets a request in progress finish and closes idle ones",
          "[net][server]") {
  asio::io_context ioc;
  net::HttpServer server(ioc, ServerThread::ok_handler());
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  std::thread t([&] { ioc.run(); });
  Client idle(server.port());
  idle.send(get("/first"));
  REQUIRE(status_of(idle.read_response()) == 200);  // now waiting for its next request
  Client busy(server.port());
  busy.send("GET /busy HTTP/1.1\r\n");
  Client stuck(server.port());
  stuck.send("GET /stuck HTTP/1.1\r\n");
  REQUIRE(eventually([&] { return server.open_connections() == 3; }));
  const auto start = SteadyClock::now();
  server.shutdown(700ms);
  CHECK(idle.closed_by_server());
  CHECK(SteadyClock::now() - start < 300ms);
  busy.send("Host: x\r\n\r\n");
  const auto r = busy.read_response();
  CHECK(status_of(r) == 200);
  CHECK_THAT(*r, Catch::Contains("Connection: close"));
  CHECK(stuck.closed_by_server());  // never finished its request: closed at the grace
  CHECK(SteadyClock::now() - start >= 600ms);
  t.join();
  // A refused connection: nothing listens any more.
  Client after(server.port(), Client::OffThread{});
  CHECK(!after.connected());
}

// ---- PROXY protocol v2 (-httpListenAddr.useProxyProtocol) ----------------------------------

namespace {

// A PROXY protocol v2 header: PROXY over TCP/IPv4 from 10.0.0.1:4242 to 10.0.0.2:8880, or LOCAL.
std::string proxy_v2_header(bool local = false) {
  std::string h("\r\n\r\n\0\r\nQUIT\n", 12);
  h += static_cast<char>(local ? 0x20 : 0x21);  // version 2, command LOCAL / PROXY
  h += static_cast<char>(local ? 0x00 : 0x11);  // AF_INET, STREAM (LOCAL: unspecified)
  const std::string block = local ? std::string() : std::string("\x0a\x00\x00\x01\x0a\x00\x00\x02\x10\x92\x22\xb0", 12);
  h += static_cast<char>(block.size() >> 8);
  h += static_cast<char>(block.size() & 0xff);
  return h + block;
}

}  // namespace

TEST_CASE("server: PROXY protocol v2 header before the request", "[net][server][proxy]") {
  std::mutex mu;
  std::vector<std::string> errors;
  net::ServerOptions o;
  o.header_timeout = 2s;
  o.log_error = [&](std::string_view m) {
    std::lock_guard lock(mu);
    errors.emplace_back(m);
  };
  asio::io_context ioc;
  net::HttpServer server(ioc, ServerThread::ok_handler(), o);
  net::ListenOptions lo;
  lo.proxy_protocol = true;
  REQUIRE(server.listen("127.0.0.1:0", lo).has_value());
  auto guard = asio::make_work_guard(ioc);
  std::thread t([&] { ioc.run(); });

  SECTION("PROXY and LOCAL headers, also split across packets, are stripped") {
    Client a(server.port());
    a.send(proxy_v2_header() + get("/a"));
    auto r = a.read_response();
    CHECK(status_of(r) == 200);
    CHECK_THAT(*r, Catch::EndsWith("ok /a"));
    a.send(get("/again"));  // the header comes once per connection
    CHECK(status_of(a.read_response()) == 200);
    Client local(server.port());
    local.send(proxy_v2_header(true) + get("/local"));
    CHECK(status_of(local.read_response()) == 200);
    Client split(server.port());
    const std::string h = proxy_v2_header();
    split.send(h.substr(0, 5));
    std::this_thread::sleep_for(50ms);
    split.send(h.substr(5, 14));
    std::this_thread::sleep_for(50ms);
    split.send(h.substr(19) + get("/split"));
    CHECK(status_of(split.read_response()) == 200);
  }
  SECTION("a connection without the header is closed and the reason logged") {
    Client plain(server.port());
    plain.send(get("/no-header"));
    CHECK(plain.closed_by_server());
    std::lock_guard lock(mu);
    REQUIRE(errors.size() == 1);
    CHECK_THAT(errors[0], Catch::Contains("PROXY protocol v2 signature"));
  }
  SECTION("v1 text headers and UDP are refused") {
    Client v1(server.port());
    v1.send("PROXY TCP4 10.0.0.1 10.0.0.2 4242 8880\r\n" + get("/v1"));
    CHECK(v1.closed_by_server());
    std::string udp = proxy_v2_header();
    udp[13] = 0x12;  // AF_INET, DGRAM
    Client dgram(server.port());
    dgram.send(udp + get("/udp"));
    CHECK(dgram.closed_by_server());
    std::lock_guard lock(mu);
    REQUIRE(errors.size() == 2);
    CHECK_THAT(errors[1], Catch::Contains("only TCP"));
  }
  SECTION("a header that never completes is closed at the header deadline") {
    Client slow(server.port());
    slow.send(proxy_v2_header().substr(0, 10));
    const auto start = SteadyClock::now();
    CHECK(slow.closed_by_server());
    CHECK(SteadyClock::now() - start < 3s);
  }
  server.stop();
  guard.reset();
  t.join();
}

namespace {

// A handler whose /stream answer is `pieces` produced one per call (an empty piece in the
// middle, which must not end the body); `alive` watches the producer's state.
struct Streaming {
  std::vector<std::string> pieces;
  std::weak_ptr<int> alive;
  std::atomic<int> calls{0};

  net::RequestHandler handler() {
    return [this](const net::ServerRequest& r) {
      if (r.target != "/stream") return net::ServerResponse{200, "text/plain", "plain", {}};
      auto state = std::make_shared<int>(0);
      alive = state;
      net::ServerResponse resp;
      resp.content_type = "application/json";
      resp.headers = {{"X-Test", "1"}};
      resp.stream = [this, state](std::string& out) {
        ++calls;
        out += pieces[static_cast<size_t>((*state)++)];
        return static_cast<size_t>(*state) < pieces.size();
      };
      return resp;
    };
  }
  [[nodiscard]] std::string whole() const {
    std::string w;
    for (const auto& p : pieces) w += p;
    return w;
  }
};

}  // namespace

TEST_CASE("server: a streamed body goes out chunked, one chunk per piece, keep-alive kept",
          "[net][server]") {
  Streaming s;
  for (int i = 0; i < 5; ++i) {
    s.pieces.push_back(std::string(20000 + static_cast<size_t>(i), static_cast<char>('a' + i)));
  }
  s.pieces.insert(s.pieces.begin() + 2, std::string());
  ServerThread st({}, s.handler());
  Client c(st.port());
  c.send(get("/stream"));
  const auto r = c.read_chunked_response();
  REQUIRE(r.has_value());
  CHECK(r->header.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK_THAT(r->header, Catch::Contains("Transfer-Encoding: chunked"));
  CHECK_THAT(r->header, !Catch::Contains("Content-Length"));
  CHECK_THAT(r->header, Catch::Contains("Content-Type: application/json"));
  CHECK_THAT(r->header, Catch::Contains("X-Test: 1"));
  CHECK(r->body == s.whole());
  CHECK(r->chunks == 5);  // the empty piece sent nothing
  CHECK(s.calls == 6);
  // The producer (and what it holds) is released once the answer is out.
  CHECK(eventually([&] { return s.alive.expired(); }));
  // The connection is still good for the next request.
  c.send(get("/plain"));
  const auto next = c.read_response();
  CHECK(status_of(next) == 200);
  CHECK(st.server().connections_accepted() == 1);
}

TEST_CASE("server: a streamed body to an HTTP/1.0 client is raw bytes, then close",
          "[net][server]") {
  Streaming s;
  s.pieces = {"{\"a\":", "[1,2,3]", "}"};
  ServerThread st({}, s.handler());
  Client c(st.port());
  c.send("GET /stream HTTP/1.0\r\nHost: test\r\n\r\n");
  const auto all = c.read_to_eof();
  REQUIRE(all.has_value());
  const size_t end = all->find("\r\n\r\n");
  REQUIRE(end != std::string::npos);
  CHECK_THAT(all->substr(0, end), !Catch::Contains("chunked"));
  CHECK(all->substr(end + 4) == "{\"a\":[1,2,3]}");
}

TEST_CASE("server: HEAD of a streamed answer sends the header only", "[net][server]") {
  Streaming s;
  s.pieces = {"never sent"};
  ServerThread st({}, s.handler());
  Client c(st.port());
  c.send("HEAD /stream HTTP/1.1\r\nHost: test\r\n\r\n");
  const auto head = c.read_response();
  REQUIRE(head.has_value());
  CHECK(status_of(head) == 200);
  CHECK(s.calls == 0);
  c.send(get("/plain"));
  const auto next = c.read_response();
  REQUIRE(next.has_value());
  CHECK(next->ends_with("plain"));
}

namespace {

// The errors a server logs, collected across its thread.
struct LoggedErrors {
  std::mutex mu;
  std::vector<std::string> lines;
  net::ServerOptions options() {
    net::ServerOptions o;
    o.log_error = [this](std::string_view m) {
      std::lock_guard lock(mu);
      lines.emplace_back(m);
    };
    return o;
  }
};

// Answers with a stream whose producer gives one piece, then throws.
net::ServerResponse stream_that_throws(const net::ServerRequest&) {
  net::ServerResponse resp;
  auto n = std::make_shared<int>(0);
  resp.stream = [n](std::string& out) -> bool {
    if ((*n)++ == 1) throw std::runtime_error("snapshot gone");
    out = "first piece";
    return true;
  };
  return resp;
}

}  // namespace

TEST_CASE("server: a producer that throws cuts the answer short (no last chunk) and is logged",
          "[net][server]") {
  LoggedErrors logged;
  ServerThread st(logged.options(), stream_that_throws);
  Client c(st.port());
  c.send(get("/stream"));
  CHECK_FALSE(c.read_chunked_response().has_value());  // closed before the last chunk
  std::lock_guard lock(logged.mu);
  REQUIRE(logged.lines.size() == 1);
  CHECK_THAT(logged.lines[0], Catch::Contains("snapshot gone"));
}

TEST_CASE("collect_body drains a stream into body", "[net][server]") {
  net::ServerResponse r;
  auto n = std::make_shared<int>(0);
  r.stream = [n](std::string& out) {
    out = std::to_string((*n)++);
    return *n < 12;
  };
  net::collect_body(r);
  CHECK(r.body == "01234567891011");
  CHECK_FALSE(r.stream);
}

// --- gzip-compressed answers (vmalert's lib/httpserver with gzhttp) ---

namespace {

std::string request(std::string_view method, std::string_view path,
                    std::string_view accept_encoding, std::string_view version = "HTTP/1.1",
                    bool close = false) {
  std::string r = std::string(method) + " " + std::string(path) + " " + std::string(version) +
                  "\r\nHost: test\r\n";
  if (close) r += "Connection: close\r\n";
  if (!accept_encoding.empty()) r += "Accept-Encoding: " + std::string(accept_encoding) + "\r\n";
  return r + "\r\n";
}

// The header part of a response (through the blank line) and its body.
std::pair<std::string, std::string> split_response(const std::string& resp) {
  const size_t end = resp.find("\r\n\r\n");
  REQUIRE(end != std::string::npos);
  return {resp.substr(0, end + 4), resp.substr(end + 4)};
}

std::string inflate(std::string_view gz) {
  net::GzipInflater g(size_t{1} << 30);
  std::string out;
  const auto sink = [&](std::string_view p) -> std::optional<core::Error> {
    out.append(p);
    return std::nullopt;
  };
  const auto fed = g.feed(gz, sink);
  INFO((fed ? std::string() : fed.error().message));
  REQUIRE(fed.has_value());
  REQUIRE(g.finish().has_value());
  return out;
}

// Text that compresses (JSON-like, repetitive) and bytes that hardly do (a fixed LCG, so the
// test is the same every run).
std::string json_text(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "{\"alert\":\"Up\",\"i\":" + std::to_string(i) + "},";
  s.resize(n);
  return s;
}
std::string noise(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (char& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return s;
}

// /big: 64 KiB of JSON; /small: 1023 bytes; /exact: 1024 bytes; /empty: 204; /jpeg: a big
// image/jpeg; /encoded: a big body the handler encoded itself ("identity" says so).
net::RequestHandler sized_handler(const std::string& big) {
  return [big](const net::ServerRequest& r) {
    net::ServerResponse resp{200, "application/json", big, {}};
    if (r.target == "/small") resp.body = json_text(1023);
    if (r.target == "/exact") resp.body = json_text(1024);
    if (r.target == "/empty") resp = net::ServerResponse{204, "text/plain", "", {}};
    if (r.target == "/jpeg") resp.content_type = "image/jpeg";
    if (r.target == "/encoded") resp.headers.emplace_back("Content-Encoding", "identity");
    return resp;
  };
}

}  // namespace

TEST_CASE("gzip answers: a big answer to a client accepting gzip is compressed",
          "[net][server][gzip]") {
  const std::string big = json_text(64 * 1024);
  ServerThread st({}, sized_handler(big));
  Client c(st.port());
  c.send(request("GET", "/big", "gzip, deflate, br"));
  const auto resp = c.read_response();  // reads Content-Length bytes
  REQUIRE(status_of(resp) == 200);
  const auto [header, body] = split_response(*resp);
  CHECK_THAT(header, Catch::Contains("Content-Encoding: gzip\r\n"));
  CHECK_THAT(header, Catch::Contains("Vary: Accept-Encoding\r\n"));
  CHECK_THAT(header, Catch::Contains("Content-Length: " + std::to_string(body.size()) + "\r\n"));
  CHECK_THAT(header, Catch::Contains("Content-Type: application/json"));
  CHECK(body.size() < big.size() / 4);
  CHECK(inflate(body) == big);
  // The connection stays good, and the next request without gzip gets the plain body.
  c.send(request("GET", "/big", ""));
  const auto plain = c.read_response();
  REQUIRE(plain.has_value());
  const auto [plain_header, plain_body] = split_response(*plain);
  CHECK_THAT(plain_header, !Catch::Contains("Content-Encoding"));
  CHECK_THAT(plain_header, Catch::Contains("Vary: Accept-Encoding\r\n"));
  CHECK(plain_body == big);
  CHECK(st.server().connections_accepted() == 1);
}

TEST_CASE("gzip answers: which requests and answers are compressed", "[net][server][gzip]") {
  const std::string big = json_text(64 * 1024);
  ServerThread st({}, sized_handler(big));
  struct Case {
    const char* method;
    const char* path;
    const char* accept;
    bool compressed;
  };
  const std::vector<Case> cases = {
      {"GET", "/big", "gzip", true},
      {"GET", "/big", "GZIP;q=0.5", true},
      {"GET", "/big", "br;q=1.0, gzip;q=0.001", true},
      {"POST", "/big", "gzip", true},
      {"GET", "/exact", "gzip", true},  // 1024 bytes: the minimum is compressed
      {"GET", "/small", "gzip", false},  // 1023 bytes
      {"GET", "/big", "", false},
      {"GET", "/big", "gzip;q=0", false},
      {"GET", "/big", "gzip; q=0.0, deflate", false},
      {"GET", "/big", "deflate, br", false},
      {"GET", "/big", "x-gzip", false},
      {"GET", "/big", "*", false},
      {"GET", "/big", "identity", false},
      {"HEAD", "/big", "gzip", false},
      {"GET", "/empty", "gzip", false},
      {"GET", "/jpeg", "gzip", false},
      {"GET", "/encoded", "gzip", false},
  };
  for (const auto& k : cases) {
    INFO(k.method << " " << k.path << " Accept-Encoding: " << k.accept);
    Client c(st.port());
    // Connection: close, and read to the end: a HEAD answer has a length but no body.
    c.send(request(k.method, k.path, k.accept, "HTTP/1.1", true));
    auto resp = c.read_to_eof();
    REQUIRE(resp.has_value());
    if (std::string_view(k.method) == "HEAD") {
      // The uncompressed answer's Content-Length, and no body.
      CHECK_THAT(*resp, Catch::Contains("Content-Length: " + std::to_string(big.size())));
      CHECK(resp->ends_with("\r\n\r\n"));
    }
    const auto [header, body] = split_response(*resp);
    CHECK_THAT(header, Catch::Contains("Vary: Accept-Encoding\r\n"));
    if (k.compressed) {
      CHECK_THAT(header, Catch::Contains("Content-Encoding: gzip\r\n"));
      const std::string want = std::string_view(k.path) == "/exact" ? json_text(1024) : big;
      CHECK(inflate(body) == want);
    } else {
      CHECK_THAT(header, !Catch::Contains("Content-Encoding: gzip"));
    }
    if (std::string_view(k.path) == "/encoded") {
      CHECK_THAT(header, Catch::Contains("Content-Encoding: identity\r\n"));
      CHECK(body == big);
    }
  }
}

TEST_CASE("gzip answers: Accept-Encoding read as gzhttp reads it", "[net][gzip]") {
  struct Case {
    const char* value;
    bool accepts;
  };
  const std::vector<Case> cases = {
      {"gzip", true},          {" gzip ", true},           {"Gzip", true},
      {"deflate, gzip", true}, {"gzip;q=1", true},         {"gzip;q=0.001", true},
      {"gzip;q=2", true},      {"gzip ; q=0.5 ", true},    {"gzip;level=1", true},
      {"gzip;q=0;x=y", true},  // the last parameter decides, as in gzhttp
      {"", false},             {"gzip;q=0", false},        {"gzip;q=0.000", false},
      {"gzip;q=-1", false},    {"gzip;q=abc", false},      {"gzip;q=", false},
      {"x-gzip", false},       {"*", false},               {"gzipx", false},
      {"br, deflate", false},  {"gzip;q=0, gzip", false},  // the first gzip decides
  };
  for (const auto& k : cases) {
    INFO(k.value);
    CHECK(net::accepts_gzip(k.value) == k.accepts);
  }
  CHECK(net::compressible_content_type("application/json"));
  CHECK(net::compressible_content_type("text/plain; charset=utf-8"));
  CHECK(net::compressible_content_type(""));
  CHECK_FALSE(net::compressible_content_type("image/jpeg"));
  CHECK_FALSE(net::compressible_content_type("Video/mp4"));
  CHECK_FALSE(net::compressible_content_type("application/zip"));
  CHECK_FALSE(net::compressible_content_type("application/x-snappy-framed"));
  CHECK(net::compressible_content_type("image/png"));  // gzhttp leaves PNG in, so do we
}

TEST_CASE("gzip answers: a streamed answer is compressed chunk by chunk and complete",
          "[net][server][gzip]") {
  Streaming s;
  // Hardly compressible pieces, so zlib has output to give after every piece or so.
  for (uint32_t i = 0; i < 8; ++i) s.pieces.push_back(noise(40000, i + 1));
  s.pieces.insert(s.pieces.begin() + 3, std::string());
  s.pieces.push_back(json_text(50000));
  ServerThread st({}, s.handler());
  Client c(st.port());
  c.send(request("GET", "/stream", "gzip"));
  const auto r = c.read_chunked_response();
  REQUIRE(r.has_value());
  CHECK(r->header.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK_THAT(r->header, Catch::Contains("Transfer-Encoding: chunked"));
  CHECK_THAT(r->header, Catch::Contains("Content-Encoding: gzip\r\n"));
  CHECK_THAT(r->header, Catch::Contains("Vary: Accept-Encoding\r\n"));
  CHECK_THAT(r->header, !Catch::Contains("Content-Length"));
  CHECK_THAT(r->header, Catch::Contains("X-Test: 1"));
  CHECK(inflate(r->body) == s.whole());
  // Sent as it was produced: several chunks, not one buffered body.
  CHECK(r->chunks >= 4);
  CHECK(s.calls == static_cast<int>(s.pieces.size()));
  CHECK(eventually([&] { return s.alive.expired(); }));
  c.send(request("GET", "/plain", "gzip"));
  CHECK(status_of(c.read_response()) == 200);
  CHECK(st.server().connections_accepted() == 1);
}

TEST_CASE("gzip answers: a short streamed answer goes out whole, uncompressed",
          "[net][server][gzip]") {
  Streaming s;
  s.pieces = {"{\"a\":", "", "[1,2,3]", "}"};
  ServerThread st({}, s.handler());
  Client c(st.port());
  c.send(request("GET", "/stream", "gzip"));
  const auto resp = c.read_response();
  REQUIRE(status_of(resp) == 200);
  const auto [header, body] = split_response(*resp);
  CHECK_THAT(header, Catch::Contains("Content-Length: 13\r\n"));
  CHECK_THAT(header, !Catch::Contains("Content-Encoding"));
  CHECK_THAT(header, !Catch::Contains("chunked"));
  CHECK(body == "{\"a\":[1,2,3]}");
  CHECK(s.calls == 4);
}

TEST_CASE("gzip answers: a streamed answer to HTTP/1.0 is compressed bytes, then close",
          "[net][server][gzip]") {
  Streaming s;
  s.pieces = {json_text(800), json_text(900), json_text(5000)};
  ServerThread st({}, s.handler());
  Client c(st.port());
  c.send(request("GET", "/stream", "gzip", "HTTP/1.0"));
  const auto all = c.read_to_eof();
  REQUIRE(all.has_value());
  const auto [header, body] = split_response(*all);
  CHECK_THAT(header, !Catch::Contains("chunked"));
  CHECK_THAT(header, Catch::Contains("Content-Encoding: gzip\r\n"));
  CHECK(inflate(body) == s.whole());
}

TEST_CASE("gzip answers: a producer that throws during the look-ahead gets a 500",
          "[net][server][gzip]") {
  LoggedErrors logged;
  ServerThread st(logged.options(), stream_that_throws);
  Client c(st.port());
  c.send(request("GET", "/stream", "gzip"));
  const auto resp = c.read_response();
  CHECK(status_of(resp) == 500);
  std::lock_guard lock(logged.mu);
  REQUIRE(logged.lines.size() == 1);
  CHECK_THAT(logged.lines[0], Catch::Contains("GET /stream") && Catch::Contains("snapshot gone"));
}

TEST_CASE("gzip answers: compress_responses off never compresses", "[net][server][gzip]") {
  const std::string big = json_text(64 * 1024);
  Streaming s;
  s.pieces = {big, big};
  net::ServerOptions o;
  o.compress_responses = false;
  ServerThread st(o, [&](const net::ServerRequest& r) {
    return r.target == "/stream" ? s.handler()(r) : sized_handler(big)(r);
  });
  Client c(st.port());
  c.send(request("GET", "/big", "gzip"));
  const auto resp = c.read_response();
  REQUIRE(status_of(resp) == 200);
  const auto [header, body] = split_response(*resp);
  CHECK_THAT(header, !Catch::Contains("Content-Encoding"));
  CHECK_THAT(header, !Catch::Contains("Vary"));
  CHECK(body == big);
  c.send(request("GET", "/stream", "gzip"));
  const auto streamed = c.read_chunked_response();
  REQUIRE(streamed.has_value());
  CHECK_THAT(streamed->header, !Catch::Contains("Content-Encoding"));
  CHECK(streamed->body == big + big);
  CHECK(streamed->chunks == 2);
}
