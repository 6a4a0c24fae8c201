// net::GzipInflater: streaming gzip decompression of a response body (zlib), chunk by chunk,
// with a cap on the inflated bytes. No Boost; used by net::HttpClient when a request set
// Request::accept_gzip and the answer came with `Content-Encoding: gzip`.
// net::gzip_compress: one gzip member from a buffer in memory (request bodies sent with
// `Content-Encoding: gzip`, e.g. -pushmetrics.url). zlib stays inside net/.
// net::GzipDeflater: streaming gzip compression (zlib), used by net::HttpServer for answers to
// clients that accept gzip; accepts_gzip() and compressible_content_type() are its rules for
// when (those of klauspost's gzhttp, which VictoriaMetrics' lib/httpserver wraps around every
// handler).
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

// Streaming gzip compression: each write() appends what zlib has ready to `out` (often nothing:
// zlib keeps up to its 32 KiB window plus its own buffers, a fixed few hundred KiB whatever the
// body's size); finish() appends the rest and the gzip trailer. One deflater makes one gzip
// member; after finish() it is done.
class GzipDeflater {
 public:
  // zlib's level: 1 (fastest, vmalert's gzhttp.CompressionLevel(1)) to 9.
  explicit GzipDeflater(int level);
  ~GzipDeflater();
  GzipDeflater(const GzipDeflater&) = delete;
  GzipDeflater& operator=(const GzipDeflater&) = delete;

  // Fails only when zlib could not be set up (out of memory) or after finish().
  core::Result<void> write(std::string_view in, std::string& out);
  core::Result<void> finish(std::string& out);
  // `in` compressed whole (a gzip member).
  static core::Result<std::string> compress(std::string_view in, int level);

 private:
  core::Result<void> run(std::string_view in, int flush, std::string& out);
  struct Stream;
  std::unique_ptr<Stream> stream_;
  bool finished_ = false;
};

// Whether an Accept-Encoding value accepts gzip, as gzhttp reads it: the first coding named
// "gzip" (any case) decides, accepted when its q-value is above 0 (no q: 1; an unreadable q:
// 0). "x-gzip", "*" and a missing header do not accept it.
bool accepts_gzip(std::string_view accept_encoding);

// Whether a response of this Content-Type is worth compressing, as gzhttp's
// DefaultContentTypeFilter: not video/*, audio/*, image/jp*, nor a type naming a compressed
// format (compress, zip, snappy, lzma, xz, zstd, brotli, stuffit). Empty: yes.
bool compressible_content_type(std::string_view content_type);

// True when a Content-Encoding value names gzip ("gzip" or "x-gzip", any case, spaces around).
bool is_gzip_encoding(std::string_view value);

}  // namespace net
