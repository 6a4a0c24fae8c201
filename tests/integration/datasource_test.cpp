// Integration: datasource::HttpQuerier against real Prometheus 2.42 started by datasource.sh
// (which passes the coordinates in ALERTD_IT_* variables). Data: promtool backfill from
// T0 = 1700000000; at T0 + 1 h temperature_celsius is 20 (instance 9001) and 40 (9002).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include "datasource/http_querier.hpp"
#include "datasource/response_parser.hpp"
#include "net/asio.hpp"
#include "net/gzip.hpp"
#include "net/http_client.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

const core::TimePoint kAt = core::from_unix_seconds(1700003600);

std::string env(const char* name) {
  const char* v = std::getenv(name);
  INFO("environment variable " << name << " (run through tests/integration/datasource.sh)");
  REQUIRE(v != nullptr);
  return v;
}

struct Datasource {
  explicit Datasource(datasource::HttpQuerierOptions o, net::ClientOptions c = {})
      : client(ioc, std::move(c)) {
    auto f = datasource::HttpQuerierFactory::create(client, std::move(o));
    REQUIRE(f.has_value());
    factory = std::move(*f);
    querier = factory->build({});
  }

  std::optional<core::Error> query(std::string_view expr, core::TimePoint at = kAt) {
    std::optional<std::optional<core::Error>> got;
    querier->query(expr, at, out, [&](std::optional<core::Error> e) { got = std::move(e); });
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (!got && std::chrono::steady_clock::now() < end) {
      if (ioc.stopped()) ioc.restart();
      ioc.run_one_for(10ms);
    }
    REQUIRE(got.has_value());
    return *got;
  }

  asio::io_context ioc;
  net::HttpClient client;
  std::unique_ptr<datasource::HttpQuerierFactory> factory;
  std::unique_ptr<datasource::Querier> querier;
  core::QueryResult out;
};

datasource::HttpQuerierOptions auth_options() {
  datasource::HttpQuerierOptions o;
  o.url = env("ALERTD_IT_AUTH_URL");
  o.basic_auth_username = env("ALERTD_IT_USER");
  o.basic_auth_password = env("ALERTD_IT_PASSWORD");
  return o;
}

}  // namespace

TEST_CASE("vector, scalar and empty results from Prometheus with basic auth",
          "[integration][datasource]") {
  Datasource ds(auth_options());

  auto err = ds.query("temperature_celsius");
  REQUIRE_FALSE(err.has_value());
  CHECK(ds.out.type == core::ResultType::vector);
  REQUIRE(ds.out.size() == 2);
  std::map<std::string, double> by_instance;
  for (size_t i = 0; i < ds.out.size(); ++i) {
    CHECK(ds.out.labels(i).get("__name__") == "temperature_celsius");
    CHECK(ds.out.labels(i).get("job") == "synthetic");
    CHECK(ds.out.timestamp_ms(i) == 1700003600000);
    by_instance[std::string(*ds.out.labels(i).get("instance"))] = ds.out.value(i);
  }
  CHECK(by_instance == std::map<std::string, double>{{"127.0.0.1:9001", 20}, {"127.0.0.1:9002", 40}});

  REQUIRE_FALSE(ds.query("rate(requests_total[5m])").has_value());
  REQUIRE(ds.out.size() == 1);
  CHECK(ds.out.value(0) == Approx(0.6666666666666667));
  CHECK(ds.out.labels(0).get("__name__") == std::nullopt);

  REQUIRE_FALSE(ds.query("scalar(sum(temperature_celsius))").has_value());
  CHECK(ds.out.type == core::ResultType::scalar);
  REQUIRE(ds.out.size() == 1);
  CHECK(ds.out.labels(0).size() == 0);
  CHECK(ds.out.value(0) == 60);

  REQUIRE_FALSE(ds.query("1+1").has_value());
  CHECK(ds.out.type == core::ResultType::scalar);
  CHECK(ds.out.value(0) == 2);

  REQUIRE_FALSE(ds.query("temperature_celsius{instance=\"nope\"}").has_value());
  CHECK(ds.out.type == core::ResultType::vector);
  CHECK(ds.out.empty());

  // More than the 5 m lookback after the last sample.
  REQUIRE_FALSE(ds.query("temperature_celsius", core::from_unix_seconds(1700020000)).has_value());
  CHECK(ds.out.empty());
}

TEST_CASE("Prometheus errors come back in vmalert's words", "[integration][datasource]") {
  Datasource ds(auth_options());
  auto bad = ds.query("sum(");
  REQUIRE(bad.has_value());
  CHECK_THAT(bad->message, Catch::StartsWith("unexpected response code 400 for " +
                                             env("ALERTD_IT_AUTH_URL") + "/api/v1/query?query=sum%28"));
  CHECK_THAT(bad->message, Catch::Contains("bad_data"));

  auto wrong = auth_options();
  wrong.basic_auth_password = "not-the-password";
  Datasource denied(wrong);
  auto e = denied.query("up");
  REQUIRE(e.has_value());
  CHECK_THAT(e->message, Catch::StartsWith("unexpected response code 401 for " +
                                           env("ALERTD_IT_AUTH_URL") + "/api/v1/query?"));
  CHECK_THAT(e->message, Catch::Contains("Unauthorized"));
  CHECK_THAT(e->message, !Catch::Contains("not-the-password"));

  auto none = auth_options();
  none.basic_auth_username.clear();
  none.basic_auth_password.clear();
  Datasource anonymous(none);
  auto a = anonymous.query("up");
  REQUIRE(a.has_value());
  CHECK_THAT(a->message, Catch::StartsWith("unexpected response code 401"));
}

TEST_CASE("HTTPS with the test CA, and a server name mismatch fails", "[integration][datasource]") {
  datasource::HttpQuerierOptions o;
  o.url = env("ALERTD_IT_TLS_URL");
  o.append_type_prefix = false;
  net::ClientOptions tls;
  tls.tls.ca_file = env("ALERTD_IT_CA_FILE");

  SECTION("verified by IP SAN") {
    Datasource ds(o, tls);
    REQUIRE_FALSE(ds.query("temperature_celsius").has_value());
    CHECK(ds.out.size() == 2);
  }
  SECTION("verified by tlsServerName") {
    tls.tls.server_name = "localhost";
    Datasource ds(o, tls);
    REQUIRE_FALSE(ds.query("count(temperature_celsius)").has_value());
    REQUIRE(ds.out.size() == 1);
    CHECK(ds.out.value(0) == 2);
  }
  SECTION("a name the certificate does not carry") {
    tls.tls.server_name = "prometheus.example";
    Datasource ds(o, tls);
    auto e = ds.query("up");
    REQUIRE(e.has_value());
    CHECK_THAT(e->message, Catch::Contains("tls handshake with"));
    CHECK_THAT(e->message, Catch::Contains(o.url + "/api/v1/query?query=up"));
  }
  SECTION("no CA: the system store does not know the test CA") {
    Datasource ds(o, net::ClientOptions{});
    auto e = ds.query("up");
    REQUIRE(e.has_value());
    CHECK_THAT(e->message, Catch::Contains("certificate"));
  }
}

TEST_CASE("Prometheus gzips when asked; the querier inflates it into the parser",
          "[integration][datasource][gzip]") {
  // The auth instance's URL with the credentials as userinfo (net turns them into basic auth).
  std::string url = env("ALERTD_IT_AUTH_URL");
  url.insert(url.find("://") + 3, env("ALERTD_IT_USER") + ":" + env("ALERTD_IT_PASSWORD") + "@");
  url += "/api/v1/query?query=temperature_celsius%5B3h%5D&time=1700010000";
  asio::io_context ioc;
  net::HttpClient client(ioc, {});
  const auto fetch = [&](net::Request req) {
    std::optional<core::Result<net::Response>> got;
    client.send(std::move(req), [&](core::Result<net::Response> r) { got = std::move(r); });
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (!got && std::chrono::steady_clock::now() < end) ioc.run_one_for(10ms);
    REQUIRE(got.has_value());
    return std::move(*got);
  };
  const auto header = [](const net::Response& r, std::string_view name) -> std::string {
    for (const auto& [n, v] : r.headers) {
      if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
          })) {
        return v;
      }
    }
    return "";
  };

  // Our own Accept-Encoding without accept_gzip: the compressed bytes come back untouched.
  net::Request raw;
  raw.method = "GET";
  raw.url = url;
  raw.headers = {{"Accept-Encoding", "gzip"}};
  auto compressed = fetch(raw);
  REQUIRE(compressed.has_value());
  REQUIRE(compressed->status == 200);
  CHECK(header(*compressed, "Content-Encoding") == "gzip");
  REQUIRE(compressed->body.size() > 2);
  CHECK(static_cast<unsigned char>(compressed->body[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(compressed->body[1]) == 0x8b);
  std::string inflated;
  net::GzipInflater g(size_t{1} << 30);
  REQUIRE(g.feed(compressed->body, [&](std::string_view p) {
    inflated.append(p);
    return std::optional<core::Error>{};
  }));
  REQUIRE(g.finish());
  INFO("compressed " << compressed->body.size() << " bytes, inflated " << inflated.size());
  CHECK(compressed->body.size() * 3 < inflated.size());

  // accept_gzip: the same JSON, inflated by the client; the encoding fields are gone.
  net::Request asked;
  asked.method = "GET";
  asked.url = url;
  asked.accept_gzip = true;
  auto plain = fetch(asked);
  REQUIRE(plain.has_value());
  CHECK(header(*plain, "Content-Encoding").empty());
  CHECK(plain->body == inflated);
  core::QueryResult parsed;
  REQUIRE(datasource::parse_response(plain->body, parsed));
  CHECK(parsed.type == core::ResultType::matrix);
  REQUIRE(parsed.size() == 2);
  CHECK(parsed.samples(0).size() > 600);  // 15 s steps over the 3 h window

  // The cap counts inflated bytes: the compressed answer fits, the JSON does not.
  asked.max_response_bytes = inflated.size() / 2;
  REQUIRE(compressed->body.size() < asked.max_response_bytes);
  auto capped = fetch(asked);
  REQUIRE_FALSE(capped.has_value());
  CHECK(capped.error().kind == core::ErrorKind::too_large);
  CHECK_THAT(capped.error().message, Catch::Contains("after gzip decompression"));

  // Through the querier (which always asks for gzip): parsed, and capped on inflated bytes.
  Datasource ds(auth_options());
  REQUIRE_FALSE(ds.query("temperature_celsius").has_value());
  CHECK(ds.out.size() == 2);
  auto small = auth_options();
  small.max_response_size = inflated.size() / 2;
  Datasource capped_ds(small);
  auto e = capped_ds.query("temperature_celsius[3h]", core::from_unix_seconds(1700010000));
  REQUIRE(e.has_value());
  CHECK(e->kind == core::ErrorKind::too_large);
  CHECK_THAT(e->message, Catch::Contains("after gzip decompression"));
  CHECK_THAT(e->message, Catch::Contains("raise -datasource.maxResponseSize"));
}
