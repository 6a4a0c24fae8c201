// Alertmanager v2 payload: golden strings in vmalert's exact byte layout.
#include "notifier/alertmanager_payload.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

core::TimePoint at(const char* rfc3339) {
  core::TimePoint t;
  REQUIRE(core::parse_rfc3339(rfc3339, t));
  return t;
}

std::string encode(const std::vector<notifier::Alert>& alerts) {
  std::string out;
  notifier::encode_alerts(alerts, out);
  return out;
}

}  // namespace

TEST_CASE("payload: firing alert as vmalert writes it", "[notifier][payload]") {
  notifier::Alert a;
  a.starts_at = at("2026-12-02T10:47:06.846344494Z");
  a.ends_at = at("2026-12-02T10:47:26.858946525Z");
  a.generator_url = "http://vm:28880/vmalert/alert?group_id=1&alert_id=2";
  a.labels = core::Labels{{"job", "node-6"}, {"alertname", "A"}, {"alertgroup", "G"}};
  a.annotations = core::Labels{{"summary", "host value 109"}, {"description", "d"}};
  CHECK(encode({a}) ==
        R"([{"startsAt":"2026-12-02T10:47:06.846344494Z","generatorURL":"http://vm:28880/vmalert/alert?group_id=1&alert_id=2","endsAt":"2026-12-02T10:47:26.858946525Z","labels": {"alertgroup":"G","alertname":"A","job":"node-6"},"annotations": {"description":"d","summary":"host value 109"}}])");
}

TEST_CASE("payload: endsAt left out when unset, empty annotations {}", "[notifier][payload]") {
  notifier::Alert a;
  a.starts_at = at("2026-12-02T10:47:06Z");
  a.generator_url = "u";
  a.labels = core::Labels{{"alertname", "A"}};
  notifier::Alert b = a;
  b.ends_at = core::TimePoint{};  // zero time counts as unset, like Go's IsZero
  CHECK(encode({a, b}) ==
        R"([{"startsAt":"2026-12-02T10:47:06Z","generatorURL":"u","labels": {"alertname":"A"},"annotations": {}},)"
        R"({"startsAt":"2026-12-02T10:47:06Z","generatorURL":"u","labels": {"alertname":"A"},"annotations": {}}])");
  CHECK(encode({}) == "[]");
}

TEST_CASE("payload: each alert has its own startsAt and endsAt in one batch",
          "[notifier][payload]") {
  // The encoder formats a time again only when it differs from the alert's before: A, B, A
  // and B, A, B again must each come out with their own.
  notifier::Alert a;
  a.starts_at = at("2026-12-02T10:47:06.5Z");
  a.ends_at = at("2026-12-02T10:50:00Z");
  a.generator_url = "u";
  a.labels = core::Labels{{"alertname", "A"}};
  notifier::Alert b = a;
  b.starts_at = at("2026-12-02T10:47:07Z");
  b.ends_at = at("2026-12-02T10:51:00.25Z");
  const std::string ja =
      R"({"startsAt":"2026-12-02T10:47:06.5Z","generatorURL":"u","endsAt":"2026-12-02T10:50:00Z","labels": {"alertname":"A"},"annotations": {}})";
  const std::string jb =
      R"({"startsAt":"2026-12-02T10:47:07Z","generatorURL":"u","endsAt":"2026-12-02T10:51:00.25Z","labels": {"alertname":"A"},"annotations": {}})";
  CHECK(encode({a, b, a, a}) == "[" + ja + "," + jb + "," + ja + "," + ja + "]");
  CHECK(encode({b, a, b}) == "[" + jb + "," + ja + "," + jb + "]");
}

TEST_CASE("payload: JSON string escaping", "[notifier][payload]") {
  struct Case {
    std::string in;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"plain", R"("plain")"},
      {"q\"b\\s", R"("q\"b\\s")"},
      {"a\nb\rc\td", R"("a\nb\rc\td")"},
      {std::string("\b\f\x01\x1f", 4), R"("\b\f\u0001\u001f")"},
      {std::string("nul\0x", 5), R"("nul\u0000x")"},
      {"<b>'x'", R"("\u003cb>\u0027x\u0027")"},
      {"héllo ✓ 😀", "\"héllo ✓ 😀\""},
      {"bad\xff" "end", "\"bad\xEF\xBF\xBD" "end\""},
      {"trunc\xe2\x9c", "\"trunc\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"overlong\xc0\xaf", "\"overlong\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"surrogate\xed\xa0\x80", "\"surrogate\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""},
  };
  for (const auto& c : cases) {
    std::string out;
    notifier::append_json_string(out, c.in);
    CHECK(out == c.want);
  }
}

TEST_CASE("payload: label names sanitized to the metric-name charset", "[notifier][payload]") {
  CHECK(notifier::sanitize_label_name("ok_name:x1") == "ok_name:x1");
  CHECK(notifier::sanitize_label_name("a-b.c") == "a_b_c");
  CHECK(notifier::sanitize_label_name("1abc") == "_abc");
  CHECK(notifier::is_valid_label_name("_x"));
  CHECK_FALSE(notifier::is_valid_label_name("x y"));
  CHECK_FALSE(notifier::is_valid_label_name(""));

  notifier::Alert a;
  a.starts_at = at("2026-12-02T10:47:06Z");
  a.labels = core::Labels{{"b", "2"}, {"a-z", "1"}, {"a_a", "0"}};
  a.annotations = core::Labels{{"not-a-label", "kept"}};
  CHECK(encode({a}) ==
        R"([{"startsAt":"2026-12-02T10:47:06Z","generatorURL":"","labels": {"a_a":"0","a_z":"1","b":"2"},"annotations": {"not-a-label":"kept"}}])");
}

TEST_CASE("payload: pre-built fragments give the same bytes as escaping afresh",
          "[notifier][payload]") {
  // Every shape the encoder handles: escaping in values, names to sanitize (with a duplicate
  // after sanitizing), empty annotations, no endsAt, a URL to escape.
  std::vector<notifier::Alert> plain;
  auto add = [&](core::Labels labels, core::Labels annotations, std::string url, bool ends) {
    notifier::Alert a;
    a.starts_at = at("2026-12-02T10:47:06.846344494Z");
    if (ends) a.ends_at = at("2026-12-02T10:47:26.858946525Z");
    a.labels = std::move(labels);
    a.annotations = std::move(annotations);
    a.generator_url = std::move(url);
    plain.push_back(std::move(a));
  };
  add({{"alertname", "A"}, {"job", "node-6"}}, {{"summary", "host value 109"}},
      "http://vm:28880/vmalert/alert?group_id=1&alert_id=2", true);
  add({{"alertname", "B<'\">"}, {"a-z", "1"}, {"a_z", "2"}, {"1x", "\n\t\x01"}},
      {{"d", "bad\xff<b>"}, {"not-a-label", "kept"}}, "http://h/?q='<x>'", false);
  add({{"alertname", "C"}}, {}, "", true);

  std::vector<notifier::Alert> built = plain;
  for (auto& a : built) {
    a.json = core::AlertJson::build(a.labels, a.annotations, a.generator_url);
    a.generator_url.clear();  // as rules/ sends them: the URL is only in the fragment
  }
  const std::string want = encode(plain);
  CHECK(encode(built) == want);
  CHECK(want.find(R"("labels": {"_x":"\n\t\u0001","a_z":"2","alertname":"B\u003c\u0027\">"})") !=
        std::string::npos);

  // An alert whose labels were replaced after the fragment was built (alert relabeling for one
  // Alertmanager) gets its labels escaped afresh; the URL and annotations still come from the
  // fragment. The same for new annotations.
  std::vector<notifier::Alert> relabeled = built;
  std::vector<notifier::Alert> relabeled_plain = plain;
  for (size_t i = 0; i < relabeled.size(); ++i) {
    relabeled[i].labels.set("via", "alertd");
    relabeled_plain[i].labels.set("via", "alertd");
  }
  relabeled[2].annotations = core::Labels{{"new", "text"}};
  relabeled_plain[2].annotations = core::Labels{{"new", "text"}};
  CHECK(encode(relabeled) == encode(relabeled_plain));
  CHECK(encode(relabeled).find(R"("via":"alertd")") != std::string::npos);
  CHECK(encode(relabeled).find(R"("annotations": {"new":"text"})") != std::string::npos);

  // Equal labels in another block are not taken for the fragment's: still the same bytes.
  std::vector<notifier::Alert> copied = built;
  copied[0].labels = core::Labels{{"job", "node-6"}, {"alertname", "A"}};
  CHECK_FALSE(copied[0].json->labels_from(copied[0].labels));
  CHECK(encode(copied) == want);
}

TEST_CASE("payload: a shared URL prefix and the alert's ID give the same bytes as the URL",
          "[notifier][payload]") {
  notifier::Alert a;
  a.starts_at = at("2026-12-02T10:47:06.846344494Z");
  a.ends_at = at("2026-12-02T10:47:26.858946525Z");
  a.generator_url = "http://vm:28880/vmalert/alert?group_id=1&alert_id=18446744073709551615";
  a.labels = core::Labels{{"job", "node-6"}, {"alertname", "A"}};
  a.annotations = core::Labels{{"summary", "it's < 5"}};  // escaped, not copied from the block
  const std::string want = encode({a});
  notifier::Alert b = a;
  b.generator_url.clear();
  std::string prefix = "\"generatorURL\":";
  notifier::append_json_string(prefix, "http://vm:28880/vmalert/alert?group_id=1&alert_id=");
  prefix.pop_back();
  b.url_prefix_json = std::make_shared<const std::string>(prefix);
  b.url_id = 18446744073709551615ULL;
  CHECK(encode({b}) == want);
  CHECK_THAT(want, Catch::Contains(R"("annotations": {"summary":"it\u0027s \u003c 5"})"));
  CHECK_THAT(want, Catch::Contains(R"("labels": {"alertname":"A","job":"node-6"})"));
}
