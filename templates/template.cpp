#include "templates/template.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

#include "templates/ast.hpp"
#include "templates/exec.hpp"
#include "templates/funcs.hpp"
#include "templates/go_fmt.hpp"
#include "templates/value.hpp"

namespace templates {

namespace tmpl {

namespace {
struct FuncName {
  std::string_view name;
  Func f;
};
constexpr FuncName kFuncs[] = {
    {"and", Func::and_},
    {"or", Func::or_},
    {"not", Func::not_},
    {"len", Func::len},
    {"index", Func::index},
    {"slice", Func::slice},
    {"print", Func::print},
    {"printf", Func::printf},
    {"println", Func::println},
    {"eq", Func::eq},
    {"ne", Func::ne},
    {"lt", Func::lt},
    {"le", Func::le},
    {"gt", Func::gt},
    {"ge", Func::ge},
    {"html", Func::html},
    {"js", Func::js},
    {"urlquery", Func::urlquery},
    {"call", Func::call},
    {"title", Func::title},
    {"toUpper", Func::toUpper},
    {"toLower", Func::toLower},
    {"crlfEscape", Func::crlfEscape},
    {"quotesEscape", Func::quotesEscape},
    {"jsonEscape", Func::jsonEscape},
    {"htmlEscape", Func::htmlEscape},
    {"stripPort", Func::stripPort},
    {"stripDomain", Func::stripDomain},
    {"match", Func::match},
    {"reReplaceAll", Func::reReplaceAll},
    {"parseDuration", Func::parseDuration},
    {"parseDurationTime", Func::parseDurationTime},
    {"humanize", Func::humanize},
    {"humanize1024", Func::humanize1024},
    {"humanizeDuration", Func::humanizeDuration},
    {"humanizePercentage", Func::humanizePercentage},
    {"humanizeTimestamp", Func::humanizeTimestamp},
    {"toTime", Func::toTime},
    {"formatTime", Func::formatTime},
    {"now", Func::now},
    {"externalURL", Func::externalURL},
    {"pathPrefix", Func::pathPrefix},
    {"pathEscape", Func::pathEscape},
    {"queryEscape", Func::queryEscape},
    {"first", Func::first},
    {"label", Func::label},
    {"value", Func::value},
    {"strvalue", Func::strvalue},
    {"sortByLabel", Func::sortByLabel},
    {"args", Func::args},
    {"safeHtml", Func::safeHtml},
    {"query", Func::query},
};
}  // namespace

bool lookup_func(std::string_view name, Func& out) {
  for (const auto& e : kFuncs) {
    if (e.name == name) {
      out = e.f;
      return true;
    }
  }
  return false;
}

std::string_view func_name(Func f) {
  for (const auto& e : kFuncs) {
    if (e.f == f) return e.name;
  }
  return "?";
}

}  // namespace tmpl

class TemplateImpl {
 public:
  std::string verbatim;  // a literal's output, which is also its text
  std::string source;    // the text of a parsed (not literal) template
  // The key of its ParseCache entry.
  [[nodiscard]] std::string_view text() const { return literal ? verbatim : source; }
  bool literal = false;
  // The parse tree; none for a simple template (below), which keeps its pieces only.
  std::shared_ptr<const tmpl::Tree> main;
  tmpl::TreeMap defines;
  std::shared_ptr<const TemplateSetData> shared;
  bool uses_query = false;
  // Texts and the commonest actions only: `{{ $labels.NAME }}`, `{{ $value }}`,
  // `{{ $value | humanize }}` (or humanize1024, humanizePercentage, humanizeDuration, also
  // called as `humanize $value`) and `{{ printf "FORMAT" $value }}` (or `$value | printf
  // "FORMAT"`): rendered by appending the texts and calling the formatting the interpreter
  // would call, without the interpreter. Such a template has no declarations or assignments,
  // so $labels and $value are still vmalert's. Its tree is dropped once the pieces are found
  // (a rule's unique annotation held ~2 kB of tree in 30 allocations, issue 12): only output
  // past kMaxRenderedBytes needs the interpreter (for its error), which parses `source` again.
  // The pieces' texts are views into `piece_text`.
  struct Piece {
    enum class Kind : uint8_t { text, label, value, value_func, value_printf };
    std::string_view text;  // the text, the label name, or printf's format
    Kind kind = Kind::text;
    tmpl::Func func = tmpl::Func::humanize;  // value_func
  };
  bool simple = false;
  std::vector<Piece> pieces;
  std::string piece_text;
};

namespace {

// True when `start` or anything it reaches through {{template}} calls `query`.
bool reaches_query(const tmpl::Tree& start, const tmpl::TreeMap& own, const TemplateSetData* shared) {
  std::set<std::string, std::less<>> seen;
  std::vector<const tmpl::Tree*> todo{&start};
  while (!todo.empty()) {
    const tmpl::Tree* t = todo.back();
    todo.pop_back();
    if (t->uses_query) return true;
    for (const auto& name : t->calls) {
      if (!seen.insert(name).second) continue;
      if (auto it = own.find(name); it != own.end()) {
        todo.push_back(it->second.get());
      } else if (shared != nullptr) {
        if (auto s = shared->trees.find(name); s != shared->trees.end()) todo.push_back(s->second.get());
      }
    }
  }
  return false;
}

}  // namespace

namespace {

// Frees what vector growth left over (a parse tree is built once and kept for the rules' life).
void compact(tmpl::Pipe& p);
void compact(tmpl::Arg& a) {
  a.fields.shrink_to_fit();
  if (a.pipe) compact(*a.pipe);
  if (a.base) compact(*a.base);
}
void compact(tmpl::Pipe& p) {
  p.decls.shrink_to_fit();
  p.cmds.shrink_to_fit();
  for (auto& c : p.cmds) {
    c.args.shrink_to_fit();
    for (auto& a : c.args) compact(a);
  }
}
void compact(std::vector<tmpl::Node>& nodes) {
  nodes.shrink_to_fit();
  for (auto& n : nodes) {
    if (n.pipe) compact(*n.pipe);
    if (n.branches) {
      compact(n.branches->list);
      compact(n.branches->else_list);
    }
  }
}

// The slot of a vmalert variable (`$labels`, `$value`) among the predeclared ones ($ is 0).
constexpr int prefix_slot(std::string_view name) {
  for (int k = 0; k < tmpl::kPrefixVarCount; ++k) {
    if (std::string_view(tmpl::kPrefixVars[k]) == name) return k + 1;
  }
  return -1;
}

bool is_value_var(const tmpl::Arg& a) {
  return a.type == tmpl::ArgType::variable && a.slot == prefix_slot("$value") && a.fields.empty();
}
bool is_value_func(const tmpl::Arg& a) {
  if (a.type != tmpl::ArgType::identifier) return false;
  switch (a.func) {
    case tmpl::Func::humanize:
    case tmpl::Func::humanize1024:
    case tmpl::Func::humanizePercentage:
    case tmpl::Func::humanizeDuration:
      return true;
    default:
      return false;
  }
}
bool is_printf(const tmpl::Arg& a) {
  return a.type == tmpl::ArgType::identifier && a.func == tmpl::Func::printf;
}

// The piece an action is, if it is one of TemplateImpl::Piece's forms.
std::optional<TemplateImpl::Piece> simple_action(const tmpl::Pipe& p) {
  using Kind = TemplateImpl::Piece::Kind;
  if (p.is_assign || !p.decls.empty() || p.cmds.empty() || p.cmds.size() > 2) return std::nullopt;
  const auto& a = p.cmds[0].args;
  if (p.cmds.size() == 1) {
    if (a.size() == 1 && a[0].type == tmpl::ArgType::variable &&
        a[0].slot == prefix_slot("$labels") && a[0].fields.size() == 1) {
      return TemplateImpl::Piece{a[0].fields[0], Kind::label};
    }
    if (a.size() == 1 && is_value_var(a[0])) return TemplateImpl::Piece{{}, Kind::value};
    if (a.size() == 2 && is_value_func(a[0]) && is_value_var(a[1])) {
      return TemplateImpl::Piece{{}, Kind::value_func, a[0].func};
    }
    if (a.size() == 3 && is_printf(a[0]) && a[1].type == tmpl::ArgType::string &&
        is_value_var(a[2])) {
      return TemplateImpl::Piece{a[1].text, Kind::value_printf};
    }
    return std::nullopt;
  }
  // `$value | F` and `$value | printf "FORMAT"`: the value is the last argument.
  if (a.size() != 1 || !is_value_var(a[0])) return std::nullopt;
  const auto& b = p.cmds[1].args;
  if (b.size() == 1 && is_value_func(b[0]))
    return TemplateImpl::Piece{{}, Kind::value_func, b[0].func};
  if (b.size() == 2 && is_printf(b[0]) && b[1].type == tmpl::ArgType::string) {
    return TemplateImpl::Piece{b[1].text, Kind::value_printf};
  }
  return std::nullopt;
}

// Fills `impl.pieces` when the main tree is texts and simple actions only (TemplateImpl::Piece).
void find_simple(TemplateImpl& impl) {
  std::vector<TemplateImpl::Piece> pieces;
  for (const tmpl::Node& n : impl.main->root) {
    if (n.type == tmpl::NodeType::text) {
      pieces.push_back({n.text, TemplateImpl::Piece::Kind::text});
      continue;
    }
    if (n.type != tmpl::NodeType::action || !n.pipe) return;
    auto piece = simple_action(*n.pipe);
    if (!piece) return;
    pieces.push_back(*piece);
  }
  size_t size = 0;
  for (const auto& p : pieces) size += p.text.size();
  impl.piece_text.reserve(size);
  for (const auto& p : pieces) impl.piece_text.append(p.text);
  size_t at = 0;
  for (auto& p : pieces) {
    p.text = std::string_view(impl.piece_text).substr(at, p.text.size());
    at += p.text.size();
  }
  pieces.shrink_to_fit();
  impl.pieces = std::move(pieces);
  impl.simple = true;
  impl.main.reset();
  impl.defines.clear();
}

// The interpreter: the template's tree, or for a simple template (which keeps none) its text
// parsed again, which parsed before.
core::Result<void> interpret(const TemplateImpl& impl, const TemplateData& data,
                             const TemplateEnv& env, std::string& out) {
  if (impl.main) return tmpl::execute(*impl.main, impl.defines, impl.shared.get(), data, env, out);
  auto parsed = tmpl::parse_text(impl.source, "", true);
  if (!parsed) return core::fail(parsed.error());
  return tmpl::execute(*parsed->main, parsed->defines, impl.shared.get(), data, env, out);
}

const std::shared_ptr<const TemplateImpl>& empty_literal() {
  static const auto impl = [] {
    auto i = std::make_shared<TemplateImpl>();
    i->literal = true;
    return std::shared_ptr<const TemplateImpl>(std::move(i));
  }();
  return impl;
}

// Live parses by (text, TemplateSet): a parse is shared while some Template holds it, and its
// entry leaves the map when the last of them lets go (the parse's deleter erases it), so the
// map never holds parses nobody uses and a parse that is dropped returns all of its memory.
class ParseCache {
 public:
  std::shared_ptr<const TemplateImpl> find(std::string_view text, const TemplateSetData* set) {
    std::lock_guard lock(mu_);
    auto it = map_.find(Key{text, set});
    if (it == map_.end()) return nullptr;
    return it->second.impl.lock();
  }
  // Takes a fresh parse of `impl->text()` and shares it. An entry of the same key whose parse
  // is being released (expired, its deleter waiting for the lock) is replaced.
  std::shared_ptr<const TemplateImpl> add(std::unique_ptr<TemplateImpl> impl,
                                          const TemplateSetData* set) {
    const TemplateImpl* raw = impl.get();
    std::shared_ptr<const TemplateImpl> shared(impl.release(), [this, set](const TemplateImpl* p) {
      forget(p, set);
      delete p;
    });
    std::lock_guard lock(mu_);
    const Key key{raw->text(), set};
    map_.erase(key);
    map_.emplace(key, Entry{raw, shared});
    return shared;
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return map_.size();
  }

 private:
  void forget(const TemplateImpl* p, const TemplateSetData* set) {
    std::lock_guard lock(mu_);
    auto it = map_.find(Key{p->text(), set});
    if (it != map_.end() && it->second.raw == p) map_.erase(it);
  }
  // The text is a view of the parse's own copy (TemplateImpl::text()): an entry leaves the
  // map before its parse is destroyed.
  struct Key {
    std::string_view text;
    const TemplateSetData* set;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<std::string_view>{}(k.text) ^ std::hash<const void*>{}(k.set);
    }
  };
  struct Entry {
    const TemplateImpl* raw;
    std::weak_ptr<const TemplateImpl> impl;
  };
  std::mutex mu_;
  std::unordered_map<Key, Entry, KeyHash> map_;
};

// Never destroyed: parses held by static Templates may be released after it would be.
ParseCache& parse_cache() {
  static auto* cache = new ParseCache;
  return *cache;
}

}  // namespace

Template::Template() : impl_(empty_literal()) {}

Template::~Template() = default;
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

core::Result<Template> Template::parse(std::string_view text, const TemplateSet* shared) {
  const TemplateSetData* set = shared != nullptr ? shared->data().get() : nullptr;
  Template t;
  if (auto cached = parse_cache().find(text, set)) {
    t.impl_ = std::move(cached);
    return t;
  }
  auto impl = std::make_unique<TemplateImpl>();
  if (shared != nullptr) impl->shared = shared->data();
  // vmalert templates a value only when it contains both delimiters.
  if (text.find("{{") == std::string_view::npos || text.find("}}") == std::string_view::npos) {
    impl->literal = true;
    impl->verbatim = std::string(text);
  } else {
    auto parsed = tmpl::parse_text(text, "", true);
    if (!parsed) return core::fail(parsed.error());
    impl->literal = false;
    impl->source = std::string(text);
    compact(parsed->main->root);
    impl->main = std::move(parsed->main);
    impl->defines = std::move(parsed->defines);
    impl->uses_query = reaches_query(*impl->main, impl->defines, impl->shared.get());
    find_simple(*impl);
  }
  t.impl_ = parse_cache().add(std::move(impl), set);
  return t;
}

core::Result<void> Template::render(const TemplateData& data, const TemplateEnv& env,
                                    std::string& out) const {
  if (impl_->literal) {
    out.append(impl_->verbatim);
    return {};
  }
  if (impl_->simple) {
    // What the interpreter would write (the same formatting calls), as long as the value stays
    // under the cap; past it the interpreter renders it for its error. A label that is not there
    // writes nothing: $labels is a map[string]string and vmalert's templates use
    // missingkey=zero (../shared/reference/templates.md, 4.2).
    using Kind = TemplateImpl::Piece::Kind;
    const size_t start = out.size();
    for (const auto& piece : impl_->pieces) {
      switch (piece.kind) {
        case Kind::text:
          out.append(piece.text);
          break;
        case Kind::label:
          if (data.labels != nullptr) {
            if (const auto v = data.labels->get(piece.text)) out.append(*v);
          } else if (data.label_builder != nullptr) {
            if (const auto v = data.label_builder->get(piece.text)) out.append(*v);
          }
          break;
        case Kind::value:
          gofmt::print_value(out, tmpl::Value::make_float(data.value));
          break;
        case Kind::value_func:
          switch (piece.func) {
            case tmpl::Func::humanize1024:
              tmplfn::humanize1024(out, data.value);
              break;
            case tmpl::Func::humanizePercentage:
              tmplfn::humanize_percentage(out, data.value);
              break;
            case tmpl::Func::humanizeDuration:
              tmplfn::humanize_duration(out, data.value);
              break;
            default:
              tmplfn::humanize(out, data.value);
              break;
          }
          break;
        case Kind::value_printf: {
          const tmpl::Value arg = tmpl::Value::make_float(data.value);
          gofmt::sprintf(out, piece.text, std::span<const tmpl::Value>(&arg, 1), kMaxRenderedBytes);
          break;
        }
      }
      if (out.size() - start > kMaxRenderedBytes) break;
    }
    if (out.size() - start <= kMaxRenderedBytes) return {};
    out.resize(start);
  }
  if (data.labels == nullptr && data.label_builder != nullptr) {
    const core::Labels built = data.label_builder->build();
    TemplateData with_set = data;
    with_set.labels = &built;
    with_set.label_builder = nullptr;
    return interpret(*impl_, with_set, env, out);
  }
  return interpret(*impl_, data, env, out);
}

size_t live_parse_count() { return parse_cache().size(); }

bool Template::is_literal() const { return impl_->literal; }
bool Template::simple() const { return impl_->literal || impl_->simple; }
bool Template::uses_query() const { return impl_->uses_query; }

bool Template::reads_labels_only() const {
  if (impl_->literal) return true;
  if (!impl_->simple) return false;
  using Kind = TemplateImpl::Piece::Kind;
  return std::all_of(impl_->pieces.begin(), impl_->pieces.end(),
                     [](const auto& p) { return p.kind == Kind::text || p.kind == Kind::label; });
}

bool Template::reads_label(std::string_view name) const {
  if (impl_->literal || !impl_->simple) return false;
  return std::any_of(impl_->pieces.begin(), impl_->pieces.end(), [name](const auto& p) {
    return p.kind == TemplateImpl::Piece::Kind::label && p.text == name;
  });
}

std::optional<core::Error> check_template(std::string_view text, const TemplateSet* shared) {
  // vmalert's -rule.validateTemplates parses every value, also one that rendering copies
  // verbatim for lacking "}}": `{{ $labels.instance ` is an unclosed action at load there too.
  if (text.find("{{") != std::string_view::npos && text.find("}}") == std::string_view::npos) {
    auto parsed = tmpl::parse_text(text, "", true);
    if (!parsed) return parsed.error();
    return std::nullopt;
  }
  auto t = Template::parse(text, shared);
  if (!t) return t.error();
  return std::nullopt;
}

core::Result<std::string> render_vmalert(std::string_view text, const TemplateData& data,
                                         const TemplateEnv& env, const TemplateSet* shared) {
  auto t = Template::parse(text, shared);
  if (!t) return core::fail("error parsing template: " + t.error().message);
  std::string out;
  auto r = t->render(data, env, out);
  if (!r) return core::fail("error evaluating template: " + r.error().message);
  return out;
}

TemplateSet::TemplateSet() : data_(std::make_shared<TemplateSetData>()) {}

core::Result<TemplateSet> TemplateSet::parse(std::span<const File> files) {
  auto data = std::make_shared<TemplateSetData>();
  for (const File& f : files) {
    auto parsed = tmpl::parse_text(f.text, f.name, false);
    if (!parsed) return core::fail(parsed.error());
    // Like ParseFiles: the file's own text becomes a template named after the file.
    parsed->main->name = f.name;
    auto add = [&](std::shared_ptr<const tmpl::Tree> tree) {
      auto it = data->trees.find(tree->name);
      if (it != data->trees.end() && tree->empty && !it->second->empty) return;
      data->trees[tree->name] = std::move(tree);
    };
    add(parsed->main);
    for (auto& [name, tree] : parsed->defines) add(tree);
  }
  TemplateSet set;
  set.data_ = std::move(data);
  return set;
}

bool TemplateSet::empty() const { return data_->trees.empty(); }

}  // namespace templates
