// The evaluator of parsed templates (internal to templates/): Go's text/template
// exec.go over the tree of ast.hpp and the values of value.hpp.
#pragma once

#include <string>

#include "templates/template.hpp"
#include "templates/ast.hpp"
#include "templates/value.hpp"

namespace templates {

struct TemplateSetData {
  tmpl::TreeMap trees;
};

namespace tmpl {

struct RootData {
  const TemplateData* data = nullptr;
  const TemplateEnv* env = nullptr;
  const core::Labels* labels = nullptr;           // never null
  const core::Labels* external_labels = nullptr;  // never null
};

// Executes `main` (a tree of a rule value, predeclared vmalert variables) appending to `out`.
// `own` holds the value's {{define}}s, `shared` the -rule.templates ones (may be null).
// Returns the Go error text (`template: :1:320: executing "" at <...>: ...`) on failure.
core::Result<void> execute(const Tree& main, const TreeMap& own, const TemplateSetData* shared,
                           const TemplateData& data, const TemplateEnv& env, std::string& out);

}  // namespace tmpl
}  // namespace templates
