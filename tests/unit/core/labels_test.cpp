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
