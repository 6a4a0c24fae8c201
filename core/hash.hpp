// FNV-1a 64, the hash vmalert uses for rule, group and alert IDs; and the one 64-bit mixer
// (finalizer) for in-memory hash tables.
#pragma once

#include <cstdint>
#include <string_view>

namespace core {

class Fnv1a64 {
 public:
  static constexpr uint64_t kOffset = 14695981039346656037ULL;
  static constexpr uint64_t kPrime = 1099511628211ULL;

  void add(std::string_view bytes) {
    for (char c : bytes) {
      h_ ^= static_cast<unsigned char>(c);
      h_ *= kPrime;
    }
  }
  void add_byte(uint8_t b) {
    h_ ^= b;
    h_ *= kPrime;
  }
  [[nodiscard]] uint64_t value() const { return h_; }

 private:
  uint64_t h_ = kOffset;
};

// MurmurHash3's fmix64: every input bit affects every output bit. For hash tables keyed by
// values that are not random (ids, counters, partial hashes).
[[nodiscard]] constexpr uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace core
