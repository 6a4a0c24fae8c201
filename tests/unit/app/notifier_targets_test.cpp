// -notifier.* per-URL flags -> Alertmanager targets, and the shared secret-file reader.
#include "app/notifier_targets.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/flags.hpp"
#include "app/secret_file.hpp"

namespace {

core::Result<app::Flags> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "alertd");
  auto r = app::parse_flags(static_cast<int>(args.size()), args.data());
  if (!r) return core::fail(r.error());
  return r->flags;
}

// A temporary file removed at scope end.
struct TempFile {
  explicit TempFile(const std::string& text) {
    path = (std::filesystem::temp_directory_path() /
            ("alertd-secret-" + std::to_string(reinterpret_cast<uintptr_t>(this)))).string();
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

}  // namespace

TEST_CASE("notifier flags are arrays index-matched to -notifier.url", "[app][notifier]") {
  auto f = parse({"-notifier.url=http://am1:9093,http://am2:9093", "-notifier.url=http://am3",
                  "-notifier.basicAuth.username=u1,,u3", "-notifier.basicAuth.password=p1",
                  "-notifier.basicAuth.password=,p3", "-notifier.headers=X-A: 1^^X-B: 2",
                  "-notifier.tlsInsecureSkipVerify=false,true", "-notifier.tlsServerName=sni"});
  REQUIRE(f);
  CHECK(f->notifier_basic_auth_username == std::vector<std::string>{"u1", "", "u3"});
  CHECK(f->notifier_basic_auth_password == std::vector<std::string>{"p1", "", "p3"});
  CHECK(f->notifier_tls_insecure_skip_verify == std::vector<bool>{false, true});

  auto eps = app::notifier_endpoints(*f);
  REQUIRE(eps);
  REQUIRE(eps->size() == 3);
  CHECK((*eps)[0].target.url == "http://am1:9093");
  CHECK((*eps)[0].target.basic_auth_username == "u1");
  CHECK((*eps)[0].target.basic_auth_password == "p1");
  CHECK((*eps)[1].target.basic_auth_username.empty());
  CHECK((*eps)[1].target.basic_auth_password.empty());
  CHECK((*eps)[2].target.basic_auth_username == "u3");
  CHECK((*eps)[2].target.basic_auth_password == "p3");
  // One value applies to every URL (vmalert's GetOptionalArg).
  for (const auto& e : *eps) {
    CHECK(e.tls.server_name == "sni");
    CHECK(e.target.headers ==
          std::vector<std::pair<std::string, std::string>>{{"X-A", "1"}, {"X-B", "2"}});
  }
  // Two values for three URLs: the third gets the zero value.
  CHECK_FALSE((*eps)[0].tls.insecure_skip_verify);
  CHECK((*eps)[1].tls.insecure_skip_verify);
  CHECK_FALSE((*eps)[2].tls.insecure_skip_verify);
}

TEST_CASE("a bare -notifier.tlsInsecureSkipVerify is true", "[app][notifier]") {
  auto f = parse({"-notifier.tlsInsecureSkipVerify", "-notifier.url=https://am"});
  REQUIRE(f);
  CHECK(f->notifier_tls_insecure_skip_verify == std::vector<bool>{true});
  CHECK(f->notifier_url == std::vector<std::string>{"https://am"});
  auto bad = parse({"-notifier.tlsInsecureSkipVerify=maybe"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("-notifier.tlsInsecureSkipVerify") != std::string::npos);
}

TEST_CASE("optional_arg follows vmalert's GetOptionalArg", "[app][notifier]") {
  const std::vector<std::string> none, one{"a"}, two{"a", "b"};
  CHECK(app::optional_arg(none, 0).empty());
  CHECK(app::optional_arg(one, 5) == "a");
  CHECK(app::optional_arg(two, 1) == "b");
  CHECK(app::optional_arg(two, 2).empty());
}

TEST_CASE("notifier secret files are read through read_secret_file", "[app][notifier]") {
  TempFile pass("pa ss\n\n");
  TempFile token("tok-123\r\n");
  const std::string pass_flag = "-notifier.basicAuth.passwordFile=" + pass.path;
  const std::string token_flag = "-notifier.bearerTokenFile=," + token.path;
  auto f = parse({"-notifier.url=http://am1,http://am2", "-notifier.basicAuth.username=u,",
                  pass_flag.c_str(), token_flag.c_str()});
  REQUIRE(f);
  // passwordFile has one value: it applies to am2 too, which also has a token file -> conflict.
  auto eps = app::notifier_endpoints(*f);
  REQUIRE_FALSE(eps);
  CHECK(eps.error().kind == core::ErrorKind::bad_config);
  CHECK(eps.error().message ==
        "-notifier.basicAuth.* and -notifier.bearerToken(File) are both set for -notifier.url #2 "
        "\"http://am2\": use one auth method");

  const std::string pass_flag2 = "-notifier.basicAuth.passwordFile=" + pass.path + ",";
  f = parse({"-notifier.url=http://am1,http://am2", "-notifier.basicAuth.username=u,",
             pass_flag2.c_str(), token_flag.c_str()});
  REQUIRE(f);
  eps = app::notifier_endpoints(*f);
  REQUIRE(eps);
  CHECK((*eps)[0].target.basic_auth_password == "pa ss");
  CHECK((*eps)[0].target.bearer_token.empty());
  CHECK((*eps)[1].target.bearer_token == "tok-123");
}

TEST_CASE("notifier flag errors name the flag, the file and the URL without secrets",
          "[app][notifier]") {
  struct Case {
    std::vector<const char*> args;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{"-notifier.url=http://am", "-notifier.bearerTokenFile=/nonexistent/token"},
       "-notifier.bearerTokenFile: cannot read \"/nonexistent/token\": No such file or "
       "directory"},
      {{"-notifier.url=http://am", "-notifier.basicAuth.passwordFile=/nonexistent/p"},
       "-notifier.basicAuth.passwordFile: cannot read \"/nonexistent/p\": No such file or "
       "directory"},
      {{"-notifier.url=http://u:pw@am/?token=tk", "-notifier.bearerToken=a",
        "-notifier.bearerTokenFile=/x"},
       "-notifier.bearerToken and -notifier.bearerTokenFile are both set for -notifier.url #1 "
       "\"http://am/?token=secret\""},
      {{"-notifier.url=http://am", "-notifier.basicAuth.password=a",
        "-notifier.basicAuth.passwordFile=/x"},
       "-notifier.basicAuth.password and -notifier.basicAuth.passwordFile are both set for "
       "-notifier.url #1 \"http://am\""},
      {{"-notifier.url=http://am", "-notifier.headers=Authorization Bearer xyz"},
       "-notifier.headers for -notifier.url #1 \"http://am\": header #1 has no ':'; expecting "
       "\"Name: value\" entries separated by \"^^\""},
      {{"-notifier.url=https://am", "-notifier.tlsCAFile=/nonexistent/ca.pem"},
       "-notifier.tlsCAFile for -notifier.url #1 \"https://am\": cannot read "
       "\"/nonexistent/ca.pem\": No such file or directory"},
      {{"-notifier.url=ftp://am"}, "-notifier.url #1: invalid URL"},
  };
  for (const auto& c : cases) {
    auto f = parse(c.args);
    REQUIRE(f);
    auto eps = app::notifier_endpoints(*f);
    REQUIRE_FALSE(eps);
    INFO(eps.error().message);
    CHECK(eps.error().message.rfind(c.want, 0) == 0);
    CHECK(eps.error().message.find("pw") == std::string::npos);
    CHECK(eps.error().message.find("xyz") == std::string::npos);
  }
}

TEST_CASE("notifier targets: -notifier.showURL keeps secrets in what is shown", "[app][notifier]") {
  auto f = parse({"-notifier.url=http://u:pw@am/?token=tk", "-notifier.showURL",
                  "-notifier.bearerToken=a", "-notifier.bearerTokenFile=/x"});
  REQUIRE(f);
  auto eps = app::notifier_endpoints(*f);
  REQUIRE_FALSE(eps);
  CHECK(eps.error().message.find("\"http://u:pw@am/?token=tk\"") != std::string::npos);
  f = parse({"-notifier.url=http://u:pw@am/", "-notifier.showURL"});
  REQUIRE(f);
  eps = app::notifier_endpoints(*f);
  REQUIRE(eps);
  CHECK((*eps)[0].target.show_url);
}

TEST_CASE("read_secret_file trims trailing whitespace and names flag and file", "[app]") {
  TempFile f("  s3cret \t\r\n\n");
  auto s = app::read_secret_file("-x.passwordFile", f.path);
  REQUIRE(s);
  CHECK(*s == "  s3cret");

  auto missing = app::read_secret_file("-x.bearerTokenFile", "/nonexistent/file");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == core::ErrorKind::bad_config);
  CHECK(missing.error().message ==
        "-x.bearerTokenFile: cannot read \"/nonexistent/file\": No such file or directory");

  auto dir = app::read_secret_file("-x.bearerTokenFile", "/");
  REQUIRE_FALSE(dir);
  CHECK(dir.error().message == "-x.bearerTokenFile: cannot read \"/\": Is a directory");

  TempFile big(std::string(app::kMaxSecretFileBytes + 1, 'a'));
  auto large = app::read_secret_file("-x.bearerTokenFile", big.path);
  REQUIRE_FALSE(large);
  CHECK(large.error().message.find("larger than 65536 bytes") != std::string::npos);
}

TEST_CASE("delivery queue flags: defaults, bounds, retryMaxTime at least two resend delays",
          "[app][notifier]") {
  auto f = parse({"-notifier.url=http://am"});
  REQUIRE(f);
  auto o = app::delivery_options(*f);
  REQUIRE(o);
  CHECK(o->max_queue_size == 100'000);
  CHECK(o->max_batch_size == 1'000);
  CHECK(o->concurrency == 1);
  CHECK(o->retry_min_interval == std::chrono::seconds(1));
  CHECK(o->retry_max_interval == std::chrono::seconds(10));
  CHECK(o->retry_max_time == std::chrono::minutes(1));

  f = parse({"-notifier.url=http://am", "-notifier.maxQueueSize=5", "-notifier.maxBatchSize=2",
             "-notifier.concurrency=2", "-notifier.retryMinInterval=2s",
             "-notifier.retryMaxInterval=1s", "-rule.resendDelay=5m"});
  REQUIRE(f);
  o = app::delivery_options(*f);
  REQUIRE(o);
  CHECK(o->max_queue_size == 5);
  CHECK(o->max_batch_size == 2);
  CHECK(o->concurrency == 2);
  CHECK(o->retry_max_interval == std::chrono::seconds(2));  // never below the first wait
  CHECK(o->retry_max_time == std::chrono::minutes(10));     // 2 x resendDelay

  for (const char* bad : {"-notifier.maxQueueSize=0", "-notifier.maxBatchSize=-1",
                          "-notifier.concurrency=0", "-notifier.retryMinInterval=0s",
                          "-notifier.retryMaxTime=0s"}) {
    INFO(bad);
    f = parse({"-notifier.url=http://am", bad});
    REQUIRE(f);
    auto r = app::delivery_options(*f);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == core::ErrorKind::bad_config);
    CHECK(r.error().message.find("must be positive") != std::string::npos);
  }
}
