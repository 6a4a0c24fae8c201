// templates::Template: Go text/template, exactly as vmalert runs it for labels and annotations.
//
// A Template is parsed once (at rule load) and rendered many times. Rendering is pure: every
// input, the evaluation time and the `query` function included, comes in through
// TemplateData and TemplateEnv. Output and error texts follow vmalert's dialect (see
// docs/templates.md for where vmalert and Prometheus differ).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/time.hpp"

namespace templates {

// One sample returned by the template `query` function.
struct QuerySample {
  core::Labels labels;  // __name__ included when the datasource sends it
  double value = 0;
  int64_t timestamp_ms = 0;
};

// Runs an instant query at the evaluation time. Called from inside render(); it may block the
// calling thread (the daemon renders templates that use `query` off the event loop).
using QueryFunction = std::function<core::Result<std::vector<QuerySample>>(std::string_view)>;

// The variables of vmalert's AlertTplData plus the external ones. Label templates get only
// labels, value and expr (the rest zero), as in vmalert.
struct TemplateData {
  const core::Labels* labels = nullptr;  // the "origin" labels: series labels incl. __name__
  // Instead of `labels` (when that is null): the same labels, not built into a set. A template
  // that Template::simple() says needs no interpreter only looks labels up, so the caller can
  // skip building a set per series; any other template builds one from it first.
  const core::LabelsBuilder* label_builder = nullptr;
  double value = 0;
  std::string_view expr;
  std::string_view type = "prometheus";
  core::Duration interval{};
  uint64_t alert_id = 0;
  uint64_t group_id = 0;
  core::TimePoint active_at{};
  core::Duration for_{};
  bool is_partial = false;
};

// The most evaluation steps one render may take: a step per node walked, range iteration and
// command, plus a step per 256 bytes a function call reads or returns and 1,000 per `query`.
// Past it the render fails with "... exceeded 10000000 evaluation steps". The byte cap below
// bounds memory but not time: `{{ range 100000000 }}{{ end }}`, or a {{ define }} that calls
// itself twice per level, writes nothing and would stall its group for hours (and keep
// vmalert's, which has no such budget). Ten million steps is about a second or less; a real
// annotation takes tens to thousands.
inline constexpr uint64_t kMaxRenderSteps = 10'000'000;

struct TemplateEnv {
  const core::Labels* external_labels = nullptr;
  std::string_view external_url;
  QueryFunction query;  // empty: `query` returns an error
  // Wall clock for `now` (vmalert uses the wall clock, not the evaluation time).
  std::function<core::TimePoint()> now;
  // The step budget of one render; tests lower it to reach it quickly under sanitizers.
  uint64_t max_render_steps = kMaxRenderSteps;
};

// The most bytes one rendered value (a label or an annotation) may have, and the most any
// string built while rendering it may have (a printf result, a reReplaceAll result). Past it the
// render fails with "... rendered value exceeds 1048576 bytes" instead of building gigabytes
// (`{{ range 100000000 }}x{{ end }}`, widths up to Go's 10,000,009). vmalert has no such cap;
// no real annotation comes near it.
inline constexpr size_t kMaxRenderedBytes = size_t{1} << 20;

class TemplateImpl;
struct TemplateSetData;

// The shared {{ define }} blocks of -rule.templates files, available to every rule value.
// Cheap to copy (shared, immutable); Templates parsed against a set keep it alive.
class TemplateSet {
 public:
  struct File {
    std::string name;  // used in error messages, like Go's ParseFiles (the base name)
    std::string text;
  };
  TemplateSet();
  // Parses every file; a parse error names the file and line (`template: NAME:LINE: MSG`).
  // A later file's definition of a name replaces an earlier one, as in Go.
  [[nodiscard]] static core::Result<TemplateSet> parse(std::span<const File> files);
  [[nodiscard]] bool empty() const;
  [[nodiscard]] const std::shared_ptr<const TemplateSetData>& data() const { return data_; }

 private:
  std::shared_ptr<const TemplateSetData> data_;
};

// A parsed template: immutable and shared. Copies share the parse; parsing a text that another
// live Template (in this process) was parsed from, against the same TemplateSet, shares that
// parse too: 1,000 rules with the same `summary` hold one tree, not 1,000 (issue 12).
class Template {
 public:
  Template();  // the empty literal; allocates nothing
  ~Template();
  Template(const Template&);
  Template& operator=(const Template&);
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // Parses `text` (vmalert: text without both "{{" and "}}" is kept verbatim). A parse error
  // reads like vmalert's: `template: :LINE: MSG`.
  [[nodiscard]] static core::Result<Template> parse(std::string_view text,
                                                    const TemplateSet* shared = nullptr);

  // Renders into `out` (appended). On an execution error returns it; `out` then holds no
  // partial output from this call.
  [[nodiscard]] core::Result<void> render(const TemplateData& data, const TemplateEnv& env,
                                          std::string& out) const;

  // True when the text has no actions and renders to itself.
  [[nodiscard]] bool is_literal() const;
  // Literal, or texts and the simple actions only ({{ $labels.NAME }}, {{ $value }} and its
  // humanize functions and printf): rendered without the interpreter (or a parse tree kept)
  // unless its output passes kMaxRenderedBytes (see TemplateData::label_builder).
  [[nodiscard]] bool simple() const;
  // True when the template (or a template it calls) uses the `query` function.
  [[nodiscard]] bool uses_query() const;
  // Literal, or texts and {{ $labels.NAME }} actions only: the output is a function of the
  // values of the labels reads_label() names (and of nothing else: not $value, not the time).
  [[nodiscard]] bool reads_labels_only() const;
  // Whether a reads_labels_only() template looks up label `name`.
  [[nodiscard]] bool reads_label(std::string_view name) const;
  // Whether both share one parse (tests).
  [[nodiscard]] bool shares_parse_with(const Template& o) const { return impl_ == o.impl_; }

 private:
  std::shared_ptr<const TemplateImpl> impl_;
};

// How many parses are alive and shared by text (tests): a parse leaves the count when the last
// Template holding it is gone.
[[nodiscard]] size_t live_parse_count();

// The text vmalert puts in place of a value whose rendering failed, given render()'s error.
[[nodiscard]] inline std::string vmalert_error_text(const core::Error& render_error) {
  return "error evaluating template: " + render_error.message;
}

// vmalert's treatment of one label or annotation value in one step: parse, then render. On
// failure the error is the text vmalert reports: "error parsing template: template: :1: ..." or
// "error evaluating template: template: :1:320: executing \"\" at <...>: ...".
[[nodiscard]] core::Result<std::string> render_vmalert(std::string_view text,
                                                       const TemplateData& data,
                                                       const TemplateEnv& env,
                                                       const TemplateSet* shared = nullptr);

// Parses `text` and reports only whether it is valid: the check config/ receives for
// -rule.validateTemplates. Unlike Template::parse it also parses a text that has "{{" but no
// "}}" (which rendering copies verbatim), as vmalert's validation does.
[[nodiscard]] std::optional<core::Error> check_template(std::string_view text,
                                                        const TemplateSet* shared = nullptr);

}  // namespace templates
