#include "config/promql.hpp"

#include <cctype>
#include <cstdio>
#include <vector>

#include "core/strings.hpp"

// Grammar (lowest precedence first; all binary operators share one loop with a precedence
// table, `^` is right-associative):
//   expr     := unary (binop modifiers unary)*
//   unary    := ('+'|'-')* postfix
//   postfix  := primary ('[' range ']' | 'offset' dur | '@' at | 'keep_metric_names')*
//   primary  := number | string | '(' expr (',' expr)* ')' | 'WITH' '(' defs ')' expr
//             | ident [grouping] '(' args ')' [grouping] ['limit' number]
//             | ident ['{' matchers '}'] | '{' matchers '}'
namespace config {
namespace {

enum class Tok {
  end,
  ident,
  number,    // also a number with a unit suffix: durations (5m, 1h30m, 1i), 1Ki, 2M
  string,
  lparen,
  rparen,
  lbrace,
  rbrace,
  lbracket,
  rbracket,
  comma,
  colon,
  at,
  op,        // + - * / % ^ == != > < >= <=
  assign,    // =
  re_match,  // =~
  re_not,    // !~
  bad,       // lexer error; text holds the message
};

struct Token {
  Tok kind = Tok::end;
  std::string_view text;
  size_t offset = 0;
  std::string error;  // for Tok::bad
};

bool is_digit_char(char c) { return c >= '0' && c <= '9'; }

// Bytes >= 0x80 count as letters: MetricsQL accepts Unicode letters in identifiers.
bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || is_digit_char(c) || c == '.'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Token next() {
    skip_space();
    Token t;
    t.offset = i_;
    if (i_ >= s_.size()) return t;
    const char c = s_[i_];
    auto single = [&](Tok k) {
      t.kind = k;
      t.text = s_.substr(i_, 1);
      ++i_;
      return t;
    };
    switch (c) {
      case '(': return single(Tok::lparen);
      case ')': return single(Tok::rparen);
      case '{': return single(Tok::lbrace);
      case '}': return single(Tok::rbrace);
      case '[': return single(Tok::lbracket);
      case ']': return single(Tok::rbracket);
      case ',': return single(Tok::comma);
      case '@': return single(Tok::at);
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
      case '^': return single(Tok::op);
      default: break;
    }
    if (c == ':') {
      // A bare ':' is the subquery separator; ':name' would be an identifier.
      if (i_ + 1 < s_.size() && ident_start(s_[i_ + 1]) && s_[i_ + 1] != ':') {
        return lex_ident(t);
      }
      return single(Tok::colon);
    }
    if (c == '=' || c == '!' || c == '<' || c == '>') {
      const char n = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
      t.text = s_.substr(i_, 2);
      if (c == '=' && n == '=') t.kind = Tok::op;
      else if (c == '=' && n == '~') t.kind = Tok::re_match;
      else if (c == '!' && n == '=') t.kind = Tok::op;
      else if (c == '!' && n == '~') t.kind = Tok::re_not;
      else if ((c == '<' || c == '>') && n == '=') t.kind = Tok::op;
      else if (c == '=') return single(Tok::assign);
      else if (c == '<' || c == '>') return single(Tok::op);
      else {
        t.kind = Tok::bad;
        t.error = "unexpected character after '!': want '=' or '~'";
        ++i_;
        return t;
      }
      i_ += 2;
      return t;
    }
    if (c == '"' || c == '\'' || c == '`') return lex_string(t, c);
    if (is_digit(c) || (c == '.' && i_ + 1 < s_.size() && is_digit(s_[i_ + 1]))) {
      return lex_number(t);
    }
    if (ident_start(c) || c == '\\') return lex_ident(t);
    t.kind = Tok::bad;
    t.error = std::string("unexpected character ") + quote_char(c);
    ++i_;
    return t;
  }

 private:
  static std::string quote_char(char c) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      return buf;
    }
    return std::string("'") + c + "'";
  }

  void skip_space() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  Token lex_ident(Token& t) {
    const size_t start = i_;
    while (i_ < s_.size()) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        i_ += 2;
      } else if (ident_char(s_[i_]) || (i_ == start && s_[i_] == ':')) {
        ++i_;
      } else {
        break;
      }
    }
    t.kind = Tok::ident;
    t.text = s_.substr(start, i_ - start);
    return t;
  }

  Token lex_number(Token& t) {
    const size_t start = i_;
    if (s_[i_] == '0' && i_ + 1 < s_.size() && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X')) {
      i_ += 2;
      while (i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    } else {
      while (i_ < s_.size() && (is_digit(s_[i_]) || s_[i_] == '_')) ++i_;
      if (i_ < s_.size() && s_[i_] == '.') {
        ++i_;
        while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        size_t j = i_ + 1;
        if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
        if (j < s_.size() && is_digit(s_[j])) {
          i_ = j;
          while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
        }
      }
    }
    // A unit suffix: durations (5m, 1h30m, 1.5h, 1i) and MetricsQL's 1Ki, 2M, 1KB.
    if (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) {
      while (i_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) {
        ++i_;
      }
    }
    t.kind = Tok::number;
    t.text = s_.substr(start, i_ - start);
    return t;
  }

  Token lex_string(Token& t, char q) {
    const size_t start = i_;
    ++i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (q != '`' && s_[i_] == '\\') ++i_;
      if (q != '`' && i_ < s_.size() && s_[i_] == '\n') break;
      ++i_;
    }
    if (i_ >= s_.size() || s_[i_] != q) {
      t.kind = Tok::bad;
      t.error = "unterminated quoted string";
      i_ = s_.size();
      return t;
    }
    ++i_;
    t.kind = Tok::string;
    t.text = s_.substr(start, i_ - start);
    return t;
  }

  std::string_view s_;
  size_t i_ = 0;
};

struct ParseError {
  size_t offset;
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string_view s) : lex_(s) { advance(); }

  void parse_all() {
    if (cur_.kind == Tok::end) fail(cur_, "empty expression");
    parse_expr();
    if (cur_.kind == Tok::rparen) fail(cur_, "unexpected right parenthesis ')'");
    if (cur_.kind != Tok::end) fail(cur_, "unexpected " + describe(cur_));
  }

 private:
  [[noreturn]] void fail(const Token& t, std::string msg) {
    throw ParseError{t.offset, std::move(msg)};
  }

  static std::string describe(const Token& t) {
    if (t.kind == Tok::end) return "end of input";
    return "token \"" + std::string(t.text) + "\"";
  }

  void advance() {
    cur_ = lex_.next();
    if (cur_.kind == Tok::bad) fail(cur_, cur_.error);
  }

  bool is_kw(std::string_view kw) const { return cur_.kind == Tok::ident && core::iequals(cur_.text, kw); }

  void expect(Tok k, std::string_view what, std::string_view context) {
    if (cur_.kind != k) {
      fail(cur_, "unexpected " + describe(cur_) + " " + std::string(context) + "; want " +
                     std::string(what));
    }
    advance();
  }

  // Returns the precedence of the binary operator at cur_, or 0.
  int binop_precedence() const {
    if (cur_.kind == Tok::op) {
      const auto t = cur_.text;
      if (t == "^") return 6;
      if (t == "*" || t == "/" || t == "%") return 5;
      if (t == "+" || t == "-") return 4;
      return 3;  // comparisons
    }
    if (cur_.kind != Tok::ident) return 0;
    if (is_kw("atan2")) return 5;
    if (is_kw("and") || is_kw("unless") || is_kw("if") || is_kw("ifnot")) return 2;
    if (is_kw("or") || is_kw("default")) return 1;
    return 0;
  }

  // Bounds the recursion, so a hostile `((((...` is an error instead of a stack overflow.
  class DepthGuard {
   public:
    DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.fail(p_.cur_, "expression nesting too deep");
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };
  static constexpr int kMaxDepth = 500;

  void parse_expr(int min_prec = 1) {
    DepthGuard guard(*this);
    parse_unary();
    while (true) {
      const int prec = binop_precedence();
      if (prec == 0 || prec < min_prec) return;
      const bool right_assoc = cur_.kind == Tok::op && cur_.text == "^";
      const bool comparison = prec == 3;
      advance();
      parse_binop_modifiers(comparison);
      if (cur_.kind == Tok::end) fail(cur_, "unexpected end of input after binary operator");
      parse_expr(right_assoc ? prec : prec + 1);
      if (is_kw("keep_metric_names")) advance();
    }
  }

  void parse_binop_modifiers(bool comparison) {
    if (comparison && is_kw("bool")) advance();
    if (is_kw("on") || is_kw("ignoring")) {
      advance();
      parse_label_list("in on/ignoring");
      if (is_kw("group_left") || is_kw("group_right")) {
        advance();
        if (cur_.kind == Tok::lparen) parse_label_list("in grouping");
        if (is_kw("prefix")) {  // MetricsQL: group_left(...) prefix "x_"
          advance();
          expect(Tok::string, "string", "after prefix");
        }
      }
    } else if (is_kw("group_left") || is_kw("group_right")) {
      // MetricsQL allows group_left without on(); Prometheus does not.
      advance();
      if (cur_.kind == Tok::lparen) parse_label_list("in grouping");
    }
  }

  void parse_label_list(std::string_view context) {
    const Token open = cur_;
    expect(Tok::lparen, "\"(\"", context);
    while (cur_.kind != Tok::rparen) {
      if (cur_.kind != Tok::ident && cur_.kind != Tok::string) {
        if (cur_.kind == Tok::end) fail(open, "unclosed left parenthesis");
        fail(cur_, "unexpected " + describe(cur_) + " in grouping opts; want label name");
      }
      advance();
      if (cur_.kind == Tok::comma) {
        advance();
      } else if (cur_.kind != Tok::rparen) {
        if (cur_.kind == Tok::end) fail(open, "unclosed left parenthesis");
        fail(cur_, "unexpected " + describe(cur_) + " in grouping opts; want \",\" or \")\"");
      }
    }
    advance();
  }

  void parse_unary() {
    while (cur_.kind == Tok::op && (cur_.text == "+" || cur_.text == "-")) advance();
    parse_postfix();
  }

  void parse_postfix() {
    parse_primary();
    while (true) {
      if (cur_.kind == Tok::lbracket) {
        parse_range();
      } else if (is_kw("offset")) {
        advance();
        parse_duration_expr("after offset");
      } else if (cur_.kind == Tok::at) {
        advance();
        if (cur_.kind == Tok::op && (cur_.text == "+" || cur_.text == "-")) advance();
        if (is_kw("start") || is_kw("end")) {
          advance();
          expect(Tok::lparen, "\"(\"", "after @ start/end");
          expect(Tok::rparen, "\")\"", "after @ start(/end(");
        } else if (cur_.kind == Tok::number) {
          advance();
        } else if (cur_.kind == Tok::lparen) {
          parse_postfix();  // MetricsQL: @ (expr)
        } else {
          fail(cur_, "unexpected " + describe(cur_) + " after @; want a timestamp");
        }
      } else if (is_kw("keep_metric_names")) {
        advance();
      } else {
        return;
      }
    }
  }

  // A duration, possibly with MetricsQL arithmetic: 5m, -5m, 5m+1m, 1i, (1h-5m)*2, w (WITH).
  void parse_duration_expr(std::string_view context) {
    parse_duration_term(context);
    while (cur_.kind == Tok::op &&
           (cur_.text == "+" || cur_.text == "-" || cur_.text == "*" || cur_.text == "/")) {
      advance();
      parse_duration_term(context);
    }
  }

  void parse_duration_term(std::string_view context) {
    DepthGuard guard(*this);
    if (cur_.kind == Tok::op && (cur_.text == "+" || cur_.text == "-")) {
      advance();
      parse_duration_term(context);
      return;
    }
    if (cur_.kind == Tok::number || cur_.kind == Tok::ident) {
      advance();
      return;
    }
    if (cur_.kind == Tok::lparen) {
      const Token open = cur_;
      advance();
      parse_duration_expr(context);
      if (cur_.kind != Tok::rparen) {
        if (cur_.kind == Tok::end) fail(open, "unclosed left parenthesis");
        fail(cur_, "unexpected " + describe(cur_) + " in duration; want \")\"");
      }
      advance();
      return;
    }
    fail(cur_, "unexpected " + describe(cur_) + " " + std::string(context) + "; want a duration");
  }

  void parse_range() {
    const Token open = cur_;
    advance();
    if (cur_.kind == Tok::rbracket) fail(cur_, "missing range duration in \"[]\"");
    if (cur_.kind != Tok::colon) parse_duration_expr("in range");
    if (cur_.kind == Tok::colon) {
      advance();
      if (cur_.kind != Tok::rbracket) parse_duration_expr("in subquery step");
    }
    if (cur_.kind != Tok::rbracket) {
      if (cur_.kind == Tok::end) fail(open, "unclosed left bracket");
      fail(cur_, "unexpected " + describe(cur_) + " in range; want \"]\"");
    }
    advance();
  }

  void parse_matchers() {
    const Token open = cur_;
    advance();  // '{'
    while (cur_.kind != Tok::rbrace) {
      if (cur_.kind == Tok::end) fail(open, "unexpected end of input inside braces");
      if (cur_.kind != Tok::ident && cur_.kind != Tok::string) {
        fail(cur_, "unexpected " + describe(cur_) + " in label matching; want label name");
      }
      const Tok name_kind = cur_.kind;
      advance();
      if (cur_.kind == Tok::assign || cur_.kind == Tok::re_match || cur_.kind == Tok::re_not ||
          (cur_.kind == Tok::op && cur_.text == "!=")) {
        advance();
        if (cur_.kind != Tok::string) {
          fail(cur_, "unexpected " + describe(cur_) + " in label matching; want string");
        }
        advance();
      } else if (name_kind != Tok::string && with_depth_ == 0) {
        // Only a quoted metric name may stand alone: {"metric"}; inside WITH a bare name is a
        // template reference: WITH (f = {a="b"}) x{f}.
        fail(cur_, "unexpected " + describe(cur_) + " in label matching; want \"=\", \"!=\", "
                                                    "\"=~\" or \"!~\"");
      }
      if (cur_.kind == Tok::comma) {
        advance();
      } else if (is_kw("or")) {  // MetricsQL: {a="b" or c="d"}
        advance();
      } else if (cur_.kind != Tok::rbrace) {
        if (cur_.kind == Tok::end) fail(open, "unexpected end of input inside braces");
        fail(cur_, "unexpected " + describe(cur_) + " in label matching; want \",\" or \"}\"");
      }
    }
    advance();
  }

  // Comma-separated expressions up to ')'; the opening '(' is already consumed.
  void parse_args(const Token& open) {
    while (cur_.kind != Tok::rparen) {
      if (cur_.kind == Tok::end) fail(open, "unclosed left parenthesis");
      parse_expr();
      if (cur_.kind == Tok::comma) {
        advance();
      } else if (cur_.kind != Tok::rparen) {
        if (cur_.kind == Tok::end) fail(open, "unclosed left parenthesis");
        fail(cur_, "unexpected " + describe(cur_) + "; want \",\" or \")\"");
      }
    }
    advance();
  }

  void parse_with() {
    ++with_depth_;
    advance();  // WITH
    const Token open = cur_;
    expect(Tok::lparen, "\"(\"", "after WITH");
    while (cur_.kind != Tok::rparen) {
      if (cur_.kind == Tok::end) fail(open, "unclosed left parenthesis");
      if (cur_.kind != Tok::ident) {
        fail(cur_, "unexpected " + describe(cur_) + " in WITH; want a template name");
      }
      advance();
      if (cur_.kind == Tok::lparen) parse_label_list("in WITH template arguments");
      expect(Tok::assign, "\"=\"", "in WITH");
      parse_expr();
      if (cur_.kind == Tok::comma) {
        advance();
      } else if (cur_.kind != Tok::rparen) {
        if (cur_.kind == Tok::end) fail(open, "unclosed left parenthesis");
        fail(cur_, "unexpected " + describe(cur_) + " in WITH; want \",\" or \")\"");
      }
    }
    advance();
    parse_expr();
    --with_depth_;
  }

  void parse_grouping() {
    advance();  // by / without
    parse_label_list("in grouping opts");
  }

  void parse_primary() {
    switch (cur_.kind) {
      case Tok::number:
      case Tok::string:
        advance();
        return;
      case Tok::lparen: {
        const Token open = cur_;
        advance();
        if (cur_.kind == Tok::rparen) fail(cur_, "unexpected \")\": empty parentheses");
        parse_args(open);  // MetricsQL: (a, b) is a union
        return;
      }
      case Tok::lbrace:
        parse_matchers();
        return;
      case Tok::ident:
        break;
      case Tok::end:
        fail(cur_, "unexpected end of input");
      default:
        fail(cur_, "unexpected " + describe(cur_));
    }
    if (is_kw("with")) {
      Lexer probe = lex_;
      const Token next = probe.next();
      if (next.kind == Tok::lparen) {
        parse_with();
        return;
      }
    }
    advance();  // the identifier: metric name, function, aggregation, Inf, NaN
    bool grouped = false;
    if (is_kw("by") || is_kw("without")) {
      Lexer probe = lex_;
      if (probe.next().kind == Tok::lparen) {
        parse_grouping();
        grouped = true;
        if (cur_.kind != Tok::lparen) {
          fail(cur_, "unexpected " + describe(cur_) + " after grouping; want \"(\"");
        }
      }
    }
    if (cur_.kind == Tok::lparen) {
      const Token open = cur_;
      advance();
      parse_args(open);
      if (!grouped && (is_kw("by") || is_kw("without"))) parse_grouping();
      if (is_kw("limit")) {
        advance();
        expect(Tok::number, "number", "after limit");
      }
      return;
    }
    if (cur_.kind == Tok::lbrace) parse_matchers();
  }

  Lexer lex_;
  Token cur_;
  int with_depth_ = 0;
  int depth_ = 0;
};

}  // namespace

std::optional<ExprError> check_promql(std::string_view expr) {
  try {
    Parser p(expr);
    p.parse_all();
    return std::nullopt;
  } catch (const ParseError& e) {
    ExprError out;
    out.message = e.message;
    for (size_t i = 0; i < e.offset && i < expr.size(); ++i) {
      if (expr[i] == '\n') {
        ++out.line;
        out.column = 1;
      } else {
        ++out.column;
      }
    }
    return out;
  }
}

}  // namespace config
