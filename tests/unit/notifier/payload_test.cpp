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
