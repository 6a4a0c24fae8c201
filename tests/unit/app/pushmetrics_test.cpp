// -pushmetrics.*: the flag checks, extra-label injection as the Go metrics library does it, the
// redacted URL, and app::MetricsPusher on a manual loop with a fake transport (the request it
// builds, one push per URL at a time, errors counted, no tick after stop()).
#include "app/pushmetrics.hpp"

#include <zlib.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "app/flags.hpp"
#include "tests/fakes/fake_transport.hpp"
#include "tests/fakes/manual_loop.hpp"

namespace {

using namespace std::chrono_literals;

core::Result<app::ParseFlagsResult> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "alertd");
  return app::parse_flags(static_cast<int>(args.size()), args.data());
}

std::string gunzip(const std::string& in) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
  std::string out;
  char buf[4096];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  REQUIRE(rc == Z_STREAM_END);
  return out;
}

std::string header(const net::Request& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "<none>";
}

size_t count_header(const net::Request& r, std::string_view name) {
  size_t n = 0;
  for (const auto& h : r.headers) n += h.first == name ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("pushmetrics: extra labels go into every sample line", "[app][pushmetrics]") {
  struct Case {
    const char* in;
    const char* out;
  };
  const std::vector<Case> cases = {
      // Lines without labels get {extra} before the value.
      {"m 1\n", "m{job=\"a\"} 1\n"},
      // Lines with labels get the extra ones first.
      {"m{x=\"1\"} 2\n", "m{job=\"a\",x=\"1\"} 2\n"},
      // Label values with spaces and braces: only the first '{' counts.
      {"m{x=\"a b}{\"} 2\n", "m{job=\"a\",x=\"a b}{\"} 2\n"},
      // Comments kept as they are; blank lines dropped; lines trimmed.
      {"# HELP m Some help.\n# TYPE m counter\n\n  m 3  \n",
       "# HELP m Some help.\n# TYPE m counter\nm{job=\"a\"} 3\n"},
      // A last line without '\n' gets one.
      {"a 1\nb{} 2", "a{job=\"a\"} 1\nb{job=\"a\",} 2\n"},
      // Values like +Inf and NaN are after the last space.
      {"h_bucket{le=\"+Inf\"} NaN\n", "h_bucket{job=\"a\",le=\"+Inf\"} NaN\n"},
      {"", ""},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    CHECK(app::add_extra_labels(c.in, "job=\"a\"") == c.out);
  }
  // Several -pushmetrics.extraLabel values are joined with ','.
  CHECK(app::add_extra_labels("m{x=\"1\"} 2\n", "a=\"1\",b=\"2\"") ==
        "m{a=\"1\",b=\"2\",x=\"1\"} 2\n");
}

TEST_CASE("pushmetrics: extra label syntax as the Go library's validateTags",
          "[app][pushmetrics]") {
  struct Case {
    const char* in;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"instance=\"foo\"", true},
      {"a=\"1\",b=\"2\"", true},
      {"a=\"1\", b=\"2\"", true},
      {"a=\"with \\\"quotes\\\"\"", true},
      {"a=\"back\\\\\"", true},
      {"dotted.name=\"x\"", true},
      {"a=\"\"", true},
      {"", false},
      {"instance=foo", false},  // the value must be quoted
      {"instance", false},
      {"1a=\"x\"", false},
      {"a-b=\"x\"", false},
      {"a=\"unterminated", false},
      {"a=\"escaped end\\\"", false},
      {"a=\"1\" b=\"2\"", false},
      {"a=\"1\",", false},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    CHECK(app::check_extra_labels(c.in).empty() == c.ok);
  }
}

TEST_CASE("pushmetrics: URL redaction as Go's url.Redacted", "[app][pushmetrics]") {
  CHECK(app::go_redacted_url("http://u:p@h:8428/api/v1/import/prometheus") ==
        "http://u:xxxxx@h:8428/api/v1/import/prometheus");
  CHECK(app::go_redacted_url("https://u@h/x?a=b") == "https://u@h/x?a=b");
  CHECK(app::go_redacted_url("http://h/x") == "http://h/x");
  CHECK(app::go_redacted_url("http://u:p@ss@h/x") == "http://u:xxxxx@h/x");
}

TEST_CASE("pushmetrics: flags parse, bad values name the flag", "[app][pushmetrics][flags]") {
  auto d = parse({});
  REQUIRE(d.has_value());
  CHECK(d->flags.pushmetrics_url.empty());
  CHECK(d->flags.pushmetrics_interval == 10s);
  CHECK_FALSE(d->flags.pushmetrics_disable_compression);
  // Empty values set nothing (an empty environment variable with -envflag.enable).
  auto empty = parse({"-pushmetrics.url=", "-pushmetrics.extraLabel=", "-pushmetrics.header="});
  REQUIRE(empty.has_value());
  CHECK(empty->flags.pushmetrics_url.empty());
  CHECK(empty->flags.pushmetrics_extra_label.empty());
  CHECK(empty->flags.pushmetrics_header.empty());

  auto r = parse({"-pushmetrics.url=http://u:secret@vm:8428/api/v1/import/prometheus",
                  "-pushmetrics.url=https://vm2/api/v1/import/prometheus",
                  "-pushmetrics.interval=2s", "-pushmetrics.extraLabel=instance=\"a\"",
                  "-pushmetrics.extraLabel=job=\"x,y\",dc=\"eu\"",
                  "-pushmetrics.header=Authorization: Bearer t", "-pushmetrics.header=X-A:1",
                  "-pushmetrics.disableCompression"});
  REQUIRE(r.has_value());
  const auto& f = r->flags;
  CHECK(f.pushmetrics_url.size() == 2);
  CHECK(f.pushmetrics_interval == 2s);
  // A value with a top-level ',' is two labels; a ',' inside quotes is not a separator.
  CHECK(f.pushmetrics_extra_label ==
        std::vector<std::string>{"instance=\"a\"", "job=\"x,y\"", "dc=\"eu\""});
  CHECK(f.pushmetrics_header == std::vector<std::string>{"Authorization: Bearer t", "X-A:1"});
  CHECK(f.pushmetrics_disable_compression);
  // Implemented now: no "ignored" warning; the URL (it may hold a password) is hidden in /flags.
  CHECK(f.ignored_flag_warnings.empty());
  bool url_hidden = false;
  for (const auto& line : f.set_flags) {
    CHECK_THAT(line, !Catch::Contains("secret@"));
    if (line.starts_with("-pushmetrics.url=")) url_hidden = line == "-pushmetrics.url=\"secret\"";
  }
  CHECK(url_hidden);

  struct Bad {
    const char* arg;
    const char* flag;
  };
  const std::vector<Bad> bad = {
      {"-pushmetrics.url=ftp://vm/x", "-pushmetrics.url"},
      {"-pushmetrics.url=vm:8428", "-pushmetrics.url"},
      {"-pushmetrics.url=http://", "-pushmetrics.url"},
      {"-pushmetrics.interval=0s", "-pushmetrics.interval"},
      {"-pushmetrics.interval=-1s", "-pushmetrics.interval"},
      {"-pushmetrics.interval=soon", "-pushmetrics.interval"},
      {"-pushmetrics.extraLabel=instance=foo", "-pushmetrics.extraLabel"},
      {"-pushmetrics.extraLabel=bad-name=\"x\"", "-pushmetrics.extraLabel"},
      {"-pushmetrics.header=NoColon", "-pushmetrics.header"},
      {"-pushmetrics.header=: value", "-pushmetrics.header"},
      {"-pushmetrics.disableCompression=maybe", "-pushmetrics.disableCompression"},
  };
  for (const auto& b : bad) {
    INFO(b.arg);
    auto e = parse({b.arg});
    REQUIRE_FALSE(e.has_value());
    CHECK_THAT(e.error().message, Catch::Contains(std::string("for flag ") + b.flag + ":"));
  }
  // A bad URL's password is not repeated in the error.
  auto e = parse({"-pushmetrics.url=ftp://u:hunter2@vm/x"});
  REQUIRE_FALSE(e.has_value());
  CHECK_THAT(e.error().message, !Catch::Contains("hunter2"));
}

TEST_CASE("pushmetrics: the pusher sends the page every interval", "[app][pushmetrics]") {
  fakes::ManualLoop loop;
  fakes::FakeTransport http;
  app::PushOptions o;
  o.urls = {"http://u:p@vm:8428/api/v1/import/prometheus", "http://other/x"};
  o.interval = 10s;
  o.extra_labels = {"instance=\"a\""};
  o.headers = {"X-Token: abc", "Content-Type: text/plain; version=0.0.4"};
  int renders = 0;
  app::MetricsPusher pusher(loop, http, o, [&renders] {
    ++renders;
    return std::string("# TYPE m counter\nm 1\nn{x=\"y\"} 2\n");
  });
  pusher.start();

  // As Go's ticker: nothing at start, the first push one interval later.
  loop.advance(9s);
  CHECK(http.requests.empty());
  loop.advance(1s);
  REQUIRE(http.requests.size() == 2);
  CHECK(renders == 1);  // one page for every URL of a tick
  const net::Request req = http.requests[0];  // a copy: requests grows below
  CHECK(req.method == "GET");
  CHECK(req.url == "http://u:p@vm:8428/api/v1/import/prometheus");
  CHECK(req.display_url == "http://u:xxxxx@vm:8428/api/v1/import/prometheus");
  CHECK(header(req, "Content-Encoding") == "gzip");
  CHECK(header(req, "Content-Type") == "text/plain; version=0.0.4");
  CHECK(count_header(req, "Content-Type") == 1);
  CHECK(header(req, "X-Token") == "abc");
  CHECK(req.timeout == 10s);
  CHECK(gunzip(req.body) == "# TYPE m counter\nm{instance=\"a\"} 1\nn{instance=\"a\",x=\"y\"} 2\n");
  CHECK(http.requests[1].url == "http://other/x");

  // The first URL answers 204, the second 500: one error counted on the second only.
  http.respond_with([](const net::Request& r) -> core::Result<net::Response> {
    if (r.url == "http://other/x") return net::Response{500, {}, "boom"};
    return net::Response{204, {}, {}};
  });
  CHECK(http.complete_all() == 2);
  auto stats = pusher.stats();
  REQUIRE(stats.size() == 2);
  CHECK(stats[0]->url == "http://u:xxxxx@vm:8428/api/v1/import/prometheus");
  CHECK(stats[0]->pushes_total.load() == static_cast<uint64_t>(1));
  CHECK(stats[0]->errors_total.load() == static_cast<uint64_t>(0));
  CHECK(stats[0]->bytes_pushed_total.load() == static_cast<uint64_t>(req.body.size()));
  CHECK(stats[0]->interval_seconds == 10);
  CHECK(stats[1]->pushes_total.load() == static_cast<uint64_t>(1));
  CHECK(stats[1]->errors_total.load() == static_cast<uint64_t>(1));

  // Pushes in flight at the next tick: that tick is skipped, not queued behind them.
  loop.advance(10s);
  CHECK(http.requests.size() == 4);
  http.respond_with(204, "");
  loop.advance(10s);
  CHECK(http.requests.size() == 4);
  CHECK(http.complete_all() == 2);
  loop.advance(10s);
  CHECK(http.requests.size() == 6);
  CHECK(http.complete_all() == 2);
  CHECK(stats[0]->pushes_total.load() == static_cast<uint64_t>(3));
  CHECK(stats[1]->errors_total.load() == static_cast<uint64_t>(1));

  // Transport errors count too; after stop() no tick pushes any more.
  http.fail_with(core::Error("connection refused", core::ErrorKind::connection));
  loop.advance(10s);
  CHECK(http.complete_all() == 2);
  CHECK(stats[0]->errors_total.load() == static_cast<uint64_t>(1));
  pusher.stop();
  loop.advance(60s);
  CHECK(http.requests.size() == 8);
}

TEST_CASE("pushmetrics: one push per URL at a time", "[app][pushmetrics]") {
  fakes::ManualLoop loop;
  fakes::FakeTransport http;
  app::PushOptions o;
  o.urls = {"http://vm/x"};
  o.interval = 1s;
  o.disable_compression = true;
  app::MetricsPusher pusher(loop, http, o, [] { return std::string("m 1\n"); });
  pusher.start();
  loop.advance(1s);
  REQUIRE(http.requests.size() == 1);
  // -pushmetrics.disableCompression: the text as is, no Content-Encoding, no extra labels.
  CHECK(http.requests[0].body == "m 1\n");
  CHECK(count_header(http.requests[0], "Content-Encoding") == 0);
  CHECK(http.requests[0].timeout == 1s);
  // Slow target: five ticks pass while the push hangs; none of them sends another request.
  loop.advance(5s);
  CHECK(http.requests.size() == 1);
  CHECK(http.complete_all() == 1);
  loop.advance(1s);
  CHECK(http.requests.size() == 2);
  CHECK(pusher.stats()[0]->pushes_total.load() == static_cast<uint64_t>(2));
  // A push canceled by shutdown (transport closed) is not an error.
  http.close();
  CHECK(http.complete_all() == 1);
  CHECK(pusher.stats()[0]->errors_total.load() == static_cast<uint64_t>(0));
}

TEST_CASE("pushmetrics: metrics_push_* in /metrics, only with push targets",
          "[app][pushmetrics][metrics]") {
  app::SnapshotStore store;
  app::GlobalCounters counters;
  CHECK_THAT(app::render_metrics(store, counters, {}), !Catch::Contains("metrics_push"));

  app::PushTargetStats st;
  st.url = "http://u:xxxxx@vm/x";
  st.interval_seconds = 10;
  st.pushes_total = 3;
  st.errors_total = 1;
  st.bytes_pushed_total = 1234;
  st.duration_seconds.update(0.012);
  st.block_size_bytes.update(1234);
  const std::string page = app::render_metrics(store, counters, {}, nullptr, {&st});
  for (const char* line : {
           "# TYPE metrics_push_total counter\n",
           "metrics_push_total{url=\"http://u:xxxxx@vm/x\"} 3\n",
           "metrics_push_errors_total{url=\"http://u:xxxxx@vm/x\"} 1\n",
           "metrics_push_bytes_pushed_total{url=\"http://u:xxxxx@vm/x\"} 1234\n",
           "# TYPE metrics_push_duration_seconds_bucket untyped\n",
           "metrics_push_duration_seconds_bucket{url=\"http://u:xxxxx@vm/x\",vmrange=\"1.136e-02...1.292e-02\"} 1\n",
           "metrics_push_duration_seconds_sum{url=\"http://u:xxxxx@vm/x\"} 0.012\n",
           "metrics_push_duration_seconds_count{url=\"http://u:xxxxx@vm/x\"} 1\n",
           "metrics_push_block_size_bytes_count{url=\"http://u:xxxxx@vm/x\"} 1\n",
           "# TYPE metrics_push_interval_seconds gauge\n",
           "metrics_push_interval_seconds{url=\"http://u:xxxxx@vm/x\"} 10\n",
       }) {
    CHECK_THAT(page, Catch::Contains(line));
  }
}
