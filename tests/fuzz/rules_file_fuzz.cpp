// rules_file_fuzz: parse_rules_text on arbitrary bytes. Invariants: no crash or hang; a
// failed load returns no groups and every error names the file; a successful load yields
// groups whose rules all have a name and an expression.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "config/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  config::LoadOptions o;
  o.env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "A") return std::string("%{B}x");
    if (name == "B") return std::string("%{A}");
    return std::nullopt;
  };
  o.check_template = [](std::string_view t) -> std::optional<core::Error> {
    if (t.find("{{ }}") != std::string_view::npos) return core::Error{"empty action"};
    return std::nullopt;
  };
  const auto r = config::parse_rules_text(text, "f.yml", o);
  if (!r.errors.empty()) {
    if (!r.groups.empty()) std::abort();
    for (const auto& e : r.errors) {
      if (e.message.rfind("f.yml", 0) != 0) std::abort();
    }
    return 0;
  }
  for (const auto& g : r.groups) {
    if (g.name.empty()) std::abort();
    for (const auto& rule : g.rules) {
      if (rule.name.empty() || rule.expr.empty()) std::abort();
    }
  }
  return 0;
}
