// core::Series: labels with overrides set over them, as ALERTS series share their alert's block.
#include "core/series.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

std::string merged_by_walk(const core::Series& s) {
  std::string out;
  s.for_each_label([&](const core::Label& l) {
    out += std::string(l.name) + "=" + std::string(l.value) + ";";
  });
  return out;
}

}  // namespace

TEST_CASE("series overrides are set over the labels in name order", "[series]") {
  const core::Labels base{{"alertname", "Down"}, {"alertstate", "mine"}, {"job", "node"}};
  static constexpr core::Label kOver[] = {{"__name__", "ALERTS"}, {"alertstate", "firing"}};
  core::Series s{base, 1, 2, kOver};
  // Inserted before the first label, replacing one in the middle.
  CHECK(merged_by_walk(s) == "__name__=ALERTS;alertname=Down;alertstate=firing;job=node;");
  CHECK(s.merged_labels() == core::Labels{{"__name__", "ALERTS"}, {"alertname", "Down"},
                                          {"alertstate", "firing"}, {"job", "node"}});
  // The base block is shared, not copied.
  CHECK(s.labels == base);

  // After the last label; onto an empty base; no overrides at all.
  static constexpr core::Label kLast[] = {{"zz", "1"}};
  CHECK(merged_by_walk(core::Series{base, 0, 0, kLast}) ==
        "alertname=Down;alertstate=mine;job=node;zz=1;");
  CHECK(merged_by_walk(core::Series{core::Labels{}, 0, 0, kOver}) ==
        "__name__=ALERTS;alertstate=firing;");
  CHECK(merged_by_walk(core::Series{base, 0, 0, {}}) == "alertname=Down;alertstate=mine;job=node;");
  CHECK(core::Series{base, 0, 0, {}}.merged_labels() == base);
}
