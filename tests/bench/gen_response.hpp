// Synthetic Prometheus instant-query responses for the parser benchmarks, shaped like vmalert's
// testdata/instant_response.json (vm_http_requests_total from a VictoriaMetrics cluster, ~418
// bytes per series, 11 labels, fractional timestamps).
//
// Cardinality, stated because it drives the compact result's size: series i belongs to pod
// i / 20 and path i % 20, so every series is unique, `instance` and `pod` change every 20
// series, `path` cycles through 20 values, and the other 8 labels take a handful of values
// (`scattered` reorders them, below).
#pragma once

#include <cstddef>
#include <string>

namespace alertd_bench {

// A full response body: {"status":"success","isPartial":false,"data":{"resultType":"vector",
// "result":[...]},"stats":{"seriesFetched":"N"}}. Deterministic. With `scattered`, series are
// permuted so that instance/pod change on every series (each value still has its 20 series,
// never adjacent): no runs for the previous-series hint, the same cardinality.
std::string generate_instant_response(size_t series, bool scattered = false);

// Wraps a bare `result` array (like vmalert's instant_response.json) into a response body.
std::string wrap_result_array(const std::string& result_array);

}  // namespace alertd_bench
