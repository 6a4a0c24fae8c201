// Stand-in for rules/template.cpp while the template engine is not in the tree: every text
// parses and renders verbatim. tests/unit/rules links it only if rules/template*.cpp is absent
// and then defines ALERTD_TEMPLATE_STUB, so template-dependent tests skip themselves.
#include "rules/template.hpp"

namespace rules {

class TemplateImpl {
 public:
  std::string text;
};

Template::Template() = default;
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

core::Result<Template> Template::parse(std::string_view text, const TemplateSet*) {
  Template t;
  t.impl_ = std::make_unique<TemplateImpl>();
  t.impl_->text = std::string(text);
  return t;
}

core::Result<void> Template::render(const TemplateData&, const TemplateEnv&,
                                    std::string& out) const {
  if (impl_) out += impl_->text;
  return {};
}

bool Template::is_literal() const { return true; }
bool Template::uses_query() const { return false; }

std::optional<core::Error> check_template(std::string_view, const TemplateSet*) {
  return std::nullopt;
}

}  // namespace rules
