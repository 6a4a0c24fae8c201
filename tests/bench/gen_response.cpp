#include "gen_response.hpp"

#include <array>
#include <cstdint>
#include <cstdio>

namespace alertd_bench {

namespace {
constexpr std::array<const char*, 20> kPaths = {
    "/api/v1/write", "/api/v1/import", "/api/v1/import/csv", "/api/v1/import/native",
    "/api/v1/import/prometheus", "/datadog/api/v1/series", "/influx/write", "/insert/0/prometheus",
    "/metrics", "/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/profile",
    "/debug/pprof/symbol", "/debug/pprof/trace", "/debug/pprof/default", "/flags",
    "/-/reload", "*/favicon.ico", "/health", "/ready"};
constexpr std::array<const char*, 3> kComponents = {"vminsert", "vmselect", "vmstorage"};
constexpr std::array<const char*, 3> kPorts = {"8480", "8481", "8482"};
}  // namespace

std::string wrap_result_array(const std::string& result_array) {
  return R"({"status":"success","isPartial":false,"data":{"resultType":"vector","result":)" +
         result_array + "}}";
}

std::string generate_instant_response(size_t series, bool scattered) {
  std::string out;
  out.reserve(series * 430 + 256);
  out += R"({"status":"success","isPartial":false,"data":{"resultType":"vector","result":[)";
  char buf[1024];
  for (size_t i = 0; i < series; ++i) {
    // Scattered: series i takes the (pod, path) of j, a permutation of [0, series) (1000003 is
    // prime, so coprime with any count here); each pod still has 20 series, none adjacent.
    const size_t j = scattered ? static_cast<size_t>((uint64_t{i} * 1000003u) % series) : i;
    const size_t pod = j / kPaths.size();
    const size_t comp = pod % kComponents.size();
    const char* c = kComponents[comp];
    const int n = std::snprintf(
        buf, sizeof buf,
        R"(%s{"metric":{"__name__":"vm_http_requests_total","cluster":"sandbox","container":"%s",)"
        R"("endpoint":"http","instance":"10.%zu.%zu.%zu:%s","job":"%s-benchmark-vm-cluster",)"
        R"("namespace":"benchmark","path":"%s","pod":"%s-benchmark-vm-cluster-b955964f8-%06zx",)"
        R"("prometheus":"monitoring/monitoring-vmagent","service":"%s-benchmark-vm-cluster"},)"
        R"("value":[1715686833.987,"%zu"]})",
        i == 0 ? "" : ",", c, 64 + (pod >> 16) % 64, (pod >> 8) & 0xFF, pod & 0xFF, kPorts[comp],
        c, kPaths[j % kPaths.size()], c, pod, c, (i * 7919) % 100003);
    out.append(buf, static_cast<size_t>(n));
  }
  out += R"(]},"stats":{"seriesFetched":")" + std::to_string(series) + "\"}}";
  return out;
}

}  // namespace alertd_bench
