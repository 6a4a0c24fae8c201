// net::GzipInflater: streaming gzip decompression of a response body (zlib), chunk by chunk,
// with a cap on the inflated bytes. No Boost; used by net::HttpClient when a request set
// Request::accept_gzip and the answer came with `Content-Encoding: gzip`.
// net::gzip_compress: one gzip member from a buffer in memory (request bodies sent with
// `Content-Encoding: gzip`, e.g. -pushmetrics.url). zlib stays inside net/.
//
// Contract:
//   - feed() takes compressed bytes split anywhere and hands every inflated piece to `sink`
//     (pieces are views into an internal buffer, valid during the call only);
//   - the cap counts inflated bytes: the piece that would pass it is not delivered and feed()
//     fails with ErrorKind::too_large, so a small "gzip bomb" costs one buffer of memory and
//     stops there;
//   - corrupt data fails with ErrorKind::bad_response; finish() fails when the stream ended
//     before the gzip trailer (truncated body). Concatenated gzip members are one stream, as
//     in Go's gzip.Reader.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace net {

class GzipInflater {
 public:
  using Sink = std::function<std::optional<core::Error>(std::string_view piece)>;

  explicit GzipInflater(size_t cap);
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  // Inflates `in`; an error from `sink` stops and is returned as is.
  core::Result<void> feed(std::string_view in, const Sink& sink);
  // The body ended: fails unless the gzip stream was complete.
  core::Result<void> finish();
  [[nodiscard]] size_t inflated_bytes() const { return inflated_; }

 private:
  struct Stream;
  std::unique_ptr<Stream> stream_;
  size_t cap_;
  size_t inflated_ = 0;
  bool member_done_ = false;  // the last member reached its trailer
};

// `data` as one gzip member (zlib's default level, as Go's gzip.NewWriter). Fails only when zlib
// cannot get memory (kind other).
[[nodiscard]] core::Result<std::string> gzip_compress(std::string_view data);

// True when a Content-Encoding value names gzip ("gzip" or "x-gzip", any case, spaces around).
bool is_gzip_encoding(std::string_view value);

}  // namespace net
