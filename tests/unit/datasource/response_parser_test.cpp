#include "datasource/response_parser.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/shared_data.hpp"

namespace {

using datasource::InstantParser;
using datasource::parse_response;

// A canonical dump of a result, to compare parses.
std::string dump(const core::QueryResult& r) {
  std::ostringstream s;
  s << "type=" << static_cast<int>(r.type) << " partial=" << r.is_partial
    << " fetched=" << (r.series_fetched ? std::to_string(*r.series_fetched) : "-")
    << " string=" << r.string_value() << "\n";
  for (size_t i = 0; i < r.size(); ++i) {
    for (auto l : r.labels(i)) s << l.name << "=" << l.value << ",";
    s << " |";
    for (auto smp : r.samples(i)) s << " " << smp.timestamp_ms << ":" << smp.value;
    s << "\n";
  }
  return s.str();
}

struct Outcome {
  bool ok = false;
  std::string text;  // dump or error message
};

Outcome run_chunks(std::string_view body, const std::vector<size_t>& cuts) {
  InstantParser p;
  core::QueryResult r;
  p.reset(r);
  size_t pos = 0;
  for (size_t c : cuts) {
    if (auto res = p.feed(body.substr(pos, c - pos)); !res) return {false, res.error().message};
    pos = c;
  }
  if (auto res = p.feed(body.substr(pos)); !res) return {false, res.error().message};
  if (auto res = p.finish(); !res) return {false, res.error().message};
  return {true, dump(r)};
}

Outcome run_whole(std::string_view body) {
  core::QueryResult r;
  if (auto res = parse_response(body, r); !res) return {false, res.error().message};
  return {true, dump(r)};
}

// Parses whole, then split at every byte boundary and at every pair of boundaries (bodies up to
// 300 bytes) and byte by byte; all must agree.
Outcome parse_all_ways(std::string_view body) {
  const Outcome whole = run_whole(body);
  for (size_t i = 0; i <= body.size(); ++i) {
    const Outcome o = run_chunks(body, {i});
    INFO("split at " << i << " of: " << body);
    REQUIRE(o.ok == whole.ok);
    REQUIRE(o.text == whole.text);
  }
  if (body.size() <= 300) {
    for (size_t i = 0; i <= body.size(); i += 3) {
      for (size_t j = i; j <= body.size(); ++j) {
        const Outcome o = run_chunks(body, {i, j});
        INFO("split at " << i << "," << j << " of: " << body);
        REQUIRE(o.text == whole.text);
      }
    }
  }
  std::vector<size_t> every;
  for (size_t i = 1; i < body.size(); ++i) every.push_back(i);
  const Outcome bytewise = run_chunks(body, every);
  REQUIRE(bytewise.text == whole.text);
  return whole;
}

core::QueryResult parse_ok(std::string_view body) {
  (void)parse_all_ways(body);
  core::QueryResult r;
  auto res = parse_response(body, r);
  INFO(body);
  REQUIRE(res.has_value());
  return r;
}

std::string parse_err(std::string_view body) {
  const Outcome o = parse_all_ways(body);
  INFO(body);
  REQUIRE_FALSE(o.ok);
  return o.text;
}

std::string read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string envelope(std::string_view result, std::string_view type = "vector") {
  return std::string(R"({"status":"success","data":{"resultType":")") + std::string(type) +
         R"(","result":)" + std::string(result) + "}}";
}

}  // namespace

TEST_CASE("vector response with labels, value and timestamp", "[datasource][parser]") {
  const auto r = parse_ok(
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"__name__":"up","job":"node","instance":"a:9100"},"value":[1715686833.987,"1"]},)"
      R"({"metric":{"__name__":"up","job":"node","instance":"b:9100"},"value":[1715686834,"0.5"]}]}})");
  REQUIRE(r.size() == 2);
  CHECK(r.type == core::ResultType::vector);
  CHECK(r.labels(0).size() == 3);
  CHECK(r.labels(0).get("instance") == std::optional<std::string_view>("a:9100"));
  CHECK(r.labels(1).get("instance") == std::optional<std::string_view>("b:9100"));
  CHECK(r.labels(1).get("job") == std::optional<std::string_view>("node"));
  CHECK(r.timestamp_ms(0) == 1715686833987);
  CHECK(r.timestamp_ms(1) == 1715686834000);
  CHECK(r.value(0) == 1.0);
  CHECK(r.value(1) == 0.5);
  CHECK_FALSE(r.is_partial);
  CHECK_FALSE(r.series_fetched.has_value());
  // Labels keep the datasource's order.
  std::vector<std::string_view> names;
  for (auto l : r.labels(0)) names.push_back(l.name);
  CHECK(names == std::vector<std::string_view>{"__name__", "job", "instance"});
}

TEST_CASE("fractional timestamps keep milliseconds", "[datasource][parser]") {
  struct Case {
    const char* ts;
    int64_t ms;
  };
  const Case cases[] = {
      {"1715686833.987", 1715686833987}, {"1715686833.9", 1715686833900},
      {"1715686833.98", 1715686833980},  {"1715686833.9876", 1715686833988},
      {"1715686833.9874", 1715686833987}, {"0", 0},
      {"0.001", 1},                      {"1.7156868339870e9", 1715686833987},
      {"-1.5", -1500},                   {"1715686833", 1715686833000},
  };
  for (const auto& c : cases) {
    const auto r = parse_ok(envelope(std::string(R"([{"metric":{},"value":[)") + c.ts + R"(,"1"]}])"));
    INFO(c.ts);
    REQUIRE(r.size() == 1);
    CHECK(r.timestamp_ms(0) == c.ms);
  }
}

TEST_CASE("special and unusual sample values", "[datasource][parser]") {
  struct Case {
    const char* v;
    double expect;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {{"+Inf", inf}, {"Inf", inf},   {"-Inf", -inf}, {"1e3", 1000},
                        {"-0.25", -0.25}, {"+2", 2},   {"1.5E-3", 0.0015}};
  for (const auto& c : cases) {
    const auto r = parse_ok(envelope(std::string(R"([{"metric":{"a":"b"},"value":[1,")") + c.v + R"("]}])"));
    INFO(c.v);
    REQUIRE(r.size() == 1);
    CHECK(r.value(0) == c.expect);
  }
  const auto nan = parse_ok(envelope(R"([{"metric":{},"value":[1,"NaN"]}])"));
  CHECK(std::isnan(nan.value(0)));
}

TEST_CASE("envelope keys in any order, with unknown keys", "[datasource][parser]") {
  const char* bodies[] = {
      R"({"data":{"result":[{"value":[1,"2"],"metric":{"x":"y"}}],"resultType":"vector"},"status":"success"})",
      R"({"isPartial":true,"stats":{"seriesFetched":"7","executionTimeMsec":3},"status":"success","data":{"resultType":"vector","result":[{"metric":{"x":"y"},"value":[1,"2"]}]}})",
      R"({"status":"success","warnings":["a \"w\""],"data":{"extra":{"deep":[1,2,{"k":null}]},"result":[{"metric":{"x":"y"},"value":[1,"2"],"histogram":null}],"resultType":"vector"},"stats":{"seriesFetched":7},"isPartial":true})",
      " \n{ \"status\" : \"success\" ,\t\"data\" : { \"resultType\" : \"vector\" , \"result\" : [ { \"metric\" : { \"x\" : \"y\" } , \"value\" : [ 1 , \"2\" ] } ] } } \r\n",
  };
  for (const char* b : bodies) {
    const auto r = parse_ok(b);
    INFO(b);
    REQUIRE(r.size() == 1);
    CHECK(r.labels(0).get("x") == std::optional<std::string_view>("y"));
    CHECK(r.value(0) == 2);
    CHECK(r.timestamp_ms(0) == 1000);
  }
  const auto r = parse_ok(bodies[1]);
  CHECK(r.is_partial);
  CHECK(r.series_fetched == std::optional<uint64_t>(7));
  const auto r2 = parse_ok(bodies[2]);
  CHECK(r2.is_partial);
  CHECK(r2.series_fetched == std::optional<uint64_t>(7));
}

TEST_CASE("scalar, string and matrix results", "[datasource][parser]") {
  SECTION("scalar becomes one series without labels") {
    const auto r = parse_ok(R"({"status":"success","data":{"resultType":"scalar","result":[1715686833.5,"42"]}})");
    CHECK(r.type == core::ResultType::scalar);
    REQUIRE(r.size() == 1);
    CHECK(r.labels(0).size() == 0);
    CHECK(r.value(0) == 42);
    CHECK(r.timestamp_ms(0) == 1715686833500);
  }
  SECTION("scalar with resultType after result") {
    const auto r = parse_ok(R"({"status":"success","data":{"result":[1,"-Inf"],"resultType":"scalar"}})");
    REQUIRE(r.size() == 1);
    CHECK(r.value(0) == -std::numeric_limits<double>::infinity());
  }
  SECTION("string") {
    const auto r = parse_ok(R"({"status":"success","data":{"resultType":"string","result":[1,"hello \"w\u00e9\""]}})");
    CHECK(r.type == core::ResultType::string);
    CHECK(r.size() == 0);
    CHECK(r.string_value() == "hello \"w\xc3\xa9\"");
  }
  SECTION("matrix") {
    const auto r = parse_ok(
        R"({"status":"success","data":{"resultType":"matrix","result":[)"
        R"({"metric":{"a":"1"},"values":[[1,"1"],[2,"2"],[3.5,"NaN"]]},{"metric":{"a":"2"},"values":[]}]}})");
    CHECK(r.type == core::ResultType::matrix);
    REQUIRE(r.size() == 2);
    REQUIRE(r.samples(0).size() == 3);
    CHECK(r.samples(0)[1].timestamp_ms == 2000);
    CHECK(r.samples(0)[1].value == 2);
    CHECK(r.samples(0)[2].timestamp_ms == 3500);
    CHECK(std::isnan(r.samples(0)[2].value));
    CHECK(r.samples(1).empty());
  }
  SECTION("matrix with resultType after result") {
    const auto r = parse_ok(R"({"status":"success","data":{"result":[{"values":[[1,"1"]],"metric":{}}],"resultType":"matrix"}})");
    CHECK(r.type == core::ResultType::matrix);
    REQUIRE(r.size() == 1);
  }
  SECTION("empty vector") {
    const auto r = parse_ok(envelope("[]"));
    CHECK(r.empty());
  }
}

TEST_CASE("escaped and non-ASCII label values", "[datasource][parser]") {
  const auto r = parse_ok(envelope(
      R"([{"metric":{"q\"n":"a\"b\\c\/d\b\f\n\r\t","u":"caf\u00e9 \u20ac \ud83d\ude00","raw":"héllo €"},"value":[1,"1"]}])"));
  REQUIRE(r.size() == 1);
  CHECK(r.labels(0).get("q\"n") == std::optional<std::string_view>("a\"b\\c/d\b\f\n\r\t"));
  CHECK(r.labels(0).get("u") == std::optional<std::string_view>("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK(r.labels(0).get("raw") == std::optional<std::string_view>("héllo €"));
}

TEST_CASE("quotes, backslashes and brackets in strings at every offset of the 64-byte scan",
          "[datasource][parser]") {
  // A result element is delimited 64 bytes at a time (string bytes from the quotes' prefix
  // XOR, byte by byte where a backslash is): label names and values made of the pieces that
  // matter to it, shifted by a padding label so they fall at every offset and across blocks.
  struct Piece {
    const char* json;
    const char* text;
  };
  static const Piece kPieces[] = {
      {"a", "a"},      {R"(\")", "\""},
      {R"(\\)", "\\"}, {R"(\\\")", "\\\""},
      {"{", "{"},      {"}", "}"},
      {"[", "["},      {"]", "]"},
      {R"(\n)", "\n"}, {R"(\u00e9)", "\xc3\xa9"},
      {" ", " "},      {R"(x\\)", "x\\"},
      {R"(\/)", "/"},
  };
  std::mt19937 rng(20261207);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto text = [&](int max_pieces, std::string& json, std::string& plain) {
    for (int k = pick(max_pieces + 1); k > 0; --k) {
      const Piece& piece = kPieces[pick(static_cast<int>(std::size(kPieces)))];
      json += piece.json;
      plain += piece.text;
    }
  };
  for (int round = 0; round < 60; ++round) {
    std::string body = "[";
    std::vector<std::vector<std::pair<std::string, std::string>>> expect;
    const int series = 1 + pick(3);
    for (int i = 0; i < series; ++i) {
      std::vector<std::pair<std::string, std::string>> labels;
      if (i > 0) body += ',';
      const std::string pad(static_cast<size_t>(pick(64)), 'p');
      body += "{\"metric\":{\"pad\":\"" + pad + "\"";
      labels.emplace_back("pad", pad);
      labels.emplace_back("i", std::to_string(i));
      body += ",\"i\":\"" + std::to_string(i) + "\"";
      for (int l = pick(6); l > 0; --l) {
        std::string name_json = "n" + std::to_string(l);
        std::string name = name_json;
        text(4, name_json, name);
        std::string value_json, value;
        text(12, value_json, value);
        body += ",\"" + name_json + "\":\"" + value_json + "\"";
        labels.emplace_back(name, value);
      }
      body += "},\"value\":[1,\"2\"]}";
      std::sort(labels.begin(), labels.end());
      expect.push_back(std::move(labels));
    }
    body += "]";
    const auto r = parse_ok(envelope(body));
    REQUIRE(r.size() == expect.size());
    for (size_t i = 0; i < r.size(); ++i) {
      std::vector<std::pair<std::string, std::string>> got;
      for (auto l : r.labels(i)) got.emplace_back(std::string(l.name), std::string(l.value));
      std::sort(got.begin(), got.end());
      INFO(body);
      CHECK(got == expect[i]);
    }
  }
}

TEST_CASE("strings are scanned 16 bytes at a time: escapes and control bytes at every offset",
          "[datasource][parser]") {
  // Element strings are scanned from their first byte in 16-byte loads (ElementStream): a
  // value of every length up to 40 with an escape, or a raw control byte, at every position,
  // starting at every offset from a 16-byte boundary (the pad label's length shifts it).
  // RapidJSON 1.1's own scan let raw 0x1A-0x1F through past its first 16-byte boundary.
  for (size_t len = 0; len <= 40; ++len) {
    for (size_t at = 0; at <= len; ++at) {
      const std::string pad(len % 16, 'p');
      const std::string head = "[{\"metric\":{\"pad\":\"" + pad + "\",\"v\":\"";
      const std::string before(at, 'a');
      const std::string after(len - at, 'b');
      const std::string tail = "\"},\"value\":[1,\"1\"]}]";
      const std::string escaped = envelope(head + before + R"(\"x\\)" + after + tail);
      INFO(escaped);
      // Whole, and split inside the value (parsed from the buffered element).
      for (const Outcome& o : {run_whole(escaped), run_chunks(escaped, {head.size() + 30})}) {
        REQUIRE(o.ok);
        CHECK_THAT(o.text,
                   Catch::Contains("pad=" + pad + ",v=" + before + "\"x\\" + after + ", |"));
      }
      for (const char c : {'\x01', '\x09', '\x19', '\x1a', '\x1f'}) {
        const std::string body = envelope(head + before + c + after + tail);
        const Outcome o = run_whole(body);
        CHECK_FALSE(o.ok);
        CHECK_THAT(o.text, Catch::Contains("byte " + std::to_string(body.find(c)) +
                                           ": unescaped control character"));
      }
      // 0x20 and bytes >= 0x80 are not control bytes.
      const std::string value = before + " \xc3\xa9" + after;
      const Outcome plain = run_whole(envelope(head + value + tail));
      REQUIRE(plain.ok);
      CHECK_THAT(plain.text, Catch::Contains(",v=" + value + ", |"));
    }
  }
}

TEST_CASE("status error returns errorType and error", "[datasource][parser]") {
  const auto e1 = parse_err(R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:1: parse error"})");
  CHECK_THAT(e1, Catch::Contains("bad_data") && Catch::Contains("invalid parameter \"query\": 1:1: parse error"));
  InstantParser p;
  core::QueryResult r;
  p.reset(r);
  REQUIRE(p.feed(R"({"status":"error","errorType":"execution","error":"query timed out in expression evaluation"})"));
  CHECK(p.status_error() == nullptr);
  REQUIRE_FALSE(p.finish());
  REQUIRE(p.status_error() != nullptr);
  CHECK(p.status_error()->error_type == "execution");
  CHECK(p.status_error()->error == "query timed out in expression evaluation");
  p.reset(r);
  CHECK(p.status_error() == nullptr);
  const auto e2 = parse_err(R"({"error":"timeout","errorType":"timeout","data":{"resultType":"vector","result":[]},"status":"error"})");
  CHECK_THAT(e2, Catch::Contains("timeout"));
}

TEST_CASE("malformed responses name the byte offset and what was expected", "[datasource][parser]") {
  struct Case {
    std::string body;
    std::string expect;  // substrings of the error
  };
  const std::string ok_elem = R"({"metric":{"a":"b"},"value":[1,"1"]})";
  const std::vector<Case> cases = {
      {"", "byte 0: unexpected end"},
      {"[]", "byte 0: expected '{'"},
      {R"({"status":"success"})", "missing \"data\""},
      {R"({"data":{"resultType":"vector","result":[]}})", "missing \"status\""},
      {R"({"status":"ok","data":{"resultType":"vector","result":[]}})", "unknown status"},
      {R"({"status":"success","data":{"result":[]}})", "missing \"data.resultType\""},
      {R"({"status":"success","data":{"resultType":"vector"}})", "missing \"data.result\""},
      {R"({"status":"success","data":{"resultType":"histogram","result":[]}})", "unknown resultType"},
      {envelope("[" + ok_elem).substr(0, 60), "truncated"},
      {envelope("[" + ok_elem + "]").substr(0, 80), "truncated"},
      {envelope("[" + ok_elem + "]") + "x", "unexpected data after the response object"},
      {envelope(R"([{"metric":{"a":"b"},"value":[1,"1",3]}])"), "byte 94: expected ']'"},
      {envelope(R"([{"metric":{"a":"b"},"value":[1]}])"), "expected ','"},
      {envelope(R"([{"metric":{"a":"b"},"value":[]}])"), "expected a numeric timestamp"},
      {envelope(R"([{"metric":{"a":"b"},"value":[1,"abc"]}])"), "expected a numeric sample value, got \"abc\""},
      {envelope(R"([{"metric":{"a":"b"},"value":[1,""]}])"), "numeric sample value"},
      {envelope(R"([{"metric":{"a":"b"},"value":[1,1]}])"), "expected a string sample value"},
      {envelope(R"([{"metric":{"a":"b"},"value":["1","1"]}])"), "numeric timestamp"},
      {envelope(R"([{"metric":{"a":1},"value":[1,"1"]}])"), "expected a string label value"},
      {envelope(R"([{"metric":["a"],"value":[1,"1"]}])"), "expected an object for \"metric\""},
      {envelope(R"([{"metric":{"a":"b","a":"c"},"value":[1,"1"]}])"), "duplicate label name \"a\""},
      {envelope("[" + ok_elem + "," + ok_elem + "]"), "duplicate series {a=\"b\"}"},
      {envelope(R"([{"metric":{"a":"b","c":"d"},"value":[1,"1"]},{"metric":{"c":"d","a":"b"},"value":[2,"2"]}])"),
       "duplicate series"},
      {envelope(R"([{"value":[1,"1"]}])"), "no \"metric\""},
      {envelope(R"([{"metric":{}}])"), "neither \"value\" nor \"values\""},
      {envelope(R"([{"metric":{},"value":[1,"1"],"values":[]}])"), "both"},
      {envelope(R"([{"metric":{},"values":[[1,"1"]]}])"), "\"values\" but resultType is vector"},
      {envelope(R"([{"metric":{},"value":[1,"1"]}])", "matrix"), "\"value\" but resultType is matrix"},
      {envelope(R"([1,"1"])"), "[timestamp, value] but resultType is vector"},
      {envelope(R"([1,"x"])", "scalar"), "numeric scalar value"},
      {envelope(R"([])", "scalar"), "must be [timestamp, value]"},
      {envelope(R"([{"metric":{"a":"\ud800"},"value":[1,"1"]}])"), "unpaired UTF-16 surrogate"},
      {envelope(R"([{"metric":{"a":"\x"},"value":[1,"1"]}])"), "invalid escape"},
      {envelope("[{\"metric\":{\"a\":\"\x01\"},\"value\":[1,\"1\"]}]"), "control character"},
      {envelope(R"([{"metric":{},"value":[01,"1"]}])"), "expected ','"},
      {envelope(R"([{"metric":{},"value":[1.,"1"]}])"), "digit after '.'"},
      {envelope(R"([{"metric":{},"value":[1e999,"1"]}])"), "timestamp out of range"},
      {R"({"status":"success","isPartial":"yes","data":{"resultType":"vector","result":[]}})", "true or false"},
      {R"({"status":"success","stats":{"seriesFetched":"x"},"data":{"resultType":"vector","result":[]}})", "seriesFetched"},
      {R"({"status":"success","stats":{"seriesFetched":-1},"data":{"resultType":"vector","result":[]}})", "seriesFetched"},
      {R"({"status":"success","status":"success","data":{"resultType":"vector","result":[]}})", "duplicate key \"status\""},
      {R"({"status":"success","data":{"resultType":"vector","result":{}}})", "expected an array for \"result\""},
      {R"({"status":"success","extra":[1,2,,],"data":{"resultType":"vector","result":[]}})", "expected a JSON value"},
      {R"({"status":"success","extra":tru,"data":{"resultType":"vector","result":[]}})", "expected a JSON value"},
      {R"({"status":1})", "expected a string for \"status\""},
      {R"({"status":"success" "data":{}})", "expected ',' or '}'"},
      {R"({"status":"success","data":{"resultType":"vector","result":[]})", "truncated"},
  };
  for (const auto& c : cases) {
    const auto err = parse_err(c.body);
    INFO(c.body);
    CHECK_THAT(err, Catch::Contains(c.expect));
    CHECK_THAT(err, Catch::Contains("byte") || Catch::Contains("datasource returned"));
  }
}

TEST_CASE("deeply nested unknown values are rejected, not recursed into without bound",
          "[datasource][parser]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string body = R"({"status":"success","x":)" + deep + "}";
  const auto whole = run_whole(body);
  CHECK_FALSE(whole.ok);
  CHECK_THAT(whole.text, Catch::Contains("nested too deeply"));
  const auto chunked = run_chunks(body, {10, 5000, 70000});
  CHECK(chunked.text == whole.text);
}

TEST_CASE("a reused parser and result keep interned names and reset state", "[datasource][parser]") {
  InstantParser p;
  core::QueryResult r;
  for (int round = 0; round < 3; ++round) {
    p.reset(r);
    REQUIRE(p.feed(envelope(R"([{"metric":{"job":"a"},"value":[1,"1"]},{"metric":{"job":"b"},"value":[1,"2"]}])")));
    REQUIRE(p.finish());
    REQUIRE(r.size() == 2);
    CHECK(r.labels(1).get("job") == std::optional<std::string_view>("b"));
  }
  // An error is sticky until reset.
  p.reset(r);
  CHECK_FALSE(p.feed("[1]"));
  CHECK_FALSE(p.feed("{}"));
  CHECK_FALSE(p.finish());
  p.reset(r);
  REQUIRE(p.feed(envelope("[]")));
  REQUIRE(p.finish());
  CHECK(r.empty());
}

TEST_CASE("vmalert's instant_response.json parses whole and chunked to 219 series",
          "[datasource][parser][shared]") {
  ALERTD_NEEDS_SHARED(ALERTD_INSTANT_RESPONSE_JSON);
  const std::string array = read_file(ALERTD_INSTANT_RESPONSE_JSON);
  REQUIRE(array.size() > 80000);
  const std::string body = envelope(array);
  core::QueryResult whole;
  REQUIRE(parse_response(body, whole));
  REQUIRE(whole.size() == 219);
  CHECK(whole.timestamp_ms(0) == 1715686833987);
  CHECK(whole.labels(0).get("__name__") == std::optional<std::string_view>("vm_http_requests_total"));
  CHECK(whole.labels(0).get("path") == std::optional<std::string_view>("*/favicon.ico"));
  CHECK(whole.value(1) == 78372);
  const std::string expect = dump(whole);
  for (size_t chunk : {1u, 7u, 64u, 1000u, 4096u, 65536u}) {
    std::vector<size_t> cuts;
    for (size_t i = chunk; i < body.size(); i += chunk) cuts.push_back(i);
    const auto o = run_chunks(body, cuts);
    INFO("chunk " << chunk);
    REQUIRE(o.ok);
    CHECK(o.text == expect);
  }
  // The bare array (vmalert's test file itself) is not a response.
  core::QueryResult bare;
  CHECK_FALSE(parse_response(array, bare));
}

TEST_CASE("a large matrix element grows the element arenas and parses the same again",
          "[datasource][parser]") {
  std::string values;
  for (int i = 0; i < 5000; ++i) {
    if (i != 0) values += ',';
    values += "[" + std::to_string(1700000000 + i) + ".5,\"" + std::to_string(i) + "\"]";
  }
  const std::string body = envelope(R"([{"metric":{"a":"1"},"values":[)" + values +
                                        R"(]},{"metric":{"a":"2"},"values":[[1,"1"]]}])",
                                    "matrix");
  InstantParser p;
  core::QueryResult r;
  for (int round = 0; round < 2; ++round) {
    p.reset(r);
    REQUIRE(p.feed(body));
    REQUIRE(p.finish());
    REQUIRE(r.size() == 2);
    REQUIRE(r.samples(0).size() == 5000);
    CHECK(r.samples(0)[4999].timestamp_ms == 1700004999500);
    CHECK(r.samples(0)[4999].value == 4999);
    CHECK(r.samples(1).size() == 1);
  }
  const std::string whole = dump(r);
  std::vector<size_t> cuts;
  for (size_t i = 997; i < body.size(); i += 997) cuts.push_back(i);
  const auto chunked = run_chunks(body, cuts);
  REQUIRE(chunked.ok);
  CHECK(chunked.text == whole);
}

TEST_CASE("buffered_bytes counts what a big answer leaves in a reused parser",
          "[datasource][parser]") {
  // The duplicate-series set grows with the series of an answer and is kept for the next
  // one; the querier drops a parser holding more than 1 MiB, so this must count it.
  datasource::InstantParser parser;
  core::QueryResult r;
  parser.reset(r);
  REQUIRE(parser.feed(envelope(R"([{"metric":{"a":"1"},"value":[1,"1"]}])")));
  REQUIRE(parser.finish());
  const size_t small = parser.buffered_bytes();
  CHECK(small < (size_t{1} << 20));

  std::string many = "[";
  for (int i = 0; i < 200'000; ++i) {
    if (i != 0) many += ',';
    many += R"({"metric":{"instance":"h)" + std::to_string(i) + R"("},"value":[1,"1"]})";
  }
  many += ']';
  parser.reset(r);
  REQUIRE(parser.feed(envelope(many)));
  REQUIRE(parser.finish());
  REQUIRE(r.size() == 200'000);
  // At least the set: 2 slots of 8 bytes per series.
  CHECK(parser.buffered_bytes() >= small + 200'000 * 16);
}
