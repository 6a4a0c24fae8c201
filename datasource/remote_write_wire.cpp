#include "datasource/remote_write_wire.hpp"

#include <snappy-sinksource.h>
#include <snappy.h>

#include <bit>
#include <cstring>

namespace datasource {
namespace {

// Protobuf wire format of prometheus.WriteRequest (remote_write.proto), written straight into
// the bytes snappy compresses: no message objects. The generated classes kept every label of the largest
// batch as its own string between batches (16.6 MB at 10,000 alerts and the default batch of
// 10,000 rows) and cost a copy of each label. Field for field the bytes are what libprotobuf's
// serializer writes (proto3: empty strings, a +0.0 value and a 0 timestamp are left out); the
// unit tests compare the two.
namespace wire {

constexpr size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline char* put_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// A length-delimited field's size on the wire: tag (one byte for fields 1-15), length, bytes.
constexpr size_t field_size(size_t len) { return 1 + varint_size(len) + len; }

// Label{name = 1, value = 2}.
inline size_t label_size(const core::Label& l) {
  return (l.name.empty() ? 0 : field_size(l.name.size())) +
         (l.value.empty() ? 0 : field_size(l.value.size()));
}

// Sample{double value = 1; int64 timestamp = 2}.
inline size_t sample_size(const core::Series& s) {
  return (std::bit_cast<uint64_t>(s.value) == 0 ? 0 : 9) +
         (s.timestamp_ms == 0 ? 0 : 1 + varint_size(static_cast<uint64_t>(s.timestamp_ms)));
}

// TimeSeries{repeated Label labels = 1; repeated Sample samples = 2}, one sample.
inline size_t series_size(const core::Series& s) {
  size_t n = field_size(sample_size(s));
  s.for_each_label([&](const core::Label& l) { n += field_size(label_size(l)); });
  return n;
}

inline char* put_bytes(char* p, char tag, std::string_view b) {
  *p++ = tag;
  p = put_varint(p, b.size());
  std::memcpy(p, b.data(), b.size());
  return p + b.size();
}

char* put_series(char* p, const core::Series& s, size_t size) {
  *p++ = 0x0A;  // WriteRequest.timeseries, length-delimited
  p = put_varint(p, size);
  s.for_each_label([&](const core::Label& l) {
    *p++ = 0x0A;  // TimeSeries.labels
    p = put_varint(p, label_size(l));
    if (!l.name.empty()) p = put_bytes(p, 0x0A, l.name);
    if (!l.value.empty()) p = put_bytes(p, 0x12, l.value);
  });
  *p++ = 0x12;  // TimeSeries.samples
  p = put_varint(p, sample_size(s));
  if (const auto bits = std::bit_cast<uint64_t>(s.value); bits != 0) {
    *p++ = 0x09;  // Sample.value, fixed 64-bit little-endian
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(bits >> (8 * i));
  }
  if (s.timestamp_ms != 0) {
    *p++ = 0x10;  // Sample.timestamp, varint (two's complement for negative values)
    p = put_varint(p, static_cast<uint64_t>(s.timestamp_ms));
  }
  return p;
}

}  // namespace wire

// Feeds snappy the request's bytes a piece at a time: the series are encoded as snappy asks
// for them into a buffer of at least one snappy block (64 KiB), so a batch never exists
// uncompressed in full (at 10,000 rows that was 3.9 MB kept between batches).
class SeriesSource final : public snappy::Source {
 public:
  SeriesSource(std::span<const core::Series> series, std::span<const size_t> sizes, size_t total,
               std::string& buf)
      : series_(series), sizes_(sizes), left_(total), buf_(buf) {
    buf_.clear();
  }

  size_t Available() const override { return left_; }

  const char* Peek(size_t* len) override {
    if (pos_ == buf_.size()) refill();
    *len = buf_.size() - pos_;
    return buf_.data() + pos_;
  }

  void Skip(size_t n) override {
    pos_ += n;
    left_ -= n;
  }

 private:
  static constexpr size_t kChunk = 64 * 1024;

  void refill() {
    buf_.clear();
    pos_ = 0;
    size_t want = 0;
    size_t end = next_;
    while (end < series_.size() && want < kChunk) want += wire::field_size(sizes_[end++]);
    buf_.resize(want);
    char* p = buf_.data();
    for (; next_ < end; ++next_) p = wire::put_series(p, series_[next_], sizes_[next_]);
  }

  std::span<const core::Series> series_;
  std::span<const size_t> sizes_;
  size_t left_;
  std::string& buf_;
  size_t pos_ = 0;
  size_t next_ = 0;
};

class StringSink final : public snappy::Sink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  void Append(const char* bytes, size_t n) override { out_.append(bytes, n); }

 private:
  std::string& out_;
};

}  // namespace

size_t WriteRequestEncoder::encode(std::span<const core::Series> series, std::string& out) {
  size_t total = 0;
  sizes_.clear();
  sizes_.reserve(series.size());
  for (const auto& s : series) {
    const size_t n = wire::series_size(s);
    sizes_.push_back(n);
    total += wire::field_size(n);
  }
  out.clear();
  SeriesSource source(series, sizes_, total, chunk_);
  StringSink sink(out);
  snappy::Compress(&source, &sink);
  out.shrink_to_fit();
  return total;
}

size_t encode_write_request(std::span<const core::Series> series, std::string& out) {
  WriteRequestEncoder encoder;
  return encoder.encode(series, out);
}

}  // namespace datasource
