// net::GzipInflater on its own (chunkings, members, corrupt and truncated input, the cap),
// net::GzipDeflater against it, and
// net::HttpClient asking for gzip from net::HttpServer (header sent, body inflated while it
// streams, a gzip bomb stopped at the cap).
#include "net/gzip.hpp"

#include <zlib.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "net/asio.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"

namespace {

using namespace std::chrono_literals;

std::string gzip(std::string_view in, int level = Z_DEFAULT_COMPRESSION) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string sample_text() {
  std::string s;
  for (int i = 0; i < 20000; ++i) s += "{\"metric\":{\"job\":\"node\",\"i\":\"" + std::to_string(i) + "\"}},";
  return s;
}

struct Inflated {
  core::Result<void> result;
  std::string out;
};

Inflated inflate_in(std::string_view gz, size_t piece, size_t cap = size_t{1} << 30) {
  net::GzipInflater g(cap);
  Inflated r;
  const auto sink = [&](std::string_view p) -> std::optional<core::Error> {
    r.out.append(p);
    return std::nullopt;
  };
  for (size_t pos = 0; pos < gz.size() && r.result; pos += piece) {
    r.result = g.feed(gz.substr(pos, piece), sink);
  }
  if (r.result) r.result = g.finish();
  return r;
}

}  // namespace

TEST_CASE("gzip: inflates the same whatever the chunking", "[net][gzip]") {
  const std::string text = sample_text();
  const std::string gz = gzip(text);
  REQUIRE(gz.size() * 4 < text.size());
  for (size_t piece : {size_t{1}, size_t{7}, size_t{100}, size_t{4096}, gz.size()}) {
    INFO("piece " << piece);
    const auto r = inflate_in(gz, piece);
    REQUIRE(r.result.has_value());
    CHECK(r.out == text);
  }
  // Concatenated members are one body.
  const auto two = inflate_in(gzip("abc") + gzip("def"), 5);
  REQUIRE(two.result.has_value());
  CHECK(two.out == "abcdef");
}

TEST_CASE("gzip: corrupt, truncated and trailing garbage fail as bad_response", "[net][gzip]") {
  const std::string gz = gzip(sample_text());
  std::string corrupt = gz;
  corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x55);
  const auto c = inflate_in(corrupt, 1000);
  REQUIRE_FALSE(c.result.has_value());
  CHECK(c.result.error().kind == core::ErrorKind::bad_response);
  CHECK_THAT(c.result.error().message, Catch::Contains("gzip"));

  const auto t = inflate_in(gz.substr(0, gz.size() - 10), 1000);
  REQUIRE_FALSE(t.result.has_value());
  CHECK_THAT(t.result.error().message, Catch::Contains("unexpected end of the compressed body"));

  const auto g = inflate_in(gz + "not gzip", 1000);
  REQUIRE_FALSE(g.result.has_value());
  CHECK(g.result.error().kind == core::ErrorKind::bad_response);

  const auto p = inflate_in("{\"status\":\"success\"}", 4);
  REQUIRE_FALSE(p.result.has_value());
  CHECK(p.result.error().kind == core::ErrorKind::bad_response);
}

TEST_CASE("gzip: a bomb stops at the cap on inflated bytes", "[net][gzip]") {
  // 256 MiB of spaces compress to ~250 KB.
  const std::string bomb = gzip(std::string(size_t{256} << 20, ' '), 9);
  REQUIRE(bomb.size() < 300 * 1024);
  const size_t cap = size_t{1} << 20;
  net::GzipInflater g(cap);
  size_t delivered = 0;
  core::Result<void> r;
  for (size_t pos = 0; pos < bomb.size() && r; pos += 32 * 1024) {
    r = g.feed(std::string_view(bomb).substr(pos, 32 * 1024), [&](std::string_view p) {
      delivered += p.size();
      return std::optional<core::Error>{};
    });
  }
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == core::ErrorKind::too_large);
  CHECK_THAT(r.error().message,
             Catch::Contains("exceeds max size 1048576 bytes (after gzip decompression)"));
  CHECK(delivered <= cap);
  // A sink error stops inflation and comes back as is.
  net::GzipInflater g2(size_t{1} << 30);
  auto r2 = g2.feed(bomb, [](std::string_view) {
    return std::optional<core::Error>(core::Error{"parser says no", core::ErrorKind::bad_response});
  });
  REQUIRE_FALSE(r2.has_value());
  CHECK(r2.error().message == "parser says no");
}

TEST_CASE("gzip: the deflater's stream inflates back whatever the pieces", "[net][gzip]") {
  const std::string text = sample_text();
  const size_t piece =
      GENERATE(size_t{1}, size_t{100}, size_t{4096}, size_t{65536}, size_t{1} << 30);
  INFO("piece " << piece);
  net::GzipDeflater d(1);
  std::string gz;
  size_t pieces_with_output = 0;
  bool written = true;
  for (size_t pos = 0; pos < text.size() && written; pos += piece) {
    const size_t before = gz.size();
    written = d.write(std::string_view(text).substr(pos, piece), gz).has_value();
    if (gz.size() != before) ++pieces_with_output;
  }
  REQUIRE(written);
  REQUIRE(d.finish(gz).has_value());
  CHECK(gz.size() < text.size() / 4);
  const auto r = inflate_in(gz, 777);
  REQUIRE(r.result.has_value());
  CHECK(r.out == text);
  if (piece == 100) CHECK(pieces_with_output > 1);  // output leaves as the input comes
  // Finished: more input is refused, not silently dropped.
  CHECK_FALSE(d.write("more", gz).has_value());
  // compress() is the same as one write and finish.
  const auto whole = net::GzipDeflater::compress(text, 1);
  REQUIRE(whole.has_value());
  CHECK(inflate_in(*whole, 1 << 20).out == text);
  const auto empty = net::GzipDeflater::compress("", 1);
  REQUIRE(empty.has_value());
  CHECK(inflate_in(*empty, 1).out.empty());
}

TEST_CASE("gzip: Content-Encoding values", "[net][gzip]") {
  CHECK(net::is_gzip_encoding("gzip"));
  CHECK(net::is_gzip_encoding(" GZip "));
  CHECK(net::is_gzip_encoding("x-gzip"));
  CHECK_FALSE(net::is_gzip_encoding("br"));
  CHECK_FALSE(net::is_gzip_encoding("gzip, br"));
  CHECK_FALSE(net::is_gzip_encoding(""));
}

TEST_CASE("client: accept_gzip sends Accept-Encoding and inflates the streamed body",
          "[net][gzip][client]") {
  namespace asio = boost::asio;
  const std::string text = sample_text();
  const std::string bomb = gzip(std::string(size_t{64} << 20, ' '), 9);
  std::string seen_accept;
  asio::io_context ioc;
  net::HttpServer server(ioc, [&](const net::ServerRequest& req) {
    seen_accept.clear();
    bool gz = false;
    for (const auto& [n, v] : req.headers) {
      if (n == "Accept-Encoding" || n == "accept-encoding") {
        seen_accept = v;
        gz = v.find("gzip") != std::string::npos;
      }
    }
    net::ServerResponse r{200, "application/json", req.target == "/bomb" ? bomb : text, {}};
    if (req.target == "/bomb" || req.target == "/badcrc") r.headers.emplace_back("Content-Encoding", "gzip");
    if (req.target == "/badcrc") {
      r.body = gzip(text);
      r.body[r.body.size() - 6] = static_cast<char>(r.body[r.body.size() - 6] ^ 1);
    } else if (gz && req.target != "/bomb") {
      r.body = gzip(text);
      r.headers.emplace_back("Content-Encoding", "gzip");
    }
    return r;
  });
  REQUIRE(server.listen("127.0.0.1:0").has_value());
  net::HttpClient client(ioc, {});
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  const auto fetch = [&](net::Request req, std::string* streamed) {
    std::optional<core::Result<net::Response>> got;
    if (streamed != nullptr) {
      req.on_body_chunk = [streamed](std::string_view c) -> std::optional<core::Error> {
        streamed->append(c);
        return std::nullopt;
      };
    }
    client.send(std::move(req), [&](core::Result<net::Response> r) { got = std::move(r); });
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!got && std::chrono::steady_clock::now() < end) ioc.run_one_for(10ms);
    REQUIRE(got.has_value());
    return std::move(*got);
  };

  net::Request plain;
  plain.url = base + "/";
  auto r0 = fetch(plain, nullptr);
  REQUIRE(r0.has_value());
  CHECK(seen_accept.empty());
  CHECK(r0->body == text);

  net::Request gz = plain;
  gz.accept_gzip = true;
  std::string streamed;
  auto r1 = fetch(gz, &streamed);
  REQUIRE(r1.has_value());
  CHECK(seen_accept == "gzip");
  CHECK(streamed == text);
  for (const auto& [n, v] : r1->headers) {
    CHECK_FALSE((n == "Content-Encoding" || n == "Content-Length"));
  }
  auto r2 = fetch(gz, nullptr);
  REQUIRE(r2.has_value());
  CHECK(r2->body == text);

  net::Request bomb_req = gz;
  bomb_req.url = base + "/bomb";
  bomb_req.max_response_bytes = size_t{4} << 20;
  std::string sink;
  auto r3 = fetch(bomb_req, &sink);
  REQUIRE_FALSE(r3.has_value());
  CHECK(r3.error().kind == core::ErrorKind::too_large);
  CHECK_THAT(r3.error().message, Catch::Contains("after gzip decompression"));
  CHECK(sink.size() <= bomb_req.max_response_bytes);

  net::Request bad = gz;
  bad.url = base + "/badcrc";
  auto r4 = fetch(bad, &sink);
  REQUIRE_FALSE(r4.has_value());
  CHECK(r4.error().kind == core::ErrorKind::bad_response);
}

TEST_CASE("gzip_compress: one gzip member the inflater reads back", "[net][gzip]") {
  for (const std::string& in : {std::string(), std::string("m 1\n"), sample_text()}) {
    auto gz = net::gzip_compress(in);
    REQUIRE(gz.has_value());
    REQUIRE(gz->size() >= 18);  // gzip header and trailer
    CHECK(static_cast<unsigned char>((*gz)[0]) == 0x1f);
    CHECK(static_cast<unsigned char>((*gz)[1]) == 0x8b);
    auto r = inflate_in(*gz, 1000);
    REQUIRE(r.result.has_value());
    CHECK(r.out == in);
  }
  // Text compresses: the sample is highly repetitive.
  CHECK(net::gzip_compress(sample_text())->size() < sample_text().size() / 5);
}
