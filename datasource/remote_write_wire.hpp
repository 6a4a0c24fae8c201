// The remote-write request body: a prometheus.WriteRequest (datasource/remote_write.proto) in
// protobuf's wire format, one TimeSeries per row with its labels in name order (overrides
// merged, core/series.hpp) and one sample, compressed as one snappy block. Written directly,
// byte for byte what libprotobuf's serializer writes; no protobuf library at run time.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/series.hpp"

namespace datasource {

// Keeps its scratch between requests: the series' sizes and one 64 KiB block of encoded bytes
// (the series are encoded as snappy consumes them; the whole request never exists
// uncompressed).
class WriteRequestEncoder {
 public:
  // Replaces `out` with the compressed body, trimmed to its size; returns the uncompressed size.
  size_t encode(std::span<const core::Series> series, std::string& out);

 private:
  std::vector<size_t> sizes_;
  std::string chunk_;
};

// One-off encode with a fresh encoder (tests, benchmarks).
size_t encode_write_request(std::span<const core::Series> series, std::string& out);

}  // namespace datasource
