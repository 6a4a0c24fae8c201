// The shared rule corpus (/work/shared/corpus/rules, see its SOURCES.md): every file loads or
// fails exactly as vmalert does, and a failure names the problem and its line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "config/loader.hpp"
#include "config/promql.hpp"
#include "tests/shared_data.hpp"

#include "templates/template.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kCorpus = ALERTD_RULES_CORPUS;

config::LoadOptions corpus_options() {
  config::LoadOptions o;
  o.check_template = [](std::string_view text) { return templates::check_template(text); };
  return o;
}

struct Expectation {
  bool loads = true;
  std::string error;  // substring of the first error (after "file:line:col: ")
  int line = 0;       // line the first error points at
  std::string note;
};

// vmalert's verdict for every corpus file (SOURCES.md); files not listed here must load.
const std::map<std::string, Expectation>& expectations() {
  static const std::map<std::string, Expectation> table = {
      {"prometheus-promtool-testdata/rules_large.yml",
       {false, "is a duplicate in group", 0, "exact duplicate rules"}},
      {"prometheus-rulefmt-testdata/test.yml",
       {false, "alerting rule is a duplicate in group", 0, "identical HighErrors alerts"}},
      {"prometheus-rulefmt-testdata/test_aliases.yml",
       {false, "is a duplicate in group", 0, "duplicates after alias expansion"}},
      {"prometheus-rulefmt-testdata/bad/bad_field.bad.yml",
       {false, "rule \"hola\": unknown field \"annotation\"", 8, ""}},
      {"prometheus-rulefmt-testdata/bad/duplicate_grp.bad.yml",
       {false, "group name \"yolo\" duplicate in file", 3, ""}},
      {"prometheus-rulefmt-testdata/bad/invalid_label_name.bad.yml",
       {false, "invalid rule label \"__name__\"", 7, ""}},
      {"prometheus-rulefmt-testdata/bad/no_rec_alert.bad.yml",
       {false, "either `record` or `alert` must be set", 4, ""}},
      {"prometheus-rulefmt-testdata/bad/noexpr.bad.yml",
       {false, "rule \"ylo\": expression can't be empty", 4, ""}},
      {"prometheus-rulefmt-testdata/bad/record_and_alert.bad.yml",
       {false, "either `record` or `alert` must be set", 4, ""}},
      // Prometheus-only errors: vmalert accepts these (SOURCES.md), so alertd does too.
      {"prometheus-rulefmt-testdata/bad/bad_expr.bad.yml",
       {true, "", 0, "known exception: rate() without a range is valid MetricsQL"}},
      {"prometheus-rulefmt-testdata/bad/invalid_record_name.bad.yml",
       {true, "", 0, "known exception: vmalert does not check record names"}},
      {"prometheus-rulefmt-testdata/bad/record_and_for.bad.yml",
       {true, "", 0, "known exception: vmalert ignores `for` on recording rules"}},
      {"prometheus-rulefmt-testdata/bad/record_and_keep_firing_for.bad.yml",
       {true, "", 0, "known exception: vmalert ignores keep_firing_for on recording rules"}},
      {"vmalert-testdata/bad/dir-rules0-bad.yml",
       {false, "rule \"InvalidAnnotations\": invalid annotations: annotation \"summary\"", 10, ""}},
      {"vmalert-testdata/bad/dir-rules1-bad.yml",
       {false, "group name \"sameGroup\" duplicate in file", 12, ""}},
      {"vmalert-testdata/bad/dir-rules2-bad.yml",
       {false, "function \"unknown\" not defined", 9, ""}},
      {"vmalert-testdata/bad/dir-rules3-bad.yml",
       {false, "either `record` or `alert` must be set", 4, ""}},
      {"vmalert-testdata/bad/dir-rules4-bad.yml",
       {false, "either `record` or `alert` must be set, not both", 4, ""}},
      {"vmalert-testdata/bad/dir-rules6-bad.yml",
       {false, "missing ':' in header \"foobar\"", 4, ""}},
      {"vmalert-testdata/bad/rules-multi-doc-bad.yml",
       {false, "unknown field \"invalid-field-1\"", 12, ""}},
      {"vmalert-testdata/bad/rules-multi-doc-duplicates-bad.yml",
       {false, "group name \"foo\" duplicate in file", 8, ""}},
      {"vmalert-testdata/bad/rules0-bad.yml",
       {false, "rule \"InvalidExpr\": could not parse expression: 1:10: unexpected token", 6, ""}},
      {"vmalert-testdata/bad/rules_interval_bad.yml",
       {false, "eval_offset should be smaller than interval", 4, ""}},
      // Their only fault is a Graphite or LogsQL expression, which alertd does not parse yet.
      {"vmalert-testdata/bad/rules1-bad.yml",
       {true, "", 0, "known exception: Graphite expressions are not validated"}},
      {"vmalert-testdata/bad/vlog-rules0-bad.yml",
       {true, "", 0, "known exception: LogsQL expressions are not validated"}},
  };
  return table;
}

std::vector<std::string> corpus_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kCorpus)) {
    if (e.is_regular_file() && e.path().extension() == ".yml") {
      out.push_back(fs::relative(e.path(), kCorpus).generic_string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every corpus file loads or fails as vmalert does", "[config][corpus][shared]") {
  ALERTD_NEEDS_SHARED(ALERTD_RULES_CORPUS);
  const auto files = corpus_files();
  REQUIRE(files.size() == 60);
  int loaded = 0;
  int refused = 0;
  for (const auto& rel : files) {
    CAPTURE(rel);
    config::LoadOptions o = corpus_options();
    o.paths = {kCorpus + "/" + rel};
    const auto r = config::load_rules(o);
    std::string errors;
    for (const auto& e : r.errors) errors += e.message + "\n";
    INFO(errors);
    const auto it = expectations().find(rel);
    const bool in_bad_folder = rel.find("/bad/") != std::string::npos;
    if (it == expectations().end()) {
      CHECK_FALSE(in_bad_folder);  // every bad/ file has a stated verdict
      CHECK(r.ok());
      CHECK(r.warnings.empty());
      if (r.ok()) ++loaded;
      continue;
    }
    const Expectation& want = it->second;
    INFO(want.note);
    if (want.loads) {
      CHECK(r.ok());
      if (r.ok()) ++loaded;
      continue;
    }
    REQUIRE_FALSE(r.ok());
    ++refused;
    const std::string& first = r.errors.front().message;
    CHECK(first.find(want.error) != std::string::npos);
    // Every error starts with "<path>:<line>:<column>: ".
    const std::string path_prefix = kCorpus + "/" + rel + ":";
    for (const auto& e : r.errors) CHECK(e.message.rfind(path_prefix, 0) == 0);
    if (want.line > 0) {
      CHECK(first.rfind(path_prefix + std::to_string(want.line) + ":", 0) == 0);
    }
  }
  CHECK(loaded + refused == 60);
}

TEST_CASE("corpus group and rule counts", "[config][corpus][shared]") {
  ALERTD_NEEDS_SHARED(ALERTD_RULES_CORPUS);
  struct Count {
    const char* file;
    size_t groups;
    size_t rules;
  };
  const Count counts[] = {
      {"kube-prometheus/kubernetesControlPlane-prometheusRule.yml", 25, 134},
      {"vmalert-testdata/kube-good.yml", 24, 160},
      {"vmalert-testdata/rules-multi-doc2-good.yml", 4, 4},
      {"vmalert-testdata/rules4-good.yml", 2, 0},
      {"vmalert-testdata/vlog-rules0-good.yml", 3, 4},
      {"vmalert-testdata/dir-rules5-bad.yml", 1, 2},
      {"thanos/alerts.yml", 8, 48},
  };
  for (const auto& c : counts) {
    CAPTURE(c.file);
    config::LoadOptions o = corpus_options();
    o.paths = {kCorpus + "/" + c.file};
    const auto r = config::load_rules(o);
    REQUIRE(r.ok());
    CHECK(r.groups.size() == c.groups);
    size_t rules = 0;
    for (const auto& g : r.groups) rules += g.rules.size();
    CHECK(rules == c.rules);
  }
}

TEST_CASE("the expression checker accepts every corpus expression of type prometheus",
          "[config][corpus][promql][shared]") {
  ALERTD_NEEDS_SHARED(ALERTD_RULES_CORPUS);
  size_t checked = 0;
  for (const auto& rel : corpus_files()) {
    if (rel.find("/bad/") != std::string::npos) continue;
    config::LoadOptions o = corpus_options();
    o.validate_expressions = false;
    o.validate_templates = false;
    o.paths = {kCorpus + "/" + rel};
    auto r = config::load_rules(o);
    if (!r.ok()) continue;  // the duplicate-rule files; their expressions appear elsewhere too
    for (const auto& g : r.groups) {
      if (g.type != "prometheus") continue;
      for (const auto& rule : g.rules) {
        CAPTURE(rel, g.name, rule.name, rule.expr);
        const auto err = config::check_promql(rule.expr);
        CHECK_FALSE(err.has_value());
        ++checked;
      }
    }
  }
  CHECK(checked > 700);
}

TEST_CASE("the expression checker rejects the corpus's broken expression",
          "[config][corpus][shared]") {
  ALERTD_NEEDS_SHARED(ALERTD_RULES_CORPUS);
  const auto err = config::check_promql("vm_rows{ > 0");
  REQUIRE(err.has_value());
  CHECK(err->to_string() == "1:10: unexpected token \">\" in label matching; want label name");
}
