// bench_remote_write: what remote write costs one core per row. Rows shaped like a recording
// rule's output over node metrics (__name__ plus 8 labels, ~150 bytes of label text), written
// in rounds of 1000 (a group's output), sent in batches of 10000 (-remoteWrite.maxBatchSize) to
// a FakeTransport that answers 204 at once on a ManualLoop: queue + copy + protobuf + snappy +
// the request's bookkeeping, no socket. BM_Encode isolates protobuf + snappy.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "datasource/remote_write.hpp"
#include "tests/fakes/fake_transport.hpp"
#include "tests/fakes/manual_loop.hpp"

namespace {

std::vector<core::Series> make_rows(int n, int64_t ts) {
  std::vector<core::Series> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    core::Series s;
    const std::string k = std::to_string(i);
    s.labels = core::Labels{{"__name__", "instance:node_cpu_utilisation:rate5m"},
                            {"cluster", "eu-west-0"},
                            {"env", "prod"},
                            {"instance", "host-" + k + ":9100"},
                            {"job", "node-exporter"},
                            {"namespace", "monitoring"},
                            {"pod", "node-exporter-" + k},
                            {"service", "node-exporter"},
                            {"team", "infra"}};
    s.value = 0.125 * i;
    s.timestamp_ms = ts;
    out.push_back(std::move(s));
  }
  return out;
}

void BM_Encode(benchmark::State& state) {
  const auto rows = make_rows(static_cast<int>(state.range(0)), 1'764'672'426'000);
  std::string body;
  size_t raw = 0;
  for (auto _ : state) {
    raw = datasource::encode_write_request(rows, body);
    benchmark::DoNotOptimize(body.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["raw_bytes_per_row"] = static_cast<double>(raw) / static_cast<double>(state.range(0));
  state.counters["wire_bytes_per_row"] =
      static_cast<double>(body.size()) / static_cast<double>(state.range(0));
}
BENCHMARK(BM_Encode)->Arg(1000)->Arg(10000);

void BM_WriteAndSend(benchmark::State& state) {
  fakes::ManualLoop loop;
  fakes::FakeTransport transport;
  transport.respond_with(204, "");
  datasource::RemoteWriteOptions o;
  o.url = "http://127.0.0.1:9090";
  o.concurrency = 1;
  auto writer = datasource::RemoteWriter::create(transport, loop, o);
  if (!writer) {
    state.SkipWithError("create failed");
    return;
  }
  const auto rows = make_rows(1000, 1'764'672'426'000);
  for (auto _ : state) {
    (*writer)->write(rows);  // every 10th round fills a batch: posted, then sent
    loop.run_ready();
    transport.complete_all();
  }
  (*writer)->flush();
  transport.complete_all();
  const auto& st = (*writer)->stats();
  state.SetItemsProcessed(state.iterations() * 1000);
  state.counters["sent_rows"] = static_cast<double>(st.sent_rows_total.load());
  state.counters["dropped"] = static_cast<double>(st.dropped_rows_total.load());
}
BENCHMARK(BM_WriteAndSend);

}  // namespace

BENCHMARK_MAIN();
