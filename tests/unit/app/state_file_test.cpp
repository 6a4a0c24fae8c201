// -state.path: the file format, all-or-nothing reading, and alerts coming back into their rules.
#include "app/state_file.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

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
