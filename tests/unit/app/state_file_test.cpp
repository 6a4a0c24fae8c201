// -state.path: the file format, all-or-nothing reading, and alerts coming back into their rules.
#include "app/state_file.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "core/limit_hits.hpp"
#include "tests/fakes/fake_querier.hpp"

namespace {

using namespace std::chrono_literals;

const core::TimePoint kT0 = core::from_unix_ms(1'700'000'040'000);

config::GroupSpec group_spec() {
  config::GroupSpec g;
  g.name = "g";
  g.file = "f.yml";
  g.id = 77;
  g.effective_interval = 1min;
  config::RuleSpec r;
  r.name = "Down";
  r.expr = "up == 0";
  r.for_ = 5min;
  r.id = 5;
  g.rules = {r};
  return g;
}

std::unique_ptr<rules::Group> firing_group() {
  auto g = rules::Group::create(group_spec(), rules::GroupContext{});
  REQUIRE(g);
  auto res = fakes::make_result({{core::Labels{{"instance", "a\"b\\n"}}, 0.25}});
  for (int m = 0; m <= 5; ++m) {
    const auto t = kT0 + std::chrono::minutes(m);
    (void)(*g)->on_result(0, res, rules::RoundTimes{t, t, t}, {}, {});
  }
  REQUIRE((*g)->rule(0).describe().firing == 1);
  return std::move(*g);
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("alertd-state-test-") + std::to_string(::getpid()) + "-" + name))
      .string();
}

}  // namespace

TEST_CASE("state round-trips through the file format", "[app][state]") {
  auto g = firing_group();
  app::SavedState st;
  st[g->id()][g->rule(0).id()] = g->rule(0).active_alerts();
  auto decoded = app::StateFile::decode(app::StateFile::encode(st));
  REQUIRE(decoded);
  const auto& a = decoded->at(77).at(5).at(0);
  const auto active = g->rule(0).active_alerts();
  const auto& orig = active.at(0);
  CHECK(a.state == rules::AlertState::firing);
  CHECK(a.labels == orig.labels);
  CHECK(a.annotations == orig.annotations);
  CHECK(a.active_at == kT0);
  CHECK(a.start == orig.start);
  CHECK(a.last_sent == orig.last_sent);
  CHECK(a.end == orig.end);
  CHECK(a.value == 0.25);
  CHECK(a.id == orig.id);
}

TEST_CASE("a restored firing alert fires on the first round with its old activeAt",
          "[app][state]") {
  auto g = firing_group();
  app::SavedState st;
  st[g->id()][g->rule(0).id()] = g->rule(0).active_alerts();
  const auto starts_at = g->rule(0).active_alerts().at(0).start;

  auto fresh = rules::Group::create(group_spec(), rules::GroupContext{});
  REQUIRE(fresh);
  CHECK(app::StateFile::restore(**fresh, st) == 1);
  CHECK((*fresh)->rule(0).describe().firing == 1);
  const auto t = kT0 + 10min;
  auto res = fakes::make_result({{core::Labels{{"instance", "a\"b\\n"}}, 0.25}});
  auto out = (*fresh)->on_result(0, res, rules::RoundTimes{t, t, t}, {}, {});
  REQUIRE(out.alerts.size() == 1);
  CHECK(out.alerts[0].starts_at == starts_at);  // Alertmanager sees the same alert
  CHECK(out.fired == 0);                        // not a new firing
  CHECK((*fresh)->rule(0).describe().alerts.at(0).active_at == kT0);
}

TEST_CASE("state of a rule that changed or vanished is not applied", "[app][state]") {
  auto g = firing_group();
  app::SavedState st;
  st[g->id()][999] = g->rule(0).active_alerts();  // another rule ID
  st[12345][g->rule(0).id()] = g->rule(0).active_alerts();  // another group ID
  auto fresh = rules::Group::create(group_spec(), rules::GroupContext{});
  REQUIRE(fresh);
  CHECK(app::StateFile::restore(**fresh, st) == 0);
  CHECK((*fresh)->rule(0).describe().firing == 0);
}

TEST_CASE("a corrupt, truncated or foreign state file is an error, never half-applied",
          "[app][state]") {
  auto g = firing_group();
  app::SavedState st;
  st[g->id()][g->rule(0).id()] = g->rule(0).active_alerts();
  st[g->id() + 1][1] = g->rule(0).active_alerts();
  const std::string good = app::StateFile::encode(st);
  CHECK_FALSE(app::StateFile::decode(good.substr(0, good.size() / 2)));
  CHECK_FALSE(app::StateFile::decode("{\"groups\": []}"));
  CHECK_FALSE(app::StateFile::decode("\x00\x01garbage"));
  CHECK_FALSE(app::StateFile::decode(R"({"format":"alertd-state","version":99,"groups":[]})"));
  std::string bad_state = good;
  bad_state.replace(bad_state.rfind("\"firing\""), 8, "\"unknown\"");
  auto r = app::StateFile::decode(bad_state);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("unknown alert state") != std::string::npos);
}

TEST_CASE("the state file's keys may come in any order; unknown keys are skipped",
          "[app][state]") {
  // Ids after their lists, unknown keys with nested values at every level, labels out of order
  // with a repeated name (the later wins, as in a map), NaN as the value.
  const std::string text = R"({"groups":[{"x":{"a":[1,{"b":2}]},"rules":[
      {"alerts":[{"end":0,"keep_firing_since":0,"extra":[[[]]],"labels":{"b":"2","a":"1","b":"3"},
                  "annotations":{},"value":NaN,"active_at":1700000000000000000,"start":5,
                  "last_sent":6,"state":"pending","restored":true}],"id":"9"}],
      "id":"18446744073709551615"}],"version":1,"format":"alertd-state","more":{"k":"v"}})";
  auto st = app::StateFile::decode(text);
  REQUIRE(st);
  REQUIRE(st->size() == 1);
  const auto& alerts = st->at(UINT64_MAX).at(9);
  REQUIRE(alerts.size() == 1);
  const auto& a = alerts[0];
  CHECK(a.state == rules::AlertState::pending);
  CHECK(a.labels == core::Labels{{"a", "1"}, {"b", "3"}});
  CHECK(a.id == a.labels.hash_without_name());
  CHECK(std::isnan(a.value));
  CHECK(a.restored);
  CHECK(a.active_at == core::from_unix_ms(1'700'000'000'000));
  CHECK(a.start == core::TimePoint{core::Duration{5}});
  CHECK(a.last_sent == core::TimePoint{core::Duration{6}});

  // An unknown key's value nested 100,000 deep is skipped without recursion.
  const std::string deep = "{\"format\":\"alertd-state\",\"version\":1,\"groups\":[],\"x\":" +
                           std::string(100'000, '[') + std::string(100'000, ']') + "}";
  auto skipped = app::StateFile::decode(deep);
  REQUIRE(skipped);
  CHECK(skipped->empty());
}

TEST_CASE("each missing or mistyped field of a state file is named", "[app][state]") {
  auto error_of = [](const std::string& groups) {
    auto r = app::StateFile::decode(R"({"format":"alertd-state","version":1,"groups":)" +
                                    groups + "}");
    REQUIRE_FALSE(r);
    return r.error().message;
  };
  const std::string times =
      R"("active_at":1,"start":2,"last_sent":3,"end":4,"keep_firing_since":5)";
  auto alert = [&](const std::string& fields) {
    return R"([{"id":"1","rules":[{"id":"2","alerts":[{)" + fields + "}]}]}]";
  };
  const std::string good =
      R"("state":"firing","value":1,"labels":{"a":"b"},"annotations":{},)" + times;
  REQUIRE(app::StateFile::decode(R"({"format":"alertd-state","version":1,"groups":)" +
                                 alert(good) + "}"));
  CHECK(error_of("{}") == "no \"groups\" list");
  CHECK(error_of("[1]") == "a group is not an object");
  CHECK(error_of(R"([{"rules":[]}])") == "group without an \"id\"");
  CHECK(error_of(R"([{"id":"1"}])") == "group without a \"rules\" list");
  CHECK(error_of(R"([{"id":7,"rules":[]}])") == "group id is not a string");
  CHECK(error_of(R"([{"id":"x","rules":[]}])") == "group id is not an ID");
  CHECK(error_of(R"([{"id":"18446744073709551616","rules":[]}])") == "group id is not an ID");
  CHECK(error_of(R"([{"id":"1","rules":[{"alerts":[]}]}])") == "rule without an \"id\"");
  CHECK(error_of(R"([{"id":"1","rules":[{"id":"2"}]}])") == "rule without an \"alerts\" list");
  CHECK(error_of(R"([{"id":"1","rules":[{"id":"2","alerts":{}}]}])") ==
        "rule without an \"alerts\" list");
  CHECK(error_of(R"([{"id":"1","rules":[{"id":"2","alerts":[3]}]}])") ==
        "an alert is not an object");
  CHECK(error_of(alert(R"("value":1,"labels":{},"annotations":{},)" + times)) ==
        "alert without a state");
  CHECK(error_of(alert(R"("state":{},"value":1)")) == "alert without a state");
  CHECK(error_of(alert(R"("state":"firing","value":"1")")) == "alert without a value");
  CHECK(error_of(alert(R"("state":"firing","value":1,"labels":[],)" + times)) ==
        "alert field \"labels\" missing or not an object");
  CHECK(error_of(alert(R"("state":"firing","value":1,"labels":{"a":1})")) ==
        "a value in \"labels\" is not a string");
  CHECK(error_of(alert(R"("state":"firing","value":1,"labels":{},"annotations":{"a":{}})")) ==
        "a value in \"annotations\" is not a string");
  CHECK(error_of(alert(R"("state":"firing","value":1,"labels":{},"annotations":{},"active_at":1.5)")) ==
        "alert field \"active_at\" missing or not an integer");
  CHECK(error_of(alert(R"("state":"firing","value":1,"labels":{},"annotations":{},"active_at":1)")) ==
        "alert field \"start\" missing or not an integer");
  CHECK(error_of(alert(good.substr(0, good.size() - std::string(",\"keep_firing_since\":5").size()))) ==
        "alert field \"keep_firing_since\" missing or not an integer");
  auto foreign = app::StateFile::decode(R"({"format":"other","groups":[]})");
  REQUIRE_FALSE(foreign);
  CHECK_THAT(foreign.error().message, Catch::Contains("not an alertd state file"));
  auto top = app::StateFile::decode("[]");
  REQUIRE_FALSE(top);
  CHECK(top.error().message == "not an alertd state file");
  auto bad_json = app::StateFile::decode(R"({"format":"alertd-state",)");
  REQUIRE_FALSE(bad_json);
  CHECK_THAT(bad_json.error().message, Catch::StartsWith("not valid JSON at byte "));
}

TEST_CASE("a mangled state file is read whole or refused, never crashes the reader",
          "[app][state]") {
  auto g = firing_group();
  app::SavedState st;
  st[g->id()][g->rule(0).id()] = g->rule(0).active_alerts();
  st[g->id() + 1][3] = g->rule(0).active_alerts();
  const std::string good = app::StateFile::encode(st);
  std::mt19937 rng(20261206);  // fixed: the same inputs every run
  const std::string bytes = "{}[]\":,0-9.eE\\ntfu\x80\xff";
  size_t accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0: text[at] = bytes[rng() % bytes.size()]; break;
        case 1: text.erase(at, 1 + rng() % 8); break;
        case 2: text.insert(at, 1, bytes[rng() % bytes.size()]); break;
        default: text.resize(at); break;
      }
    }
    auto r = app::StateFile::decode(text);
    if (!r) {
      CHECK_FALSE(r.error().message.empty());
      continue;
    }
    ++accepted;
    for (const auto& [gid, rules] : *r) {
      for (const auto& [rid, alerts] : rules) {
        for (const auto& a : alerts) {
          CHECK(a.id == a.labels.hash_without_name());
          CHECK(a.state != rules::AlertState::inactive);
        }
      }
    }
  }
  CHECK(accepted < 3000);
}

TEST_CASE("the state file is written atomically and read back", "[app][state]") {
  const auto path = temp_path("rw.json");
  std::filesystem::remove(path);
  auto missing = app::StateFile::read(path);
  REQUIRE(missing);  // no file yet: empty state
  CHECK(missing->empty());
  auto g = firing_group();
  {
    app::StateFile file(path);
    file.save(*g);
    file.flush();
    CHECK(file.last_error().empty());
    file.save(*g);  // unchanged: nothing new to write
    CHECK(file.writes() == 1);
  }
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  // The file is streamed out; its bytes are encode()'s.
  app::SavedState st;
  st[g->id()][g->rule(0).id()] = g->rule(0).active_alerts();
  {
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == app::StateFile::encode(st));
  }
  auto back = app::StateFile::read(path);
  REQUIRE(back);
  CHECK(back->at(77).at(5).size() == 1);
  {
    std::ofstream(path) << "{\"format\":\"alertd-state\",\"version\":1,\"groups\":[{\"id\":";
  }
  auto truncated = app::StateFile::read(path);
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().message.find(path) != std::string::npos);
  std::filesystem::remove(path);
  // A folder where the file should be: named, not read.
  std::filesystem::create_directory(path);
  auto folder = app::StateFile::read(path);
  std::filesystem::remove(path);
  REQUIRE_FALSE(folder);
  CHECK_THAT(folder.error().message, Catch::Contains("is a directory"));
  // Nor a device: /dev/zero would never end.
  auto device = app::StateFile::read("/dev/zero");
  REQUIRE_FALSE(device);
  CHECK_THAT(device.error().message, Catch::Contains("/dev/zero: not a regular file"));
}

TEST_CASE("a round that only re-sent alerts is saved after the refresh, a new alert at once",
          "[app][state]") {
  const auto path = temp_path("refresh.json");
  auto g = firing_group();
  auto round = [&](int minute, std::vector<std::string> instances) {
    std::vector<fakes::FakeSeries> series;
    for (auto& i : instances) series.push_back({core::Labels{{"instance", i}}, 0.25});
    const auto t = kT0 + std::chrono::minutes(minute);
    (void)g->on_result(0, fakes::make_result(series), rules::RoundTimes{t, t, t}, {}, {});
  };
  {
    app::StateFile file(path, std::chrono::hours(1));
    file.save(*g);
    file.flush();
    REQUIRE(file.writes() == 1);
    const auto sent = g->rule(0).active_alerts().at(0).last_sent;
    round(6, {"a\"b\\n"});  // re-sent: only last_sent and end moved
    REQUIRE(g->rule(0).active_alerts().at(0).last_sent > sent);
    file.save(*g);
    file.flush();
    CHECK(file.writes() == 1);
    round(7, {"a\"b\\n", "new"});  // a new (pending) alert: saved at once
    file.save(*g);
    file.flush();
    CHECK(file.writes() == 2);
  }
  auto back = app::StateFile::read(path);
  REQUIRE(back);
  CHECK(back->at(77).at(5).size() == 2);
  {
    app::StateFile file(path, std::chrono::seconds(0));  // refresh at once
    file.save(*g);
    file.flush();
    round(8, {"a\"b\\n", "new"});
    file.save(*g);
    file.flush();
    CHECK(file.writes() == 2);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a state file over its 256 MiB cap is refused unread and counted", "[app][state]") {
  const auto path = temp_path("huge.json");
  std::filesystem::remove(path);
  { std::ofstream(path) << "{}"; }
  std::filesystem::resize_file(path, (size_t{256} << 20) + 1);  // sparse: no disk used
  const uint64_t hits = core::limit_hits(core::Limit::state_file_size);
  auto r = app::StateFile::read(path);
  std::filesystem::remove(path);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == core::ErrorKind::too_large);
  CHECK_THAT(r.error().message, Catch::Contains("larger than 256 MiB"));
  CHECK(core::limit_hits(core::Limit::state_file_size) == hits + 1);
}
