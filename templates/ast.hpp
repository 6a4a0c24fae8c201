// The parsed form of a template (internal to templates/): Go's text/template parse
// tree, with variables resolved to slots and function names resolved to ids at parse time so
// rendering does no name lookups beyond label keys.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "templates/template.hpp"

namespace templates::tmpl {

enum class Func : uint8_t {
  // text/template builtins
  and_, or_, not_, len, index, slice, print, printf, println, eq, ne, lt, le, gt, ge, html, js,
  urlquery, call,
  // vmalert
  title, toUpper, toLower, crlfEscape, quotesEscape, jsonEscape, htmlEscape, stripPort,
  stripDomain, match, reReplaceAll, parseDuration, parseDurationTime, humanize, humanize1024,
  humanizeDuration, humanizePercentage, humanizeTimestamp, toTime, formatTime, now, externalURL,
  pathPrefix, pathEscape, queryEscape, first, label, value, strvalue, sortByLabel, args, safeHtml,
  query,
};

// Returns false when `name` is not a function vmalert defines.
bool lookup_func(std::string_view name, Func& out);
std::string_view func_name(Func f);

struct Pipe;

enum class ArgType : uint8_t { field, chain, identifier, pipe, variable, dot, nil, boolean, number, string };

struct Number {
  bool is_int = false, is_uint = false, is_float = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  bool float_form = false;  // idealConstant gives float64 (has . e E p, not hex int / rune)
};

struct Arg {
  ArgType type = ArgType::nil;
  uint32_t pos = 0;
  std::vector<std::string> fields;  // field: .A.B; variable: $x.A.B -> A,B; chain: (..).A.B
  std::string name;                 // variable name ("$x") / identifier
  int slot = -1;                    // variable slot, -1 = undefined at run time
  Func func = Func::and_;
  std::unique_ptr<Pipe> pipe;       // pipe, or the base of a chain whose base is a pipe
  std::unique_ptr<Arg> base;        // chain base (when not a pipe)
  bool b = false;
  Number num;
  std::string text;  // string: unquoted value; number/string: original text for messages
};

struct Command {
  uint32_t pos = 0;
  std::vector<Arg> args;
};

// A variable a pipeline declares or assigns: its slot (-1: undefined) and name.
struct Decl {
  int slot = -1;
  std::string name;
};

struct Pipe {
  uint32_t pos = 0;
  bool is_assign = false;
  std::vector<Decl> decls;  // one vector, not one per field: most pipes declare nothing
  std::vector<Command> cmds;
};

enum class NodeType : uint8_t { text, action, if_, range, with, template_, break_, continue_ };

struct Branches;

struct Node {
  NodeType type = NodeType::text;
  uint32_t pos = 0;
  std::string text;                 // text, template name
  std::unique_ptr<Pipe> pipe;
  // if, range, with only. Text and action nodes (nearly all of a real template) carry no lists:
  // 56 bytes a node instead of 104, in every rule's parsed annotations.
  std::unique_ptr<Branches> branches;
};

struct Branches {
  std::vector<Node> list;
  std::vector<Node> else_list;
  bool has_else = false;
};

// One named tree: the main text, a {{define}} or a {{block}}.
struct Tree {
  std::string name;
  std::vector<Node> root;
  int slots = 1;  // variable slots needed ($ is slot 0)
  uint32_t prefix_used = 0;  // bit k: the vmalert variable in slot k is referenced
  bool uses_query = false;
  std::vector<std::string> calls;  // names used by {{template}} / {{block}}
  bool empty = true;                        // only whitespace text: does not replace a definition
  std::shared_ptr<const std::string> source;  // for error positions
  std::string parse_name;                   // "" for rule values, the file name for templates
  int col_offset = 0;                       // the vmalert variable prefix on line 1 (316)
};

using TreeMap = std::map<std::string, std::shared_ptr<const Tree>, std::less<>>;

// The number of bytes of vmalert's variable-definition prefix (error columns on line 1 count it).
inline constexpr int kVmalertPrefixBytes = 316;
// Slots of the variables vmalert declares in its prefix, in declaration order after $ (slot 0).
inline constexpr const char* kPrefixVars[] = {"$value",          "$type",        "$labels",
                                              "$expr",           "$interval",    "$externalLabels",
                                              "$externalURL",    "$alertID",     "$groupID",
                                              "$activeAt",       "$for",         "$isPartial"};
inline constexpr int kPrefixVarCount = 12;

struct ParseOutput {
  std::shared_ptr<Tree> main;
  TreeMap defines;  // {{define}} and {{block}} trees in this text
};

// Parses `text`. With `with_prefix` the vmalert variables are predeclared (rule values);
// without, only $ (template files). The error is `template: NAME:LINE: MSG`.
core::Result<ParseOutput> parse_text(std::string_view text, std::string_view parse_name,
                                     bool with_prefix);

// Go's String() of parse nodes, for error messages.
std::string to_string(const Arg& a);
std::string to_string(const Command& c);
std::string to_string(const Pipe& p);

}  // namespace templates::tmpl
