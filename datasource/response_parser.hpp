// Streaming parser for Prometheus / VictoriaMetrics query responses (/api/v1/query and
// /api/v1/query_range), the datasource hot path.
//
// Contract:
//   - Input is the HTTP body (already inflated if it came gzip-encoded), fed in chunks of any
//     size as they arrive (split anywhere, even inside a string or an escape). Parsed with
//     RapidJSON: SAX for the envelope, one small in-situ Document per result element, in a
//     reused arena. Only the unfinished JSON value at a chunk boundary is kept across chunks
//     (at most one result element, or one small envelope value), so memory is bounded by the
//     result plus one element, not by the body. Chunks are not referenced after feed() returns.
//   - The envelope keys may come in any order: status, errorType, error, isPartial, data
//     {resultType, result}, stats {seriesFetched (string or number)}, and unknown keys (checked
//     to be valid JSON and skipped). Result elements are parsed shape-agnostically ({"metric",
//     "value"} or {"metric", "values"}), so resultType may come after result.
//   - Shapes: vector and matrix fill one series per element; scalar [ts,"v"] becomes one series
//     with no labels; string [ts,"s"] sets QueryResult::string_value(). Sample values are
//     strings: decimal, "NaN", "Inf", "+Inf", "-Inf". Timestamps are float seconds, kept to
//     the millisecond (1715686833.987 -> 1715686833987).
//   - status "error" yields an error naming errorType and error. Anything malformed (truncated
//     body, wrong types, a value array not of length 2, a non-numeric value, a duplicate label
//     name or label set, a lone \u surrogate, trailing data) yields an error naming the byte
//     offset and what was expected. The same input gives the same result or the same error
//     however it is split into chunks. Raw bytes are not UTF-8-validated.
//   - After an error the QueryResult holds a partial result; discard it.
//
// Usage from an HTTP client:
//   InstantParser p;            // keep it with the QueryResult; reuse both across queries
//   p.reset(out);               // clears out
//   on each body chunk:  if (auto r = p.feed(chunk); !r) abort with r.error()
//   at end of body:      if (auto r = p.finish(); !r) ... else out is complete
// An InstantParser and its QueryResult, once warmed up, parse with zero heap allocations.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/query_result.hpp"

namespace datasource {

class InstantParser {
 public:
  InstantParser();
  ~InstantParser();
  InstantParser(const InstantParser&) = delete;
  InstantParser& operator=(const InstantParser&) = delete;
  InstantParser(InstantParser&&) noexcept;
  InstantParser& operator=(InstantParser&&) noexcept;

  // Starts a new response that fills `out` (cleared here). `out` must outlive the parse.
  void reset(core::QueryResult& out);
  // Consumes the next body chunk. After an error, every later call returns the same error.
  core::Result<void> feed(std::string_view chunk);
  // Ends the body: checks that the response is complete and consistent, sets out.type.
  core::Result<void> finish();

  // When finish() failed because the datasource answered "status":"error": its errorType and
  // error, verbatim (the error message reads `datasource returned an error: errorType "<t>",
  // error "<e>"`). nullptr otherwise.
  struct StatusError {
    std::string error_type;
    std::string error;
  };
  [[nodiscard]] const StatusError* status_error() const;

  // Bytes the parser keeps between answers (for memory accounting; a reused parser keeps the
  // size of the largest answer's needs): the buffer for a value left unfinished at a chunk
  // boundary, the element's arenas and scratch, and the duplicate-series set (8 bytes a slot,
  // 2 slots a series: 16 MB after a 64 MiB answer).
  [[nodiscard]] size_t buffered_bytes() const;
  // A parser holding more than this after an answer is not kept for reuse.
  static constexpr size_t kReuseMaxBytes = size_t{1} << 20;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses a whole body (reset + feed + finish) with a per-thread parser, so repeated calls with
// a reused `out` allocate nothing in steady state.
core::Result<void> parse_response(std::string_view body, core::QueryResult& out);

}  // namespace datasource
