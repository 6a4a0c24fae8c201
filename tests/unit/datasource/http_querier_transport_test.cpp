// datasource::HttpQuerier over fakes::FakeTransport: the querier needs only net::Transport, so
// this binary links datasource without net (no Beast, no sockets). The wire format itself is
// tested against a real server in tests/unit/net/http_querier_test.cpp.
#include <catch2/catch.hpp>

#include "datasource/http_querier.hpp"
#include "tests/fakes/fake_transport.hpp"

namespace {

// 2026-12-02T10:46:15Z
const core::TimePoint kTs = core::from_unix_ms(1796208375000);

const std::string kVector =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"a"},"value":[1796208375,"1"]}]}})";

struct Fixture {
  Fixture() {
    datasource::HttpQuerierOptions o;
    o.url = "http://user:pw@ds.example:8428/";
    auto f = datasource::HttpQuerierFactory::create(transport, o);
    REQUIRE(f.has_value());
    factory = std::move(*f);
    querier = factory->build({});
  }

  std::optional<std::optional<core::Error>> run(core::QueryResult& out) {
    std::optional<std::optional<core::Error>> got;
    querier->query("up", kTs, out, [&](std::optional<core::Error> e) { got = std::move(e); });
    CHECK_FALSE(got.has_value());  // a transport completes later, never inside send()
    CHECK(transport.complete_all() == 1);
    return got;
  }

  fakes::FakeTransport transport;
  std::unique_ptr<datasource::HttpQuerierFactory> factory;
  std::unique_ptr<datasource::Querier> querier;
};

}  // namespace

TEST_CASE("querier over a fake transport: request, streamed body, result",
          "[datasource][transport]") {
  Fixture fx;
  fx.transport.respond_with(200, kVector);
  core::QueryResult out;
  auto got = fx.run(out);
  REQUIRE(got.has_value());
  CHECK_FALSE(got->has_value());
  REQUIRE(fx.transport.requests.size() == 1);
  const net::Request& req = fx.transport.requests[0];
  CHECK(req.method == "POST");
  CHECK(req.url.starts_with("http://user:pw@ds.example:8428/api/v1/query?query=up&step=300s"));
  CHECK(req.max_response_bytes == 0);  // the transport's default cap applies
  REQUIRE(out.size() == 1);
  CHECK(out.labels(0).get("job") == "a");
  CHECK(out.value(0) == 1.0);
}

TEST_CASE("querier over a fake transport: transport errors keep their kind",
          "[datasource][transport]") {
  Fixture fx;
  const std::vector<core::ErrorKind> kinds = {core::ErrorKind::timeout,
                                              core::ErrorKind::connection,
                                              core::ErrorKind::too_large};
  for (const auto kind : kinds) {
    fx.transport.fail_with(core::Error{"Post \"http://ds.example:8428/api/v1/query\": boom", kind});
    core::QueryResult out;
    auto got = fx.run(out);
    REQUIRE(got.has_value());
    REQUIRE(got->has_value());
    CHECK_THAT((*got)->message, Catch::Contains("boom"));
    CHECK((*got)->kind == kind);
  }
}

TEST_CASE("querier over a fake transport: an HTTP 500 is reported with its status",
          "[datasource][transport]") {
  Fixture fx;
  fx.transport.respond_with(500, "overloaded");
  core::QueryResult out;
  auto got = fx.run(out);
  REQUIRE(got.has_value());
  REQUIRE(got->has_value());
  CHECK_THAT((*got)->message, Catch::Contains("unexpected response code 500"));
  CHECK_THAT((*got)->message, Catch::Contains("overloaded"));
}

TEST_CASE("querier over a fake transport: close() cancels pending queries",
          "[datasource][transport]") {
  Fixture fx;
  core::QueryResult out;
  std::optional<std::optional<core::Error>> got;
  fx.querier->query("up", kTs, out, [&](std::optional<core::Error> e) { got = std::move(e); });
  fx.transport.close();
  CHECK(fx.transport.complete_all() == 1);
  REQUIRE(got.has_value());
  REQUIRE(got->has_value());
  CHECK_THAT((*got)->message, Catch::Contains("client is closed"));
}

TEST_CASE("range querier: query_range request and matrix result", "[datasource][transport]") {
  fakes::FakeTransport transport;
  datasource::HttpQuerierOptions o;
  o.url = "http://ds.example:8428/?extra_label=env%3Dprod";
  auto f = datasource::HttpQuerierFactory::create(transport, o);
  REQUIRE(f.has_value());
  datasource::QuerierParams params;
  params.eval_interval = std::chrono::seconds(30);
  auto q = (*f)->build_range(params);
  transport.respond_with(
      200,
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"a"},)"
      R"("values":[[1796208375,"1"],[1796208405,"2"]]}]}})");
  core::QueryResult out;
  std::optional<std::optional<core::Error>> got;
  q->query_range("up", kTs, kTs + std::chrono::seconds(30), out,
                 [&](std::optional<core::Error> e) { got = std::move(e); });
  CHECK(transport.complete_all() == 1);
  REQUIRE(got.has_value());
  CHECK_FALSE(got->has_value());
  REQUIRE(transport.requests.size() == 1);
  // vmalert's replay request: start/end in RFC 3339, step = the group interval, nocache=1.
  CHECK(transport.requests[0].url ==
        "http://ds.example:8428/api/v1/query_range?end=2026-12-02T10%3A46%3A45Z&"
        "extra_label=env%3Dprod&nocache=1&query=up&start=2026-12-02T10%3A46%3A15Z&step=30s");
  REQUIRE(out.size() == 1);
  REQUIRE(out.samples(0).size() == 2);
  CHECK(out.samples(0)[1].timestamp_ms == 1796208405000);
  CHECK(out.samples(0)[1].value == 2.0);
}

TEST_CASE("range querier: an instant answer to a range query is an error",
          "[datasource][transport]") {
  fakes::FakeTransport transport;
  datasource::HttpQuerierOptions o;
  o.url = "http://ds.example:8428";
  auto f = datasource::HttpQuerierFactory::create(transport, o);
  REQUIRE(f.has_value());
  auto q = (*f)->build_range({});
  transport.respond_with(200, kVector);
  core::QueryResult out;
  std::optional<std::optional<core::Error>> got;
  q->query_range("up", kTs, kTs, out, [&](std::optional<core::Error> e) { got = std::move(e); });
  CHECK(transport.complete_all() == 1);
  REQUIRE(got.has_value());
  REQUIRE(got->has_value());
  CHECK((*got)->kind == core::ErrorKind::bad_response);
  CHECK_THAT((*got)->message, Catch::Contains("want matrix"));
}

TEST_CASE("querier: the request as curl, secrets hidden, shell-quoted", "[datasource][transport]") {
  fakes::FakeTransport transport;
  datasource::HttpQuerierOptions o;
  o.url = "http://user:pw@ds.example:8428/?authKey=k1&tenant=a";  // userinfo goes as is
  o.headers = "X-Scope: it's^^X-Api-Key: k2";
  auto f = datasource::HttpQuerierFactory::create(transport, o);
  REQUIRE(f.has_value());
  auto querier = (*f)->build({});
  const auto made = querier->curl_maker("up{job='a'}");
  REQUIRE(made != nullptr);
  const std::string curl = (*made)(kTs);
  CHECK(curl ==
        "curl -X POST -H 'Content-Type: application/json' "
        "-H 'X-Scope: it'\\''s' -H 'X-Api-Key: <secret>' "
        "'http://ds.example:8428/api/v1/query?authKey=secret&query=up%7Bjob%3D%27a%27%7D&"
        "step=300s&tenant=a&time=2026-12-02T10%3A46%3A15Z'");
  CHECK(transport.requests.empty());  // describing a request sends nothing

  // A maker outlives its querier and its factory (a rule's update history keeps it), and makes
  // the command for any time.
  querier.reset();
  f->reset();
  CHECK((*made)(kTs) == curl);
  CHECK_THAT((*made)(kTs + std::chrono::seconds(30)),
             Catch::EndsWith("&time=2026-12-02T10%3A46%3A45Z'"));
}

TEST_CASE("querier: bearer auth is hidden in the curl command", "[datasource][transport]") {
  fakes::FakeTransport transport;
  datasource::HttpQuerierOptions o;
  o.url = "http://ds.example:8428";
  o.bearer_token = "tok";
  auto f = datasource::HttpQuerierFactory::create(transport, o);
  REQUIRE(f.has_value());
  const auto made = (*f)->build({})->curl_maker("up");
  REQUIRE(made != nullptr);
  const std::string curl = (*made)(kTs);
  CHECK_THAT(curl, Catch::Contains("-H 'Authorization: <secret>'"));
  CHECK_THAT(curl, !Catch::Contains("tok"));
}
