// vmalert command lines: every vmalert flag accepted (implemented, ignored with one warning, or
// refused when it would change behaviour), -envflag.*, the /flags lines, the HTTP guard
// (-http.pathPrefix, -httpAuth.*, auth keys), -loggerTimezone and process_* metrics.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/auth.hpp"
#include "app/flags.hpp"
#include "app/logging.hpp"
#include "app/metrics.hpp"
#include "core/limit_hits.hpp"
#include "net/url.hpp"

namespace {

core::Result<app::ParseFlagsResult> parse(std::vector<const char*> args,
                                          std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "alertd");
  return app::parse_flags(static_cast<int>(args.size()), args.data(),
                          [env = std::move(env)](const char* name) -> const char* {
                            auto it = env.find(name);
                            return it == env.end() ? nullptr : it->second.c_str();
                          });
}

// The vmalert command line of VictoriaMetrics' docs, Helm chart and docker-compose examples.
const std::vector<const char*> kVmalertCommandLine = {
    "-rule=/etc/alerts/*.yml",
    "-rule.templates=/etc/templates/*.tmpl",
    "-datasource.url=http://victoriametrics:8428/",
    "-remoteRead.url=http://victoriametrics:8428/",
    "-remoteWrite.url=http://victoriametrics:8428/",
    "-notifier.url=http://alertmanager:9093/",
    "-notifier.url=http://alertmanager-2:9093/",
    "-evaluationInterval=15s",
    "-external.label=cluster=east-1",
    "-external.label=replica=a",
    "-external.url=http://127.0.0.1:3000",
    "-httpListenAddr=:8880",
    "-configCheckInterval=1m",
    "-loggerFormat=json",
    "-loggerLevel=INFO",
    "-loggerOutput=stdout",
    "-envflag.enable",
    "-envflag.prefix=VM_",
    "-memory.allowedPercent=80",
    "-datasource.queryTimeAlignment=false",
    "-datasource.lookback=1m",
    "-datasource.maxIdleConnections=200",
    "-remoteRead.ignoreRestoreErrors=true",
    "-remoteWrite.concurrency=4",
    "-remoteWrite.flushInterval=5s",
    "-remoteWrite.maxQueueSize=1000000",
    "-rule.maxResolveDuration=0",
    "-rule.resendDelay=0",
    "-promscrape.consulSDCheckInterval=30s",
    "-fs.disableMmap",
    "-enableTCP6",
    "-http.connTimeout=2m",
    "-http.idleConnTimeout=1m",
    "-http.pathPrefix=/vmalert/",
    "-httpAuth.username=admin",
    "-httpAuth.password=pass",
    "-metricsAuthKey=mkey",
    "-pprofAuthKey=pkey",
    "-tlsMinVersion=TLS12",
    "-s3.configFilePath=/etc/s3",
};

}  // namespace

TEST_CASE("a typical vmalert command line is accepted", "[app][flags]") {
  auto r = parse(kVmalertCommandLine);
  REQUIRE(r.has_value());
  const auto& f = r->flags;
  CHECK(f.rule == std::vector<std::string>{"/etc/alerts/*.yml"});
  CHECK(f.notifier_url.size() == 2);
  CHECK(f.envflag_enable);
  CHECK(f.http_path_prefix == "/vmalert");
  CHECK(f.http_auth_username == "admin");
  CHECK(f.metrics_auth_key == "mkey");
  CHECK(f.http_conn_timeout == std::chrono::minutes(2));
  CHECK(f.http_idle_conn_timeout == std::chrono::minutes(1));
  CHECK(f.logger_output == "stdout");
  // One warning per ignored flag set to something else than its default: memory, lookback,
  // queryTimeAlignment=false, fs.disableMmap, enableTCP6, s3.configFilePath (-pprofAuthKey,
  // -tlsMinVersion and -datasource.maxIdleConnections are implemented). Defaults
  // (-remoteRead.ignoreRestoreErrors=true) are quiet; -http.connTimeout and
  // -http.idleConnTimeout are implemented.
  std::vector<std::string> named;
  for (const auto& w : f.ignored_flag_warnings) named.push_back(w.substr(0, w.find(' ', 6)));
  CHECK(named == std::vector<std::string>{
                     "flag -datasource.lookback", "flag -datasource.queryTimeAlignment", "flag -enableTCP6",
                     "flag -fs.disableMmap", "flag -memory.allowedPercent",
                     "flag -s3.configFilePath"});
  CHECK(f.pprof_auth_key == "pkey");
  CHECK(f.datasource_max_idle_connections == 200);
  CHECK(f.tls_min_version == std::vector<std::string>{"TLS12"});
  CHECK(app::listen_addrs(f) == std::vector<std::string>{":8880"});
  for (const auto& w : f.ignored_flag_warnings) CHECK_THAT(w, Catch::Contains("ignored: "));
}

TEST_CASE("flags that would change behaviour are refused when set, accepted at default",
          "[app][flags]") {
  struct Case {
    const char* arg;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"-mtls", false},
      {"-mtls=false", true},
      {"-clusterMode", false},
      {"-datasource.oauth2.clientID=", true},
      {"-tlsCertFile=/etc/cert.pem", true},
  };
  for (const auto& c : cases) {
    INFO(c.arg);
    auto r = parse({c.arg});
    CHECK(r.has_value() == c.ok);
    if (!r) {
      const std::string name = std::string(c.arg).substr(0, std::string(c.arg).find('='));
      CHECK_THAT(r.error().message, Catch::StartsWith("flag " + name + " is refused: "));
    }
  }
}

TEST_CASE("http.connTimeout and http.idleConnTimeout set the server's timeouts", "[app][flags]") {
  auto d = parse({});
  REQUIRE(d.has_value());
  CHECK(d->flags.http_conn_timeout == std::chrono::minutes(2));
  CHECK(d->flags.http_idle_conn_timeout == std::chrono::minutes(1));
  auto r = parse({"-http.connTimeout=0", "-http.idleConnTimeout=5s"});
  REQUIRE(r.has_value());
  CHECK(r->flags.http_conn_timeout == std::chrono::seconds(0));
  CHECK(r->flags.http_idle_conn_timeout == std::chrono::seconds(5));
  CHECK(r->flags.ignored_flag_warnings.empty());
}

TEST_CASE("the client pool flags of the datasource, remote read and remote write",
          "[app][flags]") {
  auto d = parse({});
  REQUIRE(d.has_value());
  CHECK_FALSE(d->flags.datasource_disable_keep_alive);
  CHECK(d->flags.datasource_idle_conn_timeout == std::chrono::seconds(50));
  CHECK(d->flags.datasource_max_idle_connections == 100);
  CHECK(d->flags.remote_read_idle_conn_timeout == std::chrono::seconds(50));
  CHECK(d->flags.remote_write_idle_conn_timeout == std::chrono::seconds(50));
  auto r = parse({"-datasource.disableKeepAlive", "-datasource.idleConnTimeout=10s",
                  "-datasource.maxIdleConnections=4", "-remoteRead.idleConnTimeout=0",
                  "-remoteWrite.idleConnTimeout=2m"});
  REQUIRE(r.has_value());
  CHECK(r->flags.datasource_disable_keep_alive);
  CHECK(r->flags.datasource_idle_conn_timeout == std::chrono::seconds(10));
  CHECK(r->flags.datasource_max_idle_connections == 4);
  CHECK(r->flags.remote_read_idle_conn_timeout == std::chrono::seconds(0));
  CHECK(r->flags.remote_write_idle_conn_timeout == std::chrono::minutes(2));
  CHECK(r->flags.ignored_flag_warnings.empty());
  CHECK_FALSE(parse({"-datasource.maxIdleConnections=many"}).has_value());
  CHECK_FALSE(parse({"-datasource.idleConnTimeout=later"}).has_value());
}

TEST_CASE("http.disableResponseCompression is a real flag now", "[app][flags]") {
  auto d = parse({});
  REQUIRE(d.has_value());
  CHECK_FALSE(d->flags.http_disable_response_compression);
  auto r = parse({"-http.disableResponseCompression"});
  REQUIRE(r.has_value());
  CHECK(r->flags.http_disable_response_compression);
  CHECK(r->flags.ignored_flag_warnings.empty());
  CHECK_FALSE(parse({"-http.disableResponseCompression=maybe"}).has_value());
}

TEST_CASE("ignored flags still check their values", "[app][flags]") {
  CHECK_FALSE(parse({"-memory.allowedPercent=lots"}).has_value());
  CHECK_FALSE(parse({"-http.connTimeout=soon"}).has_value());
  CHECK_FALSE(parse({"-fs.disableMmap=maybe"}).has_value());
  CHECK(parse({"-memory.allowedBytes=1GiB"}).has_value());
}

TEST_CASE("flags: -envflag.enable reads missing flags from the environment", "[app][flags]") {
  const std::map<std::string, std::string> env = {
      {"VM_datasource_url", "http://env:8428"},
      {"VM_evaluationInterval", "30s"},
      {"VM_notifier_url", "http://a:9093,http://b:9093"},
      {"VM_rule", "from-env.yml"},
      {"datasource_url", "http://unprefixed"},
  };
  SECTION("with the prefix; the command line wins") {
    auto r = parse({"-envflag.enable", "-envflag.prefix=VM_", "-rule=cli.yml"}, env);
    REQUIRE(r.has_value());
    CHECK(r->flags.datasource_url == "http://env:8428");
    CHECK(r->flags.evaluation_interval == std::chrono::seconds(30));
    CHECK(r->flags.notifier_url == std::vector<std::string>{"http://a:9093", "http://b:9093"});
    CHECK(r->flags.rule == std::vector<std::string>{"cli.yml"});
  }
  SECTION("off without -envflag.enable") {
    auto r = parse({"-envflag.prefix=VM_"}, env);
    REQUIRE(r.has_value());
    CHECK(r->flags.datasource_url.empty());
  }
  SECTION("a bad environment value names the flag") {
    auto r = parse({"-envflag.enable"}, {{"evaluationInterval", "often"}});
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("flag -evaluationInterval"));
  }
}

TEST_CASE("/flags lines: every flag given, sorted by name, secrets hidden", "[app][flags]") {
  auto r = parse({"-rule=b.yml", "-rule=a.yml", "-datasource.url=http://x",
                  "-httpAuth.password=p\"w", "-datasource.bearerToken=t", "-rule.templates=t",
                  "-memory.allowedPercent=50", "-envflag.enable"},
                 {{"reloadAuthKey", "k"}, {"loggerLevel", "WARN"}});
  REQUIRE(r.has_value());
  CHECK(r->flags.set_flags == std::vector<std::string>{
                                  "-datasource.bearerToken=\"secret\"",
                                  "-datasource.url=\"http://x\"",
                                  "-envflag.enable=\"true\"",
                                  "-httpAuth.password=\"secret\"",
                                  "-loggerLevel=\"WARN\"",
                                  "-memory.allowedPercent=\"50\"",
                                  "-reloadAuthKey=\"secret\"",
                                  "-rule=\"b.yml,a.yml\"",
                                  "-rule.templates=\"t\"",
                              });
}

TEST_CASE("flags reference lists every flag once", "[app][flags]") {
  const std::string md = app::flags_markdown();
  for (const char* name : {"`-datasource.url`", "`-tls`", "`-memory.allowedPercent`",
                           "`-httpAuth.username`", "`-envflag.enable`", "`-state.path`"}) {
    INFO(name);
    const auto first = md.find(std::string("| ") + name + " |");
    REQUIRE(first != std::string::npos);
    CHECK(md.find(std::string("| ") + name + " |", first + 1) == std::string::npos);
  }
  CHECK(md.find("`-printFlagsMarkdown`") == std::string::npos);  // hidden
  CHECK_THAT(md, Catch::Contains("| `-tls` | array |  | implemented |"));
  CHECK_THAT(md, Catch::Contains("| `-mtls` | array |  | refused when set |"));
  CHECK_THAT(md, Catch::Contains("| `-state.path` | string |  | alertd only |"));
}

namespace {

net::ServerRequest get(std::string target, std::vector<std::pair<std::string, std::string>> h = {}) {
  net::ServerRequest r;
  r.method = "GET";
  r.target = std::move(target);
  r.headers = std::move(h);
  return r;
}

// The handler behind the guard: echoes the path it was given.
const net::RequestHandler kEcho = [](const net::ServerRequest& req) {
  net::ServerResponse r;
  r.body = "handled " + req.target;
  return r;
};

}  // namespace

TEST_CASE("server guard: path prefix, basic auth, auth keys, /flags", "[app][auth]") {
  app::ServerGuard g;
  g.path_prefix = "/p";
  g.username = "admin";
  g.password = "s3cret";
  g.metrics_auth_key = "mkey";
  g.reload_auth_key = "rkey";
  g.flags_lines = {"-a=\"1\"", "-b=\"secret\""};
  const std::pair<std::string, std::string> good{
      "Authorization", "Basic " + net::base64_encode("admin:s3cret")};
  const std::pair<std::string, std::string> bad{
      "authorization", "Basic " + net::base64_encode("admin:wrong")};

  SECTION("the prefix is required and cut off") {
    CHECK(app::guarded_request(g, get("/api/v1/rules", {good}), kEcho).status == 400);
    auto r = app::guarded_request(g, get("/p/api/v1/rules?x=1", {good}), kEcho);
    CHECK(r.status == 200);
    CHECK(r.body == "handled /api/v1/rules?x=1");
    auto redirect = app::guarded_request(g, get("/p"), kEcho);
    CHECK(redirect.status == 302);
    CHECK(redirect.headers.at(0).second == "/p/");
  }
  SECTION("probes need no auth") {
    for (const char* path : {"/p/health", "/p/-/healthy", "/p/-/ready", "/p/ping"}) {
      INFO(path);
      CHECK(app::guarded_request(g, get(path), kEcho).status == 200);
    }
  }
  SECTION("everything else needs basic auth") {
    auto denied = app::guarded_request(g, get("/p/api/v1/alerts"), kEcho);
    CHECK(denied.status == 401);
    CHECK(denied.headers.at(0) ==
          std::pair<std::string, std::string>{"WWW-Authenticate", "Basic realm=\"Restricted\""});
    CHECK(app::guarded_request(g, get("/p/api/v1/alerts", {bad}), kEcho).status == 401);
    CHECK(app::guarded_request(g, get("/p/api/v1/alerts", {good}), kEcho).status == 200);
  }
  SECTION("an auth key replaces basic auth for its path") {
    CHECK(app::guarded_request(g, get("/p/metrics", {good}), kEcho).status == 401);
    CHECK(app::guarded_request(g, get("/p/metrics?authKey=mkey"), kEcho).status == 200);
    // /-/reload: the handler checks -reloadAuthKey; the guard lets it through.
    CHECK(app::guarded_request(g, get("/p/-/reload?authKey=rkey"), kEcho).status == 200);
  }
  SECTION("/flags without -flagsAuthKey takes basic auth") {
    CHECK(app::guarded_request(g, get("/p/flags"), kEcho).status == 401);
    auto r = app::guarded_request(g, get("/p/flags", {good}), kEcho);
    CHECK(r.status == 200);
    CHECK(r.body == "-a=\"1\"\n-b=\"secret\"\n");
  }
  SECTION("no username: no basic auth") {
    g.username.clear();
    g.path_prefix.clear();
    CHECK(app::guarded_request(g, get("/api/v1/alerts"), kEcho).status == 200);
    CHECK(app::guarded_request(g, get("/flags"), kEcho).status == 200);
  }
}

TEST_CASE("flags: -httpListenAddr repeatable, -tls and its files per address", "[app][flags]") {
  auto none = parse({});
  REQUIRE(none.has_value());
  CHECK(app::listen_addrs(none->flags) == std::vector<std::string>{":8880"});
  auto r = parse({"-httpListenAddr=127.0.0.1:8880,[::1]:8880", "-httpListenAddr=:9443",
                  "-tls=false,false,true", "-tlsCertFile=,,/etc/c.pem", "-tlsKeyFile=/etc/k.pem",
                  "-tlsMinVersion=TLS13", "-tlsCipherSuites=TLS_AES_128_GCM_SHA256",
                  "-pprofAuthKey=p", "-http.maxGracefulShutdownDuration=3s"});
  REQUIRE(r.has_value());
  const auto& f = r->flags;
  CHECK(app::listen_addrs(f) ==
        std::vector<std::string>{"127.0.0.1:8880", "[::1]:8880", ":9443"});
  CHECK(f.tls == std::vector<bool>{false, false, true});
  // vmalert's GetOptionalArg: a single value applies to every address.
  CHECK(app::optional_arg(f.tls_key_file, 2) == "/etc/k.pem");
  CHECK(app::optional_arg(f.tls_cert_file, 2) == "/etc/c.pem");
  CHECK(app::optional_arg(f.tls_min_version, 0) == "TLS13");
  CHECK(f.tls_cipher_suites == std::vector<std::string>{"TLS_AES_128_GCM_SHA256"});
  CHECK(f.http_max_graceful_shutdown_duration == std::chrono::seconds(3));
  CHECK(f.ignored_flag_warnings.empty());
  CHECK_FALSE(parse({"-tls=maybe"}).has_value());
  auto pp = parse({"-httpListenAddr.useProxyProtocol=false,true", "-remoteRead.disablePathAppend"});
  REQUIRE(pp.has_value());
  CHECK(pp->flags.http_listen_addr_use_proxy_protocol == std::vector<bool>{false, true});
  CHECK(pp->flags.remote_read_disable_path_append);
}

TEST_CASE("server guard: /debug/pprof behind -pprofAuthKey or basic auth", "[app][auth][pprof]") {
  app::ServerGuard g;
  g.username = "admin";
  g.password = "s3cret";
  const std::pair<std::string, std::string> good{
      "Authorization", "Basic " + net::base64_encode("admin:s3cret")};
  SECTION("basic auth when no key is set") {
    CHECK(app::guarded_request(g, get("/debug/pprof/"), kEcho).status == 401);
    auto index = app::guarded_request(g, get("/debug/pprof/", {good}), kEcho);
    CHECK(index.status == 200);
    CHECK(index.content_type == "text/html; charset=utf-8");
    CHECK_THAT(index.body, Catch::Contains("href=\"cmdline\"") &&
                               Catch::Contains("href=\"malloc_info\"") &&
                               Catch::Contains("heaptrack"));
  }
  SECTION("the key replaces basic auth") {
    g.pprof_auth_key = "pkey";
    CHECK(app::guarded_request(g, get("/debug/pprof/cmdline", {good}), kEcho).status == 401);
    auto denied = app::guarded_request(g, get("/debug/pprof/cmdline?authKey=nope"), kEcho);
    CHECK(denied.status == 401);
    CHECK(denied.body == "The provided authKey doesn't match -pprofAuthKey\n");
    auto cmdline = app::guarded_request(g, get("/debug/pprof/cmdline?authKey=pkey"), kEcho);
    CHECK(cmdline.status == 200);
    // Go's format: the arguments joined by NUL, none at the end; the first is this binary.
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    want.pop_back();
    CHECK(cmdline.body == want);
    CHECK_THAT(cmdline.body, Catch::Contains("unit_app"));
    auto xml = app::guarded_request(g, get("/debug/pprof/malloc_info?authKey=pkey"), kEcho);
    CHECK(xml.status == 200);
    CHECK_THAT(xml.body, Catch::StartsWith("<malloc version="));
    auto totals = app::guarded_request(g, get("/debug/pprof/mallinfo?authKey=pkey"), kEcho);
    CHECK(totals.status == 200);
    CHECK_THAT(totals.body, Catch::Contains("\nuordblks "));
    CHECK_THAT(totals.body, Catch::Contains("\nmemory_full_checks "));
  }
  SECTION("Go-only profiles name the tool to use instead; unknown ones are 404") {
    g.username.clear();
    auto cpu = app::guarded_request(g, get("/debug/pprof/profile?seconds=30"), kEcho);
    CHECK(cpu.status == 501);
    CHECK_THAT(cpu.body, Catch::Contains("perf record"));
    auto heap = app::guarded_request(g, get("/debug/pprof/heap"), kEcho);
    CHECK(heap.status == 501);
    CHECK_THAT(heap.body, Catch::Contains("heaptrack"));
    CHECK(app::guarded_request(g, get("/debug/pprof/goroutine"), kEcho).status == 501);
    CHECK(app::guarded_request(g, get("/debug/pprof/trace"), kEcho).status == 501);
    CHECK(app::guarded_request(g, get("/debug/pprof/nothing"), kEcho).status == 404);
    // Not a pprof path: the handler behind the guard gets it.
    CHECK(app::guarded_request(g, get("/debug/pprof"), kEcho).body == "handled /debug/pprof");
  }
}

TEST_CASE("logs: -loggerErrorsPerSecondLimit and -loggerWarnsPerSecondLimit, per caller",
          "[app][logging]") {
  app::LogLimiter limiter(app::LogRateLimits{2, 1});
  const int64_t t = 1796208375;
  // Two errors from one place pass, the third says it suppresses, the rest are dropped.
  CHECK(limiter.admit("error", "app/a.cpp:10", t) == "");
  CHECK(limiter.admit("error", "app/a.cpp:10", t) == "");
  CHECK(limiter.admit("error", "app/a.cpp:10", t) ==
        "suppressing log message with rate limit=2: ");
  CHECK(!limiter.admit("error", "app/a.cpp:10", t));
  CHECK(!limiter.admit("error", "app/a.cpp:10", t));
  // Another place has its own count; warnings have their own limit; info is never limited.
  CHECK(limiter.admit("error", "app/b.cpp:20", t) == "");
  CHECK(limiter.admit("warn", "app/c.cpp:30", t) == "");
  CHECK(limiter.admit("warn", "app/c.cpp:30", t) == "suppressing log message with rate limit=1: ");
  CHECK(!limiter.admit("warn", "app/c.cpp:30", t));
  for (int i = 0; i < 10; ++i) CHECK(limiter.admit("info", "app/a.cpp:10", t) == "");
  // The next second starts again.
  CHECK(limiter.admit("error", "app/a.cpp:10", t + 1) == "");
  CHECK(limiter.admit("warn", "app/c.cpp:30", t + 1) == "");
  // 0 = no limit.
  app::LogLimiter none(app::LogRateLimits{});
  for (int i = 0; i < 100; ++i) CHECK(none.admit("error", "x", t) == "");
  auto f = parse({"-loggerErrorsPerSecondLimit=10", "-loggerWarnsPerSecondLimit=5"});
  REQUIRE(f.has_value());
  CHECK(f->flags.logger_errors_per_second_limit == 10);
  CHECK(f->flags.logger_warns_per_second_limit == 5);
  CHECK(f->flags.ignored_flag_warnings.empty());
  CHECK_FALSE(parse({"-loggerErrorsPerSecondLimit=-1"}).has_value());
}

TEST_CASE("logs: JSON lines carry the group and rule as fields", "[app][logging]") {
  const auto ts = core::from_unix_ms(1796208375123);
  app::LogLayout json;
  json.json = true;
  CHECK(app::format_log_line(json, ts, "error", "c",
                             "group \"g 1\": rule \"HighLoad\": failed to execute: boom") ==
        "{\"ts\":\"2026-12-02T10:46:15.123Z\",\"level\":\"error\",\"caller\":\"c\","
        "\"group\":\"g 1\",\"rule\":\"HighLoad\",\"msg\":\"group \\\"g 1\\\": rule "
        "\\\"HighLoad\\\": failed to execute: boom\"}\n");
  const auto group_only = app::log_context("group \"g\" started; interval=1m");
  CHECK(group_only.group == "g");
  CHECK(!group_only.rule);
  CHECK(app::log_context("group \"g\": stopped").group == "g");
  CHECK(!app::log_context("alertd started").group);
  CHECK(!app::log_context("group \"unterminated").group);
  // The text layout is unchanged.
  CHECK(app::format_log_line(app::LogLayout{}, ts, "info", "c", "group \"g\": stopped") ==
        "2026-12-02T10:46:15.123Z\tinfo\tc\tgroup \"g\": stopped\n");
}

TEST_CASE("server guard: -http.header.* on every response, /health during delayed shutdown",
          "[app][auth]") {
  app::ServerGuard g;
  g.header_frame_options = "DENY";
  g.header_csp = "default-src 'self'";
  std::atomic<bool> delayed{false};
  g.delayed_shutdown = &delayed;
  auto r = app::guarded_request(g, get("/api/v1/rules"), kEcho);
  CHECK(r.headers == std::vector<std::pair<std::string, std::string>>{
                         {"Content-Security-Policy", "default-src 'self'"},
                         {"X-Frame-Options", "DENY"}});
  CHECK(app::guarded_request(g, get("/health"), kEcho).status == 200);
  delayed = true;
  auto unhealthy = app::guarded_request(g, get("/health"), kEcho);
  CHECK(unhealthy.status == 503);
  CHECK(unhealthy.headers.size() == 2);
  CHECK(app::guarded_request(g, get("/-/healthy"), kEcho).status == 200);
}

TEST_CASE("logging: -loggerJSONFields renames JSON log fields", "[app][logging][flags]") {
  app::LogLayout layout;
  layout.json = true;
  layout.ts_key = "timestamp";
  layout.msg_key = "message";
  CHECK(app::format_log_line(layout, core::from_unix_ms(1796208375123), "info", "c", "m") ==
        "{\"timestamp\":\"2026-12-02T10:46:15.123Z\",\"level\":\"info\",\"caller\":\"c\","
        "\"message\":\"m\"}\n");
  CHECK(parse({"-loggerJSONFields=ts:timestamp,msg:message"}).has_value());
  auto bad = parse({"-loggerJSONFields=time:timestamp"});
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message, Catch::Contains("flag -loggerJSONFields"));
}

TEST_CASE("log timestamps: UTC with Z, a zone with its offset, or none", "[app][logging]") {
  const auto ts = core::from_unix_ms(1796208375123);  // 2026-12-02T10:46:15.123Z
  app::LogLayout text;
  CHECK(app::format_log_line(text, ts, "info", "c", "m") ==
        "2026-12-02T10:46:15.123Z\tinfo\tc\tm\n");
  app::LogLayout no_ts;
  no_ts.timestamps = false;
  CHECK(app::format_log_line(no_ts, ts, "info", "c", "m") == "info\tc\tm\n");
  no_ts.json = true;
  CHECK(app::format_log_line(no_ts, ts, "warn", "c", "m") ==
        "{\"level\":\"warn\",\"caller\":\"c\",\"msg\":\"m\"}\n");
  ::setenv("TZ", "Asia/Kolkata", 1);  // +0530, no daylight saving
  ::tzset();
  app::LogLayout local;
  local.local_time = true;
  CHECK(app::format_log_line(local, ts, "info", "c", "m") ==
        "2026-12-02T16:16:15.123+0530\tinfo\tc\tm\n");
  ::setenv("TZ", "UTC", 1);
  ::tzset();
}

TEST_CASE("process stats come from /proc/self", "[app][metrics]") {
  // Burn a few clock ticks first: a process that has run for less than one tick (10 ms) reads
  // 0 CPU seconds from /proc/self/stat.
  volatile uint64_t sink = 0;
  for (const auto t0 = std::clock(); std::clock() - t0 < CLOCKS_PER_SEC / 20;) sink = sink + 1;
  const auto st = app::read_process_stats();
  REQUIRE(st.ok);
  CHECK(st.resident_bytes > 1 << 20);
  CHECK(st.virtual_bytes >= st.resident_bytes);
  CHECK(st.threads >= 1);
  CHECK(st.open_fds >= 3);
  CHECK(st.max_fds >= st.open_fds);
  CHECK(st.cpu_user_seconds + st.cpu_system_seconds > 0);
}

TEST_CASE("vmalert summaries: quantiles of the last 5 minutes", "[app][metrics]") {
  app::RecentQuantiles q;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  CHECK_FALSE(q.quantiles(t0).has_value());
  for (int i = 1; i <= 100; ++i) q.observe(t0 + std::chrono::seconds(i), i / 100.0);
  auto v = q.quantiles(t0 + std::chrono::seconds(100));
  REQUIRE(v.has_value());
  CHECK(*v == std::array<double, 5>{0.51, 0.9, 0.97, 0.99, 1.0});
  // At 350 s the observations older than 5 minutes (1..49 s) are gone: 51 are left.
  v = q.quantiles(t0 + std::chrono::seconds(350));
  REQUIRE(v.has_value());
  CHECK((*v)[0] == 0.75);
  CHECK((*v)[4] == 1.0);
  CHECK_FALSE(q.quantiles(t0 + std::chrono::seconds(401)).has_value());
}

TEST_CASE("alertd_limit_hits_total shows every limit from the start and counts hits",
          "[app][metrics]") {
  app::SnapshotStore store;
  app::GlobalCounters counters;
  auto line = [](core::Limit l, uint64_t v) {
    return "alertd_limit_hits_total{limit=\"" + std::string(core::limit_name(l)) + "\"} " +
           std::to_string(v) + "\n";
  };
  const std::string before = app::render_metrics(store, counters, {});
  CHECK_THAT(before, Catch::Contains("# TYPE alertd_limit_hits_total counter\n"));
  std::set<std::string> names;
  for (const core::Limit l : core::kAllLimits) {
    names.emplace(core::limit_name(l));
    CHECK_THAT(before, Catch::Contains(line(l, core::limit_hits(l))));
  }
  CHECK(names.size() == core::kAllLimits.size());
  CHECK_FALSE(names.contains("unknown"));
  const uint64_t was = core::limit_hits(core::Limit::notifier_queue);
  core::count_limit_hit(core::Limit::notifier_queue, 3);
  CHECK_THAT(app::render_metrics(store, counters, {}),
             Catch::Contains(line(core::Limit::notifier_queue, was + 3)));
}

TEST_CASE("flag external.alert.source is a real flag now", "[app][flags]") {
  auto r = parse({"-external.alert.source=vmui/#/?g0.expr={{.Expr|queryEscape}}"});
  REQUIRE(r.has_value());
  CHECK(r->flags.external_alert_source == "vmui/#/?g0.expr={{.Expr|queryEscape}}");
}

TEST_CASE("flag loggerMaxArgLen shortens a long message as VictoriaMetrics shortens an argument",
          "[app][logging]") {
  CHECK(app::limit_log_text("short", 1000) == "short");
  CHECK(app::limit_log_text("0123456789", 10) == "0123456789");
  CHECK(app::limit_log_text("0123456789ab", 10) == "0123..89ab");  // 10/2-1 = 4 each side
  CHECK(app::limit_log_text("0123456789", 1) == "0..9");           // below 4 counts as 4
  app::LogLayout layout;
  layout.max_arg_len = 40;  // 19 bytes each side
  const std::string body(100, 'x');
  const std::string line = app::format_log_line(
      layout, core::TimePoint{}, "error", "app/x.cpp:1", "group \"g\": body " + body + "END");
  CHECK_THAT(line, Catch::EndsWith("\tgroup \"g\": body xxx.." + std::string(16, 'x') + "END\n"));
  auto f = parse({"-loggerMaxArgLen=300"});
  REQUIRE(f.has_value());
  CHECK(f->flags.logger_max_arg_len == 300);
}

TEST_CASE("/metrics shows the interned label pairs alerts hold", "[app][metrics]") {
  app::SnapshotStore store;
  app::GlobalCounters counters;
  const auto gauge = [&](const std::string& name) {
    const std::string text = app::render_metrics(store, counters, {});
    const auto at = text.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 2));
  };
  const double pairs = gauge("alertd_interned_label_pairs");
  const double bytes = gauge("alertd_interned_label_bytes");
  {
    const std::vector<core::Label> items{{"alertname", "metrics-test-alert"},
                                         {"instance", "metrics-test-host"}};
    const core::Labels a = core::Labels::interned(items);
    const core::Labels b = core::Labels::interned(items);
    CHECK(gauge("alertd_interned_label_pairs") == pairs + 2);
    CHECK(gauge("alertd_interned_label_bytes") > bytes);
  }
  CHECK(gauge("alertd_interned_label_pairs") == pairs);
}
