// FakeTransport: a net::Transport without sockets, for unit tests of datasource/ and notifier/
// clients. Every request is recorded; nothing completes until the test calls complete_all(),
// which answers each pending request, in order, with the responder's result (as the real
// transport never completes inline from send()). A 2xx answer to a request with on_body_chunk
// is streamed through it in chunk_size pieces and the Response body left empty, as
// net::HttpClient does. Links only `net_api`: no Beast.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "net/transport.hpp"

namespace fakes {

class FakeTransport final : public net::Transport {
 public:
  using Responder = std::function<core::Result<net::Response>(const net::Request&)>;

  // Answers 200 with an empty body until respond_with() is called.
  FakeTransport() : responder_([](const net::Request&) -> core::Result<net::Response> {
    return net::Response{200, {}, {}};
  }) {}

  void respond_with(Responder responder) { responder_ = std::move(responder); }
  // Convenience: every request gets this status and body.
  void respond_with(unsigned status, std::string body) {
    responder_ = [status, body = std::move(body)](const net::Request&)
        -> core::Result<net::Response> { return net::Response{status, {}, body}; };
  }
  // Convenience: every request fails with this error.
  void fail_with(core::Error error) {
    responder_ = [error = std::move(error)](const net::Request&)
        -> core::Result<net::Response> { return core::fail(error); };
  }

  /* Transport */
  void send(net::Request req, net::ResponseHandler done) override {
    requests.push_back(req);
    pending_.push_back({std::move(req), std::move(done), /*canceled=*/closed});
  }
  void close() override {
    closed = true;
    for (auto& p : pending_) p.canceled = true;
  }

  // Completes every request sent so far (and any sent by their handlers); returns how many.
  size_t complete_all() {
    size_t n = 0;
    while (!pending_.empty()) {
      Pending p = std::move(pending_.front());
      pending_.pop_front();
      ++n;
      if (p.canceled) {
        p.done(core::fail("client is closed", core::ErrorKind::canceled));
        continue;
      }
      p.done(answer(p.req));
    }
    return n;
  }
  [[nodiscard]] size_t pending() const { return pending_.size(); }

  std::vector<net::Request> requests;  // every request, in send order
  size_t chunk_size = 7;               // streaming granularity (small: exercises boundaries)
  bool closed = false;

 private:
  struct Pending {
    net::Request req;
    net::ResponseHandler done;
    bool canceled = false;
  };

  core::Result<net::Response> answer(const net::Request& req) {
    core::Result<net::Response> r = responder_(req);
    if (!r) return r;
    const size_t cap =
        req.max_response_bytes == 0 ? net::kDefaultMaxResponseBytes : req.max_response_bytes;
    const bool success = r->status / 100 == 2;
    if (r->body.size() > cap) {
      if (success) {
        return core::fail("response exceeds max size " + std::to_string(cap) + " bytes",
                          core::ErrorKind::too_large);
      }
      r->body.resize(cap);
    }
    if (success && req.on_body_chunk) {
      const std::string_view body = r->body;
      for (size_t at = 0; at < body.size(); at += chunk_size) {
        if (auto err = req.on_body_chunk(body.substr(at, std::min(chunk_size, body.size() - at)))) {
          return core::fail(std::move(*err));
        }
      }
      r->body.clear();
    }
    return r;
  }

  Responder responder_;
  std::deque<Pending> pending_;
};

}  // namespace fakes
