#include "app/flags.hpp"

#include <catch2/catch.hpp>

namespace {
core::Result<app::ParseFlagsResult> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "alertd");
  return app::parse_flags(static_cast<int>(args.size()), args.data());
}
}  // namespace

using namespace std::chrono_literals;

TEST_CASE("defaults match vmalert", "[app]") {
  auto r = parse({});
  REQUIRE(r.has_value());
  const auto& f = r->flags;
  CHECK(f.evaluation_interval == 1min);
  CHECK(f.rule_eval_delay == 30s);
  CHECK(app::listen_addrs(f) == std::vector<std::string>{":8880"});
  CHECK(f.datasource_query_step == 5min);
  CHECK(f.rule_validate_templates);
  CHECK(f.rule_validate_expressions);
  CHECK_FALSE(f.dry_run);
  CHECK(f.logger_level == "INFO");
  CHECK(f.logger_format == "default");
  CHECK(f.rule_update_entries_limit == 20);
}

TEST_CASE("single and double dash, adjacent and next values", "[app]") {
  auto r = parse({"-rule=a.yml", "--rule=b.yml", "-rule", "c.yml,d/**/*.yml",
                  "-datasource.url=http://127.0.0.1:9090", "--notifier.url=http://am:9093",
                  "-evaluationInterval=15s", "-external.label=cluster=eu",
                  "-external.label=replica=a,dc=x", "-loggerFormat=json"});
  REQUIRE(r.has_value());
  const auto& f = r->flags;
  CHECK(f.rule == std::vector<std::string>{"a.yml", "b.yml", "c.yml", "d/**/*.yml"});
  CHECK(f.datasource_url == "http://127.0.0.1:9090");
  CHECK(f.notifier_url == std::vector<std::string>{"http://am:9093"});
  CHECK(f.evaluation_interval == 15s);
  CHECK(f.external_labels.get("cluster") == std::optional<std::string_view>("eu"));
  CHECK(f.external_labels.get("replica") == std::optional<std::string_view>("a"));
  CHECK(f.external_labels.get("dc") == std::optional<std::string_view>("x"));
  CHECK(f.logger_format == "json");
}

TEST_CASE("Go-style booleans", "[app]") {
  CHECK(parse({"-dryRun"})->flags.dry_run);
  CHECK(parse({"-dryRun=true"})->flags.dry_run);
  CHECK_FALSE(parse({"-dryRun=false"})->flags.dry_run);
  CHECK_FALSE(parse({"-rule.validateTemplates=false"})->flags.rule_validate_templates);
  // A bare boolean does not swallow the next argument.
  auto r = parse({"-dryRun", "-rule=x.yml"});
  REQUIRE(r.has_value());
  CHECK(r->flags.dry_run);
  CHECK(r->flags.rule == std::vector<std::string>{"x.yml"});
}

TEST_CASE("unknown flags and bad values name the flag", "[app]") {
  struct Case {
    std::vector<const char*> args;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{"-nosuchflag=1"}, "flag provided but not defined: -nosuchflag"},
      {{"-datasource.ur=x"}, "flag provided but not defined: -datasource.ur"},
      {{"-evaluationInterval=abc"}, "flag -evaluationInterval"},
      {{"-rule.resultsLimit=many"}, "flag -rule.resultsLimit"},
      {{"-dryRun=maybe"}, "flag -dryRun"},
      {{"-external.label=novalue"}, "flag -external.label"},
      {{"-loggerFormat=xml"}, "flag -loggerFormat"},
      {{"-datasource.maxResponseSize=10XB"}, "flag -datasource.maxResponseSize"},
  };
  for (const auto& c : cases) {
    INFO(c.args.front());
    auto r = parse(c.args);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains(c.want));
  }
}

TEST_CASE("array flags split at top-level commas only", "[app]") {
  CHECK(app::split_array_flag("a,b") == std::vector<std::string>{"a", "b"});
  CHECK(app::split_array_flag("dir/{a,b}.yml") == std::vector<std::string>{"dir/{a,b}.yml"});
  CHECK(app::split_array_flag("\"x,y\",z") == std::vector<std::string>{"\"x,y\"", "z"});
  // Empty items keep their position (index-matched -notifier.* arrays).
  CHECK(app::split_array_flag("a,") == std::vector<std::string>{"a", ""});
  CHECK(app::split_array_flag(",b") == std::vector<std::string>{"", "b"});
  CHECK(app::split_array_flag("") == std::vector<std::string>{""});
}

TEST_CASE("size flags take units", "[app]") {
  auto r = parse({"-datasource.maxResponseSize=16MiB"});
  REQUIRE(r.has_value());
  CHECK(r->flags.datasource_max_response_size == 16u << 20);
}
