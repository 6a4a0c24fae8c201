// Rule-file loading: `-rule` values -> validated GroupSpecs, or every error of the load.
//
// Contract: load_rules never throws and never stops at the first problem. Every error is one
// core::Error whose message reads `file:line:column: group "g": rule "r": what is wrong`, so
// `-dryRun`, reload and start-up can print them all. Any error fails the whole load (groups is
// then empty), as in vmalert. Network and the template engine come in as callbacks, so config/
// depends on core only.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/model.hpp"
#include "core/error.hpp"
#include "core/time.hpp"

namespace config {

// Checks one label/annotation template; returns the parse error (templates::check_template).
using TemplateCheck = std::function<std::optional<core::Error>(std::string_view text)>;
// Fetches an http(s):// `-rule` source once per load (app/ passes one built on net/).
using UrlFetch = std::function<core::Result<std::string>(const std::string& url)>;
// Looks up an environment variable for `%{NAME}` expansion.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// The largest rule file (or http(s) rule body) the loader reads: 32 MiB. The largest file in
// the public rule corpus is under 1 MiB; the cap keeps `-rule=/dev/zero` or a runaway generator
// from taking the daemon's memory.
inline constexpr size_t kMaxRuleFileBytes = size_t{32} << 20;

struct LoadOptions {
  std::vector<std::string> paths;  // -rule values: paths, doublestar globs, fs://, http(s)://
  core::Duration default_interval = std::chrono::minutes{1};      // -evaluationInterval
  core::Duration default_eval_delay = std::chrono::seconds{30};   // -rule.evalDelay
  std::string default_rule_type = "prometheus";                   // -rule.defaultRuleType
  int default_limit = 0;                                          // -rule.resultsLimit
  bool validate_templates = true;                                 // -rule.validateTemplates
  bool validate_expressions = true;                               // -rule.validateExpressions
  TemplateCheck check_template;  // empty: templates are not checked
  UrlFetch fetch;                // empty: http(s):// sources are an error
  EnvLookup env;                 // empty: the process environment
};

struct LoadResult {
  std::vector<GroupSpec> groups;       // sorted by file, then name; empty when errors exist
  std::vector<core::Error> errors;     // every error of the load, in file order
  // e.g. a glob that matched no file, "no groups found in ...", a key given twice
  std::vector<std::string> warnings;
  std::vector<std::string> files;      // the sources read, in order
  [[nodiscard]] bool ok() const { return errors.empty(); }
};

// Reads every source named by options.paths and validates it.
[[nodiscard]] LoadResult load_rules(const LoadOptions& options);

// Parses and validates one file's text; `file` is the name used in errors and GroupSpec::file.
// options.paths is ignored.
[[nodiscard]] LoadResult parse_rules_text(std::string_view text, const std::string& file,
                                          const LoadOptions& options);

// vmalert's lib/envtemplate: `%{NAME}` becomes the variable's value, itself expanded (nesting
// is bounded, so a self-reference cannot loop); unknown names stay as written.
[[nodiscard]] std::string expand_env(std::string_view text, const EnvLookup& env);

// vmalert's rule ID: FNV-1a 64 over expr, "recording"+name or "alerting"+name, then the rule's
// own labels sorted by name as (name, value, 0xFF).
[[nodiscard]] uint64_t rule_id(const RuleSpec& rule);
// vmalert's group ID: FNV-1a 64 over file, 0xFF, name, type, the Go string of the effective
// interval, and the Go string of eval_offset when set.
[[nodiscard]] uint64_t group_id(const GroupSpec& group, core::Duration effective_interval);

}  // namespace config
