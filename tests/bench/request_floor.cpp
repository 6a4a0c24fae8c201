// request_floor PORT [COUNT] [--epoll | --client]: the CPU one instant query costs a client
// that does nothing else. It sends COUNT queries like alertd's (POST /api/v1/query, form body,
// keep-alive, one connection, one at a time) to `tests/bench/daemon/fakes.py ds PORT`, reads
// each answer whole, and prints its own utime+stime and wall time per request.
//   (default)  blocking send and recv on a socket, the answer framed by its Content-Length;
//   --epoll    the same on a non-blocking socket, waiting in epoll_wait first as a loop does;
//   --client   alertd's own net::HttpClient (Beast, coroutines, its timeouts and caps).
//
// What it is for: the daemon benchmark's per-query cost at 1k alerts (100 queries a round)
// split into the floor the kernel, loopback and the peer's wake-ups set on this machine, what
// alertd's HTTP client adds, and the rest (docs/performance.md, "CPU at 1k").
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "net/asio.hpp"
#include "net/http_client.hpp"

namespace {

double cpu_seconds() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  const auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return sec(r.ru_utime) + sec(r.ru_stime);
}

// fakes.py renders an answer of K=10 series once per query text and serves it from its cache;
// 100 rule names, as the 1k benchmark's 100 rules.
std::string make_body(int rule) {
  return "query=bench_k10%7Brule%3D%22r" + std::to_string(rule) + "%22%7D&time=1700000000&step=5s";
}

std::string make_request(int port, int rule) {
  const std::string body = make_body(rule);
  return "POST /api/v1/query HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nUser-Agent: request_floor\r\nContent-Type: application/x-www-form-urlencoded"
         "\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Bytes of the whole answer once its header is in `data`, 0 while it is not (fakes.py always
// writes `Content-Length: `, spelled so).
size_t answer_size(std::string_view data) {
  const size_t end = data.find("\r\n\r\n");
  if (end == std::string_view::npos) return 0;
  constexpr std::string_view kName = "\r\nContent-Length: ";
  const size_t at = data.substr(0, end).find(kName);
  size_t length = 0;
  if (at != std::string_view::npos) {
    std::from_chars(data.data() + at + kName.size(), data.data() + end, length);
  }
  return end + 4 + length;
}

struct Totals {
  int done = 0;
  size_t bytes = 0;
};

// The queries through a socket of our own; false (after saying why) on a failure.
bool run_socket(int port, int count, bool use_epoll, Totals& totals) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "request_floor: connect to 127.0.0.1:%d: %s\n", port,
                 std::strerror(errno));
    ::close(fd);
    return false;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const int ep = use_epoll ? ::epoll_create1(EPOLL_CLOEXEC) : -1;
  if (use_epoll) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;
    ev.data.fd = fd;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  std::vector<std::string> requests;
  for (int rule = 0; rule < 100; ++rule) requests.push_back(make_request(port, rule));
  std::vector<char> buf(size_t{1} << 20);
  bool ok = true;
  for (int i = 0; i < count && ok; ++i) {
    const std::string& req = requests[static_cast<size_t>(i) % requests.size()];
    if (::send(fd, req.data(), req.size(), 0) != static_cast<ssize_t>(req.size())) {
      std::fprintf(stderr, "request_floor: send: %s\n", std::strerror(errno));
      ok = false;
      break;
    }
    size_t got = 0;
    size_t want = 0;
    while (want == 0 || got < want) {
      if (use_epoll) {
        epoll_event out{};
        ::epoll_wait(ep, &out, 1, -1);
      }
      const ssize_t n = ::recv(fd, buf.data() + got, buf.size() - got, 0);
      if (n < 0 && use_epoll && errno == EAGAIN) continue;
      if (n <= 0) {
        std::fprintf(stderr, "request_floor: answer %d: %s\n", i,
                     n == 0 ? "connection closed" : std::strerror(errno));
        ok = false;
        break;
      }
      got += static_cast<size_t>(n);
      if (want == 0) want = answer_size(std::string_view(buf.data(), got));
      if (want > buf.size()) {
        std::fprintf(stderr, "request_floor: answer %d: %zu bytes, over 1 MiB\n", i, want);
        ok = false;
        break;
      }
    }
    if (ok) {
      ++totals.done;
      totals.bytes += got;
    }
  }
  if (ep >= 0) ::close(ep);
  ::close(fd);
  return ok;
}

// The queries through alertd's HTTP client on an io_context of our own, one after another.
bool run_client(int port, int count, Totals& totals) {
  boost::asio::io_context io(1);
  net::HttpClient client(io, {});
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query";
  bool ok = true;
  std::function<void()> next = [&] {
    if (totals.done == count || !ok) {
      client.close();
      return;
    }
    net::Request req;
    req.method = "POST";
    req.url = url;
    req.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    req.body = make_body(totals.done % 100);
    client.send(std::move(req), [&](core::Result<net::Response> r) {
      if (!r || r->status != 200) {
        std::fprintf(
            stderr, "request_floor: answer %d: %s\n", totals.done,
            r ? ("status " + std::to_string(r->status)).c_str() : r.error().message.c_str());
        ok = false;
      } else {
        ++totals.done;
        totals.bytes += r->body.size();
      }
      next();
    });
  };
  next();
  io.run();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: request_floor PORT [COUNT] [--epoll | --client]\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int count = argc > 2 ? std::atoi(argv[2]) : 5000;
  const std::string_view mode = argc > 3 ? std::string_view(argv[3]) : "";
  if (!mode.empty() && mode != "--epoll" && mode != "--client") {
    std::fprintf(stderr, "request_floor: unknown mode %s\n", argv[3]);
    return 2;
  }

  Totals totals;
  const double cpu_start = cpu_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  const bool ok = mode == "--client" ? run_client(port, count, totals)
                                     : run_socket(port, count, mode == "--epoll", totals);
  const double cpu = cpu_seconds() - cpu_start;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!ok) return 1;
  // Bytes: the socket modes count the answers whole, the client its bodies.
  const char* label = mode.empty() ? "blocking" : argv[3] + 2;  // "--epoll" -> "epoll"
  std::printf("%d requests (%s): CPU %.1f us/request, wall %.1f us/request, %zu bytes\n", count,
              label, cpu / count * 1e6, wall / count * 1e6, totals.bytes);
  return 0;
}
