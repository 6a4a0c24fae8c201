#include "core/labels.hpp"

#include <catch2/catch.hpp>

#include "core/hash.hpp"

TEST_CASE("labels stay sorted and replace on set", "[core]") {
  core::Labels l;
  l.set("job", "node");
  l.set("instance", "a:9100");
  l.set("alertname", "X");
  l.set("job", "api");
  std::vector<std::string> names;
  for (const auto& x : l) names.emplace_back(x.name);
  CHECK(names == std::vector<std::string>{"alertname", "instance", "job"});
  CHECK(l.get("job") == std::optional<std::string_view>("api"));
  CHECK(l.erase("instance"));
  CHECK_FALSE(l.erase("instance"));
  CHECK(l.size() == 2);
  CHECK(l.to_string() == "{alertname=\"X\", job=\"api\"}");
}

TEST_CASE("label hash is FNV-1a over name, value, 0xFF and skips __name__", "[core]") {
  core::Labels a{{"__name__", "up"}, {"job", "x"}};
  core::Labels b{{"job", "x"}};
  CHECK(a.hash_without_name() == b.hash_without_name());
  core::Fnv1a64 h;
  h.add("job");
  h.add("x");
  h.add_byte(0xFF);
  CHECK(b.hash_without_name() == h.value());
  core::Labels c{{"job", "y"}};
  CHECK(c.hash_without_name() != b.hash_without_name());
}

TEST_CASE("content hash: equal sets hash equal however built, different sets differ", "[core]") {
  core::Labels a{{"job", "node"}, {"instance", "a:9100"}, {"__name__", "up"}};
  core::Labels b;
  b.set("__name__", "up");
  b.set("instance", "a:9100");
  b.set("job", "node");
  CHECK_FALSE(b.shares_block_with(a));
  CHECK(a.content_hash() == b.content_hash());
  // The same bytes split differently, a changed value, a dropped label, __name__ counted.
  const std::vector<core::Labels> others{
      core::Labels{{"job", "node"}, {"instance", "a:910"}, {"__name__", "up0"}},
      core::Labels{{"job", "nodE"}, {"instance", "a:9100"}, {"__name__", "up"}},
      core::Labels{{"job", "node"}, {"instance", "a:9100"}},
      core::Labels{{"jobi", "nodea:9100"}, {"__name__", "up"}},
      core::Labels{},
  };
  for (const auto& o : others) CHECK(o.content_hash() != a.content_hash());
  CHECK(core::Labels{}.content_hash() == core::Labels{}.content_hash());
}

TEST_CASE("a copied label set shares its block, a change gives the changer a new one", "[core]") {
  core::Labels a{{"job", "node"}, {"instance", "a:9100"}};
  core::Labels b = a;
  CHECK(b.shares_block_with(a));
  CHECK(b == a);
  b.set("job", "api");
  CHECK_FALSE(b.shares_block_with(a));
  CHECK(a.get("job") == std::optional<std::string_view>("node"));
  CHECK(b.get("job") == std::optional<std::string_view>("api"));
  core::Labels c = std::move(b);
  CHECK(b.empty());  // NOLINT(bugprone-use-after-move): a moved-from set is empty
  CHECK(c.size() == 2);
  a = c;
  CHECK(a.shares_block_with(c));
  // Views stay valid while some copy holds the block.
  std::string_view job = *a.get("job");
  c.clear();
  CHECK(job == "api");
}

TEST_CASE("equal label sets compare equal whether or not they share a block", "[core]") {
  core::Labels a{{"a", "xy"}, {"b", ""}};
  core::Labels b{{"b", ""}, {"a", "xy"}};
  CHECK_FALSE(a.shares_block_with(b));
  CHECK(a == b);
  // Same bytes split differently are different labels.
  CHECK(core::Labels{{"a", "x"}, {"yb", ""}} != a);
  CHECK(core::Labels{} == core::Labels{});
  CHECK(core::Labels{} != a);
}

TEST_CASE("Labels::from sorts and keeps the last of equal names", "[core]") {
  std::vector<core::Label> items{{"z", "1"}, {"a", "2"}, {"z", "3"}, {"m", ""}};
  auto ls = core::Labels::from(items);
  REQUIRE(ls.size() == 3);
  CHECK(ls.to_string() == "{a=\"2\", m=\"\", z=\"3\"}");
  CHECK(ls.block_bytes() > 0);
  CHECK(core::Labels::from({}).empty());
}

TEST_CASE("LabelsBuilder edits views and builds one equal set", "[core]") {
  core::Labels base{{"__name__", "up"}, {"job", "node"}};
  core::LabelsBuilder b;
  b.reset(base);
  b.erase("__name__");
  b.set("alertname", "X");
  b.set_owned(std::string("exported_") + "job", "node");
  b.set("job", "api");
  CHECK(b.get("job") == std::optional<std::string_view>("api"));
  const core::Labels built = b.build();
  CHECK(built.to_string() == "{alertname=\"X\", exported_job=\"node\", job=\"api\"}");
  CHECK(b.hash_without_name() == built.hash_without_name());
  CHECK(b.equals(built));
  b.reset();
  CHECK(b.size() == 0);
  CHECK(b.build().empty());
}

TEST_CASE("labels: the block is its own JSON object when nothing needs escaping",
          "[core][labels]") {
  using core::JsonEscape;
  CHECK(core::Labels{}.verbatim_json(JsonEscape::qtpl, true) == "{}");
  const core::Labels ls{{"job", "node"}, {"instance", "host-1:9100"}, {"expr", "a > b & c"}};
  CHECK(ls.verbatim_json(JsonEscape::qtpl, true) ==
        R"({"expr":"a > b & c","instance":"host-1:9100","job":"node"})");
  CHECK(ls.verbatim_json(JsonEscape::qtpl, false) == ls.verbatim_json(JsonEscape::qtpl, true));
  // Go escapes '>' and '&'.
  CHECK_FALSE(ls.verbatim_json(JsonEscape::go, false));
  const core::Labels plain{{"a", "1"}, {"b", ""}, {"", "empty name"}};
  CHECK(plain.verbatim_json(JsonEscape::go, false) == R"({"":"empty name","a":"1","b":""})");
  CHECK_FALSE(plain.verbatim_json(JsonEscape::go, true));  // "" is no Alertmanager label name
  // Names to sanitize, escapes, invalid UTF-8.
  CHECK_FALSE(core::Labels{{"a-b", "x"}}.verbatim_json(JsonEscape::qtpl, true));
  CHECK(core::Labels{{"a-b", "x"}}.verbatim_json(JsonEscape::qtpl, false) == R"({"a-b":"x"})");
  CHECK_FALSE(core::Labels{{"q", "say \"hi\""}}.verbatim_json(JsonEscape::qtpl, false));
  CHECK_FALSE(core::Labels{{"q", "it's"}}.verbatim_json(JsonEscape::qtpl, false));
  CHECK(core::Labels{{"q", "it's"}}.verbatim_json(JsonEscape::go, false) == R"({"q":"it's"})");
  CHECK_FALSE(core::Labels{{"q", "a\xffz"}}.verbatim_json(JsonEscape::go, false));
  CHECK(core::Labels{{"q", "héllo ✓"}}.verbatim_json(JsonEscape::qtpl, true) ==
        R"({"q":"héllo ✓"})");
  // Asked again (the answer is remembered per block) and from a copy.
  const core::Labels copy = ls;
  CHECK_FALSE(copy.verbatim_json(JsonEscape::go, false));
  CHECK(copy.verbatim_json(JsonEscape::qtpl, true));
}

TEST_CASE("labels: names and values read back whatever bytes they hold", "[core][labels]") {
  // Bytes that look like the block's JSON punctuation must not confuse the offsets.
  const core::Labels ls{{"a\":\"", "\",\""}, {"", ""}, {"}", "{"}, {"z", "\"}"}};
  REQUIRE(ls.size() == 4);
  CHECK(ls.get("a\":\"") == "\",\"");
  CHECK(ls.get("") == "");
  CHECK(ls.get("}") == "{");
  CHECK(ls.get("z") == "\"}");
  std::vector<core::Label> back(ls.begin(), ls.end());
  CHECK(back[0] == core::Label{"", ""});
  CHECK(back[2] == core::Label{"z", "\"}"});  // "}" sorts after "z"
  CHECK(back[3] == core::Label{"}", "{"});
  CHECK(core::Labels::from(back) == ls);
}

TEST_CASE("labels: a set over 64 KB of text (4-byte offsets) reads back the same", "[core][labels]") {
  const std::string big(70'000, 'x');
  const core::Labels ls{{"a", "1"}, {"big", big}, {"c", "3"}};
  CHECK(ls.get("a") == "1");
  CHECK(ls.get("big") == big);
  CHECK(ls.get("c") == "3");
  CHECK(ls.block_bytes() > 70'000);
  const core::Labels same{{"c", "3"}, {"big", big}, {"a", "1"}};
  CHECK(same == ls);
  CHECK_FALSE(same == core::Labels{{"a", "1"}, {"big", big}, {"c", "4"}});
  CHECK(ls.verbatim_json(core::JsonEscape::go, false)->size() == 70'000 + 26);
  // Around the boundary: text of exactly 65,535 bytes and one more.
  for (const size_t n : {size_t{65'535 - 8}, size_t{65'536 - 8}}) {
    const core::Labels edge{{"k", std::string(n, 'y')}};  // {"k":"..."} is n + 8 bytes
    CHECK(edge.get("k")->size() == n);
    CHECK(edge.verbatim_json(core::JsonEscape::qtpl, true)->size() == n + 8);
    CHECK(edge.block_bytes() == 16 + (n + 8 <= 65'535 ? 4 : 8) + n + 8);
  }
  // Small sets: 2-byte offsets.
  CHECK(core::Labels{{"a", "1"}}.block_bytes() == 16 + 4 + 9);
}
