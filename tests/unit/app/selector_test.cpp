#include "app/selector.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

const core::Labels kLabels{{"alertname", "HighCPU"},
                           {"env", "prod"},
                           {"quote", "a\"b"},
                           {"severity", "critical"},
                           {"team", "db-1"}};

}  // namespace

TEST_CASE("series selectors match label sets", "[app][selector]") {
  struct Case {
    std::string selector;
    bool matches;
  };
  const std::vector<Case> cases = {
      {R"({env="prod"})", true},
      {R"({env="dev"})", false},
      {R"({env!="dev"})", true},
      {R"({env!="prod"})", false},
      {R"({severity=~"crit.*"})", true},
      {R"({severity=~"crit"})", false},  // anchored at both ends
      {R"({severity!~"warn|info"})", true},
      {R"({severity!~"crit.*"})", false},
      {R"({env="prod",severity="critical"})", true},
      {R"({env="prod",severity="warning"})", false},
      {R"({env="prod", severity="critical",})", true},  // trailing comma, spaces
      {R"({missing=""})", true},                         // absent label is ""
      {R"({missing!=""})", false},
      {R"({missing=~".*"})", true},
      {R"({env="dev" or severity="critical"})", true},  // MetricsQL "or"
      {R"({env="dev" or severity="warning"})", false},
      {R"({quote="a\"b"})", true},
      {R"({quote='a"b'})", true},
      {"{quote=`a\"b`}", true},
      {R"({team=~"db-\\d"})", true},
      {R"({"env"="prod"})", true},  // quoted label name
      {R"({env="\x70rod"})", true},
      {R"({env="\u0070rod"})", true},
      {R"(HighCPU)", false},            // __name__ is not among the labels
      {R"(up{env="prod"})", false},     // same
      {R"({alertname=~"High.+",env=~"prod|dev"})", true},
  };
  for (const auto& c : cases) {
    INFO(c.selector);
    auto sel = app::SeriesSelector::parse(c.selector);
    REQUIRE(sel);
    CHECK(sel->matches(kLabels) == c.matches);
  }
}

TEST_CASE("metric names become __name__ matchers", "[app][selector]") {
  auto sel = app::SeriesSelector::parse(R"(up{job="a"})");
  REQUIRE(sel);
  CHECK(sel->matches(core::Labels{{"__name__", "up"}, {"job", "a"}}));
  CHECK_FALSE(sel->matches(core::Labels{{"__name__", "down"}, {"job", "a"}}));
  auto colon = app::SeriesSelector::parse("job:rate5m");
  REQUIRE(colon);
  CHECK(colon->matches(core::Labels{{"__name__", "job:rate5m"}}));
}

TEST_CASE("bad series selectors are errors that say where", "[app][selector]") {
  struct Case {
    std::string selector;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "at least one label matcher"},
      {"{}", "at least one label matcher"},
      {R"({env="prod")", "missing '}'"},
      {R"({env="prod)", "unterminated string"},
      {R"({env=prod})", "expected a quoted value"},
      {R"({env=="prod"})", "expected a quoted value"},
      {R"({env~"prod"})", "expected one of = != =~ !~"},
      {R"({="prod"})", "expected a label name"},
      {R"({env="prod" severity="x"})", "expected ',', 'or' or '}'"},
      {R"({env=~"("})", "invalid regexp"},
      {R"({env="a\qb"})", "unknown escape sequence"},
      {R"({env="prod"} extra)", "unexpected character 'e'"},
      {R"(rate(x[5m]))", "unexpected character '('"},
  };
  for (const auto& c : cases) {
    INFO(c.selector);
    auto sel = app::SeriesSelector::parse(c.selector);
    REQUIRE_FALSE(sel);
    CHECK_THAT(sel.error().message, Catch::Contains(c.message));
    CHECK_THAT(sel.error().message, Catch::Contains("cannot parse series selector"));
    CHECK(sel.error().kind == core::ErrorKind::bad_config);
  }
}

TEST_CASE("match[]: any one selector is enough; none means everything", "[app][selector]") {
  std::vector<app::SeriesSelector> sels;
  CHECK(app::matches_any(sels, kLabels));
  sels.push_back(*app::SeriesSelector::parse(R"({env="dev"})"));
  CHECK_FALSE(app::matches_any(sels, kLabels));
  sels.push_back(*app::SeriesSelector::parse(R"({team="db-1"})"));
  CHECK(app::matches_any(sels, kLabels));
}
