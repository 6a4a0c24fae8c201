// FNV-1a 64, the hash vmalert uses for rule, group and alert IDs.
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

}  // namespace core
