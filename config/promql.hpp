// Syntax check for PromQL and MetricsQL expressions, as `-dryRun` and `promtool check rules`
// need it: a lexer and a recursive-descent parser that build no tree and accept everything
// MetricsQL accepts syntactically (function names are not checked; `WITH (...)` templates,
// `default`/`if`/`ifnot`, `keep_metric_names`, `limit N`, duration arithmetic `[5m+1m]`, `[1i]`,
// quoted metric names `{"metric"}`). Type checks Prometheus does (e.g. rate() needs a range
// vector) are not made: MetricsQL accepts those expressions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace config {

struct ExprError {
  int line = 1;    // 1-based, inside the expression text
  int column = 1;  // 1-based, in bytes
  std::string message;
  // "LINE:COLUMN: message", the form promtool prints.
  [[nodiscard]] std::string to_string() const {
    return std::to_string(line) + ":" + std::to_string(column) + ": " + message;
  }
};

// Returns the first syntax error of `expr`, or nothing when it parses.
[[nodiscard]] std::optional<ExprError> check_promql(std::string_view expr);

}  // namespace config
