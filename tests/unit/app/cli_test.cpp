// What a vmalert user notices first: -h/-help in Go's flag layout, vmalert's log lines, and
// /-/reload behind -reloadAuthKey.
#include <catch2/catch.hpp>

#include "app/api.hpp"
#include "app/auth.hpp"
#include "app/flags.hpp"
#include "app/logging.hpp"

namespace {
core::Result<app::ParseFlagsResult> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "alertd");
  return app::parse_flags(static_cast<int>(args.size()), args.data());
}

net::ServerRequest request(std::string method, std::string target) {
  net::ServerRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  return r;
}
}  // namespace

TEST_CASE("flags: -h and -help ask for Go usage text", "[app][flags]") {
  for (const char* arg : {"-h", "-help", "--help", "-help=true"}) {
    INFO(arg);
    auto r = parse({arg});
    REQUIRE(r.has_value());
    CHECK(r->flags.help);
  }
  auto r = parse({});
  REQUIRE(r.has_value());
  CHECK_FALSE(r->flags.help);
  const std::string& text = r->help_text;
  // Go's PrintDefaults: "  -name type\n    \tusage (default x)", sorted, bools without a
  // type, strings' defaults quoted, zero defaults left out, -h/-help not listed.
  CHECK_THAT(text, Catch::Contains("  -datasource.url string\n    \t"));
  CHECK_THAT(text, Catch::Contains("  -dryRun\n    \t"));
  CHECK_THAT(text, Catch::Contains("  -evaluationInterval duration\n    \t"));
  CHECK_THAT(text, Catch::Contains("(default 1m)\n"));
  CHECK_THAT(text, Catch::Contains("(default \"prometheus\")\n"));
  CHECK_THAT(text, Catch::Contains("  -httpListenAddr array\n    \t"));
  CHECK_THAT(text, Catch::Contains("  -rule array\n    \t"));
  CHECK_THAT(text, Catch::Contains("  -reloadAuthKey string\n    \t"));
  CHECK_THAT(text, !Catch::Contains("  -help"));
  CHECK_THAT(text, !Catch::Contains("  -h\n"));
  CHECK_THAT(text, !Catch::Contains("(default false)"));
  CHECK(text.find("  -datasource.url ") < text.find("  -dryRun"));
  CHECK(text.find("  -dryRun") < text.find("  -evaluationInterval "));
}

TEST_CASE("flags: -loggerOutput and -reloadAuthKey", "[app][flags]") {
  auto r = parse({"-loggerOutput=stdout", "-reloadAuthKey=s3cret"});
  REQUIRE(r.has_value());
  CHECK(r->flags.logger_output == "stdout");
  CHECK(r->flags.reload_auth_key == "s3cret");
  auto bad = parse({"-loggerOutput=file"});
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message, Catch::Contains("-loggerOutput"));
}

TEST_CASE("log lines have vmalert's layout and level names", "[app][logging]") {
  const auto ts = core::from_unix_ms(1796208375120);  // 2026-12-02T10:46:15.120Z
  CHECK(app::format_log_line(false, ts, "warn", "app/daemon.cpp:42", "group \"g\": slow\n") ==
        "2026-12-02T10:46:15.120Z\twarn\tapp/daemon.cpp:42\tgroup \"g\": slow\n");
  CHECK(app::format_log_line(true, ts, "fatal", "alertd", "cannot listen: \"x\"\n\n") ==
        R"({"ts":"2026-12-02T10:46:15.120Z","level":"fatal","caller":"alertd","msg":"cannot listen: \"x\""})"
        "\n");
  CHECK(app::format_log_line(false, core::from_unix_ms(1796208375000), "info", "c", "m") ==
        "2026-12-02T10:46:15.000Z\tinfo\tc\tm\n");
}

TEST_CASE("/-/reload needs authKey when -reloadAuthKey is set", "[app][auth]") {
  int reloads = 0;
  app::ApiContext ctx;
  ctx.reload = [&] { ++reloads; };
  SECTION("no key configured: open, as vmalert") {
    CHECK(app::handle_request(ctx, request("GET", "/-/reload")).status == 200);
    CHECK(reloads == 1);
  }
  SECTION("key configured") {
    ctx.reload_auth_key = "s3 cret";
    struct Case {
      std::string name;
      net::ServerRequest req;
      unsigned status;
    };
    net::ServerRequest form = request("POST", "/-/reload");
    form.headers = {{"content-type", "application/x-www-form-urlencoded"}};
    form.body = "x=1&authKey=s3+cret";
    const std::vector<Case> cases = {
        {"missing", request("GET", "/-/reload"), 401},
        {"wrong", request("GET", "/-/reload?authKey=nope"), 401},
        {"prefix", request("GET", "/-/reload?authKey=s3"), 401},
        {"empty", request("GET", "/-/reload?authKey="), 401},
        {"right, escaped", request("GET", "/-/reload?a=b&authKey=s3%20cret"), 200},
        {"right, form body", form, 200},
    };
    int want_reloads = 0;
    for (const auto& tc : cases) {
      INFO(tc.name);
      const auto resp = app::handle_request(ctx, tc.req);
      CHECK(resp.status == tc.status);
      if (tc.status == 401) {
        CHECK(resp.body == "The provided authKey doesn't match -reloadAuthKey\n");
      } else {
        ++want_reloads;
      }
      CHECK(reloads == want_reloads);
    }
  }
}
