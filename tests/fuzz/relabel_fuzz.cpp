// relabel_fuzz: one relabel rule and a label set from the input. The first byte picks the action,
// the hash and the modulus; then NUL-separated fields: regex, replacement, target_label,
// separator, source label names (comma-separated), then name=value labels.
// Properties: compile either succeeds or fails with a bad_config error; apply never crashes;
// the result keeps no empty value; replace/hashmod/lowercase/uppercase only add or change their
// (valid) target; hashmod writes a number below the modulus; keep/drop/keepequal/dropequal
// never change the set.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "notifier/relabel.hpp"

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  const uint8_t head = data[0];
  using A = core::RelabelAction;
  static constexpr A kActions[] = {A::replace,   A::keep,      A::drop,     A::keepequal,
                                   A::dropequal, A::hashmod,   A::labelmap, A::labeldrop,
                                   A::labelkeep, A::lowercase, A::uppercase};
  const A action = kActions[(head & 0x0F) % 11];
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto fields = split(rest, '\0');
  auto field = [&](size_t i) { return i < fields.size() ? fields[i] : std::string_view{}; };

  core::RelabelConfig c;
  c.action = action;
  if (!field(0).empty()) c.regex = std::string(field(0));
  if (fields.size() > 1) c.replacement = std::string(field(1));
  c.target_label = std::string(field(2));
  if (fields.size() > 3) c.separator = std::string(field(3));
  if (!field(4).empty()) {
    for (auto n : split(field(4), ',')) c.source_labels.emplace_back(n);
    c.source_labels_set = true;
  }
  c.modulus = (head >> 5) + 1u;
  core::Labels in;
  for (size_t i = 5; i < fields.size(); ++i) {
    const size_t eq = fields[i].find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == fields[i].size()) continue;
    in.set(fields[i].substr(0, eq), fields[i].substr(eq + 1));
  }

  notifier::RelabelOptions opts;
  opts.hashmod = (head & 0x10) != 0 ? notifier::HashmodHash::xxhash64 : notifier::HashmodHash::md5;
  const std::vector<core::RelabelConfig> configs{c};
  auto rules = notifier::RelabelRules::compile(configs, opts);
  if (!rules) {
    check(rules.error().kind == core::ErrorKind::bad_config);
    return 0;
  }
  core::Labels out = in;
  const bool kept = rules->apply(out);
  // Twice on a kept set: relabeling twice must not crash either (and is what a steady alert sees).
  core::Labels again = out;
  if (kept) (void)rules->apply(again);
  if (!kept) {
    check(action == A::keep || action == A::drop || action == A::keepequal ||
          action == A::dropequal);
    return 0;
  }
  for (const core::Label& l : out) check(!l.value.empty());
  switch (action) {
    case A::keep:
    case A::drop:
    case A::keepequal:
    case A::dropequal: check(out == in); break;
    case A::replace:
    case A::hashmod:
    case A::lowercase:
    case A::uppercase:
      for (const core::Label& l : out) {
        const auto before = in.get(l.name);
        if (before && *before == l.value) continue;
        check(core::is_valid_label_name(l.name));
        if (action == A::hashmod) {
          check(l.name == c.target_label);
          check(std::strtoull(std::string(l.value).c_str(), nullptr, 10) < c.modulus);
        }
      }
      break;
    case A::labelmap:
    case A::labeldrop:
    case A::labelkeep: break;
  }
  if (action == A::labeldrop || action == A::labelkeep) check(out.size() <= in.size());
  return 0;
}
