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
  for (const auto& x : l) names.push_back(x.name);
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
