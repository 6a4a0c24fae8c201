// remote_write_fuzz: the remote-write encoder (datasource/remote_write_wire.cpp) writes into
// buffers it sized itself, so a size it gets wrong is a heap overflow (ASan) or a wrong
// request. Random series (labels, overrides, any value bits and timestamps, some labels long
// enough to span snappy blocks) are encoded, decompressed, and read back with a decoder written
// here from the protobuf encoding rules, independently of the encoder: every series must come
// back exactly, in order, and nothing else.
#include <fuzzer/FuzzedDataProvider.h>
#include <snappy.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/series.hpp"
#include "datasource/remote_write_wire.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct Reader {
  const char* p;
  const char* end;

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      check(p < end);
      const auto b = static_cast<uint8_t>(*p++);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    std::abort();  // longer than 10 bytes
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    check(n <= static_cast<uint64_t>(end - p));
    std::string_view out(p, n);
    p += n;
    return out;
  }
};

struct Decoded {
  std::vector<std::pair<std::string_view, std::string_view>> labels;
  uint64_t value_bits = 0;
  int64_t ts = 0;
};

// TimeSeries{repeated Label labels = 1; repeated Sample samples = 2}: labels then one sample,
// as the encoder writes them.
Decoded decode_series(std::string_view in) {
  Reader r{in.data(), in.data() + in.size()};
  Decoded d;
  bool sample = false;
  while (r.p < r.end) {
    const uint64_t tag = r.varint();
    if (tag == 0x0A) {
      check(!sample);
      Reader l{nullptr, nullptr};
      const std::string_view body = r.bytes();
      l = {body.data(), body.data() + body.size()};
      std::string_view name, value;
      bool seen_value = false;
      while (l.p < l.end) {
        const uint64_t t = l.varint();
        if (t == 0x0A) {
          check(!seen_value && name.empty());
          name = l.bytes();
          check(!name.empty());  // proto3 leaves an empty string out
        } else {
          check(t == 0x12 && !seen_value);
          value = l.bytes();
          check(!value.empty());
          seen_value = true;
        }
      }
      d.labels.emplace_back(name, value);
    } else {
      check(tag == 0x12 && !sample);
      sample = true;
      const std::string_view body = r.bytes();
      Reader s{body.data(), body.data() + body.size()};
      bool seen_value = false, seen_ts = false;
      while (s.p < s.end) {
        const uint64_t t = s.varint();
        if (t == 0x09) {
          check(!seen_value && !seen_ts && s.end - s.p >= 8);
          for (int i = 0; i < 8; ++i) {
            d.value_bits |= static_cast<uint64_t>(static_cast<uint8_t>(s.p[i])) << (8 * i);
          }
          s.p += 8;
          check(d.value_bits != 0);
          seen_value = true;
        } else {
          check(t == 0x10 && !seen_ts);
          d.ts = static_cast<int64_t>(s.varint());
          check(d.ts != 0);
          seen_ts = true;
        }
      }
    }
  }
  check(sample);
  return d;
}

constexpr core::Label kAlertsFiring[] = {{"__name__", "ALERTS"}, {"alertstate", "firing"}};
constexpr core::Label kForState[] = {{"__name__", "ALERTS_FOR_STATE"}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<std::string> storage;  // label strings, alive until the end
  storage.reserve(256);
  std::vector<core::Series> series;
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 16);
  bool long_value = false;
  for (size_t i = 0; i < n && storage.size() + 40 < storage.capacity(); ++i) {
    core::LabelsBuilder b;
    const size_t labels = in.ConsumeIntegralInRange<size_t>(0, 8);
    for (size_t k = 0; k < labels; ++k) {
      storage.push_back(in.ConsumeRandomLengthString(64));
      std::string value = in.ConsumeRandomLengthString(64);
      // Now and then a long value: lengths of 2-3 varint bytes, series beyond a 64 KiB block.
      // (Rare, one per input and at most ~96 KiB: they cost most of a run's time; a run that
      // let the corpus fill with them fell to a few hundred inputs a second.)
      if (!long_value && in.ConsumeIntegralInRange<int>(0, 63) == 0) {
        long_value = true;
        const size_t times = in.ConsumeIntegralInRange<size_t>(1, 1500);
        std::string longer;
        for (size_t t = 0; t < times; ++t) longer += value.empty() ? std::string("x") : value;
        value = std::move(longer);
      }
      storage.push_back(std::move(value));
      b.set(storage[storage.size() - 2], storage.back());
    }
    core::Series s;
    s.labels = b.build();
    s.value = std::bit_cast<double>(in.ConsumeIntegral<uint64_t>());
    s.timestamp_ms = in.ConsumeIntegral<int64_t>();
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
      case 1:
        s.overrides = kAlertsFiring;
        break;
      case 2:
        s.overrides = kForState;
        break;
      default:
        break;
    }
    series.push_back(std::move(s));
  }

  std::string body;
  const size_t raw_size = datasource::encode_write_request(series, body);
  check(body.size() <= body.capacity());
  std::string raw;
  check(snappy::Uncompress(body.data(), body.size(), &raw));
  check(raw.size() == raw_size);

  // WriteRequest{repeated TimeSeries timeseries = 1}.
  Reader r{raw.data(), raw.data() + raw.size()};
  size_t i = 0;
  while (r.p < r.end) {
    check(r.varint() == 0x0A);
    const Decoded d = decode_series(r.bytes());
    check(i < series.size());
    const core::Series& want = series[i++];
    std::vector<std::pair<std::string_view, std::string_view>> labels;
    want.for_each_label([&](const core::Label& l) { labels.emplace_back(l.name, l.value); });
    check(d.labels == labels);
    check(d.value_bits == std::bit_cast<uint64_t>(want.value));
    check(d.ts == want.timestamp_ms);
  }
  check(i == series.size());
  return 0;
}
