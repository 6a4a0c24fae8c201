// Every row of shared/reference/template_cases.json: the output must be byte-identical to the
// `vmalert` column; error rows must fail with an error containing the message's tail (the part
// after `executing "..." at <...>: ` or after `template: NAME:LINE: `), see docs/templates.md.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/shared_data.hpp"

#include "core/duration.hpp"
#include "core/time.hpp"
#include "templates/go_fmt.hpp"
#include "templates/template.hpp"

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

core::Labels to_labels(const rapidjson::Value& v) {
  core::Labels out;
  if (!v.IsObject()) return out;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    out.set(it->name.GetString(), it->value.GetString());
  }
  return out;
}

using Queries = std::map<std::string, std::vector<templates::QuerySample>, std::less<>>;

void add_queries(const rapidjson::Value& v, Queries& out) {
  if (!v.IsObject()) return;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::vector<templates::QuerySample> samples;
    for (const auto& s : it->value.GetArray()) {
      templates::QuerySample q;
      q.labels = to_labels(s["labels"]);
      q.value = s["value"].GetDouble();
      samples.push_back(std::move(q));
    }
    out[it->name.GetString()] = std::move(samples);
  }
}

// The tail of a Go template error that does not depend on the harness that produced it.
std::string error_tail(const std::string& msg) {
  const std::string exec = "executing \"";
  if (auto e = msg.find(exec); e != std::string::npos) {
    const auto close = msg.find(">: ", msg.find(" at <", e));
    if (close != std::string::npos) return msg.substr(close + 3);
  }
  const std::string tpl = "template: ";
  if (auto t = msg.find(tpl); t != std::string::npos) {
    // template: NAME:LINE: MSG
    auto colon = msg.find(':', t + tpl.size());
    if (colon != std::string::npos) {
      auto colon2 = msg.find(": ", colon + 1);
      if (colon2 != std::string::npos) return msg.substr(colon2 + 2);
    }
  }
  return msg;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
  return s;
}

}  // namespace

TEST_CASE("error tail rule", "[templates]") {
  CHECK(error_tail("error evaluating template: template: :1:319: executing \"\" at <eq 1 1.0>: "
                   "error calling eq: incompatible types for comparison") ==
        "error calling eq: incompatible types for comparison");
  CHECK(error_tail("error parsing template: template: :1: function \"x\" not defined") ==
        "function \"x\" not defined");
}

TEST_CASE("every template_cases.json row renders like vmalert", "[templates][cases][shared]") {
  ALERTD_NEEDS_SHARED(ALERTD_TEMPLATE_CASES);
  const std::string json = read_file(ALERTD_TEMPLATE_CASES);
  REQUIRE_FALSE(json.empty());
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  REQUIRE_FALSE(doc.HasParseError());
  const auto& defaults = doc["defaults"];
  const auto& vm = defaults["vmalert_data"];
  core::TimePoint active_at;
  REQUIRE(core::parse_rfc3339(vm["ActiveAt"].GetString(), active_at));
  const auto for_ = core::parse_duration(vm["For"].GetString());
  REQUIRE(for_.has_value());
  const std::string expr = vm["Expr"].GetString();
  // vmalert's `now` is the wall clock; the harness fixed it to this instant.
  const core::TimePoint fixed_now = core::from_unix_seconds(1353755652);

  size_t rows = 0, errors = 0;
  for (const auto& row : doc["cases"].GetArray()) {
    ++rows;
    const std::string text = row["template"].GetString();
    const std::string want = row["vmalert"].GetString();
    INFO("row " << row["id"].GetInt() << ": " << text);

    const core::Labels labels = row.HasMember("labels") ? to_labels(row["labels"]) : to_labels(defaults["labels"]);
    const core::Labels ext = row.HasMember("external_labels") ? to_labels(row["external_labels"])
                                                              : to_labels(defaults["external_labels"]);
    const std::string url = row.HasMember("external_url") ? row["external_url"].GetString()
                                                          : defaults["external_url"].GetString();
    const std::string value_text = row.HasMember("value") ? row["value"].GetString() : defaults["value"].GetString();
    const auto value = templates::gofmt::parse_float(value_text);
    REQUIRE(value.has_value());
    Queries queries;
    add_queries(defaults["default_query_results"], queries);
    if (row.HasMember("queries")) add_queries(row["queries"], queries);

    templates::TemplateData data;
    data.labels = &labels;
    data.value = *value;
    data.expr = expr;
    data.active_at = active_at;
    data.for_ = *for_;
    templates::TemplateEnv env;
    env.external_labels = &ext;
    env.external_url = url;
    env.query = [&](std::string_view q) -> core::Result<std::vector<templates::QuerySample>> {
      auto it = queries.find(q);
      return it == queries.end() ? std::vector<templates::QuerySample>{} : it->second;
    };
    env.now = [&] { return fixed_now; };

    const auto got = templates::render_vmalert(text, data, env);
    const bool want_error = want.starts_with("error parsing template: ") ||
                            want.starts_with("error evaluating template: ");
    if (want_error) {
      ++errors;
      // The harness ran its own struct type; vmalert's is notifier.tplData.
      const std::string want_msg = replace_all(want, "main.vmData", "notifier.tplData");
      REQUIRE_FALSE(got.has_value());
      CHECK_THAT(got.error().message, Catch::Contains(error_tail(want_msg)));
      // Beyond the tail rule, alertd reproduces vmalert's prefix and position too.
      CHECK(got.error().message == want_msg);
    } else {
      REQUIRE(got.has_value());
      CHECK(*got == want);
    }
  }
  CHECK(rows == 230);
  CHECK(errors > 10);
}
