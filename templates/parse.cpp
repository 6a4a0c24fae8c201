// Lexer and parser for Go text/template (text/template/parse, go1.19 behaviour plus
// `else with`), producing the tree of ast.hpp. Error texts are Go's.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/utf8.hpp"
#include "templates/go_fmt.hpp"
#include "templates/ast.hpp"

namespace templates::tmpl {
namespace {

enum class It : uint8_t {
  error, boolean, chr, char_constant, complex, assign, declare, eof, field, identifier,
  left_delim, left_paren, number, pipe, raw_string, right_delim, right_paren, space, string, text,
  variable,
  // keywords
  block, break_, continue_, dot, define, else_, end, if_, nil, range, template_, with,
};

bool is_keyword(It t) { return t >= It::block; }

struct Item {
  It type;
  uint32_t pos;
  std::string_view val;
  int line;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_alnum(unsigned char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c >= 0x80;
}

std::string char_desc(std::string_view s, size_t i) {
  // Go's %#U: U+002D '-'
  size_t w = 1;
  const uint32_t r = i < s.size() ? core::decode_utf8(s, i, w) : 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "U+%04X", r);
  std::string out = buf;
  if (r >= 0x20 && r != 0x7F) {
    out += " '";
    core::append_utf8(out, r);  // an invalid byte prints as U+FFFD, as Go's %#U
    out += "'";
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view in) : in_(in) {}

  std::vector<Item> run() {
    bool ok = lex_text();
    (void)ok;
    return std::move(items_);
  }

 private:
  int line_at(size_t pos) {
    while (line_pos_ < pos && line_pos_ < in_.size()) {
      if (in_[line_pos_] == '\n') ++line_;
      ++line_pos_;
    }
    return line_;
  }
  void emit(It t) {
    items_.push_back(Item{t, static_cast<uint32_t>(start_), in_.substr(start_, pos_ - start_), line_at(start_)});
    start_ = pos_;
  }
  bool error(std::string msg) {
    errors_.push_back(std::move(msg));
    items_.push_back(Item{It::error, static_cast<uint32_t>(start_), errors_.back(), line_at(start_)});
    return false;
  }
  bool starts(size_t p, std::string_view s) const { return in_.substr(std::min(p, in_.size())).starts_with(s); }
  bool has_left_trim(size_t p) const {
    return p + 1 < in_.size() && in_[p] == '-' && is_space(in_[p + 1]);
  }
  bool has_right_trim(size_t p) const {
    return p + 1 < in_.size() && is_space(in_[p]) && in_[p + 1] == '-';
  }
  // (delim, trim)
  std::pair<bool, bool> at_right_delim(size_t p) const {
    if (has_right_trim(p) && starts(p + 2, "}}")) return {true, true};
    if (starts(p, "}}")) return {true, false};
    return {false, false};
  }
  size_t left_trim_length(size_t p) const {
    size_t n = 0;
    while (p + n < in_.size() && is_space(in_[p + n])) ++n;
    return n;
  }

  bool lex_text() {
    for (;;) {
      const size_t x = in_.find("{{", pos_);
      if (x == std::string_view::npos) {
        pos_ = in_.size();
        if (pos_ > start_) emit(It::text);
        emit(It::eof);
        return true;
      }
      size_t trim = 0;
      if (has_left_trim(x + 2)) {
        size_t e = x;
        while (e > start_ && is_space(in_[e - 1])) --e;
        trim = x - e;
      }
      pos_ = x - trim;
      if (pos_ > start_) emit(It::text);
      pos_ = x;
      start_ = pos_;
      if (!lex_left_delim()) return false;
    }
  }

  bool lex_left_delim() {
    pos_ += 2;
    const bool trim = has_left_trim(pos_);
    const size_t after = trim ? 2 : 0;
    if (starts(pos_ + after, "/*")) {
      pos_ += after;
      start_ = pos_;
      return lex_comment();
    }
    emit(It::left_delim);
    pos_ += after;
    start_ = pos_;
    paren_depth_ = 0;
    return lex_inside_action();
  }

  bool lex_comment() {
    pos_ += 2;
    const size_t x = in_.find("*/", pos_);
    if (x == std::string_view::npos) return error("unclosed comment");
    pos_ = x + 2;
    auto [delim, trim] = at_right_delim(pos_);
    if (!delim) return error("comment ends before closing delimiter");
    if (trim) pos_ += 2;
    pos_ += 2;
    if (trim) pos_ += left_trim_length(pos_);
    start_ = pos_;
    return true;
  }

  void lex_right_delim() {
    const bool trim = has_right_trim(pos_);
    if (trim) {
      pos_ += 2;
      start_ = pos_;
    }
    pos_ += 2;
    emit(It::right_delim);
    if (trim) {
      pos_ += left_trim_length(pos_);
      start_ = pos_;
    }
  }

  bool at_terminator() const {
    if (pos_ >= in_.size()) return true;
    const char r = in_[pos_];
    if (is_space(r)) return true;
    switch (r) {
      case '.':
      case ',':
      case '|':
      case ':':
      case ')':
      case '(':
      case '}':
        return true;
      default:
        return false;
    }
  }

  bool lex_inside_action() {
    for (;;) {
      auto [delim, trim] = at_right_delim(pos_);
      (void)trim;
      if (delim) {
        if (paren_depth_ == 0) {
          lex_right_delim();
          return true;
        }
        return error("unclosed left paren");
      }
      if (pos_ >= in_.size()) return error("unclosed action");
      const char r = in_[pos_++];
      if (is_space(r)) {
        --pos_;
        size_t n = 0;
        while (pos_ < in_.size() && is_space(in_[pos_])) {
          ++pos_;
          ++n;
        }
        if (has_right_trim(pos_ - 1) && starts(pos_ + 1, "}}")) {
          --pos_;
          if (n == 1) {
            lex_right_delim();
            return true;
          }
        }
        emit(It::space);
        continue;
      }
      switch (r) {
        case '=':
          emit(It::assign);
          continue;
        case ':':
          if (pos_ >= in_.size() || in_[pos_] != '=') return error("expected :=");
          ++pos_;
          emit(It::declare);
          continue;
        case '|':
          emit(It::pipe);
          continue;
        case '"':
          if (!lex_quote()) return false;
          continue;
        case '`':
          if (!lex_raw_quote()) return false;
          continue;
        case '$':
          if (!lex_field_or_variable(It::variable)) return false;
          continue;
        case '\'':
          if (!lex_char()) return false;
          continue;
        case '(':
          emit(It::left_paren);
          ++paren_depth_;
          continue;
        case ')':
          --paren_depth_;
          if (paren_depth_ < 0) return error("unexpected right paren U+0029 ')'");
          emit(It::right_paren);
          continue;
        default:
          break;
      }
      if (r == '.') {
        if (pos_ < in_.size() && !(in_[pos_] >= '0' && in_[pos_] <= '9')) {
          if (!lex_field_or_variable(It::field)) return false;
          continue;
        }
      }
      if (r == '.' || r == '+' || r == '-' || (r >= '0' && r <= '9')) {
        --pos_;
        if (!lex_number()) return false;
        continue;
      }
      if (is_alnum(static_cast<unsigned char>(r))) {
        --pos_;
        if (!lex_identifier()) return false;
        continue;
      }
      if (static_cast<unsigned char>(r) < 0x80 && r >= 0x20 && r != 0x7F) {
        emit(It::chr);
        continue;
      }
      --pos_;
      return error("unrecognized character in action: " + char_desc(in_, pos_));
    }
  }

  bool lex_identifier() {
    while (pos_ < in_.size() && is_alnum(static_cast<unsigned char>(in_[pos_]))) ++pos_;
    const std::string_view word = in_.substr(start_, pos_ - start_);
    if (!at_terminator()) return error("bad character " + char_desc(in_, pos_));
    static const std::pair<std::string_view, It> kKeys[] = {
        {"block", It::block}, {"break", It::break_},     {"continue", It::continue_},
        {"define", It::define}, {"else", It::else_},     {"end", It::end},
        {"if", It::if_},       {"nil", It::nil},         {"range", It::range},
        {"template", It::template_}, {"with", It::with}};
    for (const auto& [k, t] : kKeys) {
      if (word == k) {
        emit(t);
        return true;
      }
    }
    if (word == "true" || word == "false") {
      emit(It::boolean);
    } else {
      emit(It::identifier);
    }
    return true;
  }

  bool lex_field_or_variable(It typ) {
    if (at_terminator()) {
      emit(typ == It::variable ? It::variable : It::dot);
      return true;
    }
    while (pos_ < in_.size() && is_alnum(static_cast<unsigned char>(in_[pos_]))) ++pos_;
    if (!at_terminator()) return error("bad character " + char_desc(in_, pos_));
    emit(typ);
    return true;
  }

  bool lex_char() {
    for (;;) {
      if (pos_ >= in_.size()) return error("unterminated character constant");
      const char c = in_[pos_++];
      if (c == '\\') {
        if (pos_ < in_.size() && in_[pos_] != '\n') {
          ++pos_;
          continue;
        }
        return error("unterminated character constant");
      }
      if (c == '\n') return error("unterminated character constant");
      if (c == '\'') break;
    }
    emit(It::char_constant);
    return true;
  }

  bool lex_quote() {
    for (;;) {
      if (pos_ >= in_.size()) return error("unterminated quoted string");
      const char c = in_[pos_++];
      if (c == '\\') {
        if (pos_ < in_.size() && in_[pos_] != '\n') {
          ++pos_;
          continue;
        }
        return error("unterminated quoted string");
      }
      if (c == '\n') return error("unterminated quoted string");
      if (c == '"') break;
    }
    emit(It::string);
    return true;
  }

  bool lex_raw_quote() {
    const size_t x = in_.find('`', pos_);
    if (x == std::string_view::npos) return error("unterminated raw quoted string");
    pos_ = x + 1;
    emit(It::raw_string);
    return true;
  }

  bool accept(std::string_view set) {
    if (pos_ < in_.size() && set.find(in_[pos_]) != std::string_view::npos) {
      ++pos_;
      return true;
    }
    return false;
  }
  void accept_run(std::string_view set) {
    while (accept(set)) {
    }
  }
  bool scan_number() {
    accept("+-");
    std::string_view digits = "0123456789_";
    if (accept("0")) {
      if (accept("xX")) {
        digits = "0123456789abcdefABCDEF_";
      } else if (accept("oO")) {
        digits = "01234567_";
      } else if (accept("bB")) {
        digits = "01_";
      }
    }
    accept_run(digits);
    if (accept(".")) accept_run(digits);
    if (digits.size() == 11 && accept("eE")) {
      accept("+-");
      accept_run("0123456789_");
    }
    if (digits.size() == 23 && accept("pP")) {
      accept("+-");
      accept_run("0123456789_");
    }
    accept("i");
    if (pos_ < in_.size() && is_alnum(static_cast<unsigned char>(in_[pos_]))) {
      ++pos_;
      return false;
    }
    return true;
  }
  bool lex_number() {
    auto bad = [&] {
      std::string q;
      gofmt::append_quote(q, in_.substr(start_, pos_ - start_));
      return error("bad number syntax: " + q);
    };
    if (!scan_number()) return bad();
    if (pos_ < in_.size() && (in_[pos_] == '+' || in_[pos_] == '-')) {
      if (!scan_number() || in_[pos_ - 1] != 'i') return bad();
      emit(It::complex);
    } else {
      emit(It::number);
    }
    return true;
  }

  std::string_view in_;
  size_t pos_ = 0;
  size_t start_ = 0;
  int paren_depth_ = 0;
  size_t line_pos_ = 0;
  int line_ = 1;
  std::vector<Item> items_;

 public:
  // Messages outlive the lexer through the items' views: keep them in a stable container.
  struct Errors {
    std::vector<std::unique_ptr<std::string>> v;
    void push_back(std::string s) { v.push_back(std::make_unique<std::string>(std::move(s))); }
    std::string_view back() const { return *v.back(); }
  };

 public:
  Errors errors_;
};

// Go's strconv.Unquote for "..." and `...` and '...' literals.
bool unquote(std::string_view q, std::string& out) {
  out.clear();
  if (q.size() < 2) return false;
  const char quote = q.front();
  if (q.back() != quote) return false;
  q = q.substr(1, q.size() - 2);
  if (quote == '`') {
    for (char c : q) {
      if (c != '\r') out.push_back(c);
    }
    return true;
  }
  size_t i = 0;
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  auto put_rune = [&](uint32_t r) { core::append_utf8(out, r); };

  while (i < q.size()) {
    const char c = q[i];
    if (c == quote && quote == '"') return false;
    if (c == '\n') return false;
    if (c != '\\') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (++i >= q.size()) return false;
    const char e = q[i++];
    switch (e) {
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'v': out.push_back('\v'); break;
      case '\\': out.push_back('\\'); break;
      case '\'':
      case '"':
        if (e != quote) return false;
        out.push_back(e);
        break;
      case 'x':
      case 'u':
      case 'U': {
        const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        if (i + static_cast<size_t>(n) > q.size()) return false;
        uint32_t v = 0;
        for (int k = 0; k < n; ++k) {
          const int h = hexval(q[i + static_cast<size_t>(k)]);
          if (h < 0) return false;
          v = v * 16 + static_cast<uint32_t>(h);
        }
        i += static_cast<size_t>(n);
        if (e == 'x') {
          out.push_back(static_cast<char>(v));
        } else {
          if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
          put_rune(v);
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          if (i + 2 > q.size()) return false;
          uint32_t v = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2; ++k) {
            const char d = q[i++];
            if (d < '0' || d > '7') return false;
            v = v * 8 + static_cast<uint32_t>(d - '0');
          }
          if (v > 255) return false;
          out.push_back(static_cast<char>(v));
          break;
        }
        return false;
    }
  }
  return true;
}

// Go's strconv.ParseInt/ParseUint with base 0 (prefixes, underscores).
bool parse_go_int(std::string_view s, bool& neg, uint64_t& mag) {
  neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  int base = 10;
  bool prefixed = false;
  if (s.size() > 1 && s[0] == '0') {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    if (p == 'x') {
      base = 16;
      s.remove_prefix(2);
      prefixed = true;
    } else if (p == 'o') {
      base = 8;
      s.remove_prefix(2);
      prefixed = true;
    } else if (p == 'b') {
      base = 2;
      s.remove_prefix(2);
      prefixed = true;
    } else {
      base = 8;
      s.remove_prefix(1);
      prefixed = true;
    }
  }
  if (s.empty() && !(base == 8 && prefixed)) return false;
  uint64_t v = 0;
  bool last_us = prefixed;  // an underscore may follow the prefix
  for (char c : s) {
    if (c == '_') {
      if (last_us && !prefixed) return false;
      last_us = true;
      continue;
    }
    last_us = false;
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0 || d >= base) return false;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    prefixed = false;
  }
  if (last_us && !s.empty() && s.back() == '_') return false;
  mag = v;
  return true;
}

class ParseError {
 public:
  explicit ParseError(std::string m) : msg(std::move(m)) {}
  std::string msg;
};

struct Scope {
  std::vector<std::pair<std::string, int>> vars;  // name, slot (-1: assigned but undefined)
  int next_slot = 1;
  int max_slots = 1;
  int range_depth = 0;
  Tree* tree = nullptr;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view parse_name, bool with_prefix,
         std::shared_ptr<const std::string> source)
      : text_(text), parse_name_(parse_name), with_prefix_(with_prefix), source_(std::move(source)) {}

  ParseOutput run() {
    Lexer lx(text_);
    items_ = lx.run();
    errors_ = std::move(lx.errors_);
    ParseOutput out;
    out.main = new_tree("");
    Scope scope = new_scope(out.main.get(), with_prefix_);
    scope_ = &scope;
    while (peek().type != It::eof) {
      if (peek().type == It::left_delim) {
        const size_t save = cur_;
        next();
        if (next_non_space().type == It::define) {
          parse_definition(out);
          continue;
        }
        cur_ = save;
      }
      Node n;
      const int r = text_or_action(n);
      if (r != 0) errorf(r == 1 ? "unexpected {{end}}" : "unexpected {{else}}");
      append(out.main.get(), std::move(n));
    }
    finish(scope);
    for (auto& [name, t] : blocks_) out.defines[name] = t;
    return out;
  }

 private:
  std::shared_ptr<Tree> new_tree(std::string name) {
    auto t = std::make_shared<Tree>();
    t->name = std::move(name);
    t->source = source_;
    t->parse_name = std::string(parse_name_);
    t->col_offset = with_prefix_ ? kVmalertPrefixBytes : 0;
    return t;
  }
  Scope new_scope(Tree* t, bool prefix) {
    Scope s;
    s.tree = t;
    s.vars.emplace_back("$", 0);
    if (prefix) {
      for (int k = 0; k < kPrefixVarCount; ++k) s.vars.emplace_back(kPrefixVars[k], k + 1);
      s.next_slot = kPrefixVarCount + 1;
      s.max_slots = s.next_slot;
    }
    return s;
  }
  static void finish(Scope& s) { s.tree->slots = s.max_slots; }
  static void append(Tree* t, Node n) {
    if (n.type != NodeType::text ||
        !std::all_of(n.text.begin(), n.text.end(), [](char c) { return is_space(c); })) {
      t->empty = false;
    }
    t->root.push_back(std::move(n));
  }

  // ---- tokens ----
  const Item& next() {
    const size_t k = std::min(cur_, items_.size() - 1);
    ++cur_;
    hi_ = std::max(hi_, k);
    return items_[k];
  }
  const Item& peek() {
    const size_t k = std::min(cur_, items_.size() - 1);
    hi_ = std::max(hi_, k);
    return items_[k];
  }
  void backup() { --cur_; }
  const Item& next_non_space() {
    for (;;) {
      const Item& it = next();
      if (it.type != It::space) return it;
    }
  }
  const Item& peek_non_space() {
    for (;;) {
      const Item& it = peek();
      if (it.type != It::space) return it;
      next();
    }
  }

  [[noreturn]] void errorf(const std::string& msg) {
    const int line = items_.empty() ? 1 : items_[std::min(hi_, items_.size() - 1)].line;
    throw ParseError("template: " + std::string(parse_name_) + ":" + std::to_string(line) + ": " + msg);
  }
  static std::string item_string(const Item& i) {
    if (i.type == It::eof) return "EOF";
    if (i.type == It::error) return std::string(i.val);
    if (is_keyword(i.type)) return "<" + std::string(i.val) + ">";
    std::string q;
    if (i.val.size() > 10) {
      // Go's %.10q: quote the first 10 runes.
      size_t n = 0, k = 0;
      while (k < i.val.size() && n < 10) {
        ++k;
        while (k < i.val.size() && (static_cast<unsigned char>(i.val[k]) & 0xC0) == 0x80) ++k;
        ++n;
      }
      gofmt::append_quote(q, i.val.substr(0, k));
      return q + "...";
    }
    gofmt::append_quote(q, i.val);
    return q;
  }
  [[noreturn]] void unexpected(const Item& tok, std::string_view context) {
    if (tok.type == It::error) {
      std::string extra;
      if (action_line_ != 0 && action_line_ != tok.line) {
        extra = " in action started at " + std::string(parse_name_) + ":" + std::to_string(action_line_);
        if (tok.val.ends_with(" action")) extra = extra.substr(std::string_view(" in action").size());
      }
      errorf(std::string(tok.val) + extra);
    }
    errorf("unexpected " + item_string(tok) + " in " + std::string(context));
  }
  const Item& expect(It t, std::string_view context) {
    const Item& tok = next_non_space();
    if (tok.type != t) unexpected(tok, context);
    return tok;
  }

  // ---- structure ----
  void parse_definition(ParseOutput& out) {
    const Item& name_tok = next_non_space();
    if (name_tok.type != It::string && name_tok.type != It::raw_string) unexpected(name_tok, "define clause");
    std::string name;
    if (!unquote(name_tok.val, name)) errorf("invalid syntax");
    expect(It::right_delim, "define clause");
    auto tree = new_tree(name);
    Scope scope = new_scope(tree.get(), false);
    Scope* saved = scope_;
    scope_ = &scope;
    std::vector<Node> list;
    const int end = item_list(list);
    if (end != 1) errorf("unexpected {{else}} in define clause");
    for (auto& n : list) append(tree.get(), std::move(n));
    finish(scope);
    scope_ = saved;
    add_tree(out, std::move(tree));
  }
  void add_tree(ParseOutput&, std::shared_ptr<Tree> t) {
    auto it = blocks_.find(t->name);
    if (it != blocks_.end() && t->empty && !it->second->empty) return;
    blocks_[t->name] = std::move(t);
  }

  // Returns 0 at EOF never (errors), 1 for {{end}}, 2 for {{else}}.
  int item_list(std::vector<Node>& list) {
    while (peek_non_space().type != It::eof) {
      Node n;
      const int r = text_or_action(n);
      if (r != 0) {
        last_else_pos_ = n.pos;
        return r;
      }
      list.push_back(std::move(n));
    }
    errorf("unexpected EOF");
  }

  // 0: node filled; 1: {{end}}; 2: {{else}}.
  int text_or_action(Node& n) {
    const Item& tok = next_non_space();
    switch (tok.type) {
      case It::text:
        n.type = NodeType::text;
        n.pos = tok.pos;
        n.text = std::string(tok.val);
        return 0;
      case It::left_delim: {
        const int saved = action_line_;
        action_line_ = tok.line;
        const int r = action(n);
        action_line_ = saved;
        return r;
      }
      default:
        unexpected(tok, "input");
    }
  }

  int action(Node& n) {
    const Item& tok = next_non_space();
    switch (tok.type) {
      case It::block: block_control(n); return 0;
      case It::break_:
      case It::continue_: {
        const bool brk = tok.type == It::break_;
        const uint32_t pos = tok.pos;
        const Item& t2 = next_non_space();
        if (t2.type != It::right_delim) unexpected(t2, brk ? "{{break}}" : "{{continue}}");
        if (scope_->range_depth == 0) errorf(brk ? "{{break}} outside {{range}}" : "{{continue}} outside {{range}}");
        n.type = brk ? NodeType::break_ : NodeType::continue_;
        n.pos = pos;
        return 0;
      }
      case It::else_: {
        const Item& p = peek_non_space();
        if (p.type == It::if_ || p.type == It::with) {
          n.pos = p.pos;
          else_chain_ = p.type;
          return 2;
        }
        else_chain_ = It::eof;
        n.pos = expect(It::right_delim, "else").pos;
        return 2;
      }
      case It::end:
        n.pos = expect(It::right_delim, "end").pos;
        return 1;
      case It::if_: control(n, NodeType::if_, "if"); return 0;
      case It::range: control(n, NodeType::range, "range"); return 0;
      case It::with: control(n, NodeType::with, "with"); return 0;
      case It::template_: template_control(n); return 0;
      default: break;
    }
    backup();
    n.type = NodeType::action;
    n.pos = peek().pos;
    n.pipe = pipeline("command", It::right_delim);
    return 0;
  }

  void control(Node& n, NodeType type, std::string_view context) {
    NestGuard guard(*this);
    const size_t mark_vars = scope_->vars.size();
    const int mark_slot = scope_->next_slot;
    n.type = type;
    n.pipe = pipeline(context, It::right_delim);
    n.pos = n.pipe->pos;
    n.branches = std::make_unique<Branches>();
    Branches& br = *n.branches;
    if (type == NodeType::range) ++scope_->range_depth;
    const int r = item_list(br.list);
    if (type == NodeType::range) --scope_->range_depth;
    if (r == 2) {
      br.has_else = true;
      const It chain = else_chain_;
      if ((chain == It::if_ && type == NodeType::if_) || (chain == It::with && type == NodeType::with)) {
        next_non_space();  // the if/with keyword
        Node inner;
        control(inner, type, context);
        br.else_list.push_back(std::move(inner));
      } else {
        if (chain != It::eof) {
          // {{else if}} inside range/with, {{else with}} inside if/range: Go takes the "else",
          // then meets the keyword where it expects text or an action.
          unexpected(peek_non_space(), "input");
        }
        const int r2 = item_list(br.else_list);
        if (r2 != 1) errorf("expected end; found {{else}}");
      }
    }
    scope_->vars.resize(mark_vars);
    scope_->next_slot = mark_slot;
  }

  std::string template_name(const Item& tok, std::string_view context) {
    if (tok.type != It::string && tok.type != It::raw_string) unexpected(tok, context);
    std::string s;
    if (!unquote(tok.val, s)) errorf("invalid syntax");
    return s;
  }

  void template_control(Node& n) {
    const Item& tok = next_non_space();
    n.type = NodeType::template_;
    n.pos = tok.pos;
    n.text = template_name(tok, "template clause");
    scope_->tree->calls.push_back(n.text);
    if (next_non_space().type != It::right_delim) {
      backup();
      n.pipe = pipeline("template clause", It::right_delim);
    }
  }

  void block_control(Node& n) {
    const Item& tok = next_non_space();
    n.type = NodeType::template_;
    n.pos = tok.pos;
    n.text = template_name(tok, "block clause");
    scope_->tree->calls.push_back(n.text);
    n.pipe = pipeline("block clause", It::right_delim);
    auto tree = new_tree(n.text);
    Scope scope = new_scope(tree.get(), false);
    Scope* saved = scope_;
    scope_ = &scope;
    std::vector<Node> list;
    const int end = item_list(list);
    if (end != 1) errorf("unexpected {{else}} in block clause");
    for (auto& x : list) append(tree.get(), std::move(x));
    finish(scope);
    scope_ = saved;
    ParseOutput dummy;
    add_tree(dummy, std::move(tree));
  }

  // Only the vmalert variables a template references are set up at render time.
  void mark_prefix(int slot) {
    if (with_prefix_ && scope_->tree->name.empty() && slot > 0 && slot <= kPrefixVarCount) {
      scope_->tree->prefix_used |= 1u << slot;
    }
  }

  int declare_var(const std::string& name, bool assign) {
    int slot = -1;
    if (assign) {
      for (auto it = scope_->vars.rbegin(); it != scope_->vars.rend(); ++it) {
        if (it->first == name) {
          slot = it->second;
          break;
        }
      }
    } else {
      slot = scope_->next_slot++;
      scope_->max_slots = std::max(scope_->max_slots, scope_->next_slot);
    }
    scope_->vars.emplace_back(name, slot);
    mark_prefix(slot);
    return slot;
  }

  // Bounds the parser's (and so the evaluator's) recursion; Go has no such limit, but no
  // real template nests anywhere near this deep.
  struct NestGuard {
    explicit NestGuard(Parser& p) : p_(p) {
      if (++p_.nesting_ > kMaxNesting) p_.errorf("template nesting too deep (more than 1000 levels)");
    }
    ~NestGuard() { --p_.nesting_; }
    NestGuard(const NestGuard&) = delete;
    NestGuard& operator=(const NestGuard&) = delete;
    Parser& p_;
  };
  static constexpr int kMaxNesting = 1000;

  std::unique_ptr<Pipe> pipeline(std::string_view context, It end) {
    NestGuard guard(*this);
    auto pipe = std::make_unique<Pipe>();
    pipe->pos = peek_non_space().pos;
    // Declarations.
    for (;;) {
      const Item& v = peek_non_space();
      if (v.type != It::variable) break;
      const size_t save = cur_;
      next();
      const Item& after = peek();
      const It after_type = after.type;
      const Item& nx = peek_non_space();
      if (nx.type == It::assign || nx.type == It::declare) {
        pipe->is_assign = nx.type == It::assign;
        next_non_space();
        pipe->decls.push_back(Decl{declare_var(std::string(v.val), pipe->is_assign),
                                   std::string(v.val)});
        break;
      }
      if (nx.type == It::chr && nx.val == ",") {
        next_non_space();
        pipe->decls.push_back(Decl{declare_var(std::string(v.val), false), std::string(v.val)});
        if (context == "range" && pipe->decls.size() < 2) {
          const It t = peek_non_space().type;
          if (t == It::variable || t == It::right_delim || t == It::right_paren) continue;
          errorf("range can only initialize variables");
        }
        errorf("too many declarations in " + std::string(context));
      }
      (void)after_type;
      cur_ = save;
      break;
    }
    for (;;) {
      const Item& tok = next_non_space();
      if (tok.type == end) {
        check_pipeline(*pipe, context);
        return pipe;
      }
      switch (tok.type) {
        case It::boolean:
        case It::char_constant:
        case It::complex:
        case It::dot:
        case It::field:
        case It::identifier:
        case It::number:
        case It::nil:
        case It::raw_string:
        case It::string:
        case It::variable:
        case It::left_paren:
          backup();
          pipe->cmds.push_back(command());
          break;
        default:
          unexpected(tok, context);
      }
    }
  }

  void check_pipeline(const Pipe& p, std::string_view context) {
    if (p.cmds.empty()) errorf("missing value for " + std::string(context));
    for (size_t i = 1; i < p.cmds.size(); ++i) {
      switch (p.cmds[i].args[0].type) {
        case ArgType::boolean:
        case ArgType::dot:
        case ArgType::nil:
        case ArgType::number:
        case ArgType::string:
          errorf("non executable command in pipeline stage " + std::to_string(i + 1));
        default:
          break;
      }
    }
  }

  Command command() {
    Command cmd;
    cmd.pos = peek_non_space().pos;
    for (;;) {
      peek_non_space();
      Arg a;
      if (operand(a)) cmd.args.push_back(std::move(a));
      const Item& tok = next();
      if (tok.type == It::space) continue;
      if (tok.type == It::right_delim || tok.type == It::right_paren) {
        backup();
      } else if (tok.type != It::pipe) {
        unexpected(tok, "operand");
      }
      break;
    }
    if (cmd.args.empty()) errorf("empty command");
    return cmd;
  }

  bool operand(Arg& a) {
    if (!term(a)) return false;
    if (peek().type == It::field) {
      const uint32_t chain_pos = peek().pos;
      std::vector<std::string> fields;
      while (peek().type == It::field) fields.emplace_back(next().val.substr(1));
      switch (a.type) {
        case ArgType::field:
        case ArgType::variable:
          a.pos = chain_pos;
          for (auto& f : fields) a.fields.push_back(std::move(f));
          break;
        case ArgType::boolean:
        case ArgType::string:
        case ArgType::number:
        case ArgType::nil:
        case ArgType::dot: {
          std::string q;
          gofmt::append_quote(q, to_string(a));
          errorf("unexpected . after term " + q);
        }
        default: {
          Arg chain;
          chain.type = ArgType::chain;
          chain.pos = chain_pos;
          chain.fields = std::move(fields);
          if (a.type == ArgType::pipe) {
            chain.pipe = std::move(a.pipe);
          } else {
            chain.base = std::make_unique<Arg>(std::move(a));
          }
          a = std::move(chain);
          break;
        }
      }
    }
    return true;
  }

  bool term(Arg& a) {
    const Item& tok = next_non_space();
    a.pos = tok.pos;
    switch (tok.type) {
      case It::identifier: {
        Func f;
        if (!lookup_func(tok.val, f)) {
          std::string q;
          gofmt::append_quote(q, tok.val);
          errorf("function " + q + " not defined");
        }
        a.type = ArgType::identifier;
        a.func = f;
        a.name = std::string(tok.val);
        if (f == Func::query) scope_->tree->uses_query = true;
        return true;
      }
      case It::dot: a.type = ArgType::dot; return true;
      case It::nil: a.type = ArgType::nil; return true;
      case It::variable: {
        a.type = ArgType::variable;
        a.name = std::string(tok.val);
        for (auto it = scope_->vars.rbegin(); it != scope_->vars.rend(); ++it) {
          if (it->first == a.name) {
            a.slot = it->second;
            mark_prefix(a.slot);
            return true;
          }
        }
        std::string q;
        gofmt::append_quote(q, a.name);
        errorf("undefined variable " + q);
      }
      case It::field:
        a.type = ArgType::field;
        a.fields.emplace_back(tok.val.substr(1));
        return true;
      case It::boolean:
        a.type = ArgType::boolean;
        a.b = tok.val == "true";
        return true;
      case It::char_constant:
      case It::complex:
      case It::number:
        a.type = ArgType::number;
        a.text = std::string(tok.val);
        parse_number(a, tok.type);
        return true;
      case It::left_paren:
        a.type = ArgType::pipe;
        a.pipe = pipeline("parenthesized pipeline", It::right_paren);
        return true;
      case It::string:
      case It::raw_string: {
        a.type = ArgType::string;
        std::string s;
        if (!unquote(tok.val, s)) errorf("invalid syntax");
        a.text = std::move(s);
        a.name = std::string(tok.val);  // quoted form for String()
        return true;
      }
      default:
        backup();
        return false;
    }
  }

  void parse_number(Arg& a, It typ) {
    Number& n = a.num;
    const std::string& text = a.text;
    auto illegal = [&] {
      std::string q;
      gofmt::append_quote(q, text);
      errorf("illegal number syntax: " + q);
    };
    if (typ == It::char_constant) {
      std::string s;
      if (!unquote(text, s) || s.empty()) errorf("malformed character constant: " + text);
      size_t w = 0;
      const uint32_t r = core::decode_utf8(s, 0, w);
      n.is_int = n.is_uint = n.is_float = true;
      n.i = r;
      n.u = r;
      n.f = r;
      return;
    }
    if (typ == It::complex) errorf("complex constants are not supported: " + text);
    if (!text.empty() && text.back() == 'i') errorf("complex constants are not supported: " + text);
    bool neg = false;
    uint64_t mag = 0;
    if (parse_go_int(text, neg, mag)) {
      if (!neg) {
        n.is_uint = true;
        n.u = mag;
      }
      if ((!neg && mag <= static_cast<uint64_t>(INT64_MAX)) || (neg && mag <= (static_cast<uint64_t>(INT64_MAX) + 1))) {
        n.is_int = true;
        n.i = neg ? static_cast<int64_t>(~mag + 1) : static_cast<int64_t>(mag);
        if (n.i == 0) {
          n.is_uint = true;
          n.u = 0;
        }
      }
    }
    if (n.is_int) {
      n.is_float = true;
      n.f = static_cast<double>(n.i);
    } else if (n.is_uint) {
      n.is_float = true;
      n.f = static_cast<double>(n.u);
    } else {
      auto f = gofmt::parse_float(text);
      if (f) {
        if (text.find_first_of(".eEpP") == std::string::npos) {
          std::string q;
          gofmt::append_quote(q, text);
          errorf("integer overflow: " + q);
        }
        n.is_float = true;
        n.f = *f;
        if (std::isfinite(n.f) && n.f >= -9.2e18 && n.f <= 9.2e18 &&
            static_cast<double>(static_cast<int64_t>(n.f)) == n.f) {
          n.is_int = true;
          n.i = static_cast<int64_t>(n.f);
        }
        if (std::isfinite(n.f) && n.f >= 0 && n.f <= 1.8e19 &&
            static_cast<double>(static_cast<uint64_t>(n.f)) == n.f) {
          n.is_uint = true;
          n.u = static_cast<uint64_t>(n.f);
        }
      }
    }
    if (!n.is_int && !n.is_uint && !n.is_float) illegal();
    const bool hex_int = text.size() > 2 && (text.starts_with("0x") || text.starts_with("0X") ||
                                             text.starts_with("-0x") || text.starts_with("+0x")) &&
                         text.find_first_of("pP") == std::string::npos;
    n.float_form = n.is_float && !hex_int && text.find_first_of(".eEpP") != std::string::npos;
  }

  std::string_view text_;
  std::string_view parse_name_;
  bool with_prefix_;
  std::shared_ptr<const std::string> source_;
  std::vector<Item> items_;
  Lexer::Errors errors_;
  size_t cur_ = 0;
  size_t hi_ = 0;
  int action_line_ = 0;
  uint32_t last_else_pos_ = 0;
  It else_chain_ = It::eof;
  Scope* scope_ = nullptr;
  int nesting_ = 0;
  std::map<std::string, std::shared_ptr<Tree>, std::less<>> blocks_;
};

}  // namespace

core::Result<ParseOutput> parse_text(std::string_view text, std::string_view parse_name,
                                     bool with_prefix) {
  auto source = std::make_shared<const std::string>(text);
  try {
    Parser p(*source, parse_name, with_prefix, source);
    return p.run();
  } catch (const ParseError& e) {
    return core::fail(e.msg);
  }
}

std::string to_string(const Arg& a) {
  switch (a.type) {
    case ArgType::field: {
      std::string s;
      for (const auto& f : a.fields) s += "." + f;
      return s;
    }
    case ArgType::variable: {
      std::string s = a.name;
      for (const auto& f : a.fields) s += "." + f;
      return s;
    }
    case ArgType::chain: {
      std::string s = a.pipe ? "(" + to_string(*a.pipe) + ")" : to_string(*a.base);
      for (const auto& f : a.fields) s += "." + f;
      return s;
    }
    case ArgType::identifier: return a.name;
    case ArgType::pipe: return "(" + to_string(*a.pipe) + ")";
    case ArgType::dot: return ".";
    case ArgType::nil: return "nil";
    case ArgType::boolean: return a.b ? "true" : "false";
    case ArgType::number: return a.text;
    case ArgType::string: return a.name;
  }
  return {};
}

std::string to_string(const Command& c) {
  std::string s;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (i > 0) s.push_back(' ');
    s += to_string(c.args[i]);
  }
  return s;
}

std::string to_string(const Pipe& p) {
  std::string s;
  if (!p.decls.empty()) {
    for (size_t i = 0; i < p.decls.size(); ++i) {
      if (i > 0) s += ", ";
      s += p.decls[i].name;
    }
    s += " := ";
  }
  for (size_t i = 0; i < p.cmds.size(); ++i) {
    if (i > 0) s += " | ";
    s += to_string(p.cmds[i]);
  }
  return s;
}

}  // namespace templates::tmpl
