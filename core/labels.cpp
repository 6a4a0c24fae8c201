#include "core/labels.hpp"

#include <algorithm>

#include "core/hash.hpp"

namespace core {

Labels::Labels(std::initializer_list<Label> init) {
  for (const auto& l : init) set(l.name, l.value);
}

void Labels::set(std::string_view name, std::string_view value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  if (it != items_.end() && it->name == name) {
    it->value.assign(value);
    return;
  }
  items_.insert(it, Label{std::string(name), std::string(value)});
}

bool Labels::erase(std::string_view name) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  if (it == items_.end() || it->name != name) return false;
  items_.erase(it);
  return true;
}

std::optional<std::string_view> Labels::get(std::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  if (it == items_.end() || it->name != name) return std::nullopt;
  return std::string_view(it->value);
}

uint64_t Labels::hash_without_name() const {
  Fnv1a64 h;
  for (const auto& l : items_) {
    if (l.name == "__name__") continue;
    h.add(l.name);
    h.add(l.value);
    h.add_byte(0xFF);
  }
  return h.value();
}

std::string Labels::to_string() const {
  std::string out = "{";
  bool first = true;
  for (const auto& l : items_) {
    if (!first) out += ", ";
    first = false;
    out += l.name;
    out += "=\"";
    for (char c : l.value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

}  // namespace core
