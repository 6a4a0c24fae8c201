// The validated rule-file model: what config/ hands to rules/ and app/. Plain data, no YAML.
// Every group and rule remembers where it came from (file, line) and its vmalert IDs, so
// errors can point at the line and reload can match groups and rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/labels.hpp"
#include "core/time.hpp"

namespace config {

enum class RuleKind { alerting, recording };

struct SourcePos {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based; 0 = unknown
};

struct RuleSpec {
  RuleKind kind = RuleKind::alerting;
  std::string name;  // `alert` or `record`
  std::string expr;
  core::Duration for_{};
  core::Duration keep_firing_for{};
  core::Labels labels;       // the rule's own labels, as written (templates unexpanded)
  core::Labels annotations;  // as written
  std::optional<bool> debug;
  std::optional<int> update_entries_limit;
  // FNV-1a 64 over expr, kind+name, and the rule's own sorted labels (vmalert's rule ID).
  uint64_t id = 0;
  SourcePos pos;
};

struct GroupSpec {
  std::string name;
  std::string file;
  std::string type = "prometheus";  // prometheus | graphite | vlogs
  std::optional<core::Duration> interval;  // unset: -evaluationInterval
  std::optional<core::Duration> eval_offset;
  std::optional<core::Duration> eval_delay;  // unset: -rule.evalDelay
  std::optional<bool> eval_alignment;        // unset: true
  int limit = 0;
  int concurrency = 1;
  std::vector<std::pair<std::string, std::vector<std::string>>> params;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::pair<std::string, std::string>> notifier_headers;
  core::Labels labels;
  bool debug = false;
  std::vector<RuleSpec> rules;
  // Filled by the loader from LoadOptions: what the group runs with. effective_interval is
  // `interval` when set and > 0, else the default; effective_eval_delay is `eval_delay` or the
  // default, and 0 when eval_offset is set (vmalert ignores the delay then).
  core::Duration effective_interval{};
  core::Duration effective_eval_delay{};
  int effective_limit = 0;            // `limit` when > 0, else -rule.resultsLimit; 0 = none
  int effective_concurrency = 1;      // `concurrency`, at least 1
  bool effective_eval_alignment = true;  // `eval_alignment`, default true
  // FNV-1a over file, 0xFF, name, type, interval string and eval_offset (vmalert's group ID),
  // computed with the effective interval.
  uint64_t id = 0;
  // FNV-1a of the group's canonical form: changes whenever any field changes (reload).
  uint64_t checksum = 0;
  SourcePos pos;
};

}  // namespace config
