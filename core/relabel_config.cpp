#include "core/relabel_config.hpp"

#include <array>
#include <utility>

#include "core/strings.hpp"

namespace core {
namespace {

constexpr std::array<std::pair<RelabelAction, std::string_view>, 11> kActions{{
    {RelabelAction::replace, "replace"},
    {RelabelAction::keep, "keep"},
    {RelabelAction::drop, "drop"},
    {RelabelAction::keepequal, "keepequal"},
    {RelabelAction::dropequal, "dropequal"},
    {RelabelAction::hashmod, "hashmod"},
    {RelabelAction::labelmap, "labelmap"},
    {RelabelAction::labeldrop, "labeldrop"},
    {RelabelAction::labelkeep, "labelkeep"},
    {RelabelAction::lowercase, "lowercase"},
    {RelabelAction::uppercase, "uppercase"},
}};

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Prometheus' relabelTargetLegacy, `^(?:(?:[a-zA-Z_]|\$(?:\{\w+\}|\w+))+\w*)+$`: word characters
// and `$name` / `${name}` references, not starting with a digit.
bool is_valid_target_with_refs(std::string_view s) {
  if (s.empty()) return false;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '$') {
      ++i;
      if (i < s.size() && s[i] == '{') {
        const size_t start = ++i;
        while (i < s.size() && is_word(s[i])) ++i;
        if (i == start || i >= s.size() || s[i] != '}') return false;
        ++i;
      } else {
        const size_t start = i;
        while (i < s.size() && is_word(s[i])) ++i;
        if (i == start) return false;
      }
      continue;
    }
    if (!is_word(c)) return false;
    if (i == 0 && c >= '0' && c <= '9') return false;
    ++i;
  }
  return true;
}

Error invalid(std::string msg) { return Error{std::move(msg), ErrorKind::bad_config}; }

std::string go_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

std::string_view to_string(RelabelAction a) {
  for (const auto& [action, name] : kActions) {
    if (action == a) return name;
  }
  return "replace";
}

std::optional<RelabelAction> parse_relabel_action(std::string_view s) {
  for (const auto& [action, name] : kActions) {
    if (iequals(s, name)) return action;
  }
  return std::nullopt;
}

bool is_valid_label_name(std::string_view name) {
  if (name.empty()) return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  for (char c : name) {
    if (!is_word(c)) return false;
  }
  return true;
}

std::optional<Error> validate_relabel_config(const RelabelConfig& c) {
  using A = RelabelAction;
  const A a = c.action;
  const std::string action(to_string(a));
  const RelabelConfig defaults;
  if (a == A::hashmod && c.modulus == 0) {
    return invalid("relabel configuration for hashmod requires non-zero modulus");
  }
  const bool needs_target = a == A::replace || a == A::hashmod || a == A::lowercase ||
                            a == A::uppercase || a == A::keepequal || a == A::dropequal;
  if (needs_target && c.target_label.empty()) {
    return invalid("relabel configuration for " + action + " action requires 'target_label' value");
  }
  const bool has_ref = c.target_label.find('$') != std::string::npos;
  if (a == A::replace && !has_ref && !is_valid_label_name(c.target_label)) {
    return invalid(go_quote(c.target_label) + " is invalid 'target_label' for " + action +
                   " action");
  }
  if (a == A::replace && has_ref && !is_valid_target_with_refs(c.target_label)) {
    return invalid(go_quote(c.target_label) + " is invalid 'target_label' for " + action +
                   " action");
  }
  const bool target_only = a == A::lowercase || a == A::uppercase || a == A::keepequal ||
                           a == A::dropequal;
  if (target_only && !is_valid_label_name(c.target_label)) {
    return invalid(go_quote(c.target_label) + " is invalid 'target_label' for " + action +
                   " action");
  }
  if (target_only && c.replacement != defaults.replacement) {
    return invalid("'replacement' can not be set for " + action + " action");
  }
  if (a == A::labelmap && !is_valid_target_with_refs(c.replacement)) {
    return invalid(go_quote(c.replacement) + " is invalid 'replacement' for " + action +
                   " action");
  }
  if (a == A::hashmod && !is_valid_label_name(c.target_label)) {
    return invalid(go_quote(c.target_label) + " is invalid 'target_label' for " + action +
                   " action");
  }
  if (a == A::keepequal || a == A::dropequal) {
    if (c.regex || c.modulus != defaults.modulus || c.separator != defaults.separator ||
        c.replacement != defaults.replacement) {
      return invalid(action +
                     " action requires only 'source_labels' and `target_label`, and no other "
                     "fields");
    }
  }
  if (a == A::labeldrop || a == A::labelkeep) {
    if (c.source_labels_set || c.target_label != defaults.target_label ||
        c.modulus != defaults.modulus || c.separator != defaults.separator ||
        c.replacement != defaults.replacement) {
      return invalid(action + " action requires only 'regex', and no other fields");
    }
  }
  return std::nullopt;
}

}  // namespace core
