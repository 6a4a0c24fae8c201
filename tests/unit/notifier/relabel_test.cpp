// Prometheus relabeling: every action, defaults, Go's $-expansion, hashmod values, unicode,
// and Prometheus' validation texts. Cases take their facts from Prometheus' documentation and
// model/relabel/relabel_test.go (hashmod values checked against md5 independently).
#include "notifier/relabel.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using A = core::RelabelAction;
using C = core::RelabelConfig;

struct R {
  C c;
  R& src(std::vector<std::string> s) {
    c.source_labels = std::move(s);
    c.source_labels_set = true;
    return *this;
  }
  R& re(std::string r) {
    c.regex = std::move(r);
    return *this;
  }
  R& target(std::string t) {
    c.target_label = std::move(t);
    return *this;
  }
  R& repl(std::string r) {
    c.replacement = std::move(r);
    return *this;
  }
  R& sep(std::string s) {
    c.separator = std::move(s);
    return *this;
  }
  R& mod(uint64_t m) {
    c.modulus = m;
    return *this;
  }
  operator C() const { return c; }  // NOLINT: builder
};

R rule(A action = A::replace) {
  R r;
  r.c.action = action;
  return r;
}

struct Case {
  std::string name;
  core::Labels in;
  std::vector<C> rules;
  std::optional<core::Labels> out;  // nullopt: dropped
};

std::string show(const std::optional<core::Labels>& l) { return l ? l->to_string() : "<dropped>"; }

}  // namespace

TEST_CASE("relabel: table of Prometheus cases", "[notifier][relabel]") {
  const std::vector<Case> cases = {
      {"replace with ${1} twice",
       {{"a", "foo"}, {"b", "bar"}, {"c", "baz"}},
       {rule().src({"a"}).re("f(.*)").target("d").repl("ch${1}-ch${1}")},
       core::Labels{{"a", "foo"}, {"b", "bar"}, {"c", "baz"}, {"d", "choo-choo"}}},
      {"two source labels joined with ;, then a second rule sees the first's result",
       {{"a", "foo"}, {"b", "bar"}, {"c", "baz"}},
       {rule().src({"a", "b"}).re("f(.*);(.*)r").target("a").repl("b${1}${2}m"),
        rule().src({"c", "a"}).re("(b).*b(.*)ba(.*)").target("d").repl("$1$2$2$3")},
       core::Labels{{"a", "boobam"}, {"b", "bar"}, {"c", "baz"}, {"d", "boooom"}}},
      {"drop stops the list",
       {{"a", "foo"}},
       {rule(A::drop).src({"a"}).re(".*o.*"), rule().src({"a"}).re("f(.*)").target("d")},
       std::nullopt},
      {"regex is anchored: .*(b).* takes the whole value",
       {{"a", "abc"}},
       {rule().src({"a"}).re(".*(b).*").target("d")},
       core::Labels{{"a", "abc"}, {"d", "b"}}},
      {"drop without a match keeps",
       {{"a", "foo"}},
       {rule(A::drop).src({"a"}).re("no-match")},
       core::Labels{{"a", "foo"}}},
      {"drop: f|o is anchored, so foo does not match",
       {{"a", "foo"}},
       {rule(A::drop).src({"a"}).re("f|o")},
       core::Labels{{"a", "foo"}}},
      {"keep without a match drops", {{"a", "foo"}}, {rule(A::keep).src({"a"}).re("no-match")},
       std::nullopt},
      {"keep with a match keeps",
       {{"a", "foo"}},
       {rule(A::keep).src({"a"}).re("f.*")},
       core::Labels{{"a", "foo"}}},
      {"replace without a match changes nothing",
       {{"a", "boo"}},
       {rule().src({"a"}).re("f").target("b").repl("bar")},
       core::Labels{{"a", "boo"}}},
      {"hashmod 1000 of baz is 976",
       {{"a", "foo"}, {"b", "bar"}, {"c", "baz"}},
       {rule(A::hashmod).src({"c"}).target("d").mod(1000)},
       core::Labels{{"a", "foo"}, {"b", "bar"}, {"c", "baz"}, {"d", "976"}}},
      {"hashmod of a value with a newline",
       {{"a", "foo\nbar"}},
       {rule(A::hashmod).src({"a"}).target("b").mod(1000)},
       core::Labels{{"a", "foo\nbar"}, {"b", "734"}}},
      {"labelmap with ${1}",
       {{"a", "foo"}, {"b1", "bar"}, {"b2", "baz"}},
       {rule(A::labelmap).re("(b.*)").repl("bar_${1}")},
       core::Labels{{"a", "foo"}, {"b1", "bar"}, {"b2", "baz"}, {"bar_b1", "bar"},
                    {"bar_b2", "baz"}}},
      {"labelmap of meta labels",
       {{"a", "foo"}, {"__meta_my_bar", "aaa"}, {"__meta_my_baz", "bbb"}, {"__meta_other", "ccc"}},
       {rule(A::labelmap).re("__meta_(my.*)").repl("${1}")},
       core::Labels{{"a", "foo"},
                    {"__meta_my_bar", "aaa"},
                    {"__meta_my_baz", "bbb"},
                    {"__meta_other", "ccc"},
                    {"my_bar", "aaa"},
                    {"my_baz", "bbb"}}},
      {"target_label from a capture group",
       {{"a", "some-name-value"}},
       {rule().src({"a"}).re("some-([^-]+)-([^,]+)").repl("${2}").target("${1}")},
       core::Labels{{"a", "some-name-value"}, {"name", "value"}}},
      {"replacement of a missing group is empty: nothing is set",
       {{"a", "some-name-value"}},
       {rule().src({"a"}).re("some-([^-]+)-([^,]+)").repl("${3}").target("${1}")},
       core::Labels{{"a", "some-name-value"}}},
      {"a target that expands to an invalid name is skipped",
       {{"a", "some-name-0"}},
       {rule().src({"a"}).re("some-([^-]+)-([^,]+)").repl("${1}").target("${3}"),
        rule().src({"a"}).re("some-([^-]+)(-[^,]+)").repl("${1}").target("${3}")},
       core::Labels{{"a", "some-name-0"}}},
      {"real-life: several rules over one tag list",
       {{"__meta_sd_tags", "path:/secret,job:some-job,label:foo=bar"}},
       {rule().src({"__meta_sd_tags"}).re("(?:.+,|^)path:(/[^,]+).*").repl("${1}").target(
            "__metrics_path__"),
        rule().src({"__meta_sd_tags"}).re("(?:.+,|^)job:([^,]+).*").repl("${1}").target("job"),
        rule().src({"__meta_sd_tags"}).re("(?:.+,|^)label:([^=]+)=([^,]+).*").repl("${2}").target(
            "${1}")},
       core::Labels{{"__meta_sd_tags", "path:/secret,job:some-job,label:foo=bar"},
                    {"__metrics_path__", "/secret"},
                    {"job", "some-job"},
                    {"foo", "bar"}}},
      {"labeldrop then replace then keep (prometheus#12283)",
       {{"__meta_kubernetes_pod_container_port_name", "foo"},
        {"__meta_kubernetes_pod_annotation_XXX_metrics_port", "9091"}},
       {rule(A::labeldrop).re("^__meta_kubernetes_pod_container_port_name$"),
        rule()
            .src({"__meta_kubernetes_pod_annotation_XXX_metrics_port"})
            .re("(.+)")
            .repl("metrics")
            .target("__meta_kubernetes_pod_container_port_name"),
        rule(A::keep).src({"__meta_kubernetes_pod_container_port_name"}).re("^metrics$")},
       core::Labels{{"__meta_kubernetes_pod_annotation_XXX_metrics_port", "9091"},
                    {"__meta_kubernetes_pod_container_port_name", "metrics"}}},
      {"labelkeep",
       {{"a", "foo"}, {"b1", "bar"}, {"b2", "baz"}},
       {rule(A::labelkeep).re("(b.*)")},
       core::Labels{{"b1", "bar"}, {"b2", "baz"}}},
      {"labeldrop",
       {{"a", "foo"}, {"b1", "bar"}, {"b2", "baz"}},
       {rule(A::labeldrop).re("(b.*)")},
       core::Labels{{"a", "foo"}}},
      {"uppercase and lowercase",
       {{"foo", "bAr123Foo"}},
       {rule(A::uppercase).src({"foo"}).target("foo_uppercase"),
        rule(A::lowercase).src({"foo"}).target("foo_lowercase")},
       core::Labels{{"foo", "bAr123Foo"}, {"foo_lowercase", "bar123foo"},
                    {"foo_uppercase", "BAR123FOO"}}},
      {"keepequal keeps on equal values",
       {{"__tmp_port", "1234"}, {"__port1", "1234"}, {"__port2", "5678"}},
       {rule(A::keepequal).src({"__tmp_port"}).target("__port1")},
       core::Labels{{"__tmp_port", "1234"}, {"__port1", "1234"}, {"__port2", "5678"}}},
      {"dropequal drops on equal values",
       {{"__tmp_port", "1234"}, {"__port1", "1234"}, {"__port2", "5678"}},
       {rule(A::dropequal).src({"__tmp_port"}).target("__port1")},
       std::nullopt},
      {"dropequal keeps on different values",
       {{"__tmp_port", "1234"}, {"__port1", "1234"}, {"__port2", "5678"}},
       {rule(A::dropequal).src({"__tmp_port"}).target("__port2")},
       core::Labels{{"__tmp_port", "1234"}, {"__port1", "1234"}, {"__port2", "5678"}}},
      {"keepequal drops on different values",
       {{"__tmp_port", "1234"}, {"__port1", "1234"}, {"__port2", "5678"}},
       {rule(A::keepequal).src({"__tmp_port"}).target("__port2")},
       std::nullopt},
      // Defaults and details of the documented behaviour.
      {"defaults: copy one label to another",
       {{"instance", "host:9100"}},
       {rule().src({"instance"}).target("host")},
       core::Labels{{"host", "host:9100"}, {"instance", "host:9100"}}},
      {"static label without source labels (empty value takes the fast path)",
       {{"a", "1"}},
       {rule().target("env").repl("prod")},
       core::Labels{{"a", "1"}, {"env", "prod"}}},
      {"replace to an empty value deletes the target",
       {{"a", "1"}, {"b", "2"}},
       {rule().src({"missing"}).target("b")},
       core::Labels{{"a", "1"}}},
      {"missing source labels join as empty strings",
       {{"a", "x"}},
       {rule().src({"a", "nope", "a"}).target("j")},
       core::Labels{{"a", "x"}, {"j", "x;;x"}}},
      {"custom separator",
       {{"a", "x"}, {"b", "y"}},
       {rule().src({"a", "b"}).sep("/").target("j")},
       core::Labels{{"a", "x"}, {"b", "y"}, {"j", "x/y"}}},
      {"hashmod over two labels joined",
       {{"a", "foo"}, {"b", "bar"}},
       {rule(A::hashmod).src({"a", "b"}).target("shard").mod(7)},
       core::Labels{{"a", "foo"}, {"b", "bar"}, {"shard", "6"}}},
      {"hashmod of an empty value and of multi-block inputs",
       {{"e", ""}, {"l55", std::string(55, 'a')}, {"l56", std::string(56, 'a')},
        {"l64", std::string(64, 'a')}, {"l200", std::string(200, 'x')}},
       {rule(A::hashmod).src({"nope"}).target("h0").mod(1000),
        rule(A::hashmod).src({"l55"}).target("h55").mod(1000),
        rule(A::hashmod).src({"l56"}).target("h56").mod(1000),
        rule(A::hashmod).src({"l64"}).target("h64").mod(1000),
        rule(A::hashmod).src({"l200"}).target("h200").mod(1000),
        rule(A::labelkeep).re("h.*")},
       core::Labels{{"h0", "958"}, {"h55", "253"}, {"h56", "64"}, {"h64", "863"}, {"h200", "456"}}},
      {"named groups: ${name} and $name",
       {{"addr", "db1.example.com:5432"}},
       {rule().src({"addr"}).re(R"((?P<host>[^.]+)\.(?P<domain>[^:]+):(?P<port>\d+))").target(
            "where").repl("${host}@$domain port ${port}")},
       core::Labels{{"addr", "db1.example.com:5432"}, {"where", "db1@example.com port 5432"}}},
      {"$1x is the group named 1x (empty), ${1}x is group 1 then x",
       {{"a", "v"}},
       {rule().src({"a"}).re("(.)").target("p").repl("[$1x]"),
        rule().src({"a"}).re("(.)").target("q").repl("[${1}x]")},
       core::Labels{{"a", "v"}, {"p", "[]"}, {"q", "[vx]"}}},
      {"$$ is a literal $, a malformed ${ is text",
       {{"a", "v"}},
       {rule().src({"a"}).re("(.)").target("p").repl("$$1 ${1 $"),
        rule().src({"a"}).re("(.)").target("q").repl("${}$-$1")},
       core::Labels{{"a", "v"}, {"p", "$1 ${1 $"}, {"q", "${}$-v"}}},
      {"leading zero: $01 is not group 1",
       {{"a", "v"}},
       {rule().src({"a"}).re("(.)").target("p").repl("<$01>")},
       core::Labels{{"a", "v"}, {"p", "<>"}}},
      {"an optional group that did not take part expands to nothing",
       {{"a", "x"}},
       {rule().src({"a"}).re("(y)?(x)").target("p").repl("[$1|$2]")},
       core::Labels{{"a", "x"}, {"p", "[|x]"}}},
      {"group 0 is the whole match",
       {{"a", "abc"}},
       {rule().src({"a"}).re("b|abc").target("p").repl("<$0>")},
       core::Labels{{"a", "abc"}, {"p", "<abc>"}}},
      {"unicode values: regex, case mapping, hashmod",
       {{"city", "Zürich"}, {"greek", "ΣΊΣΥΦΟΣ"}, {"mix", "ünïcödé;日本"}},
       {rule().src({"city"}).re("Z(.)rich").target("u").repl("[$1]"),
        rule(A::lowercase).src({"greek"}).target("lower"),
        rule(A::uppercase).src({"city"}).target("upper"),
        rule(A::hashmod).src({"mix"}).target("h").mod(1000)},
       core::Labels{{"city", "Zürich"},
                    {"greek", "ΣΊΣΥΦΟΣ"},
                    {"h", "282"},
                    {"lower", "σίσυφοσ"},
                    {"mix", "ünïcödé;日本"},
                    {"u", "[ü]"},
                    {"upper", "ZÜRICH"}}},
      {"invalid UTF-8 becomes U+FFFD under lowercase (Go's strings.Map)",
       {{"a", "A\xff\xc3"}},
       {rule(A::lowercase).src({"a"}).target("b")},
       core::Labels{{"a", "A\xff\xc3"}, {"b", "a\xef\xbf\xbd\xef\xbf\xbd"}}},
      {"action names are case-insensitive in the file; keep on a joined value",
       {{"env", "prod"}, {"team", "db"}},
       {rule(A::keep).src({"env", "team"}).re("prod;(db|web)")},
       core::Labels{{"env", "prod"}, {"team", "db"}}},
      {"labelmap sees the set as it was before the rule",
       {{"a", "1"}},
       {rule(A::labelmap).re("(.*)").repl("${1}_x")},
       core::Labels{{"a", "1"}, {"a_x", "1"}}},
      {"labelmap onto an existing label overwrites it",
       {{"__meta_env", "prod"}, {"env", "dev"}},
       {rule(A::labelmap).re("__meta_(.+)").repl("$1")},
       core::Labels{{"__meta_env", "prod"}, {"env", "prod"}}},
      {"dot does not match a newline (^(?:...)$ without s)",
       {{"a", "x\ny"}},
       {rule(A::keep).src({"a"}).re(".*")},
       std::nullopt},
      // Literal alternatives and `literal.*` prefixes skip RE2: same answers.
      {"literal alternatives are anchored", {{"env", "prodx"}},
       {rule(A::keep).src({"env"}).re("prod|staging")}, std::nullopt},
      {"literal alternatives match exactly", {{"env", "staging"}},
       {rule(A::keep).src({"env"}).re("prod|staging")}, core::Labels{{"env", "staging"}}},
      {"an empty alternative matches the empty value", {{"a", "1"}},
       {rule(A::keep).src({"missing"}).re("x|")}, core::Labels{{"a", "1"}}},
      {"prefix alternatives in labeldrop",
       {{"__tmp", "1"}, {"tmp_a", "2"}, {"tmpb", "3"}, {"keep", "4"}},
       {rule(A::labeldrop).re("tmp_.*|__.*")},
       core::Labels{{"keep", "4"}, {"tmpb", "3"}}},
      {"a prefix alternative does not cross a newline", {{"a", "ab\nc"}},
       {rule(A::drop).src({"a"}).re("a.*")}, core::Labels{{"a", "ab\nc"}}},
      {"literal regex in replace without references", {{"a", "x"}},
       {rule().src({"a"}).re("x|y").target("b").repl("matched"),
        rule().src({"a"}).re("y").target("c").repl("no")},
       core::Labels{{"a", "x"}, {"b", "matched"}}},
      // RE2's possible-match range rejects early; it must not reject real matches.
      {"case-insensitive keep", {{"env", "pRODuction"}},
       {rule(A::keep).src({"env"}).re("(?i)prod.*")}, core::Labels{{"env", "pRODuction"}}},
      {"case-insensitive labelmap", {{"team", "a"}, {"zone", "b"}},
       {rule(A::labelmap).re("(?i)(TEAM|Zone)").repl("x_$1")},
       core::Labels{{"team", "a"}, {"x_team", "a"}, {"x_zone", "b"}, {"zone", "b"}}},
      {"no rules keep everything", {{"a", "1"}}, {}, core::Labels{{"a", "1"}}},
      {"labeldrop of everything leaves an empty set that is still kept",
       {{"a", "1"}},
       {rule(A::labeldrop).re(".*")},
       core::Labels{}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto rules = notifier::RelabelRules::compile(c.rules);
    REQUIRE(rules.has_value());
    const auto got = rules->process(c.in);
    CHECK(show(got) == show(c.out));
  }
}

TEST_CASE("relabel: action names parse case-insensitively", "[notifier][relabel]") {
  CHECK(core::parse_relabel_action("Replace") == A::replace);
  CHECK(core::parse_relabel_action("LABELMAP") == A::labelmap);
  CHECK(core::parse_relabel_action("keepequal") == A::keepequal);
  CHECK_FALSE(core::parse_relabel_action("replace_all").has_value());
  CHECK_FALSE(core::parse_relabel_action("").has_value());
  for (A a : {A::replace, A::keep, A::drop, A::keepequal, A::dropequal, A::hashmod, A::labelmap,
              A::labeldrop, A::labelkeep, A::lowercase, A::uppercase}) {
    CHECK(core::parse_relabel_action(core::to_string(a)) == a);
  }
}

TEST_CASE("relabel: validation errors are Prometheus' texts", "[notifier][relabel]") {
  struct V {
    C config;
    std::string error;  // empty: valid
  };
  const std::vector<V> cases = {
      {rule(), "relabel configuration for replace action requires 'target_label' value"},
      {rule(A::lowercase), "relabel configuration for lowercase action requires 'target_label' value"},
      {rule(A::hashmod).target("h"), "relabel configuration for hashmod requires non-zero modulus"},
      {rule(A::lowercase).target("${3}"), R"("${3}" is invalid 'target_label' for lowercase action)"},
      {rule().src({"a"}).re("some-([^-]+)-([^,]+)").repl("${1}").target("${3}"), ""},
      {rule().src({"a"}).re("some-([^-]+)-([^,]+)").repl("${1}").target("0${3}"),
       R"("0${3}" is invalid 'target_label' for replace action)"},
      {rule().src({"a"}).re("some-([^-]+)-([^,]+)").repl("${1}").target("-${3}"),
       R"("-${3}" is invalid 'target_label' for replace action)"},
      {rule().target("foo-bar"), R"("foo-bar" is invalid 'target_label' for replace action)"},
      {rule().target("_${1}_"), ""},
      {rule().target("foo${bar}foo"), ""},
      {rule().target("foo${"), R"("foo${" is invalid 'target_label' for replace action)"},
      {rule().target("$"), R"("$" is invalid 'target_label' for replace action)"},
      {rule().target("${}"), R"("${}" is invalid 'target_label' for replace action)"},
      {rule(A::uppercase).target("u").repl("x"), "'replacement' can not be set for uppercase action"},
      {rule(A::labelmap).repl("-${1}"), R"("-${1}" is invalid 'replacement' for labelmap action)"},
      {rule(A::hashmod).target("a.b").mod(2), R"("a.b" is invalid 'target_label' for hashmod action)"},
      {rule(A::keepequal).src({"a"}).target("b").re("x"),
       "keepequal action requires only 'source_labels' and `target_label`, and no other fields"},
      {rule(A::dropequal).src({"a"}).target("b").sep(","),
       "dropequal action requires only 'source_labels' and `target_label`, and no other fields"},
      {rule(A::labeldrop).src({"a"}), "labeldrop action requires only 'regex', and no other fields"},
      {rule(A::labelkeep).target("x"), "labelkeep action requires only 'regex', and no other fields"},
      {rule(A::labeldrop).re("a.*"), ""},
      {rule(A::keep).src({"a"}).re("(unclosed"), "error parsing regexp: missing closing ): `^(?:(unclosed)$`"},
  };
  for (const V& v : cases) {
    INFO(core::to_string(v.config.action) << " target=" << v.config.target_label
                                          << " expected: " << v.error);
    const auto err = notifier::check_relabel_config(v.config);
    if (v.error.empty()) {
      CHECK_FALSE(err.has_value());
    } else {
      REQUIRE(err.has_value());
      CHECK(err->kind == core::ErrorKind::bad_config);
      CHECK_THAT(err->message, Catch::StartsWith(v.error));
    }
  }
}

TEST_CASE("relabel: compile names the failing rule", "[notifier][relabel]") {
  const std::vector<C> rules = {rule().src({"a"}).target("b"), rule(A::hashmod).target("h")};
  auto compiled = notifier::RelabelRules::compile(rules);
  REQUIRE_FALSE(compiled.has_value());
  CHECK(compiled.error().message ==
        "relabel config #2: relabel configuration for hashmod requires non-zero modulus");
  CHECK(compiled.error().kind == core::ErrorKind::bad_config);
}

TEST_CASE("relabel: apply in place reports a drop and keeps working after it",
          "[notifier][relabel]") {
  const std::vector<C> configs = {rule(A::drop).src({"severity"}).re("debug"),
                                  rule().target("routed").repl("yes")};
  auto rules = notifier::RelabelRules::compile(configs);
  REQUIRE(rules.has_value());
  core::Labels debug{{"severity", "debug"}};
  CHECK_FALSE(rules->apply(debug));
  core::Labels crit{{"severity", "critical"}};
  CHECK(rules->apply(crit));
  CHECK(crit == core::Labels{{"routed", "yes"}, {"severity", "critical"}});
  // A second pass changes nothing: the value is already there.
  CHECK(rules->apply(crit));
  CHECK(crit == core::Labels{{"routed", "yes"}, {"severity", "critical"}});
}

TEST_CASE("relabel: hashmod with vmalert's xxhash64", "[notifier][relabel]") {
  // Expected values: xxhsum -H1 (XXH64, seed 0) of the joined value, mod the modulus.
  struct H {
    std::string value;
    uint64_t modulus;
    std::string want;
  };
  const std::vector<H> cases = {
      {"", 1u << 31, std::to_string(0xef46db3751d8e999ULL % (1u << 31))},
      {"baz", 1000, "324"},
      {"abcd", 1000, "908"},
      {"abcdefghijk", 7, "5"},
      {"ünïcödé;日本", 1000, "669"},
      {std::string(33, 'a'), 1000, "747"},
      {"abcdefghijklmnopqrstuvwxyz0123456789A", 1000, "111"},
      {std::string(200, 'x'), 7, "0"},
  };
  for (const H& h : cases) {
    INFO(h.value.size() << " bytes");
    const std::vector<C> configs = {rule(A::hashmod).src({"v"}).target("h").mod(h.modulus)};
    auto xx = notifier::RelabelRules::compile(configs, {.hashmod = notifier::HashmodHash::xxhash64});
    REQUIRE(xx.has_value());
    core::Labels l{{"v", h.value}};
    REQUIRE(xx->apply(l));
    CHECK(l.get("h").value_or("") == h.want);
  }
  // Two labels joined with the separator, as for md5.
  const std::vector<C> two = {rule(A::hashmod).src({"a", "b"}).target("h").mod(1000)};
  auto xx = notifier::RelabelRules::compile(two, {.hashmod = notifier::HashmodHash::xxhash64});
  REQUIRE(xx.has_value());
  const auto out = xx->process(core::Labels{{"a", "foo"}, {"b", "bar"}});
  REQUIRE(out.has_value());
  CHECK(out->get("h") == std::optional<std::string_view>("475"));  // xxh64("foo;bar") % 1000
}

TEST_CASE("relabel: an alert as vmalert relabels it before sending", "[notifier][relabel]") {
  // Names are sanitized first, so a rule can name the sanitized label.
  const std::vector<C> global = {rule(A::labeldrop).re("foo_bar"),
                                 rule().target("via").repl("alertd")};
  const std::vector<C> per_target = {rule(A::drop).src({"env"}).re("dev")};
  auto g = notifier::RelabelRules::compile(global);
  auto t = notifier::RelabelRules::compile(per_target);
  REQUIRE(g.has_value());
  REQUIRE(t.has_value());

  core::Labels a{{"foo.bar", "x"}, {"service!name", "api"}, {"env", "prod"}};
  REQUIRE(notifier::relabel_alert(a, {&*g, &*t}));
  CHECK(a == core::Labels{{"env", "prod"}, {"service_name", "api"}, {"via", "alertd"}});

  core::Labels dev{{"env", "dev"}};
  CHECK_FALSE(notifier::relabel_alert(dev, {&*g, &*t}));  // the target's list drops it

  // A set relabeled down to nothing is not sent.
  const std::vector<C> drop_all = {rule(A::labeldrop).re(".*")};
  auto d = notifier::RelabelRules::compile(drop_all);
  REQUIRE(d.has_value());
  core::Labels b{{"a", "1"}};
  CHECK_FALSE(notifier::relabel_alert(b, {nullptr, &*d}));

  // No lists: sanitized names only.
  core::Labels c{{"a-b", "1"}};
  REQUIRE(notifier::relabel_alert(c, {}));
  CHECK(c == core::Labels{{"a_b", "1"}});
}
