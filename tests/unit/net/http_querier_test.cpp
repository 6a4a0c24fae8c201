// datasource::HttpQuerier against net::HttpServer as a fake datasource: the request on the wire
// (method, path, sorted args, headers) and vmalert's error texts.
#include "datasource/http_querier.hpp"

#include <catch2/catch.hpp>

#include "net/asio.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// 2026-12-02T10:46:15Z
const core::TimePoint kTs = core::from_unix_ms(1796208375000);
const std::string kTime = "2026-12-02T10%3A46%3A15Z";

struct FakeDatasource {
  FakeDatasource() : server(ioc, [this](const net::ServerRequest& r) {
    seen.push_back(r);
    return reply;
  }) {
    REQUIRE(server.listen("127.0.0.1:0").has_value());
    base = "http://127.0.0.1:" + std::to_string(server.port());
  }

  std::optional<core::Error> query(datasource::Querier& q, std::string_view expr,
                                   core::QueryResult& out) {
    std::optional<std::optional<core::Error>> got;
    q.query(expr, kTs, out, [&](std::optional<core::Error> e) { got = std::move(e); });
    const auto end = std::chrono::steady_clock::now() + 5s;
    while (!got && std::chrono::steady_clock::now() < end) {
      if (ioc.stopped()) ioc.restart();
      ioc.run_one_for(10ms);
    }
    REQUIRE(got.has_value());
    return *got;
  }

  [[nodiscard]] std::string header(std::string_view name) const {
    for (const auto& [k, v] : seen.back().headers) {
      if (k == name) return v;
    }
    return "<none>";
  }

  asio::io_context ioc;
  net::ServerResponse reply{
      200, "application/json",
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"a"},"value":[1796208375,"1"]}]}})",
      {}};
  std::vector<net::ServerRequest> seen;
  net::HttpServer server;
  std::string base;
};

std::unique_ptr<datasource::HttpQuerierFactory> make_factory(net::HttpClient& client,
                                                             datasource::HttpQuerierOptions o) {
  auto f = datasource::HttpQuerierFactory::create(client, std::move(o));
  REQUIRE(f.has_value());
  return std::move(*f);
}

}  // namespace

TEST_CASE("querier sends vmalert's POST with sorted args and parses the vector",
          "[datasource][querier]") {
  FakeDatasource ds;
  net::HttpClient client(ds.ioc, {});
  datasource::HttpQuerierOptions o;
  o.url = ds.base + "/";
  auto factory = make_factory(client, o);
  auto q = factory->build({});
  core::QueryResult out;
  REQUIRE_FALSE(ds.query(*q, "up", out).has_value());
  REQUIRE(ds.seen.size() == 1);
  CHECK(ds.seen[0].method == "POST");
  CHECK(ds.seen[0].target == "/api/v1/query?query=up&step=300s&time=" + kTime);
  CHECK(ds.seen[0].body.empty());
  CHECK(ds.header("Content-Type") == "application/json");
  CHECK(ds.header("Authorization") == "<none>");
  REQUIRE(out.size() == 1);
  CHECK(out.type == core::ResultType::vector);
  CHECK(out.labels(0).get("job") == "a");
  CHECK(out.value(0) == 1.0);

  SECTION("a scalar becomes one series without labels") {
    ds.reply.body = R"({"status":"success","data":{"resultType":"scalar","result":[1796208375,"2"]}})";
    REQUIRE_FALSE(ds.query(*q, "1+1", out).has_value());
    CHECK(out.type == core::ResultType::scalar);
    REQUIRE(out.size() == 1);
    CHECK(out.labels(0).size() == 0);
    CHECK(out.value(0) == 2.0);
  }
}

TEST_CASE("querier URL: prefix, url args, group params, step and round_digits",
          "[datasource][querier]") {
  FakeDatasource ds;
  net::HttpClient client(ds.ioc, {});
  struct Case {
    std::string name;
    std::function<void(datasource::HttpQuerierOptions&, datasource::QuerierParams&)> set;
    std::string target;
  };
  const std::vector<Case> cases = {
      {"prefix and url args",
       [&](auto& o, auto&) {
         o.url = ds.base + "/select/0?extra_label=env%3Dprod&nocache=1";
         o.append_type_prefix = true;
       },
       "/select/0/prometheus/api/v1/query?extra_label=env%3Dprod&nocache=1&query=up&step=300s&time=" +
           kTime},
      {"group params replace url args, repeats kept",
       [&](auto& o, auto& p) {
         o.url = ds.base + "?extra_label=a&x=1";
         p.query_params = {{"extra_label", {"b", "c"}}};
       },
       "/api/v1/query?extra_label=b&extra_label=c&query=up&step=300s&time=" + kTime + "&x=1"},
      {"queryStep 0 uses the group interval",
       [&](auto& o, auto& p) {
         o.url = ds.base;
         o.query_step = core::Duration::zero();
         p.eval_interval = 30s;
       },
       "/api/v1/query?query=up&step=30s&time=" + kTime},
      {"disablePathAppend (-remoteRead.disablePathAppend): the URL's path as it is",
       [&](auto& o, auto&) {
         o.url = ds.base + "/select/0/prometheus/api/v1/query?nocache=1";
         o.append_type_prefix = true;
         o.disable_path_append = true;
       },
       "/select/0/prometheus/api/v1/query?nocache=1&query=up&step=300s&time=" + kTime},
      {"disableStepParam and roundDigits",
       [&](auto& o, auto& p) {
         o.url = ds.base;
         o.disable_step_param = true;
         o.round_digits = 3;
         p.eval_interval = 30s;
       },
       "/api/v1/query?query=up&round_digits=3&time=" + kTime},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    datasource::HttpQuerierOptions o;
    datasource::QuerierParams p;
    c.set(o, p);
    auto factory = make_factory(client, o);
    auto q = factory->build(p);
    core::QueryResult out;
    REQUIRE_FALSE(ds.query(*q, "up", out).has_value());
    CHECK(ds.seen.back().target == c.target);
  }
}

TEST_CASE("querier headers: auth, -datasource.headers, group headers override",
          "[datasource][querier]") {
  FakeDatasource ds;
  net::HttpClient client(ds.ioc, {});
  datasource::HttpQuerierOptions o;
  o.url = ds.base;
  o.basic_auth_username = "user";
  o.basic_auth_password = "pass";
  o.headers = "X-Scope-OrgID: team1 ^^ X-Other:v";
  auto factory = make_factory(client, o);
  datasource::QuerierParams p;
  p.headers = {{"x-scope-orgid", "team2"}};
  auto q = factory->build(p);
  core::QueryResult out;
  REQUIRE_FALSE(ds.query(*q, "up", out).has_value());
  CHECK(ds.header("Authorization") == "Basic dXNlcjpwYXNz");
  CHECK(ds.header("X-Other") == "v");
  CHECK(ds.header("X-Scope-OrgID") == "team2");

  datasource::HttpQuerierOptions bearer;
  bearer.url = ds.base;
  bearer.bearer_token = "tok";
  auto bf = make_factory(client, bearer);
  auto bq = bf->build({});
  REQUIRE_FALSE(ds.query(*bq, "up", out).has_value());
  CHECK(ds.header("Authorization") == "Bearer tok");

  bearer.basic_auth_username = "user";
  auto both = datasource::HttpQuerierFactory::create(client, bearer);
  REQUIRE_FALSE(both.has_value());
  CHECK_THAT(both.error().message, Catch::Contains("at most one"));
}

TEST_CASE("querier errors read like vmalert's and carry no secrets", "[datasource][querier]") {
  FakeDatasource ds;
  net::HttpClient client(ds.ioc, {});
  datasource::HttpQuerierOptions o;
  o.url = "http://user:hunter2@127.0.0.1:" + std::to_string(ds.server.port());
  o.max_response_size = 4096;
  auto factory = make_factory(client, o);
  auto q = factory->build({});
  core::QueryResult out;
  const std::string url = ds.base + "/api/v1/query?query=up&step=300s&time=" + kTime;
  struct Case {
    unsigned status;
    std::string body;
    std::string error;  // prefix
    core::ErrorKind kind;
  };
  using K = core::ErrorKind;
  const std::vector<Case> cases = {
      {500, "fake datasource: forced internal error",
       "unexpected response code 500 for " + url +
           ". Response body fake datasource: forced internal error",
       K::http_status},
      {422, R"({"status":"error"})", "unexpected response code 422 for " + url + ". Response body {",
       K::http_status},
      {200, R"({"status":"success","data":{"resultType":"vector","result":[)",
       "error parsing prometheus metrics for " + url + ": ", K::bad_response},
      {200, R"({"status":"error","errorType":"execution","error":"query timed out"})",
       "response error, query: " + url + ", errorType: execution, error: query timed out",
       K::bad_response},
      // The texts come from the parser's fields, not from its message: quotes and the words
      // the old message parsing looked for survive.
      {200, R"({"status":"error","errorType":"odd\", error \"type","error":"msg"})",
       "response error, query: " + url + ", errorType: odd\", error \"type, error: msg",
       K::bad_response},
      {200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
       "error parsing prometheus metrics for " + url + ": unknown result type \"matrix\"",
       K::bad_response},
      {200, std::string(5000, ' '), "Post \"" + url + "\": response exceeds max size 4096 bytes",
       K::too_large},
  };
  for (const auto& c : cases) {
    INFO(c.body.substr(0, 80));
    ds.reply = net::ServerResponse{c.status, "application/json", c.body, {}};
    auto err = ds.query(*q, "up", out);
    REQUIRE(err.has_value());
    CHECK_THAT(err->message, Catch::StartsWith(c.error));
    CHECK_THAT(err->message, !Catch::Contains("hunter2"));
    CHECK(err->kind == c.kind);
    CHECK(err->http_status == (c.kind == K::http_status ? c.status : 0));
  }
}

TEST_CASE("querier keeps a few KiB of a huge error body", "[datasource][querier]") {
  FakeDatasource ds;
  net::HttpClient client(ds.ioc, {});
  datasource::HttpQuerierOptions o;
  o.url = ds.base;
  o.max_response_size = 64u << 20;
  auto q = make_factory(client, o)->build({});
  core::QueryResult out;
  // A 5 MiB HTML error page: the message keeps core::kMaxErrorBody bytes of it and says how
  // much was left out.
  ds.reply = net::ServerResponse{500, "text/html", std::string(5u << 20, 'x'), {}};
  auto err = ds.query(*q, "up", out);
  REQUIRE(err.has_value());
  CHECK(err->kind == core::ErrorKind::http_status);
  CHECK(err->http_status == 500);
  CHECK(err->message.size() < core::kMaxErrorBody + 512);
  CHECK_THAT(err->message, Catch::EndsWith("...(" + std::to_string((5u << 20) - core::kMaxErrorBody) +
                                           " more bytes)"));
  // The same for a datasource's own error text.
  ds.reply = net::ServerResponse{
      200, "application/json",
      R"({"status":"error","errorType":"execution","error":")" + std::string(1u << 20, 'e') + "\"}",
      {}};
  err = ds.query(*q, "up", out);
  REQUIRE(err.has_value());
  CHECK(err->kind == core::ErrorKind::bad_response);
  CHECK(err->message.size() < core::kMaxErrorBody + 512);
}

TEST_CASE("querier hides secret-looking url args unless showURL", "[datasource][querier]") {
  FakeDatasource ds;
  ds.reply.status = 503;
  net::HttpClient client(ds.ioc, {});
  datasource::HttpQuerierOptions o;
  o.url = ds.base + "?authKey=s3cr3t";
  auto hidden = make_factory(client, o)->build({});
  core::QueryResult out;
  auto e1 = ds.query(*hidden, "up", out);
  REQUIRE(e1.has_value());
  CHECK(ds.seen.back().target.find("authKey=s3cr3t") != std::string::npos);
  CHECK_THAT(e1->message, Catch::Contains("authKey=secret&query=up"));
  CHECK_THAT(e1->message, !Catch::Contains("s3cr3t"));
  // Transport errors name the same display URL.
  ds.server.stop();
  auto e3 = ds.query(*hidden, "up", out);
  REQUIRE(e3.has_value());
  CHECK(e3->kind == core::ErrorKind::connection);
  CHECK_THAT(e3->message, Catch::Contains("authKey=secret&query=up"));
  CHECK_THAT(e3->message, !Catch::Contains("s3cr3t"));
  o.show_url = true;
  auto shown = make_factory(client, o)->build({});
  auto e2 = ds.query(*shown, "up", out);
  REQUIRE(e2.has_value());
  CHECK_THAT(e2->message, Catch::Contains("authKey=s3cr3t"));
}

TEST_CASE("parse_header_list splits on ^^ and trims", "[datasource][querier]") {
  auto h = datasource::parse_header_list("A: 1^^ B :two words ^^C:");
  REQUIRE(h.has_value());
  REQUIRE(h->size() == 3);
  CHECK((*h)[0] == std::pair<std::string, std::string>{"A", "1"});
  CHECK((*h)[1] == std::pair<std::string, std::string>{"B", "two words"});
  CHECK((*h)[2] == std::pair<std::string, std::string>{"C", ""});
  CHECK(datasource::parse_header_list("")->empty());
  auto bad = datasource::parse_header_list("A: 1^^Authorization Bearer xyz");
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message, Catch::Contains("header #2"));
  CHECK_THAT(bad.error().message, !Catch::Contains("xyz"));
}
