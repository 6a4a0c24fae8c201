#include "core/alert_json.hpp"

#include <catch2/catch.hpp>

namespace {

std::string object(const core::Labels& ls, bool sanitize) {
  std::string out;
  core::append_alert_label_object(out, ls, sanitize);
  return out;
}

}  // namespace

TEST_CASE("alert json: plain blocks are not kept again as text, and write the same JSON",
          "[core][json]") {
  const core::Labels labels{{"alertname", "HostDown"}, {"instance", "host-1:9100"},
                            {"job", "node"}, {"expr", "a > b & c"}};
  const core::Labels annotations{{"summary", "host-1 is down"}, {"description", "héllo ✓"}};
  const auto j = core::AlertJson::build(labels, annotations, "http://vm/alert?a=1&b=2");
  CHECK_FALSE(j->labels_kept_as_text());
  CHECK_FALSE(j->annotations_kept_as_text());
  CHECK(j->labels_json() ==
        R"({"alertname":"HostDown","expr":"a > b & c","instance":"host-1:9100","job":"node"})");
  CHECK(j->labels_json() == object(labels, true));
  CHECK(j->annotations_json() == object(annotations, false));
  CHECK(j->generator_url_json() == R"("generatorURL":"http://vm/alert?a=1&b=2")");
  // Only the URL is text of its own.
  CHECK(j->heap_bytes() < sizeof(core::AlertJson) + 64);

  // Appends, never clears.
  std::string out = "[";
  j->append_labels_json(out);
  CHECK(out == "[" + object(labels, true));
}

TEST_CASE("alert json: blocks whose JSON differs from their bytes are kept as text",
          "[core][json]") {
  const core::Labels empty;
  const auto e = core::AlertJson::build(empty, empty, "");
  CHECK(e->labels_json() == "{}");
  CHECK(e->annotations_json() == "{}");
  CHECK(e->generator_url_json() == R"("generatorURL":"")");

  struct Case {
    core::Labels labels;
    core::Labels annotations;
  };
  const Case cases[] = {
      // A name to sanitize (and re-sort: "a-b" becomes "a_b", after "a_a").
      {{{"a-b", "1"}, {"a_a", "2"}}, {{"k", "v"}}},
      // Two names that sanitize to the same one: the later wins.
      {{{"a.b", "first"}, {"a_b", "second"}}, {}},
      // A leading digit.
      {{{"1x", "v"}}, {}},
      // Escapes in values and annotation names.
      {{{"q", "say \"hi\""}}, {{"it's", "<b>"}, {"nl", "a\nb"}}},
      // Invalid UTF-8.
      {{{"v", "a\xffz"}}, {{"d", "\xe2\x82"}}},
  };
  for (const auto& c : cases) {
    const auto j = core::AlertJson::build(c.labels, c.annotations, "u<1>");
    INFO("labels: " << c.labels.to_string() << " annotations: " << c.annotations.to_string());
    CHECK(j->labels_json() == object(c.labels, true));
    CHECK(j->annotations_json() == object(c.annotations, false));
    CHECK(j->generator_url_json() == R"("generatorURL":"u\u003c1>")");
    CHECK(j->labels_from(c.labels));
    CHECK(j->annotations_from(c.annotations));
  }
  CHECK(core::AlertJson::build(cases[0].labels, {}, "")->labels_kept_as_text());
  CHECK_FALSE(core::AlertJson::build(cases[0].labels, {}, "")->annotations_kept_as_text());
  CHECK(core::AlertJson::build({}, cases[3].annotations, "")->annotations_kept_as_text());
}
