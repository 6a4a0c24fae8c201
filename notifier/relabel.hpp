// Prometheus relabeling (model/relabel/relabel.go) over core::Labels: the rules of a
// `relabel_configs` / `alert_relabel_configs` list compiled once, applied per alert or target.
//
// Contract: pure (no I/O, no clock, no logging), thread-safe for concurrent apply() on one
// compiled list. Semantics are Prometheus': the regex is fully anchored `^(?:regex)$` (RE2
// syntax, which is Go's), `$1` / `${1}` / `$name` / `${name}` / `$$` in `target_label` and
// `replacement` expand as Go's regexp.Expand does, setting a label to "" deletes it, `hashmod`
// is md5 of the joined value, last 8 bytes as a big-endian uint64, mod `modulus` (or vmalert's
// xxhash64, see RelabelOptions); lowercase and
// uppercase map Unicode letters (Go's strings.ToLower/ToUpper; invalid UTF-8 becomes U+FFFD).
// A dropped set is reported as such (false / nullopt), never as an empty set.
//
// Speed: regexes and replacement templates are compiled once; apply() allocates nothing when
// the rules change nothing (scratch buffers are per thread and reused).
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/relabel_config.hpp"

namespace notifier {

// The hash behind `hashmod`. Prometheus uses md5 (the default here); vmalert's
// lib/promrelabel uses xxhash64, so shards differ between the two for the same modulus.
enum class HashmodHash { md5, xxhash64 };

struct RelabelOptions {
  HashmodHash hashmod = HashmodHash::md5;
};

class RelabelRules {
 public:
  RelabelRules();  // no rules: keeps every set unchanged
  ~RelabelRules();
  RelabelRules(RelabelRules&&) noexcept;
  RelabelRules& operator=(RelabelRules&&) noexcept;
  RelabelRules(const RelabelRules&) = delete;
  RelabelRules& operator=(const RelabelRules&) = delete;

  // Validates (core::validate_relabel_config plus the regex) and compiles every rule. The error
  // names the rule: "relabel config #2: <Prometheus' text>" (1-based), kind bad_config.
  [[nodiscard]] static core::Result<RelabelRules> compile(
      std::span<const core::RelabelConfig> configs, RelabelOptions options = {});

  // Applies the rules in order to `labels`. Returns false as soon as a rule drops the set
  // (labels are then left as that rule found them).
  [[nodiscard]] bool apply(core::Labels& labels) const;
  // The relabeled copy, or nullopt when the set is dropped.
  [[nodiscard]] std::optional<core::Labels> process(core::Labels labels) const;

  [[nodiscard]] bool empty() const { return rules_.empty(); }
  [[nodiscard]] size_t size() const { return rules_.size(); }

 private:
  struct Rule;
  std::vector<std::unique_ptr<Rule>> rules_;
};

// vmalert's relabeling of one alert before it is sent (notifier/alert.go
// applyRelabelingIfNeeded, alertmanager.go send): label names are first sanitized to the
// metric-name charset (notifier::sanitize_label_name, as the payload encoder does), then each
// list runs in order (the global alert_relabel_configs, then the target's). Returns false when a
// list drops the alert or leaves no label: vmalert does not send it. Null lists are skipped.
[[nodiscard]] bool relabel_alert(core::Labels& labels,
                                 std::initializer_list<const RelabelRules*> lists);

// One rule's full check, regex syntax included: what config/ calls (through a callback) to
// report a bad rule at its file position.
[[nodiscard]] std::optional<core::Error> check_relabel_config(const core::RelabelConfig& config);

}  // namespace notifier
