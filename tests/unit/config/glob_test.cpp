// `-rule` sources: doublestar globs, fs:// and http(s):// sources, duplicate files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <random>
#include <string>

#include "config/glob.hpp"
#include "config/loader.hpp"
#include "templates/template.hpp"

namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed at scope end.
class TempDir {
 public:
  TempDir() {
    const auto base = fs::temp_directory_path();
    for (int i = 0;; ++i) {
      path_ = base / ("alertd-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(i));
      if (fs::create_directory(path_)) break;
    }
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] std::string path() const { return path_.generic_string(); }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

 private:
  fs::path path_;
};

std::string group_file(const std::string& name) {
  return "groups:\n  - name: " + name + "\n    rules:\n      - record: r\n        expr: up\n";
}

config::LoadOptions options_for(std::vector<std::string> paths) {
  config::LoadOptions o;
  o.paths = std::move(paths);
  o.check_template = [](std::string_view text) { return templates::check_template(text); };
  return o;
}

std::string all_errors(const config::LoadResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e.message + "\n";
  return out;
}

}  // namespace

TEST_CASE("doublestar pattern matching", "[config][glob]") {
  struct Case {
    const char* pattern;
    const char* path;
    bool match;
  };
  const Case cases[] = {
      {"*.yml", "a.yml", true},
      {"*.yml", "dir/a.yml", false},
      {"dir/*.yml", "dir/a.yml", true},
      {"dir/**/*.yml", "dir/a.yml", true},
      {"dir/**/*.yml", "dir/x/y/a.yml", true},
      {"dir/**", "dir/x/y/a.yml", true},
      {"**/*.yml", "a.yml", true},
      {"**/*.yml", "a/b.yaml", false},
      {"dir/?.yml", "dir/a.yml", true},
      {"dir/?.yml", "dir/ab.yml", false},
      {"dir/[ab].yml", "dir/b.yml", true},
      {"dir/[!ab].yml", "dir/b.yml", false},
      {"dir/[a-c].yml", "dir/c.yml", true},
      {"dir/*.{yml,yaml}", "dir/a.yaml", true},
      {"dir/*.{yml,yaml}", "dir/a.json", false},
      {"dir/{x,y}/*.yml", "dir/y/a.yml", true},
      {"dir/\\*.yml", "dir/*.yml", true},
      {"dir/\\*.yml", "dir/a.yml", false},
      {"/abs/**/r*.yml", "/abs/1/2/rules.yml", true},
      {"*", ".hidden", true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.pattern, c.path);
    CHECK(config::glob_match(c.pattern, c.path) == c.match);
  }
}

TEST_CASE("globs over a directory tree", "[config][glob]") {
  TempDir dir;
  dir.write("a.yml", group_file("a"));
  dir.write("b.yaml", group_file("b"));
  dir.write("sub/c.yml", group_file("c"));
  dir.write("sub/deep/d.yml", group_file("d"));
  dir.write("sub/deep/notes.txt", "not a rule file");
  const std::string d = dir.path();

  struct Case {
    std::string pattern;
    std::vector<std::string> files;
  };
  const Case cases[] = {
      {d + "/*.yml", {d + "/a.yml"}},
      {d + "/*.{yml,yaml}", {d + "/a.yml", d + "/b.yaml"}},
      {d + "/**/*.yml", {d + "/a.yml", d + "/sub/c.yml", d + "/sub/deep/d.yml"}},
      {d + "/sub/**/*.yml", {d + "/sub/c.yml", d + "/sub/deep/d.yml"}},
      {d + "/*/c.yml", {d + "/sub/c.yml"}},
      {d + "/nothing/*.yml", {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.pattern);
    auto files = config::glob_files(c.pattern);
    REQUIRE(files.has_value());
    CHECK(*files == c.files);
  }

  SECTION("load_rules reads every match") {
    const auto r = config::load_rules(options_for({d + "/**/*.yml", "fs://" + d + "/b.yaml"}));
    INFO(all_errors(r));
    REQUIRE(r.ok());
    REQUIRE(r.groups.size() == 4);
    CHECK(r.groups[0].name == "a");
    CHECK(r.groups[0].file == d + "/a.yml");
    CHECK(r.files.size() == 4);
  }
  SECTION("a glob matching nothing is a warning") {
    const auto r = config::load_rules(options_for({d + "/none/*.yml"}));
    CHECK(r.ok());
    CHECK(r.groups.empty());
    REQUIRE(r.warnings.size() == 2);
    CHECK(r.warnings[0].find("matched no files") != std::string::npos);
    CHECK(r.warnings[1] == "no groups found in " + d + "/none/*.yml");
  }
  SECTION("the same file reached twice is an error") {
    const auto r = config::load_rules(options_for({d + "/*.yml", d + "/sub/../a.yml"}));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].message.find("duplicate found for file name") != std::string::npos);
    CHECK(r.groups.empty());
  }
  SECTION("the same group name in two files is allowed") {
    dir.write("other/a.yml", group_file("a"));
    const auto r = config::load_rules(options_for({d + "/a.yml", d + "/other/a.yml"}));
    INFO(all_errors(r));
    REQUIRE(r.ok());
    REQUIRE(r.groups.size() == 2);
    CHECK(r.groups[0].id != r.groups[1].id);  // the file is part of the group ID
  }
  SECTION("errors in several files are all reported") {
    dir.write("bad/1.yml", "groups:\n  - name: x\n    bogus: 1\n");
    dir.write("bad/2.yml", "groups:\n  - name: y\n    limit: -1\n");
    const auto r = config::load_rules(options_for({d + "/bad/*.yml"}));
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].message == d + "/bad/1.yml:3:5: group \"x\": unknown field \"bogus\"");
    CHECK(r.errors[1].message ==
          d + "/bad/2.yml:3:12: group \"y\": invalid limit -1, shouldn't be less than 0");
  }
  SECTION("a missing plain path is an error") {
    const auto r = config::load_rules(options_for({d + "/missing.yml"}));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].message == d + "/missing.yml: failed to read file: no such file or directory");
  }
  SECTION("a symlinked file matches by its own name (a Kubernetes ConfigMap volume)") {
    // ConfigMap mounts: a.yml -> ..data/a.yml, ..data -> ..2026_12_03/ (a hidden folder).
    dir.write("cm/..2026_12_03/k.yml", group_file("k"));
    fs::create_directory_symlink("..2026_12_03", fs::path(d) / "cm" / "..data");
    fs::create_symlink("..data/k.yml", fs::path(d) / "cm" / "k.yml");
    auto files = config::glob_files(d + "/cm/*.yml");
    REQUIRE(files.has_value());
    CHECK(*files == std::vector<std::string>{d + "/cm/k.yml"});
  }
  SECTION("a directory is refused with a hint") {
    const auto r = config::load_rules(options_for({d + "/sub"}));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].message.find("is a directory (use a glob such as") != std::string::npos);
  }
}

TEST_CASE("http(s) sources go through the fetch callback once per load", "[config]") {
  int calls = 0;
  auto o = options_for({"http://rules.example/a.yml", "https://rules.example/b.yml"});
  o.fetch = [&](const std::string& url) -> core::Result<std::string> {
    ++calls;
    if (url == "http://rules.example/a.yml") return group_file("a");
    return core::fail("HTTP 404");
  };
  const auto r = config::load_rules(o);
  CHECK(calls == 2);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "https://rules.example/b.yml: failed to fetch: HTTP 404");

  SECTION("no fetcher") {
    const auto r2 = config::load_rules(options_for({"http://x/a.yml"}));
    REQUIRE(r2.errors.size() == 1);
    CHECK(r2.errors[0].message.find("failed to read") != std::string::npos);
  }
  SECTION("the file name in errors and GroupSpec is the URL") {
    o.paths = {"http://rules.example/a.yml"};
    const auto r3 = config::load_rules(o);
    REQUIRE(r3.ok());
    CHECK(r3.groups[0].file == "http://rules.example/a.yml");
  }
  SECTION("other schemes are refused") {
    const auto r4 = config::load_rules(options_for({"s3://bucket/rules"}));
    REQUIRE(r4.errors.size() == 1);
    CHECK(r4.errors[0].message.find("unsupported scheme") != std::string::npos);
  }
}
