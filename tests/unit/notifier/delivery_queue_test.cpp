// DeliveryQueue in front of a real AlertmanagerClient, on a FakeTransport and a ManualLoop:
// one POST per flush (split at maxBatchSize), newer states replacing queued ones, the bounded
// queue dropping the oldest, retry by error kind with backoff, the in-flight cap, the retry
// deadline, and one dead Alertmanager not holding back another.
#include "notifier/delivery_queue.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/limit_hits.hpp"
#include "notifier/alertmanager_client.hpp"
#include "tests/fakes/fake_transport.hpp"
#include "tests/fakes/manual_loop.hpp"
#include "tests/fakes/recording_notifier.hpp"

namespace {

using namespace std::chrono_literals;

// An alert `instance=<inst>` whose annotation `v` tells its state apart; firing (endsAt 4m
// ahead of `now`) unless `resolved`.
notifier::Alert alert(const std::string& inst, const std::string& v, core::TimePoint now,
                      bool resolved = false) {
  notifier::Alert a;
  a.labels = core::Labels{{"alertname", "A"}, {"instance", inst}};
  a.annotations = core::Labels{{"v", v}};
  a.starts_at = now - 1min;
  a.ends_at = resolved ? now : now + 4min;
  a.generator_url = "http://alertd/vmalert/alert?group_id=1&alert_id=2";
  return a;
}

// "<instance>=<v>" for every alert in a POST body, in order (the payload is alertd's own
// encoding: labels, then annotations, keys sorted).
std::vector<std::string> posted(const net::Request& r) {
  std::vector<std::string> out;
  const std::string_view body = r.body;
  size_t at = 0;
  while ((at = body.find("\"instance\":\"", at)) != std::string_view::npos) {
    at += 12;
    const size_t end = body.find('"', at);
    const std::string inst(body.substr(at, end - at));
    const size_t v = body.find("\"v\":\"", end) + 5;
    out.push_back(inst + "=" + std::string(body.substr(v, body.find('"', v) - v)));
    at = end;
  }
  return out;
}

struct Rig {
  fakes::ManualLoop loop;
  fakes::FakeTransport transport;
  std::vector<std::string> logs;
  std::shared_ptr<notifier::DeliveryQueue> queue;

  explicit Rig(notifier::DeliveryOptions o = {}) {
    o.jitter = 0;  // exact waits below
    o.log = [this](bool, std::string_view m) { logs.emplace_back(m); };
    notifier::AlertmanagerTarget t;
    t.url = "http://am1:9093";
    auto client = std::make_shared<notifier::AlertmanagerClient>(transport, t);
    queue = std::make_shared<notifier::DeliveryQueue>(loop, client, std::move(o));
  }
  core::TimePoint now() const { return loop.now(); }
  void send(std::vector<notifier::Alert> alerts, notifier::DeliveryQueue* q = nullptr) {
    bool done = false;
    (q != nullptr ? q : queue.get())->send(alerts, {}, [&](std::optional<core::Error> e) {
      CHECK_FALSE(e);
      done = true;
    });
    CHECK(done);  // queued: completes at once
  }
  notifier::NotifierStats stats() const { return queue->stats(); }
};

}  // namespace

TEST_CASE("delivery: the alerts of a round leave in one POST at flush, split at maxBatchSize",
          "[notifier][delivery]") {
  notifier::DeliveryOptions o;
  o.max_batch_size = 4;
  o.concurrency = 2;
  Rig rig(o);
  rig.send({alert("a", "1", rig.now())});                              // rule 1
  rig.send({alert("b", "1", rig.now()), alert("c", "1", rig.now())});  // rule 2
  rig.loop.run_ready();
  CHECK(rig.transport.requests.empty());  // nothing before the round ends
  CHECK(rig.stats().queued == 3);

  rig.queue->flush();
  REQUIRE(rig.transport.requests.size() == 1);
  CHECK(rig.transport.requests[0].url == "http://am1:9093/api/v2/alerts");
  CHECK(posted(rig.transport.requests[0]) == std::vector<std::string>{"a=1", "b=1", "c=1"});
  CHECK(rig.stats().queued == 0);
  CHECK(rig.stats().in_flight == 3);
  rig.transport.complete_all();
  CHECK(rig.stats().sent == 3);
  CHECK(rig.stats().posts == 1);
  CHECK(rig.stats().in_flight == 0);

  // 9 alerts with a batch of 4: the queue starts full batches itself (two in flight with
  // concurrency 2); the last alert waits for its round's flush, not for a POST's answer.
  std::vector<notifier::Alert> nine;
  for (int i = 0; i < 9; ++i) nine.push_back(alert("x" + std::to_string(i), "1", rig.now()));
  rig.send(nine);
  rig.loop.run_ready();
  REQUIRE(rig.transport.requests.size() == 3);
  CHECK(posted(rig.transport.requests[1]).size() == 4);
  CHECK(posted(rig.transport.requests[2]).size() == 4);
  rig.transport.complete_all();
  rig.loop.run_ready();
  CHECK(rig.transport.requests.size() == 3);
  CHECK(rig.stats().queued == 1);
  rig.queue->flush();
  REQUIRE(rig.transport.requests.size() == 4);
  CHECK(posted(rig.transport.requests[3]) == std::vector<std::string>{"x8=1"});
  rig.transport.complete_all();
  CHECK(rig.stats().sent == 12);
  CHECK(rig.stats().dropped == 0);
}

TEST_CASE("delivery: a newer state of a queued alert replaces it", "[notifier][delivery]") {
  Rig rig;
  rig.send({alert("a", "old", rig.now()), alert("b", "1", rig.now())});
  rig.send({alert("a", "new", rig.now(), /*resolved=*/true)});
  CHECK(rig.stats().queued == 2);
  rig.queue->flush();
  REQUIRE(rig.transport.requests.size() == 1);
  // The newer state is the newest entry: it queues behind b.
  CHECK(posted(rig.transport.requests[0]) == std::vector<std::string>{"b=1", "a=new"});
  rig.transport.complete_all();
  CHECK(rig.stats().dropped == 0);  // superseded is not lost
}

TEST_CASE("delivery: on_drained runs once nothing is queued or in flight",
          "[notifier][delivery]") {
  notifier::DeliveryOptions o;
  o.max_batch_size = 2;
  int drained = 0;
  int backlogs = 0;
  o.on_drained = [&drained, &backlogs](bool backlog) {
    ++drained;
    backlogs += backlog ? 1 : 0;
  };
  Rig rig(o);
  std::vector<notifier::Alert> batch;
  for (int i = 0; i < 2000; ++i) batch.push_back(alert("x" + std::to_string(i), "1", rig.now()));
  rig.send(batch);
  rig.queue->flush();
  rig.loop.run_ready();
  CHECK(drained == 0);
  CHECK(rig.stats().in_flight == 2);
  // 1,000 POSTs, each answered one after the other: only the last leaves the queue empty.
  CHECK(rig.transport.complete_all() == 1000);
  CHECK(drained == 1);
  CHECK(rig.stats().sent == 2000);
  // The queue works as before after giving its buckets back.
  rig.send({alert("a", "2", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  CHECK(drained == 2);
  CHECK(rig.stats().sent == 2001);
  CHECK(rig.stats().dropped == 0);
  CHECK(backlogs == 0);
}

TEST_CASE("delivery: a queue that never drains delivers every alert once and in order",
          "[notifier][delivery]") {
  // Each answer brings three new alerts before the queue can empty, so it never drains: the
  // slots of answered alerts must go one by one, and nothing may be sent twice or skipped.
  Rig rig;
  int next = 0;
  int answers = 0;
  std::vector<std::string> sent{"first=1"};
  rig.transport.respond_with([&](const net::Request&) -> core::Result<net::Response> {
    if (++answers <= 600) {
      std::vector<notifier::Alert> more;
      for (int k = 0; k < 3; ++k) {
        const std::string inst = "i" + std::to_string(next++);
        sent.push_back(inst + "=1");
        more.push_back(alert(inst, "1", rig.now()));
      }
      rig.send(std::move(more));
      rig.queue->flush();  // their round ends while the POST is in flight: sent once answered
    }
    return net::Response{200, {}, {}};
  });
  rig.send({alert("first", "1", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  CHECK(answers == 601);
  std::vector<std::string> got;
  for (const auto& r : rig.transport.requests) {
    for (auto& a : posted(r)) got.push_back(std::move(a));
  }
  CHECK(got == sent);  // each alert exactly once, in the order queued
  CHECK(rig.stats().queued == 0);
  CHECK(rig.stats().in_flight == 0);
  CHECK(rig.stats().dropped == 0);
  // A later round after the drain is delivered too.
  rig.send({alert("first", "2", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  CHECK(posted(rig.transport.requests.back()) == std::vector<std::string>{"first=2"});
}

TEST_CASE("delivery: a full queue drops the oldest alerts and counts them",
          "[notifier][delivery]") {
  notifier::DeliveryOptions o;
  o.max_queue_size = 3;
  Rig rig(o);
  const uint64_t hits = core::limit_hits(core::Limit::notifier_queue);
  rig.send({alert("a", "1", rig.now()), alert("b", "1", rig.now())});
  rig.send({alert("c", "1", rig.now()), alert("d", "1", rig.now()), alert("e", "1", rig.now())});
  CHECK(rig.stats().queued == 3);
  CHECK(rig.stats().dropped == 2);
  CHECK(core::limit_hits(core::Limit::notifier_queue) == hits + 2);
  REQUIRE_FALSE(rig.logs.empty());
  CHECK_THAT(rig.logs.back(), Catch::Contains("-notifier.maxQueueSize"));
  rig.queue->flush();
  REQUIRE(rig.transport.requests.size() == 1);
  CHECK(posted(rig.transport.requests[0]) == std::vector<std::string>{"c=1", "d=1", "e=1"});
}

TEST_CASE("delivery: 429, 5xx and network errors keep the alerts and retry with backoff",
          "[notifier][delivery]") {
  struct Case {
    const char* name;
    std::function<void(fakes::FakeTransport&)> fail;
  };
  const Case c = GENERATE(
      Case{"500", [](fakes::FakeTransport& t) { t.respond_with(500, "boom"); }},
      Case{"503", [](fakes::FakeTransport& t) { t.respond_with(503, ""); }},
      Case{"429", [](fakes::FakeTransport& t) { t.respond_with(429, "slow down"); }},
      Case{"timeout",
           [](fakes::FakeTransport& t) {
             t.fail_with(core::Error{"Post: deadline", core::ErrorKind::timeout});
           }},
      Case{"connection", [](fakes::FakeTransport& t) {
             t.fail_with(core::Error{"Post: connection refused", core::ErrorKind::connection});
           }});
  INFO(c.name);
  notifier::DeliveryOptions o;
  o.retry_min_interval = 1s;
  o.retry_max_interval = 4s;
  std::vector<bool> drains;  // each drain's `backlog`
  o.on_drained = [&drains](bool backlog) { drains.push_back(backlog); };
  Rig rig(o);
  c.fail(rig.transport);
  rig.send({alert("a", "1", rig.now()), alert("b", "1", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  CHECK(rig.stats().errors == 2);
  CHECK(rig.stats().queued == 2);  // kept
  CHECK_FALSE(rig.stats().last_error.empty());

  // Waits 1s, 2s, 4s, 4s: nothing is sent before each wait ends, not even on flush.
  size_t posts = 1;
  for (auto wait : {1s, 2s, 4s, 4s}) {
    rig.queue->flush();
    rig.loop.advance(wait - 1ms);
    CHECK(rig.transport.requests.size() == posts);
    rig.loop.advance(1ms);
    REQUIRE(rig.transport.requests.size() == ++posts);
    CHECK(posted(rig.transport.requests.back()) == std::vector<std::string>{"a=1", "b=1"});
    rig.transport.complete_all();
  }
  rig.transport.respond_with(200, "");
  rig.loop.advance(4s);
  REQUIRE(rig.transport.requests.size() == ++posts);
  rig.transport.complete_all();
  CHECK(rig.stats().queued == 0);
  CHECK(rig.stats().dropped == 0);
  CHECK(rig.stats().last_error.empty());
  // The drain after the retries says so (the app then reads the heap's totals); the next
  // drain after a success alone does not.
  CHECK(drains == std::vector<bool>{true});
  rig.send({alert("c", "1", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  CHECK(drains == std::vector<bool>{true, false});
  posts += 1;
  // After a success the next failure waits the minimum again.
  c.fail(rig.transport);
  rig.send({alert("a", "2", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  rig.loop.advance(1s);
  CHECK(rig.transport.requests.size() == posts + 2);
}

TEST_CASE("delivery: the retry decision reads the error kind, not the text",
          "[notifier][delivery]") {
  Rig rig;
  SECTION("400 is dropped at once") { rig.transport.respond_with(400, "bad alert"); }
  SECTION("404 is dropped at once") { rig.transport.respond_with(404, ""); }
  SECTION("an error of another kind whose text says 503 is dropped") {
    rig.transport.fail_with(core::Error{"invalid SC 503 from upstream", core::ErrorKind::other});
  }
  rig.send({alert("a", "1", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  CHECK(rig.stats().dropped == 1);
  CHECK(rig.stats().queued == 0);
  rig.loop.advance(1min);
  CHECK(rig.transport.requests.size() == 1);
  // No backoff after a refusal: the next alert leaves at the next flush.
  rig.send({alert("b", "1", rig.now())});
  rig.queue->flush();
  CHECK(rig.transport.requests.size() == 2);
}

TEST_CASE("delivery: at most concurrency POSTs in flight, a newer state follows the older",
          "[notifier][delivery]") {
  Rig rig;  // concurrency 1
  rig.send({alert("a", "1", rig.now())});
  rig.queue->flush();
  REQUIRE(rig.transport.requests.size() == 1);
  // The Alertmanager hangs: rounds go on, each flush starts nothing.
  for (int round = 2; round <= 5; ++round) {
    rig.send({alert("a", std::to_string(round), rig.now()), alert("b", "1", rig.now())});
    rig.queue->flush();
    rig.loop.advance(15s);
  }
  CHECK(rig.transport.requests.size() == 1);
  CHECK(rig.stats().queued == 2);  // a=5 and b=1; a=2..4 were replaced
  CHECK(rig.stats().in_flight == 1);
  rig.transport.complete_all();  // the first POST answers; the queue follows at once
  REQUIRE(rig.transport.requests.size() == 2);
  CHECK(posted(rig.transport.requests[1]) == std::vector<std::string>{"a=5", "b=1"});
}

TEST_CASE("delivery: an alert in flight is not sent again before its POST is answered",
          "[notifier][delivery]") {
  notifier::DeliveryOptions o;
  o.concurrency = 2;
  Rig rig(o);
  rig.send({alert("a", "1", rig.now())});
  rig.queue->flush();
  rig.send({alert("a", "2", rig.now()), alert("b", "1", rig.now())});
  rig.queue->flush();
  REQUIRE(rig.transport.requests.size() == 2);
  CHECK(posted(rig.transport.requests[1]) == std::vector<std::string>{"b=1"});
  // A failed POST does not bring the older state back over the newer one.
  rig.transport.respond_with(503, "");
  rig.transport.complete_all();
  rig.transport.respond_with(200, "");
  rig.loop.advance(1s);
  REQUIRE(rig.transport.requests.size() == 3);
  CHECK(posted(rig.transport.requests[2]) == std::vector<std::string>{"a=2", "b=1"});
}

TEST_CASE("delivery: a newer state arriving during the retry wait is the one sent",
          "[notifier][delivery]") {
  Rig rig;
  rig.transport.respond_with(500, "");
  rig.send({alert("a", "firing", rig.now()), alert("b", "1", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  rig.send({alert("a", "resolved", rig.now(), true)});
  rig.transport.respond_with(200, "");
  rig.loop.advance(1s);
  REQUIRE(rig.transport.requests.size() == 2);
  // b kept its place as the older entry; a's requeued state was replaced by the newer one.
  CHECK(posted(rig.transport.requests[1]) == std::vector<std::string>{"b=1", "a=resolved"});
}

TEST_CASE("delivery: alerts are kept until retryMaxTime and their endsAt have passed",
          "[notifier][delivery]") {
  notifier::DeliveryOptions o;
  o.retry_min_interval = 1s;
  o.retry_max_interval = 10s;
  o.retry_max_time = 1min;
  Rig rig(o);
  rig.transport.fail_with(core::Error{"Post: connection refused", core::ErrorKind::connection});
  // A resolved alert (endsAt now) and a firing one (endsAt 4m ahead).
  rig.send({alert("resolved", "1", rig.now(), true), alert("firing", "1", rig.now())});
  rig.queue->flush();
  for (int i = 0; i < 7; ++i) {  // ~61 s of retries
    rig.transport.complete_all();
    rig.loop.advance(10s);
  }
  rig.transport.complete_all();
  CHECK(rig.stats().dropped == 1);  // the resolved one: 1m waited, endsAt passed
  CHECK(rig.stats().queued == 1);
  REQUIRE_FALSE(rig.logs.empty());
  const bool logged = std::any_of(rig.logs.begin(), rig.logs.end(), [](const std::string& m) {
    return m.find("gave up on 1 alert(s)") != std::string::npos;
  });
  CHECK(logged);
  // The Alertmanager comes back within the firing alert's endsAt: it gets it.
  rig.loop.advance(2min);
  rig.transport.respond_with(200, "");
  rig.loop.advance(10s);
  rig.transport.complete_all();
  CHECK(posted(rig.transport.requests.back()) == std::vector<std::string>{"firing=1"});
  CHECK(rig.stats().queued == 0);
  CHECK(rig.stats().in_flight == 0);
}

TEST_CASE("delivery: a dead Alertmanager does not hold back another", "[notifier][delivery]") {
  fakes::ManualLoop loop;
  fakes::FakeTransport dead;
  fakes::FakeTransport alive;
  notifier::AlertmanagerTarget t1;
  t1.url = "http://am1:9093";
  notifier::AlertmanagerTarget t2;
  t2.url = "http://am2:9093";
  notifier::DeliveryQueue q1(loop, std::make_shared<notifier::AlertmanagerClient>(dead, t1), {});
  notifier::DeliveryQueue q2(loop, std::make_shared<notifier::AlertmanagerClient>(alive, t2), {});
  for (int round = 1; round <= 5; ++round) {
    const std::vector<notifier::Alert> batch{alert("a", std::to_string(round), loop.now())};
    q1.send(batch, {}, nullptr);
    q2.send(batch, {}, nullptr);
    q1.flush();
    q2.flush();
    // am2 answers each round's POST in the same round; am1 never answers.
    REQUIRE(alive.requests.size() == static_cast<size_t>(round));
    CHECK(posted(alive.requests.back()) == std::vector<std::string>{"a=" + std::to_string(round)});
    alive.complete_all();
    loop.advance(15s);
  }
  CHECK(dead.requests.size() == 1);
  CHECK(q1.stats().queued == 1);
  CHECK(q2.stats().queued == 0);
  CHECK(q2.stats().sent == 5);
}

TEST_CASE("delivery: close drops what is queued and cancels the retry wait",
          "[notifier][delivery]") {
  Rig rig;
  rig.transport.respond_with(500, "");
  rig.send({alert("a", "1", rig.now())});
  rig.queue->flush();
  rig.transport.complete_all();
  CHECK(rig.loop.armed_timers() == 1);
  rig.queue->close();
  CHECK(rig.loop.armed_timers() == 0);
  CHECK(rig.stats().dropped == 1);
  rig.send({alert("b", "1", rig.now())});
  rig.queue->flush();
  CHECK(rig.stats().dropped == 2);
  CHECK(rig.transport.requests.size() == 1);
}

TEST_CASE("delivery: send_owned queues the batch it is handed like send",
          "[notifier][delivery]") {
  Rig rig;
  rig.queue->send_owned({alert("a", "1", rig.now()), alert("b", "1", rig.now())}, {}, nullptr);
  rig.queue->send_owned({alert("a", "2", rig.now())}, {}, nullptr);
  CHECK(rig.stats().queued == 2);
  rig.queue->flush();
  REQUIRE(rig.transport.requests.size() == 1);
  CHECK(posted(rig.transport.requests[0]) == std::vector<std::string>{"b=1", "a=2"});
}

TEST_CASE("delivery: queued alerts share the pre-built payload fragments, not copies",
          "[notifier][delivery]") {
  fakes::ManualLoop loop;
  auto am1 = std::make_shared<fakes::RecordingNotifier>();
  auto am2 = std::make_shared<fakes::RecordingNotifier>();
  notifier::DeliveryQueue q1(loop, am1, {});
  notifier::DeliveryQueue q2(loop, am2, {});
  std::vector<notifier::Alert> batch;
  for (int i = 0; i < 3; ++i) {
    auto a = alert("h" + std::to_string(i), "x", loop.now());
    a.json = core::AlertJson::build(a.labels, a.annotations, a.generator_url);
    a.generator_url.clear();
    batch.push_back(std::move(a));
  }
  const auto fragment = batch[0].json;
  // As NotifierSet does: a copy to every Alertmanager but the last, the batch itself to the last.
  q1.send(batch, {}, nullptr);
  q2.send_owned(std::move(batch), {}, nullptr);
  // Held by this test, the first queue and the second: one object, no string copied per queue.
  CHECK(fragment.use_count() == 3);
  q1.flush();
  q2.flush();
  REQUIRE(am1->batches.size() == 1);
  REQUIRE(am2->batches.size() == 1);
  CHECK(am1->batches[0].alerts[0].json.get() == fragment.get());
  CHECK(am2->batches[0].alerts[0].json.get() == fragment.get());
  CHECK(am1->batches[0].alerts[0].generator_url.empty());
}

TEST_CASE("delivery: random sends, failures and retries keep every key's newest state",
          "[notifier][delivery]") {
  // 30 keys, states numbered in the order they are queued; POSTs fail at random (503, kept
  // and retried) and succeed otherwise. Whatever the interleaving: each POST holds states in
  // the order they were queued, a key's states go out oldest first and never behind a newer
  // one, the queue counts what it holds, and once the Alertmanager recovers every key's
  // newest state is accepted and nothing is dropped.
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u);
  INFO("seed " << seed);
  std::mt19937 rnd(seed);
  notifier::DeliveryOptions o;
  o.max_batch_size = 7;
  o.concurrency = 2;
  o.retry_min_interval = 1s;
  o.retry_max_interval = 2s;
  Rig rig(o);
  bool failing = true;
  std::vector<bool> accepted;  // per request, in the order sent
  rig.transport.respond_with([&](const net::Request&) -> core::Result<net::Response> {
    const bool ok = !failing || rnd() % 3 == 0;
    accepted.push_back(ok);
    return net::Response{ok ? 200u : 503u, {}, {}};
  });
  int version = 0;
  std::map<std::string, int> newest;  // key -> newest state queued
  for (int step = 0; step < 400; ++step) {
    switch (rnd() % 5) {
      case 0:
      case 1: {
        std::vector<notifier::Alert> batch;
        const int n = 1 + static_cast<int>(rnd() % 12);
        for (int i = 0; i < n; ++i) {
          const std::string inst = "k" + std::to_string(rnd() % 30);
          newest[inst] = ++version;
          batch.push_back(alert(inst, std::to_string(version), rig.now()));
        }
        rig.send(std::move(batch));
        break;
      }
      case 2: rig.queue->flush(); break;
      case 3: rig.transport.complete_all(); break;
      default: rig.loop.advance(500ms); break;
    }
    const auto st = rig.stats();
    CHECK(st.queued <= newest.size());  // at most one queued state per key
    CHECK(st.in_flight <= o.concurrency * o.max_batch_size);
  }
  failing = false;
  for (int i = 0; i < 20 && (rig.stats().queued > 0 || rig.stats().in_flight > 0); ++i) {
    rig.queue->flush();
    rig.transport.complete_all();
    rig.loop.advance(2s);
    rig.transport.complete_all();
  }
  const auto st = rig.stats();
  CHECK(st.queued == 0);
  CHECK(st.in_flight == 0);
  CHECK(st.dropped == 0);

  REQUIRE(accepted.size() == rig.transport.requests.size());
  std::map<std::string, int> sent_max;      // newest state of a key put in any POST so far
  std::map<std::string, int> accepted_max;  // newest state of a key accepted
  for (size_t r = 0; r < rig.transport.requests.size(); ++r) {
    int prev = 0;
    for (const std::string& a : posted(rig.transport.requests[r])) {
      const std::string key = a.substr(0, a.find('='));
      const int v = std::stoi(a.substr(a.find('=') + 1));
      CHECK(v > prev);  // the order queued
      prev = v;
      CHECK(v >= sent_max[key]);  // never an older state after a newer one
      sent_max[key] = std::max(sent_max[key], v);
      if (accepted[r]) accepted_max[key] = std::max(accepted_max[key], v);
    }
  }
  CHECK(accepted_max == newest);
}
