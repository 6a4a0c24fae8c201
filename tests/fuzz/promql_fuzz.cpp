// promql_fuzz: check_promql on arbitrary bytes. Invariants: no crash, no hang, and an error's
// position lies inside the input (line <= lines, column >= 1).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/promql.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view expr(reinterpret_cast<const char*>(data), size);
  const auto err = config::check_promql(expr);
  if (err) {
    size_t lines = 1;
    for (char c : expr) lines += c == '\n' ? 1 : 0;
    if (err->line < 1 || static_cast<size_t>(err->line) > lines || err->column < 1 ||
        err->message.empty()) {
      std::abort();
    }
  }
  return 0;
}
