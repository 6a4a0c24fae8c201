// bench_delivery: what the delivery queue adds to a round's notification. Baseline: the batch
// POSTed straight by AlertmanagerClient (vmalert: one POST, no queue). Queued: the same batch
// through DeliveryQueue send (copied in) or send_owned (handed over) + flush (fingerprints,
// replacing, batching). Both encode
// the payload and complete on a transport that answers 200 at once; alerts have 13 labels and
// 2 annotations, as bench_notifier's. Counters: allocations per alert.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "notifier/alertmanager_client.hpp"
#include "notifier/delivery_queue.hpp"
#include "tests/fakes/manual_loop.hpp"

namespace {

using namespace std::chrono_literals;

// Answers every request 200 when complete() is called; keeps nothing.
class AnsweringTransport final : public net::Transport {
 public:
  void send(net::Request req, net::ResponseHandler done) override {
    bytes += req.body.size();
    pending_.push_back(std::move(done));
  }
  void close() override {}
  void complete() {
    while (!pending_.empty()) {
      auto done = std::move(pending_.back());
      pending_.pop_back();
      done(net::Response{200, {}, {}});
    }
  }
  size_t bytes = 0;

 private:
  std::vector<net::ResponseHandler> pending_;
};

std::vector<notifier::Alert> make_batch(int n) {
  std::vector<notifier::Alert> out;
  const auto t0 = core::from_unix_ms(1'764'672'426'846);
  for (int i = 0; i < n; ++i) {
    const std::string s = std::to_string(i);
    notifier::Alert a;
    a.labels = core::Labels{{"alertgroup", "A_group_001"},
                            {"alertname", "A_g001_r0000"},
                            {"container", "c0"},
                            {"dc", "dc1"},
                            {"env", "prod"},
                            {"instance", "host-" + s + ":9100"},
                            {"job", "node-" + s},
                            {"owner", "team-oncall"},
                            {"pod", "pod-" + s + "-abcdef"},
                            {"region", "eu-west-0"},
                            {"service", "svc-1"},
                            {"severity", "warning"},
                            {"team", "team-1"}};
    a.annotations = core::Labels{{"summary", "host-" + s + ":9100 value 109"},
                                 {"description", "rule 1/0: job=node-6 value=109.00"}};
    a.starts_at = t0;
    a.ends_at = t0 + 20s;
    a.generator_url = "http://vm:28880/vmalert/alert?group_id=1&alert_id=" + s;
    out.push_back(std::move(a));
  }
  return out;
}

// Allocations per alert since `before`, less `excluded` (made outside the measured work).
void report_allocs(benchmark::State& state, const alertd_bench::AllocStats& before, size_t n,
                   uint64_t excluded = 0) {
  const auto after = alertd_bench::alloc_stats();
  state.counters["allocs/alert"] =
      benchmark::Counter(static_cast<double>(after.allocations - before.allocations - excluded) /
                         static_cast<double>(state.iterations() * n));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void BM_DirectPost(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const auto batch = make_batch(static_cast<int>(n));
  AnsweringTransport transport;
  notifier::AlertmanagerTarget t;
  t.url = "http://am:9093";
  notifier::AlertmanagerClient client(transport, t);
  const auto before = alertd_bench::alloc_stats();
  for (auto _ : state) {
    client.send(batch, {}, [](std::optional<core::Error>) {});
    transport.complete();
  }
  report_allocs(state, before, n);
}
BENCHMARK(BM_DirectPost)->Arg(1000)->Arg(10000);

// `owned`: the batch is handed over (send_owned, what NotifierSet does for its last target);
// otherwise copied in (send, the other targets).
void queued_post(benchmark::State& state, bool owned) {
  const size_t n = static_cast<size_t>(state.range(0));
  const auto batch = make_batch(static_cast<int>(n));
  fakes::ManualLoop loop;
  AnsweringTransport transport;
  notifier::AlertmanagerTarget t;
  t.url = "http://am:9093";
  notifier::DeliveryQueue queue(loop, std::make_shared<notifier::AlertmanagerClient>(transport, t),
                                {});
  uint64_t excluded = 0;
  const auto before = alertd_bench::alloc_stats();
  for (auto _ : state) {
    if (owned) {
      state.PauseTiming();  // the rule builds its batch anyway: not the queue's cost
      const auto a0 = alertd_bench::alloc_stats().allocations;
      auto copy = batch;
      excluded += alertd_bench::alloc_stats().allocations - a0;
      state.ResumeTiming();
      queue.send_owned(std::move(copy), {}, nullptr);
    } else {
      queue.send(batch, {}, nullptr);
    }
    queue.flush();
    transport.complete();
  }
  report_allocs(state, before, n, excluded);
  if (queue.stats().queued != 0 || queue.stats().dropped != 0) state.SkipWithError("not all sent");
}

void BM_QueuedPostCopied(benchmark::State& state) { queued_post(state, false); }
BENCHMARK(BM_QueuedPostCopied)->Arg(1000);

void BM_QueuedPostOwned(benchmark::State& state) { queued_post(state, true); }
BENCHMARK(BM_QueuedPostOwned)->Arg(1000)->Arg(10000);

}  // namespace

BENCHMARK_MAIN();
