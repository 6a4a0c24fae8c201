#include "app/selector.hpp"

#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace app {

namespace {

enum class Op { eq, ne, re, nre };

struct Matcher {
  std::string name;
  Op op = Op::eq;
  std::string value;
  std::shared_ptr<const re2::RE2> re;  // op re / nre

  [[nodiscard]] bool matches(std::string_view v) const {
    switch (op) {
      case Op::eq: return v == value;
      case Op::ne: return v != value;
      case Op::re: return re2::RE2::FullMatch(re2::StringPiece(v.data(), v.size()), *re);
      case Op::nre: return !re2::RE2::FullMatch(re2::StringPiece(v.data(), v.size()), *re);
    }
    return false;
  }
};

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  core::Result<std::vector<std::vector<Matcher>>> run() {
    std::vector<std::vector<Matcher>> sets(1);
    skip_space();
    std::optional<Matcher> name_matcher;
    if (pos_ < s_.size() && (is_name_start(s_[pos_]) || s_[pos_] == ':')) {
      const size_t start = pos_;
      while (pos_ < s_.size() && (is_name_char(s_[pos_]) || s_[pos_] == ':')) ++pos_;
      name_matcher = Matcher{"__name__", Op::eq, std::string(s_.substr(start, pos_ - start)), {}};
      skip_space();
    }
    if (pos_ < s_.size() && s_[pos_] == '{') {
      ++pos_;
      if (auto err = parse_braces(sets)) return core::fail(std::move(*err));
      skip_space();
    }
    if (pos_ != s_.size()) return error("unexpected " + describe_here());
    if (name_matcher) {
      for (auto& set : sets) set.insert(set.begin(), *name_matcher);
    }
    for (const auto& set : sets) {
      if (set.empty()) return error("a selector needs at least one label matcher");
    }
    return sets;
  }

 private:
  core::unexpected<core::Error> error(std::string what) const {
    return core::fail(core::Error{
        "cannot parse series selector \"" + std::string(s_) + "\" at offset " +
            std::to_string(pos_) + ": " + what,
        core::ErrorKind::bad_config});
  }
  std::optional<core::Error> error_value(std::string what) const { return error(std::move(what)).error(); }

  std::string describe_here() const {
    if (pos_ >= s_.size()) return "end of input";
    return "character '" + std::string(1, s_[pos_]) + "'";
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // After '{': matchers up to '}'.
  std::optional<core::Error> parse_braces(std::vector<std::vector<Matcher>>& sets) {
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) return error_value("missing '}'");
      if (s_[pos_] == '}') {
        ++pos_;
        return std::nullopt;
      }
      Matcher m;
      if (auto err = parse_matcher(m)) return err;
      sets.back().push_back(std::move(m));
      skip_space();
      if (pos_ >= s_.size()) return error_value("missing '}'");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') continue;
      if (keyword_or()) {
        sets.emplace_back();
        continue;
      }
      return error_value("expected ',', 'or' or '}' but found " + describe_here());
    }
  }

  bool keyword_or() {
    if (s_.substr(pos_, 2) != "or") return false;
    if (pos_ + 2 < s_.size() && is_name_char(s_[pos_ + 2])) return false;
    pos_ += 2;
    return true;
  }

  std::optional<core::Error> parse_matcher(Matcher& m) {
    if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'' || s_[pos_] == '`')) {
      if (auto err = parse_string(m.name)) return err;
    } else if (pos_ < s_.size() && is_name_start(s_[pos_])) {
      const size_t start = pos_;
      while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
      m.name = std::string(s_.substr(start, pos_ - start));
    } else {
      return error_value("expected a label name but found " + describe_here());
    }
    skip_space();
    const std::string_view rest = s_.substr(pos_);
    if (rest.starts_with("=~")) {
      m.op = Op::re;
      pos_ += 2;
    } else if (rest.starts_with("!~")) {
      m.op = Op::nre;
      pos_ += 2;
    } else if (rest.starts_with("!=")) {
      m.op = Op::ne;
      pos_ += 2;
    } else if (rest.starts_with("=")) {
      m.op = Op::eq;
      pos_ += 1;
    } else {
      return error_value("expected one of = != =~ !~ after label \"" + m.name + "\" but found " +
                         describe_here());
    }
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'' && s_[pos_] != '`')) {
      return error_value("expected a quoted value for label \"" + m.name + "\" but found " +
                         describe_here());
    }
    if (auto err = parse_string(m.value)) return err;
    if (m.op == Op::re || m.op == Op::nre) {
      auto re = std::make_shared<re2::RE2>(m.value, re2::RE2::Quiet);
      if (!re->ok()) {
        return error_value("invalid regexp \"" + m.value + "\" for label \"" + m.name +
                           "\": " + re->error());
      }
      m.re = std::move(re);
    }
    return std::nullopt;
  }

  // A Go string literal at pos_.
  std::optional<core::Error> parse_string(std::string& out) {
    const char quote = s_[pos_++];
    out.clear();
    if (quote == '`') {
      const size_t end = s_.find('`', pos_);
      if (end == std::string_view::npos) return error_value("unterminated raw string");
      out.assign(s_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return std::nullopt;
    }
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == quote) return std::nullopt;
      if (c == '\n') return error_value("newline in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case '\\': out += '\\'; break;
        case '"':
        case '\'':
          if (e != quote) return error_value("unknown escape sequence");
          out += e;
          break;
        case 'x':
        case 'u':
        case 'U': {
          const int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t v = 0;
          for (int i = 0; i < digits; ++i) {
            const int d = pos_ < s_.size() ? hex_digit(s_[pos_]) : -1;
            if (d < 0) return error_value("invalid escape sequence");
            v = v * 16 + static_cast<uint32_t>(d);
            ++pos_;
          }
          if (e == 'x') {
            out += static_cast<char>(v);
          } else {
            append_utf8(out, v);
          }
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2; ++i) {
              if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '7') {
                return error_value("invalid octal escape");
              }
              v = v * 8 + static_cast<uint32_t>(s_[pos_++] - '0');
            }
            if (v > 255) return error_value("octal escape value > 255");
            out += static_cast<char>(v);
            break;
          }
          return error_value("unknown escape sequence");
      }
    }
    return error_value("unterminated string");
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

struct SeriesSelector::Impl {
  std::vector<std::vector<Matcher>> sets;
};

core::Result<SeriesSelector> SeriesSelector::parse(std::string_view text) {
  auto sets = Parser(text).run();
  if (!sets) return core::fail(std::move(sets.error()));
  auto impl = std::make_shared<Impl>();
  impl->sets = std::move(*sets);
  return SeriesSelector(std::move(impl));
}

bool SeriesSelector::matches(const core::Labels& labels) const {
  for (const auto& set : impl_->sets) {
    bool all = true;
    for (const auto& m : set) {
      if (!m.matches(labels.get(m.name).value_or(std::string_view{}))) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

bool matches_any(std::span<const SeriesSelector> selectors, const core::Labels& labels) {
  if (selectors.empty()) return true;
  for (const auto& s : selectors) {
    if (s.matches(labels)) return true;
  }
  return false;
}

}  // namespace app
