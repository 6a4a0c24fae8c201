// core::RelabelConfig: one Prometheus `relabel_config` as plain data, as written in a notifier
// config file (config/ parses it, notifier/ compiles and applies it). Defaults are Prometheus':
// action replace, separator ";", regex "(.*)", replacement "$1".
//
// validate_relabel_config checks everything Prometheus' Config.Validate checks except the
// regex syntax (core/ has no regex engine: notifier::RelabelRules::compile checks that), with
// Prometheus' error texts, e.g. "relabel configuration for replace action requires
// 'target_label' value".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace core {

enum class RelabelAction {
  replace,
  keep,
  drop,
  keepequal,
  dropequal,
  hashmod,
  labelmap,
  labeldrop,
  labelkeep,
  lowercase,
  uppercase,
};

[[nodiscard]] std::string_view to_string(RelabelAction a);
// Case-insensitive, as Prometheus' Action.UnmarshalYAML; nullopt for an unknown action.
[[nodiscard]] std::optional<RelabelAction> parse_relabel_action(std::string_view s);

inline constexpr std::string_view kDefaultRelabelRegex = "(.*)";

struct RelabelConfig {
  std::vector<std::string> source_labels;
  bool source_labels_set = false;  // `source_labels:` was given (even as []): labeldrop refuses it
  std::string separator = ";";
  // As written, without anchors; nullopt = the default "(.*)". An explicit `regex: (.*)` still
  // counts as set (keepequal/dropequal refuse any regex, as Prometheus does).
  std::optional<std::string> regex;
  uint64_t modulus = 0;
  std::string target_label;
  std::string replacement = "$1";
  RelabelAction action = RelabelAction::replace;

  [[nodiscard]] std::string_view regex_or_default() const {
    return regex ? std::string_view(*regex) : kDefaultRelabelRegex;
  }
  friend bool operator==(const RelabelConfig&, const RelabelConfig&) = default;
};

// Prometheus' legacy label name: [a-zA-Z_][a-zA-Z0-9_]*.
[[nodiscard]] bool is_valid_label_name(std::string_view name);

// The checks of Prometheus' relabel.Config.Validate (regex syntax aside). The error's kind is
// bad_config; its message is Prometheus' text.
[[nodiscard]] std::optional<Error> validate_relabel_config(const RelabelConfig& c);

}  // namespace core
