// app::SeriesSelector: a Prometheus series selector (`up{job="a",env=~"prod|dev"}`) matched
// against a label set, as the API's `match[]` filter uses it (vmalert web.go: the rule or alert
// passes when any one selector matches).
//
// Grammar: an optional metric name (becomes __name__="name"), then optionally `{` matchers `}`,
// a matcher being `name op "value"` with op one of = != =~ !~, separated by commas (a trailing
// comma is fine) or by MetricsQL's `or`, which starts another set of matchers (the selector
// matches when any set does). Names may be quoted (Prometheus 3). Values are Go strings: "..."
// or '...' with escapes, or `raw`. Regexps are RE2, anchored at both ends, compiled once at
// parse time (an invalid one is a parse error). A label the set lacks has the value "".
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/labels.hpp"

namespace app {

class SeriesSelector {
 public:
  // Errors say what is wrong and where (kind bad_config).
  [[nodiscard]] static core::Result<SeriesSelector> parse(std::string_view text);

  // True when every matcher of at least one set matches `labels`.
  [[nodiscard]] bool matches(const core::Labels& labels) const;

 private:
  struct Impl;
  explicit SeriesSelector(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// match[] semantics: true when `selectors` is empty or any one of them matches.
[[nodiscard]] bool matches_any(std::span<const SeriesSelector> selectors,
                               const core::Labels& labels);

}  // namespace app
