#include "config/loader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "config/glob.hpp"
#include "config/promql.hpp"
#include "core/duration.hpp"
#include "core/hash.hpp"
#include "core/limit_hits.hpp"

namespace config {
namespace {

using Entry = std::pair<YAML::Node, YAML::Node>;
using Entries = std::vector<Entry>;

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

SourcePos pos_of(const std::string& file, const YAML::Mark& m) {
  if (m.is_null() || m.line < 0) return SourcePos{file, 0, 0};
  return SourcePos{file, m.line + 1, m.column + 1};
}

std::string prefix(const SourcePos& p) {
  std::string out = p.file;
  if (p.line > 0) out += ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
  return out + ": ";
}

// The first byte that is not part of well-formed UTF-8 (no overlong forms, surrogates or code
// points above U+10FFFF), as a 1-based line and byte column; nullopt when the text is valid.
std::optional<std::pair<int, int>> first_invalid_utf8(std::string_view text) {
  int line = 1;
  size_t line_start = 0;
  size_t i = 0;
  const size_t n = text.size();
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < n) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      if (c == '\n') {
        ++line;
        line_start = i + 1;
      }
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (!ok) return std::make_pair(line, static_cast<int>(i - line_start) + 1);
    i += len;
  }
  return std::nullopt;
}

// yaml-cpp 0.7's LoadAll never returns on some malformed streams: after "!,r" its parser yields
// an empty document at the same place forever, allocating as it goes (a 3-byte rule file took
// the whole memory of the machine). One pass over the parser's events first: a document that
// starts where the previous one started is refused, so LoadAll only ever sees a stream that
// ends. The events cost a fraction of building the nodes.
class DocumentProgress final : public YAML::EventHandler {
 public:
  // The place the stream stops advancing, or nullopt when it ends. Throws YAML::Exception on a
  // syntax error, as LoadAll would.
  static std::optional<YAML::Mark> stuck_at(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProgress h;
    while (parser.HandleNextDocument(h)) {
      if (h.stuck_) return h.start_;
    }
    return std::nullopt;
  }

  // YAML::EventHandler
  void OnDocumentStart(const YAML::Mark& mark) override {
    stuck_ = seen_ && mark.pos == start_.pos;
    seen_ = true;
    start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  YAML::Mark start_;
  bool seen_ = false;
  bool stuck_ = false;
};

// go-yaml's guard against alias bombs ("billion laughs"), applied to the node graph yaml-cpp
// built: every node a decoder would visit counts once per visit, visits below an alias count as
// alias decodes, and the document is refused when alias decodes exceed go-yaml's allowed share
// (99% up to 400k decodes, falling to 10% at 4M). An alias to a node that contains it is
// refused too. yaml-cpp shares an anchored node with its aliases, so a node seen again is an
// alias; nodes are told apart by their source position and type.
class AliasGuard {
 public:
  // An error text, or nullopt when the document may be walked.
  std::optional<std::string> check(const YAML::Node& doc) {
    if (!walk(doc, 0)) return error_;
    return std::nullopt;
  }
  // Where the error is, when it has a place (a self-containing anchor); null otherwise.
  [[nodiscard]] const YAML::Mark& error_mark() const { return error_mark_; }

 private:
  static constexpr size_t kMaxDepth = 10000;
  static double allowed_ratio(size_t decodes) {
    constexpr double low = 400000;
    constexpr double high = 4000000;
    if (static_cast<double>(decodes) <= low) return 0.99;
    if (static_cast<double>(decodes) >= high) return 0.10;
    return 0.99 - 0.89 * ((static_cast<double>(decodes) - low) / (high - low));
  }
  struct Key {
    size_t pos;
    int type;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return k.pos * 8 + static_cast<size_t>(k.type); }
  };

  bool walk(const YAML::Node& n, size_t depth) {
    if (depth > kMaxDepth) {
      error_ = "document nested too deeply";
      return false;
    }
    ++decodes_;
    if (alias_depth_ > 0) ++aliases_;
    if (aliases_ > 100 && decodes_ > 1000 &&
        static_cast<double>(aliases_) / static_cast<double>(decodes_) > allowed_ratio(decodes_)) {
      error_ = "document contains excessive aliasing";
      return false;
    }
    if (!n.IsMap() && !n.IsSequence()) return true;
    const YAML::Mark m = n.Mark();
    const bool tracked = !m.is_null() && m.pos >= 0;
    const Key key{tracked ? static_cast<size_t>(m.pos) : 0, static_cast<int>(n.Type())};
    bool alias = false;
    if (tracked) {
      if (open_.count(key) != 0) {
        error_ = "anchor value contains itself";
        error_mark_ = m;
        return false;
      }
      alias = !seen_.insert(key).second;
      open_.insert(key);
    }
    if (alias) ++alias_depth_;
    bool ok = true;
    if (n.IsMap()) {
      for (auto it = n.begin(); ok && it != n.end(); ++it) {
        ok = walk(it->first, depth + 1) && walk(it->second, depth + 1);
      }
    } else {
      for (auto it = n.begin(); ok && it != n.end(); ++it) ok = walk(*it, depth + 1);
    }
    if (alias) --alias_depth_;
    if (tracked) open_.erase(key);
    return ok;
  }

  std::unordered_set<Key, KeyHash> seen_;
  std::unordered_set<Key, KeyHash> open_;
  size_t decodes_ = 0;
  size_t aliases_ = 0;
  size_t alias_depth_ = 0;
  std::string error_;
  YAML::Mark error_mark_ = YAML::Mark::null_mark();
};

bool is_merge_key(const YAML::Node& key) {
  return key.IsScalar() && key.Scalar() == "<<" && key.Tag() != "tag:yaml.org,2002:str" &&
         key.Tag() != "!";
}

// Parses one YAML file into the model; collects every error.
class FileParser {
 public:
  FileParser(const std::string& file, const LoadOptions& options, LoadResult& out)
      : file_(file), options_(options), out_(out) {}

  void parse(std::string_view text);

 private:
  void error(const YAML::Mark& m, const std::string& context, const std::string& msg) {
    add_error(pos_of(file_, m), context + msg);
  }
  void warning(const YAML::Mark& m, const std::string& context, const std::string& msg) {
    std::string text = prefix(pos_of(file_, m)) + context + msg;
    // An anchored map is visited once per alias: report each problem once.
    if (warned_.insert(text).second) out_.warnings.push_back(std::move(text));
  }
  void add_error(const SourcePos& p, std::string msg) {
    errors_.push_back(PendingError{p.line, p.column, errors_.size(), prefix(p) + std::move(msg)});
  }

  // The mapping's entries with `<<` merge keys resolved (explicit keys win, then merged maps
  // in order). Duplicate explicit keys are reported.
  Entries entries(const YAML::Node& map, const std::string& context);
  void collect_merge(const YAML::Node& value, Entries& merged, const std::string& context);

  std::optional<std::string> scalar(const YAML::Node& v, const std::string& context,
                                    std::string_view field);
  std::optional<core::Duration> duration(const YAML::Node& v, const std::string& context,
                                         std::string_view field);
  std::optional<bool> boolean(const YAML::Node& v, const std::string& context,
                              std::string_view field);
  std::optional<int> integer(const YAML::Node& v, const std::string& context,
                             std::string_view field);
  // `marks`, when given, receives each value's position (for template errors).
  core::Labels string_map(const YAML::Node& v, const std::string& context, std::string_view field,
                          std::vector<std::pair<std::string, YAML::Mark>>* marks = nullptr);
  std::vector<std::pair<std::string, std::string>> headers(const YAML::Node& v,
                                                           const std::string& context,
                                                           std::string_view field);

  void parse_group(const YAML::Node& node, size_t index);
  // The file position of an error inside `expr`, when the scalar's text maps 1:1 onto the
  // file (plain or quoted on one line, or a literal block `|`); else the scalar's position.
  SourcePos expr_error_pos(const YAML::Node& node, std::string_view expr, const ExprError& err);
  std::string_view line_text(size_t line0) const;  // 0-based line of text_, without '\n'
  std::optional<RuleSpec> parse_rule(const YAML::Node& node, const std::string& group_context,
                                     size_t index, const std::string& type);
  void check_templates(const core::Labels& values,
                       const std::vector<std::pair<std::string, YAML::Mark>>& marks,
                       const YAML::Mark& fallback, const std::string& context,
                       std::string_view what);
  void validate_group(GroupSpec& g, const std::string& context, const YAML::Node& node,
                      bool interval_set_explicitly);

  const std::string& file_;
  const LoadOptions& options_;
  LoadResult& out_;
  struct PendingError {
    int line;
    int column;
    size_t seq;
    std::string message;
  };
  std::unordered_map<std::string, int> group_lines_;  // name -> line of first definition
  std::vector<GroupSpec> groups_;
  std::vector<PendingError> errors_;  // reported in file order at the end
  std::unordered_set<std::string> warned_;
  std::string_view text_;           // the expanded file text yaml-cpp parsed
  std::vector<size_t> line_starts_;  // offsets of each line in text_
  static constexpr size_t kMaxMergeDepth = 64;
  static constexpr size_t kMaxMerges = 100000;
  std::vector<YAML::Node> merge_stack_;
  size_t merge_budget_used_ = 0;
  bool merge_budget_reported_ = false;
};

void FileParser::collect_merge(const YAML::Node& value, Entries& merged,
                               const std::string& context) {
  // An alias may refer to the map that contains it (`&a {<<: *a}`), and aliases of aliases can
  // multiply (a "billion laughs"): refuse cycles and bound the total work.
  for (const YAML::Node& open : merge_stack_) {
    if (open.is(value)) {
      error(value.Mark(), context, "merge key refers to a map that contains it");
      return;
    }
  }
  if (merge_stack_.size() >= kMaxMergeDepth || ++merge_budget_used_ > kMaxMerges) {
    if (!merge_budget_reported_) {
      error(value.Mark(), context, "merge keys nested too deeply or used too often");
      merge_budget_reported_ = true;
    }
    return;
  }
  merge_stack_.push_back(value);
  struct Leave {
    std::vector<YAML::Node>& stack;
    ~Leave() { stack.pop_back(); }
  } leave{merge_stack_};
  if (value.IsMap()) {
    for (auto& kv : entries(value, context)) merged.push_back(kv);
  } else if (value.IsSequence()) {
    for (const auto& item : value) {
      if (!item.IsMap()) {
        error(item.Mark(), context, "map merge requires map or sequence of maps as the value");
        continue;
      }
      for (auto& kv : entries(item, context)) merged.push_back(kv);
    }
  } else {
    error(value.Mark(), context, "map merge requires map or sequence of maps as the value");
  }
}

Entries FileParser::entries(const YAML::Node& map, const std::string& context) {
  Entries explicit_entries;
  Entries merged;
  std::unordered_map<std::string, size_t> seen;  // key -> index in explicit_entries
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;  // the iterator yields a proxy: copy, never bind
    const YAML::Node value = it->second;
    if (is_merge_key(key)) {
      collect_merge(value, merged, context);
      continue;
    }
    if (key.IsScalar()) {
      auto [pos, inserted] = seen.emplace(key.Scalar(), explicit_entries.size());
      if (!inserted) {
        // vmalert's non-strict yaml.v2 decoding keeps the last value; so do we, with a warning.
        Entry& first = explicit_entries[pos->second];
        warning(key.Mark(), context,
                "field " + quote(key.Scalar()) + " is set twice (first at line " +
                    std::to_string(first.first.Mark().line + 1) + "); the last value is used");
        first.second = value;
        continue;
      }
    }
    explicit_entries.emplace_back(key, value);
  }
  for (auto& kv : merged) {
    if (!kv.first.IsScalar()) continue;
    if (seen.emplace(kv.first.Scalar(), explicit_entries.size()).second) {
      explicit_entries.push_back(kv);
    }
  }
  return explicit_entries;
}

std::optional<std::string> FileParser::scalar(const YAML::Node& v, const std::string& context,
                                              std::string_view field) {
  if (v.IsNull()) return std::string{};
  if (v.IsScalar()) return v.Scalar();
  error(v.Mark(), context,
        "field " + quote(field) + ": expected a string, got a " +
            (v.IsMap() ? "map" : "list"));
  return std::nullopt;
}

std::optional<core::Duration> FileParser::duration(const YAML::Node& v,
                                                   const std::string& context,
                                                   std::string_view field) {
  auto s = scalar(v, context, field);
  if (!s) return std::nullopt;
  if (s->empty()) return std::nullopt;
  auto d = core::parse_duration(*s);
  if (!d) {
    error(v.Mark(), context, "field " + quote(field) + ": " + d.error().message);
    return std::nullopt;
  }
  return *d;
}

std::optional<bool> FileParser::boolean(const YAML::Node& v, const std::string& context,
                                        std::string_view field) {
  auto s = scalar(v, context, field);
  if (!s) return std::nullopt;
  // yaml.v2 accepts the YAML 1.1 spellings.
  static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                      "on",   "On",   "ON",   "y",   "Y"};
  static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No", "NO",
                                       "off",   "Off",   "OFF",   "n",  "N"};
  for (const char* t : kTrue) {
    if (*s == t) return true;
  }
  for (const char* f : kFalse) {
    if (*s == f) return false;
  }
  error(v.Mark(), context, "field " + quote(field) + ": cannot parse " + quote(*s) + " as a bool");
  return std::nullopt;
}

std::optional<int> FileParser::integer(const YAML::Node& v, const std::string& context,
                                       std::string_view field) {
  auto s = scalar(v, context, field);
  if (!s) return std::nullopt;
  int value = 0;
  std::string_view t = *s;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc{} || p != t.data() + t.size()) {
    error(v.Mark(), context,
          "field " + quote(field) + ": cannot parse " + quote(*s) + " as an integer");
    return std::nullopt;
  }
  return value;
}

core::Labels FileParser::string_map(const YAML::Node& v, const std::string& context,
                                    std::string_view field,
                                    std::vector<std::pair<std::string, YAML::Mark>>* marks) {
  core::Labels out;
  if (v.IsNull()) return out;
  if (!v.IsMap()) {
    error(v.Mark(), context, "field " + quote(field) + ": expected a map");
    return out;
  }
  for (auto& [key, value] : entries(v, context)) {
    auto k = scalar(key, context, field);
    if (!k) continue;
    auto val = scalar(value, context, std::string(field) + "." + *k);
    if (!val) continue;
    out.set(*k, *val);
    if (marks) marks->emplace_back(*k, value.Mark());
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> FileParser::headers(const YAML::Node& v,
                                                                     const std::string& context,
                                                                     std::string_view field) {
  std::vector<std::pair<std::string, std::string>> out;
  if (v.IsNull()) return out;
  if (!v.IsSequence()) {
    error(v.Mark(), context, "field " + quote(field) + ": expected a list of \"Key: value\"");
    return out;
  }
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
  };
  for (const auto& item : v) {
    auto s = scalar(item, context, field);
    if (!s) continue;
    const size_t colon = s->find(':');
    if (colon == std::string::npos) {
      error(item.Mark(), context,
            "field " + quote(field) + ": missing ':' in header " + quote(*s));
      continue;
    }
    out.emplace_back(trim(std::string_view(*s).substr(0, colon)),
                     trim(std::string_view(*s).substr(colon + 1)));
  }
  return out;
}

void FileParser::check_templates(const core::Labels& values,
                                 const std::vector<std::pair<std::string, YAML::Mark>>& marks,
                                 const YAML::Mark& fallback, const std::string& context,
                                 std::string_view what) {
  for (const auto& l : values) {
    auto err = options_.check_template(l.value);
    if (!err) continue;
    YAML::Mark at = fallback;
    for (const auto& [name, mark] : marks) {
      if (name == l.name) at = mark;  // the last one wins, as for the value
    }
    error(at, context,
          "invalid " + std::string(what) + "s: " + std::string(what) + " " + quote(l.name) + ": " +
              err->message);
  }
}

std::optional<RuleSpec> FileParser::parse_rule(const YAML::Node& node,
                                               const std::string& group_context, size_t index,
                                               const std::string& type) {
  if (!node.IsMap()) {
    error(node.Mark(), group_context, "rule #" + std::to_string(index + 1) + ": expected a map");
    return std::nullopt;
  }
  RuleSpec r;
  r.pos = pos_of(file_, node.Mark());
  std::string alert;
  std::string record;
  bool has_alert = false;
  bool has_record = false;
  // The rule's name first, so every later error names it (a merged `<<` may supply it).
  auto find_name = [&](const YAML::Node& key, const YAML::Node& value) {
    if (!key.IsScalar() || !value.IsScalar()) return;
    if (key.Scalar() == "alert" && alert.empty()) alert = value.Scalar();
    if (key.Scalar() == "record" && record.empty()) record = value.Scalar();
  };
  for (auto it = node.begin(); it != node.end(); ++it) find_name(it->first, it->second);
  const std::string shown_before_merge = !alert.empty() ? alert : record;
  const std::string context =
      group_context + (shown_before_merge.empty() ? "rule #" + std::to_string(index + 1) + ": "
                                                  : "rule " + quote(shown_before_merge) + ": ");
  const Entries fields = entries(node, context);
  for (const auto& [k, v] : fields) find_name(k, v);

  YAML::Node expr_node;
  bool has_expr = false;
  YAML::Node labels_node;
  YAML::Node annotations_node;
  std::vector<std::pair<std::string, YAML::Mark>> label_marks;
  std::vector<std::pair<std::string, YAML::Mark>> annotation_marks;
  bool ok = true;
  for (const auto& [k, v] : fields) {
    if (!k.IsScalar()) {
      error(k.Mark(), context, "field names must be strings");
      ok = false;
      continue;
    }
    const std::string& key = k.Scalar();
    if (key == "alert") {
      has_alert = true;
      if (!scalar(v, context, key)) ok = false;
    } else if (key == "record") {
      has_record = true;
      if (!scalar(v, context, key)) ok = false;
    } else if (key == "expr") {
      expr_node = v;
      has_expr = true;
      if (auto s = scalar(v, context, key)) {
        r.expr = std::move(*s);
      } else {
        ok = false;
      }
    } else if (key == "for" || key == "keep_firing_for") {
      auto d = duration(v, context, key);
      if (d && *d < core::Duration::zero()) {
        error(v.Mark(), context, "field " + quote(key) + ": must not be negative");
        ok = false;
      }
      if (d) (key == "for" ? r.for_ : r.keep_firing_for) = *d;
    } else if (key == "labels") {
      labels_node = v;
      r.labels = string_map(v, context, key, &label_marks);
    } else if (key == "annotations") {
      annotations_node = v;
      r.annotations = string_map(v, context, key, &annotation_marks);
    } else if (key == "debug") {
      r.debug = boolean(v, context, key);
    } else if (key == "update_entries_limit") {
      r.update_entries_limit = integer(v, context, key);
    } else {
      error(k.Mark(), context, "unknown field " + quote(key));
      ok = false;
    }
  }
  // vmalert treats an empty `alert:` like a missing one.
  has_alert = has_alert && !alert.empty();
  has_record = has_record && !record.empty();
  if (has_alert == has_record) {
    error(node.Mark(), context,
          has_alert ? "either `record` or `alert` must be set, not both"
                    : "either `record` or `alert` must be set");
    ok = false;
  }
  r.kind = has_alert ? RuleKind::alerting : RuleKind::recording;
  r.name = has_alert ? alert : record;
  if (r.expr.empty()) {
    error(has_expr ? expr_node.Mark() : node.Mark(), context,
          "expression can't be empty");
    ok = false;
  }
  if (r.labels.contains("__name__")) {
    error(labels_node.Mark(), context, "invalid rule label \"__name__\": not allowed in labels");
    ok = false;
  }
  if (options_.validate_expressions && type == "prometheus" && !r.expr.empty()) {
    if (auto err = check_promql(r.expr)) {
      add_error(expr_error_pos(expr_node, r.expr, *err),
                context + "could not parse expression: " + err->to_string());
      ok = false;
    }
  }
  if (options_.validate_templates && options_.check_template) {
    const size_t before = errors_.size();
    check_templates(r.annotations, annotation_marks, annotations_node.Mark(), context,
                    "annotation");
    check_templates(r.labels, label_marks, labels_node.Mark(), context, "label");
    ok = ok && errors_.size() == before;
  }
  r.id = rule_id(r);
  if (!ok) return std::nullopt;
  return r;
}

void FileParser::parse_group(const YAML::Node& node, size_t index) {
  if (!node.IsMap()) {
    error(node.Mark(), "", "group #" + std::to_string(index + 1) + ": expected a map");
    return;
  }
  GroupSpec g;
  g.file = file_;
  g.pos = pos_of(file_, node.Mark());
  g.type = options_.default_rule_type;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;
    const YAML::Node v = it->second;
    if (k.IsScalar() && k.Scalar() == "name" && v.IsScalar()) g.name = v.Scalar();
  }
  const std::string context = g.name.empty() ? "group #" + std::to_string(index + 1) + ": "
                                             : "group " + quote(g.name) + ": ";
  const Entries fields = entries(node, context);
  const size_t errors_before = errors_.size();
  YAML::Node rules_node;
  bool interval_set = false;
  for (const auto& [k, v] : fields) {
    if (!k.IsScalar()) {
      error(k.Mark(), context, "field names must be strings");
      continue;
    }
    const std::string& key = k.Scalar();
    if (key == "name") {
      if (auto n = scalar(v, context, key)) g.name = std::move(*n);  // may come from a merge
    } else if (key == "interval") {
      g.interval = duration(v, context, key);
      interval_set = g.interval.has_value();
    } else if (key == "eval_offset") {
      g.eval_offset = duration(v, context, key);
    } else if (key == "eval_delay") {
      g.eval_delay = duration(v, context, key);
    } else if (key == "eval_alignment") {
      g.eval_alignment = boolean(v, context, key);
    } else if (key == "limit") {
      g.limit = integer(v, context, key).value_or(0);
    } else if (key == "concurrency") {
      g.concurrency = integer(v, context, key).value_or(1);
    } else if (key == "type") {
      auto t = scalar(v, context, key);
      if (t && !t->empty()) {
        if (*t != "prometheus" && *t != "graphite" && *t != "vlogs") {
          error(v.Mark(), context,
                "unknown datasource type " + quote(*t) + "; want prometheus, graphite or vlogs");
        } else {
          g.type = *t;
        }
      }
    } else if (key == "params") {
      if (v.IsNull()) continue;
      if (!v.IsMap()) {
        error(v.Mark(), context, "field \"params\": expected a map of lists");
        continue;
      }
      for (const auto& [pk, pv] : entries(v, context)) {
        auto name = scalar(pk, context, key);
        if (!name) continue;
        std::vector<std::string> values;
        if (pv.IsSequence()) {
          for (const auto& item : pv) {
            if (auto s = scalar(item, context, "params." + *name)) values.push_back(*s);
          }
        } else if (!pv.IsNull()) {
          error(pv.Mark(), context, "field \"params." + *name + "\": expected a list of strings");
          continue;
        }
        g.params.emplace_back(*name, std::move(values));
      }
    } else if (key == "headers") {
      g.headers = headers(v, context, key);
    } else if (key == "notifier_headers") {
      g.notifier_headers = headers(v, context, key);
    } else if (key == "labels") {
      g.labels = string_map(v, context, key);
    } else if (key == "debug") {
      g.debug = boolean(v, context, key).value_or(false);
    } else if (key == "rules") {
      rules_node = v;
    } else {
      error(k.Mark(), context, "unknown field " + quote(key));
    }
  }
  if (rules_node.IsDefined() && !rules_node.IsNull()) {
    if (!rules_node.IsSequence()) {
      error(rules_node.Mark(), context, "field \"rules\": expected a list");
    } else {
      size_t i = 0;
      for (const auto& rn : rules_node) {
        if (auto r = parse_rule(rn, context, i, g.type)) g.rules.push_back(std::move(*r));
        ++i;
      }
    }
  }
  validate_group(g, context, node, interval_set);
  if (errors_.size() == errors_before) groups_.push_back(std::move(g));
}

void FileParser::validate_group(GroupSpec& g, const std::string& context, const YAML::Node& node,
                                bool interval_set_explicitly) {
  const YAML::Mark mark = node.Mark();
  auto field_mark = [&](std::string_view name) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      if (key.IsScalar() && key.Scalar() == name) return YAML::Node(it->second).Mark();
    }
    return mark;
  };
  if (g.name.empty()) error(mark, context, "group name must be set");
  auto it = group_lines_.find(g.name);
  if (!g.name.empty()) {
    if (it != group_lines_.end()) {
      error(mark, context,
            "group name " + quote(g.name) + " duplicate in file (first defined at line " +
                std::to_string(it->second) + ")");
    } else {
      group_lines_.emplace(g.name, mark.line + 1);
    }
  }
  if (g.interval && *g.interval < core::Duration::zero()) {
    error(field_mark("interval"), context, "interval shouldn't be lower than 0");
  }
  if (g.eval_delay && *g.eval_delay < core::Duration::zero()) {
    error(field_mark("eval_delay"), context, "eval_delay shouldn't be lower than 0");
  }
  if (g.eval_offset) {
    const core::Duration offset = *g.eval_offset;
    const core::Duration abs_offset = offset < core::Duration::zero() ? -offset : offset;
    if (!interval_set_explicitly) {
      error(field_mark("eval_offset"), context,
            "eval_offset should be smaller than interval; now eval_offset: " +
                core::format_go_duration(offset) +
                ", interval: not set (eval_offset needs an explicit `interval` in the group)");
    } else if (abs_offset > *g.interval) {
      error(field_mark("eval_offset"), context,
            "the abs value of eval_offset should be smaller than interval; now eval_offset: " +
                core::format_go_duration(offset) +
                ", interval: " + core::format_go_duration(*g.interval));
    }
    if (g.eval_delay) {
      error(field_mark("eval_delay"), context, "eval_offset cannot be used with eval_delay");
    }
  }
  if (g.limit < 0) {
    error(field_mark("limit"), context,
          "invalid limit " + std::to_string(g.limit) + ", shouldn't be less than 0");
  }
  if (g.concurrency < 0) {
    error(field_mark("concurrency"), context,
          "invalid concurrency " + std::to_string(g.concurrency) + ", shouldn't be less than 0");
  }
  if (g.concurrency == 0) g.concurrency = 1;

  std::unordered_map<uint64_t, int> ids;
  for (const RuleSpec& r : g.rules) {
    auto [dup, inserted] = ids.emplace(r.id, r.pos.line);
    if (!inserted) {
      add_error(r.pos,
                context + "rule " + quote(r.name) + ": " +
                    (r.kind == RuleKind::alerting ? "alerting" : "recording") +
                    " rule is a duplicate in group (same name, expr and labels as the rule at "
                    "line " +
                    std::to_string(dup->second) + ")");
    }
  }

  g.effective_interval =
      g.interval && *g.interval > core::Duration::zero() ? *g.interval : options_.default_interval;
  if (g.effective_interval <= core::Duration::zero()) {
    error(field_mark("interval"), context,
          "evaluation interval must be positive; now: " +
              core::format_go_duration(g.effective_interval) + " (from -evaluationInterval)");
  }
  g.effective_eval_delay = g.eval_offset ? core::Duration::zero()
                                         : g.eval_delay.value_or(options_.default_eval_delay);
  g.effective_limit = g.limit > 0 ? g.limit : options_.default_limit;
  g.effective_concurrency = std::max(1, g.concurrency);
  g.effective_eval_alignment = g.eval_alignment.value_or(true);
  g.id = group_id(g, g.effective_interval);

  // The checksum covers every field that changes how the group runs (reload compares it).
  core::Fnv1a64 h;
  auto add = [&](std::string_view s) {
    h.add(s);
    h.add_byte(0xFF);
  };
  auto add_dur = [&](const std::optional<core::Duration>& d) {
    add(d ? std::to_string(d->count()) : std::string("-"));
  };
  add(g.name);
  add(g.type);
  add_dur(g.interval);
  add_dur(g.eval_offset);
  add_dur(g.eval_delay);
  add(g.eval_alignment ? (*g.eval_alignment ? "1" : "0") : "-");
  add(std::to_string(g.limit));
  add(std::to_string(g.concurrency));
  for (const auto& [k, vs] : g.params) {
    add(k);
    for (const auto& v : vs) add(v);
    add("\x01");
  }
  for (const auto& [k, v] : g.headers) add(k + ":" + v);
  add("\x02");
  for (const auto& [k, v] : g.notifier_headers) add(k + ":" + v);
  add("\x02");
  for (const auto& l : g.labels) add(std::string(l.name) + "=" + std::string(l.value));
  add("\x02");
  add(g.debug ? "1" : "0");
  for (const RuleSpec& r : g.rules) {
    add(r.kind == RuleKind::alerting ? "A" : "R");
    add(r.name);
    add(r.expr);
    add(std::to_string(r.for_.count()));
    add(std::to_string(r.keep_firing_for.count()));
    for (const auto& l : r.labels) add(std::string(l.name) + "=" + std::string(l.value));
    add("\x03");
    for (const auto& l : r.annotations) add(std::string(l.name) + "=" + std::string(l.value));
    add("\x03");
    add(r.debug ? (*r.debug ? "1" : "0") : "-");
    add(r.update_entries_limit ? std::to_string(*r.update_entries_limit) : "-");
  }
  g.checksum = h.value();
}

std::string_view FileParser::line_text(size_t line0) const {
  if (line0 >= line_starts_.size()) return {};
  const size_t start = line_starts_[line0];
  const size_t end = line0 + 1 < line_starts_.size() ? line_starts_[line0 + 1] - 1 : text_.size();
  return text_.substr(start, end - start);
}

SourcePos FileParser::expr_error_pos(const YAML::Node& node, std::string_view expr,
                                     const ExprError& err) {
  const YAML::Mark m = node.Mark();
  const SourcePos fallback = pos_of(file_, m);
  if (m.is_null() || m.pos < 0 || static_cast<size_t>(m.pos) >= text_.size() || m.line < 0) {
    return fallback;
  }
  if (line_starts_.empty()) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }
  const size_t pos = static_cast<size_t>(m.pos);
  const char first = text_[pos];
  if (first == '|') {
    // Literal block: expression line N is file line (header + N) at the block's indentation.
    const size_t header = static_cast<size_t>(m.line);
    size_t indent = std::string_view::npos;
    for (size_t l = header + 1; l < line_starts_.size(); ++l) {
      const std::string_view t = line_text(l);
      const size_t non_space = t.find_first_not_of(' ');
      if (non_space != std::string_view::npos) {
        indent = non_space;
        break;
      }
    }
    const size_t target = header + static_cast<size_t>(err.line);
    if (indent == std::string_view::npos || target >= line_starts_.size()) return fallback;
    // Check that the file line holds the expression line, so the mapping is exact.
    size_t begin = 0;
    for (int l = 1; l < err.line; ++l) begin = expr.find('\n', begin) + 1;
    const std::string_view expr_line = expr.substr(begin, expr.find('\n', begin) - begin);
    const std::string_view file_line = line_text(target);
    if (file_line.size() < indent || file_line.substr(indent) != expr_line) return fallback;
    return SourcePos{file_, static_cast<int>(target) + 1, static_cast<int>(indent) + err.column};
  }
  if (err.line != 1 || expr.find('\n') != std::string_view::npos) return fallback;
  const size_t quote_len = (first == '"' || first == '\'') ? 1 : 0;
  if (text_.substr(pos + quote_len, expr.size()) != expr) return fallback;  // escapes, folding
  return SourcePos{file_, m.line + 1, m.column + static_cast<int>(quote_len) + err.column};
}

void FileParser::parse(std::string_view raw) {
  if (const auto bad = first_invalid_utf8(raw)) {
    out_.errors.emplace_back(prefix(SourcePos{file_, bad->first, bad->second}) +
                             "invalid UTF-8: a rule file must be UTF-8 encoded");
    return;
  }
  const std::string text = expand_env(raw, options_.env);
  text_ = text;
  line_starts_.clear();
  std::vector<YAML::Node> docs;
  try {
    if (const auto stuck = DocumentProgress::stuck_at(text)) {
      out_.errors.emplace_back(prefix(pos_of(file_, *stuck)) +
                               "cannot parse YAML: malformed document (the parser stops here)");
      return;
    }
    docs = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp words this "bad file"; say what is wrong instead.
    out_.errors.emplace_back(prefix(pos_of(file_, e.mark)) +
                             "cannot parse YAML: nested too deeply (over yaml-cpp's recursion "
                             "limit of 2000 nested calls)");
    return;
  } catch (const YAML::Exception& e) {
    out_.errors.emplace_back(prefix(pos_of(file_, e.mark)) + "cannot parse YAML: " + e.msg);
    return;  // a syntax error leaves nothing to validate
  }
  for (const YAML::Node& doc : docs) {
    AliasGuard guard;
    if (auto err = guard.check(doc)) {
      out_.errors.emplace_back(prefix(pos_of(file_, guard.error_mark())) + "cannot parse YAML: " +
                               *err);
      return;  // walking it would expand the aliases
    }
  }
  for (const YAML::Node& doc : docs) {
    if (!doc.IsDefined() || doc.IsNull()) continue;
    if (!doc.IsMap()) {
      error(doc.Mark(), "", "expected a map with the key \"groups\"");
      continue;
    }
    for (const auto& [k, v] : entries(doc, "")) {
      if (!k.IsScalar() || k.Scalar() != "groups") {
        error(k.Mark(), "", "unknown field " + quote(k.IsScalar() ? k.Scalar() : "?") +
                                " (a rule file holds only `groups`)");
        continue;
      }
      if (v.IsNull()) continue;
      if (!v.IsSequence()) {
        error(v.Mark(), "", "field \"groups\": expected a list");
        continue;
      }
      size_t index = 0;
      for (const auto& gn : v) parse_group(gn, index++);
    }
  }
  for (auto& g : groups_) out_.groups.push_back(std::move(g));
  groups_.clear();
  std::sort(errors_.begin(), errors_.end(), [](const PendingError& a, const PendingError& b) {
    if (a.line != b.line) return a.line < b.line;
    if (a.column != b.column) return a.column < b.column;
    return a.seq < b.seq;
  });
  for (auto& e : errors_) out_.errors.emplace_back(std::move(e.message));
  errors_.clear();
}

bool is_env_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

void expand_into(std::string_view text, const EnvLookup& env, int depth, std::string& out) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = text.find("%{", i);
    if (start == std::string_view::npos) break;
    size_t end = start + 2;
    while (end < text.size() && is_env_name_char(text[end])) ++end;
    if (end == start + 2 || end >= text.size() || text[end] != '}') {
      out.append(text.substr(i, start + 2 - i));
      i = start + 2;
      continue;
    }
    out.append(text.substr(i, start - i));
    const std::string_view name = text.substr(start + 2, end - start - 2);
    std::optional<std::string> value;
    if (env) {
      value = env(name);
    } else if (const char* v = std::getenv(std::string(name).c_str())) {
      value = std::string(v);
    }
    if (!value) {
      out.append(text.substr(start, end + 1 - start));
    } else if (depth < 8) {
      expand_into(*value, env, depth + 1, out);
    } else {
      out.append(*value);
    }
    i = end + 1;
  }
  out.append(text.substr(std::min(i, text.size())));
}

bool has_scheme(std::string_view s, std::string_view scheme) {
  return s.size() >= scheme.size() && s.substr(0, scheme.size()) == scheme;
}

}  // namespace

std::string expand_env(std::string_view text, const EnvLookup& env) {
  std::string out;
  out.reserve(text.size());
  expand_into(text, env, 0, out);
  return out;
}

uint64_t rule_id(const RuleSpec& rule) {
  core::Fnv1a64 h;
  h.add(rule.expr);
  h.add(rule.kind == RuleKind::recording ? "recording" : "alerting");
  h.add(rule.name);
  for (const auto& l : rule.labels) {  // core::Labels is sorted by name
    h.add(l.name);
    h.add(l.value);
    h.add_byte(0xFF);
  }
  return h.value();
}

uint64_t group_id(const GroupSpec& group, core::Duration effective_interval) {
  core::Fnv1a64 h;
  h.add(group.file);
  h.add_byte(0xFF);
  h.add(group.name);
  h.add(group.type);
  h.add(core::format_go_duration(effective_interval));
  if (group.eval_offset) h.add(core::format_go_duration(*group.eval_offset));
  return h.value();
}

LoadResult parse_rules_text(std::string_view text, const std::string& file,
                            const LoadOptions& options) {
  LoadResult out;
  out.files.push_back(file);
  FileParser(file, options, out).parse(text);
  if (!out.errors.empty()) out.groups.clear();
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const GroupSpec& a, const GroupSpec& b) { return a.name < b.name; });
  return out;
}

namespace {

std::string cap_text() { return std::to_string(kMaxRuleFileBytes >> 20) + " MiB"; }

// Why a file could not be read, as Go words it ("permission denied", "no such file or
// directory", "is a directory").
std::string errno_text(int err) {
  std::string text = std::generic_category().message(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// Reads at most kMaxRuleFileBytes of a file; more is an error naming the cap.
// A FIFO or socket is refused: opening a FIFO for reading waits for a writer, and one that
// never comes would hang -dryRun, the start and every later reload. The file is opened
// non-blocking so that check cannot hang either; reads then block as usual.
std::optional<std::string> read_capped(const std::string& name, LoadResult& out) {
  const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    out.errors.emplace_back(name + ": failed to read file: " + errno_text(errno));
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    out.errors.emplace_back(name + ": failed to read file: " +
                            (S_ISFIFO(st.st_mode)   ? std::string("a FIFO, not a regular file")
                             : S_ISSOCK(st.st_mode) ? std::string("a socket, not a regular file")
                                                    : errno_text(err)));
    return std::nullopt;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::FILE* f = ::fdopen(fd, "rb");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    out.errors.emplace_back(name + ": failed to read file: " + errno_text(err));
    return std::nullopt;
  }
  struct Close {
    std::FILE* f;
    ~Close() { std::fclose(f); }
  } close{f};
  std::string data;
  char buf[65536];
  for (;;) {
    const size_t got = std::fread(buf, 1, sizeof buf, f);
    if (got > 0) {
      if (data.size() + got > kMaxRuleFileBytes) {
        core::count_limit_hit(core::Limit::rule_file_size);
        out.errors.emplace_back(name + ": rule file too large: over " + cap_text() +
                                " (the cap on one rule file)");
        return std::nullopt;
      }
      data.append(buf, got);
    }
    if (got < sizeof buf) {
      if (std::ferror(f) != 0) {
        out.errors.emplace_back(name + ": failed to read file: " + errno_text(errno));
        return std::nullopt;
      }
      break;
    }
  }
  return data;
}

}  // namespace

LoadResult load_rules(const LoadOptions& options) {
  namespace fs = std::filesystem;
  LoadResult out;
  std::unordered_map<std::string, std::string> seen;  // canonical source -> -rule value
  auto read_source = [&](const std::string& name, const std::string& key,
                         const std::string& pattern) -> std::optional<std::string> {
    auto [it, inserted] = seen.emplace(key, pattern);
    if (!inserted) {
      out.errors.emplace_back(name + ": duplicate found for file name: reached by -rule " +
                              quote(it->second) + " and by -rule " + quote(pattern) +
                              "; file names must be unique");
      return std::nullopt;
    }
    out.files.push_back(name);
    if (has_scheme(name, "http://") || has_scheme(name, "https://")) {
      if (!options.fetch) {
        out.errors.emplace_back(name + ": failed to read: no URL fetcher configured");
        return std::nullopt;
      }
      auto body = options.fetch(name);
      if (!body) {
        out.errors.emplace_back(name + ": failed to fetch: " + body.error().message);
        return std::nullopt;
      }
      if (body->size() > kMaxRuleFileBytes) {
        core::count_limit_hit(core::Limit::rule_file_size);
        out.errors.emplace_back(name + ": rule file too large: over " + cap_text());
        return std::nullopt;
      }
      return std::move(*body);
    }
    std::error_code ec;
    if (std::filesystem::is_directory(name, ec)) {
      out.errors.emplace_back(name + ": failed to read file: is a directory (use a glob such as " +
                              name + "/*.yml)");
      return std::nullopt;
    }
    return read_capped(name, out);
  };

  for (const std::string& raw : options.paths) {
    std::vector<std::pair<std::string, std::string>> sources;  // name, dedup key
    if (has_scheme(raw, "http://") || has_scheme(raw, "https://")) {
      sources.emplace_back(raw, raw);
    } else {
      std::string path = raw;
      if (has_scheme(path, "fs://")) {
        path = path.substr(5);
      } else if (path.find("://") != std::string::npos) {
        out.errors.emplace_back("-rule " + quote(raw) +
                                ": unsupported scheme; want a path, fs://, http:// or https://");
        continue;
      }
      std::vector<std::string> files;
      if (has_glob_meta(path)) {
        auto matched = glob_files(path);
        if (!matched) {
          out.errors.emplace_back("-rule " + quote(raw) + ": " + matched.error().message);
          continue;
        }
        if (matched->empty()) out.warnings.push_back("-rule " + quote(raw) + " matched no files");
        files = std::move(*matched);
      } else {
        files.push_back(path);
      }
      for (auto& f : files) {
        std::error_code ec;
        const fs::path canon = fs::weakly_canonical(fs::path(f), ec);
        sources.emplace_back(f, ec ? f : canon.string());
      }
    }
    for (const auto& [name, key] : sources) {
      auto text = read_source(name, key, raw);
      if (!text) continue;
      FileParser(name, options, out).parse(*text);
    }
  }
  if (!out.errors.empty()) {
    out.groups.clear();
    return out;
  }
  if (out.groups.empty()) {
    std::string joined;
    for (const auto& p : options.paths) joined += (joined.empty() ? "" : ";") + p;
    out.warnings.push_back("no groups found in " + joined);
  }
  std::stable_sort(out.groups.begin(), out.groups.end(), [](const GroupSpec& a, const GroupSpec& b) {
    if (a.file != b.file) return a.file < b.file;
    return a.name < b.name;
  });
  return out;
}

}  // namespace config
