// RemoteWriter against a FakeTransport and a ManualLoop: the wire format (decoded back with
// protobuf and snappy), batching by size and by flush interval, the bounded queue dropping the
// oldest rows, retry classification and backoff, and the bounded drain.
#include "datasource/remote_write.hpp"

#include <snappy.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/limit_hits.hpp"
#include "remote_write.pb.h"  // generated from datasource/remote_write.proto
#include "tests/fakes/fake_transport.hpp"
#include "tests/fakes/manual_loop.hpp"

namespace {

using namespace std::chrono_literals;

core::Series row(const std::string& name, const std::string& instance, double v, int64_t ts) {
  core::Series s;
  s.labels.set("__name__", name);
  s.labels.set("instance", instance);
  s.value = v;
  s.timestamp_ms = ts;
  return s;
}

std::vector<core::Series> rows(size_t n, int64_t ts = 1000) {
  std::vector<core::Series> out;
  for (size_t i = 0; i < n; ++i) out.push_back(row("m", "i" + std::to_string(i), double(i), ts));
  return out;
}

prometheus::WriteRequest decode(const std::string& body) {
  std::string raw;
  REQUIRE(snappy::Uncompress(body.data(), body.size(), &raw));
  prometheus::WriteRequest wr;
  REQUIRE(wr.ParseFromString(raw));
  return wr;
}

// Instances named in a request, in order.
std::vector<std::string> instances(const net::Request& req) {
  std::vector<std::string> out;
  const auto wr = decode(req.body);
  for (const auto& ts : wr.timeseries()) {
    for (const auto& l : ts.labels())
      if (l.name() == "instance") out.push_back(l.value());
  }
  return out;
}

struct Rig {
  fakes::ManualLoop loop;
  fakes::FakeTransport transport;
  std::vector<std::string> logs;
  std::unique_ptr<datasource::RemoteWriter> writer;

  explicit Rig(datasource::RemoteWriteOptions o = {}) {
    if (o.url.empty()) o.url = "http://user:pw@rw.example:9090/prom/";
    o.log = [this](bool, std::string_view m) { logs.emplace_back(m); };
    auto w = datasource::RemoteWriter::create(transport, loop, std::move(o));
    REQUIRE(w);
    writer = std::move(*w);
  }
  const datasource::RemoteWriteStats& stats() const { return writer->stats(); }
};

}  // namespace

TEST_CASE("remote write encodes a WriteRequest that decodes back", "[remote_write]") {
  std::vector<core::Series> in;
  in.push_back(row("job:up:sum", "a", 42.5, 1'700'000'000'123));
  core::Series stale = row("ALERTS", "b", core::stale_nan(), 1'700'000'000'456);
  stale.labels.set("alertstate", "firing");
  in.push_back(stale);
  std::string body;
  const size_t raw = datasource::encode_write_request(in, body);
  CHECK(raw > body.size() / 2);
  const auto wr = decode(body);
  REQUIRE(wr.timeseries_size() == 2);
  const auto& t0 = wr.timeseries(0);
  REQUIRE(t0.labels_size() == 2);
  CHECK(t0.labels(0).name() == "__name__");
  CHECK(t0.labels(0).value() == "job:up:sum");
  CHECK(t0.labels(1).name() == "instance");
  REQUIRE(t0.samples_size() == 1);
  CHECK(t0.samples(0).value() == 42.5);
  CHECK(t0.samples(0).timestamp() == 1'700'000'000'123);
  const auto& t1 = wr.timeseries(1);
  REQUIRE(t1.labels_size() == 3);  // sorted by name: __name__, alertstate, instance
  CHECK(t1.labels(1).name() == "alertstate");
  // The staleness marker keeps its exact NaN payload on the wire.
  CHECK(core::is_stale_nan(t1.samples(0).value()));
}

TEST_CASE("remote write writes the same bytes as libprotobuf's serializer", "[remote_write]") {
  // Edge cases of the wire format: proto3 defaults left out (empty strings, +0.0, timestamp 0)
  // but -0.0 and NaNs kept, negative timestamps as 10-byte varints, lengths of 1, 2 and 3
  // varint bytes, a series without labels, and a request of several snappy blocks.
  std::vector<core::Series> in;
  auto add = [&](std::vector<std::pair<std::string, std::string>> ls, double v, int64_t ts) {
    core::LabelsBuilder b;
    for (const auto& [n, val] : ls) b.set(n, val);
    in.push_back({b.build(), v, ts});
  };
  add({{"__name__", "up"}, {"job", "node"}}, 1, 1'700'000'000'123);
  add({{"__name__", "zero"}}, 0.0, 0);
  add({{"__name__", "negzero"}}, -0.0, -1);
  add({{"__name__", "nan"}, {"empty", ""}}, std::nan(""), std::numeric_limits<int64_t>::min());
  add({{"", "no name"}}, core::stale_nan(), std::numeric_limits<int64_t>::max());
  add({}, 3.5, 42);
  add({{"long", std::string(200, 'x')}, {"longer", std::string(20'000, 'y')}}, -1e300, 127);
  add({{"a", std::string("\xff\0b", 3)}}, std::numeric_limits<double>::infinity(), 128);
  // Over several snappy blocks (64 KiB), one series alone larger than a block.
  for (int i = 0; i < 4000; ++i) add({{"__name__", "m"}, {"i", std::to_string(i)}}, i, i * 1000);
  add({{"huge", std::string(150'000, 'h')}}, 1, 1);
  for (int i = 0; i < 300; ++i) add({{"__name__", "n"}, {"i", std::to_string(i)}}, i, i);
  // Labels with overrides set over them (ALERTS): written as the merged set.
  static constexpr core::Label kOver[] = {{"__name__", "ALERTS"}, {"alertstate", "firing"}};
  in.push_back({core::Labels{{"alertname", "A"}, {"alertstate", "own"}, {"z", "1"}}, 1, 5, kOver});

  prometheus::WriteRequest want;
  for (const auto& s : in) {
    auto* ts = want.add_timeseries();
    const core::Labels merged = s.merged_labels();
    for (const auto& l : merged) {
      auto* label = ts->add_labels();
      label->set_name(std::string(l.name));
      label->set_value(std::string(l.value));
    }
    auto* sample = ts->add_samples();
    sample->set_value(s.value);
    sample->set_timestamp(s.timestamp_ms);
  }
  std::string want_raw;
  REQUIRE(want.SerializeToString(&want_raw));

  std::string body;
  const size_t raw_size = datasource::encode_write_request(in, body);
  std::string raw;
  REQUIRE(snappy::Uncompress(body.data(), body.size(), &raw));
  CHECK(raw_size == raw.size());
  CHECK(raw.size() == want_raw.size());
  CHECK(raw == want_raw);
  // The body is trimmed to its compressed size (a batch kept for retries holds only that).
  CHECK(body.capacity() < raw.size());

  // And an empty request is empty.
  CHECK(datasource::encode_write_request({}, body) == 0);
  REQUIRE(snappy::Uncompress(body.data(), body.size(), &raw));
  CHECK(raw.empty());
}

TEST_CASE("remote write request: URL, headers and auth", "[remote_write]") {
  Rig rig;
  rig.writer->write(rows(1));
  rig.writer->flush();
  REQUIRE(rig.transport.requests.size() == 1);
  const auto& req = rig.transport.requests[0];
  CHECK(req.method == "POST");
  CHECK(req.url == "http://user:pw@rw.example:9090/prom/api/v1/write");
  CHECK(rig.writer->display_url() == "http://rw.example:9090/prom/api/v1/write");
  auto header = [&](std::string_view name) {
    for (const auto& [k, v] : req.headers)
      if (k == name) return v;
    return std::string("<none>");
  };
  CHECK(header("Content-Encoding") == "snappy");
  CHECK(header("Content-Type") == "application/x-protobuf");
  CHECK(header("X-Prometheus-Remote-Write-Version") == "0.1.0");
  CHECK(req.timeout == 30s);

  datasource::RemoteWriteOptions o;
  o.url = "http://rw:1/write?tenant=1";
  o.disable_path_append = true;
  o.bearer_token = "tok";
  o.headers = "X-Scope-OrgID: team";
  Rig plain(o);
  plain.writer->write(rows(1));
  plain.writer->flush();
  REQUIRE(plain.transport.requests.size() == 1);
  CHECK(plain.transport.requests[0].url == "http://rw:1/write?tenant=1");
  bool bearer = false, org = false;
  for (const auto& [k, v] : plain.transport.requests[0].headers) {
    bearer = bearer || (k == "Authorization" && v == "Bearer tok");
    org = org || (k == "X-Scope-OrgID" && v == "team");
  }
  CHECK(bearer);
  CHECK(org);

  datasource::RemoteWriteOptions q;
  q.url = "http://rw:1?x=1";
  Rig query(q);
  query.writer->write(rows(1));
  query.writer->flush();
  CHECK(query.transport.requests.at(0).url == "http://rw:1/api/v1/write?x=1");

  fakes::ManualLoop loop;
  fakes::FakeTransport t;
  datasource::RemoteWriteOptions both;
  both.url = "http://rw:1";
  both.bearer_token = "a";
  both.basic_auth_username = "u";
  CHECK_FALSE(datasource::RemoteWriter::create(t, loop, both));
  both.bearer_token.clear();
  both.url = "ftp://rw";
  CHECK_FALSE(datasource::RemoteWriter::create(t, loop, both));
}

TEST_CASE("remote write batches by size at once and by flush interval", "[remote_write]") {
  datasource::RemoteWriteOptions o;
  o.max_batch_size = 3;
  o.flush_interval = 5s;
  o.concurrency = 4;
  Rig rig(o);
  rig.writer->write(rows(2));
  rig.loop.run_ready();
  CHECK(rig.transport.requests.empty());  // a partial batch waits for the interval
  rig.writer->write(rows(5));             // 7 queued: two full batches leave now
  rig.loop.run_ready();
  REQUIRE(rig.transport.requests.size() == 2);
  CHECK(instances(rig.transport.requests[0]) == std::vector<std::string>{"i0", "i1", "i0"});
  CHECK(instances(rig.transport.requests[1]) == std::vector<std::string>{"i1", "i2", "i3"});
  CHECK(rig.stats().queue_size == 1);
  rig.loop.advance(4s);
  CHECK(rig.transport.requests.size() == 2);
  rig.loop.advance(1s);  // the flush interval sends the rest
  REQUIRE(rig.transport.requests.size() == 3);
  CHECK(instances(rig.transport.requests[2]) == std::vector<std::string>{"i4"});
  rig.transport.complete_all();
  CHECK(rig.stats().sent_rows_total == 7);
  CHECK(rig.stats().total == 7);
  CHECK(rig.stats().dropped_rows_total == 0);
  CHECK(rig.stats().sent_bytes_total > 0);
  CHECK(rig.stats().requests_total == 3);
}

TEST_CASE("remote write concurrency caps requests in flight", "[remote_write]") {
  datasource::RemoteWriteOptions o;
  o.max_batch_size = 2;
  o.concurrency = 1;
  Rig rig(o);
  rig.writer->write(rows(6));
  rig.loop.run_ready();
  CHECK(rig.transport.pending() == 1);
  rig.transport.complete_all();  // each answer lets the next batch go
  CHECK(rig.transport.requests.size() == 3);
  CHECK(rig.stats().sent_rows_total == 6);
}

TEST_CASE("remote write full queue drops the oldest rows and counts them", "[remote_write]") {
  datasource::RemoteWriteOptions o;
  o.max_queue_size = 4;
  o.max_batch_size = 100;
  Rig rig(o);
  std::vector<core::Series> in;
  for (int i = 0; i < 6; ++i) in.push_back(row("m", "r" + std::to_string(i), i, 1000 + i));
  const uint64_t hits = core::limit_hits(core::Limit::remote_write_queue);
  rig.writer->write(std::span(in).first(3));
  rig.writer->write(std::span(in).subspan(3));
  CHECK(rig.stats().dropped_rows_total == 2);
  CHECK(core::limit_hits(core::Limit::remote_write_queue) == hits + 2);
  CHECK(rig.stats().errors_total == 2);
  CHECK(rig.stats().queue_size == 4);
  REQUIRE_FALSE(rig.logs.empty());
  CHECK(rig.logs.back().find("maxQueueSize") != std::string::npos);
  rig.writer->flush();
  REQUIRE(rig.transport.requests.size() == 1);
  CHECK(instances(rig.transport.requests[0]) ==
        std::vector<std::string>{"r2", "r3", "r4", "r5"});
}

TEST_CASE("remote write retries 429, 5xx and network errors with backoff", "[remote_write]") {
  struct Case {
    const char* name;
    std::function<void(fakes::FakeTransport&)> fail;
  };
  const std::vector<Case> cases = {
      {"500", [](fakes::FakeTransport& t) { t.respond_with(500, "boom"); }},
      {"503", [](fakes::FakeTransport& t) { t.respond_with(503, ""); }},
      {"429", [](fakes::FakeTransport& t) { t.respond_with(429, "slow down"); }},
      {"timeout",
       [](fakes::FakeTransport& t) { t.fail_with(core::Error{"deadline", core::ErrorKind::timeout}); }},
      {"connection", [](fakes::FakeTransport& t) {
         t.fail_with(core::Error{"refused", core::ErrorKind::connection});
       }}};
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      datasource::RemoteWriteOptions o;
      o.retry_min_interval = 1s;
      o.retry_max_time = 30s;
      Rig rig(o);
      c.fail(rig.transport);
      rig.writer->write(rows(3));
      rig.writer->flush();
      rig.transport.complete_all();
      CHECK(rig.transport.requests.size() == 1);
      // Backoff: 1s, 2s, 4s, ... between attempts.
      rig.loop.advance(999ms);
      CHECK(rig.transport.requests.size() == 1);
      rig.loop.advance(1ms);
      REQUIRE(rig.transport.requests.size() == 2);
      rig.transport.complete_all();
      rig.loop.advance(1999ms);
      CHECK(rig.transport.requests.size() == 2);
      rig.loop.advance(1ms);
      REQUIRE(rig.transport.requests.size() == 3);
      // The receiver recovers: the same batch is delivered once.
      rig.transport.respond_with(204, "");
      rig.transport.complete_all();
      CHECK(rig.stats().sent_rows_total == 3);
      CHECK(rig.stats().dropped_rows_total == 0);
      CHECK(rig.stats().errors_total == 0);
      CHECK(rig.transport.requests[2].body == rig.transport.requests[0].body);
      CHECK(rig.stats().send_duration_ns_total == 3'000'000'000ULL);  // first try to success
    }
  }
}

TEST_CASE("remote write gives up after retryMaxTime and drops the batch", "[remote_write]") {
  datasource::RemoteWriteOptions o;
  o.retry_min_interval = 1s;
  o.retry_max_time = 5s;
  Rig rig(o);
  rig.transport.respond_with(500, "down");
  rig.writer->write(rows(4));
  rig.writer->flush();
  // Attempts at 0, 1s, 3s, 5s (the last wait is cut to what is left), then give up.
  for (int i = 0; i < 10; ++i) {
    rig.transport.complete_all();
    rig.loop.advance(1s);
  }
  rig.transport.complete_all();
  CHECK(rig.transport.requests.size() == 4);
  CHECK(rig.stats().dropped_rows_total == 4);
  CHECK(rig.stats().errors_total == 1);
  CHECK(rig.stats().sent_rows_total == 0);
  REQUIRE_FALSE(rig.logs.empty());
  CHECK(rig.logs.back() == "attempts to send remote-write request failed - dropping 4 time series");
  // The slot is free again: new rows go out.
  rig.transport.respond_with(204, "");
  rig.writer->write(rows(1));
  rig.writer->flush();
  rig.transport.complete_all();
  CHECK(rig.stats().sent_rows_total == 1);
}

TEST_CASE("remote write does not retry other 4xx", "[remote_write]") {
  const unsigned status = GENERATE(400u, 401u, 404u, 413u);
  Rig rig;
  rig.transport.respond_with(status, "out of order sample");
  rig.writer->write(rows(2));
  rig.writer->flush();
  rig.transport.complete_all();
  rig.loop.advance(60s);
  rig.transport.complete_all();
  CHECK(rig.transport.requests.size() == 1);
  CHECK(rig.stats().dropped_rows_total == 2);
  CHECK(rig.stats().errors_total == 1);
  bool named = false;
  for (const auto& l : rig.logs) {
    named = named || (l.find("unexpected response code " + std::to_string(status) +
                             " for http://rw.example:9090/prom/api/v1/write") != std::string::npos &&
                      l.find("retriable: false") != std::string::npos &&
                      l.find("pw") == std::string::npos);
  }
  CHECK(named);
}

TEST_CASE("remote write drain sends what is queued, bounded in time", "[remote_write]") {
  datasource::RemoteWriteOptions o;
  o.max_batch_size = 2;
  o.concurrency = 1;
  Rig rig(o);
  rig.writer->write(rows(5));
  bool done = false;
  rig.writer->drain(3s, [&] { done = true; });
  rig.loop.run_ready();
  CHECK_FALSE(done);
  rig.transport.complete_all();  // three batches, one after the other
  CHECK(rig.transport.requests.size() == 3);
  CHECK(rig.stats().sent_rows_total == 5);
  CHECK(done);
  rig.writer->write(rows(1));  // after the drain: refused and counted
  CHECK(rig.stats().dropped_rows_total == 1);

  Rig stuck(o);
  stuck.transport.respond_with(503, "");
  stuck.writer->write(rows(5));
  bool stuck_done = false;
  stuck.writer->drain(3s, [&] { stuck_done = true; });
  stuck.transport.complete_all();
  stuck.loop.advance(2s);
  stuck.transport.complete_all();
  CHECK_FALSE(stuck_done);
  stuck.loop.advance(1s);  // the deadline: the waiting batch and the queue are given up
  CHECK(stuck_done);
  CHECK(stuck.stats().dropped_rows_total == 5);
  CHECK(stuck.stats().queue_size == 0);
}

TEST_CASE("remote write when_room waits until the queue has room", "[remote_write]") {
  datasource::RemoteWriteOptions o;
  o.max_queue_size = 4;
  o.max_batch_size = 2;
  o.concurrency = 1;
  Rig rig(o);
  bool room = false;
  rig.writer->when_room(2, [&] { room = true; });
  rig.loop.run_ready();
  CHECK(room);  // empty queue
  rig.writer->write(rows(4));  // one batch leaves, the queue holds 2 while it is in flight...
  rig.loop.run_ready();
  rig.writer->write(rows(2));  // ...and now 4: full
  room = false;
  rig.writer->when_room(2, [&] { room = true; });
  rig.loop.run_ready();
  CHECK_FALSE(room);
  rig.transport.complete_all();  // batches leave: room again, nothing dropped
  rig.loop.run_ready();
  CHECK(room);
  CHECK(rig.stats().dropped_rows_total == 0);
}

TEST_CASE("remote write when_room wakes every waiter in turn", "[remote_write]") {
  // -replay.ruleEvaluationConcurrency > 1: several rules wait for room at once; one waiter
  // must not replace another (that one would wait forever).
  datasource::RemoteWriteOptions o;
  o.max_queue_size = 4;
  o.max_batch_size = 2;
  o.concurrency = 1;
  Rig rig(o);
  rig.writer->write(rows(4));
  rig.loop.run_ready();
  rig.writer->write(rows(2));  // 4 queued, one batch in flight: full
  rig.loop.run_ready();
  std::vector<int> woken;
  rig.writer->when_room(2, [&] { woken.push_back(1); });
  rig.writer->when_room(2, [&] { woken.push_back(2); });
  rig.writer->when_room(2, [&] { woken.push_back(3); });
  rig.loop.run_ready();
  CHECK(woken.empty());
  for (int i = 0; i < 10 && woken.size() < 3; ++i) {
    rig.transport.complete_all();
    rig.loop.run_ready();
  }
  CHECK(woken == std::vector<int>{1, 2, 3});
  CHECK(rig.stats().dropped_rows_total == 0);
}
