#include "core/labels.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "core/hash.hpp"

namespace {

// The set's verbatim JSON, or nullopt when it has none (and then nothing was appended).
std::optional<std::string> vj(const core::Labels& ls, core::JsonEscape style, bool alert_names) {
  std::string out = "x";
  if (!ls.append_verbatim_json(out, style, alert_names)) {
    CHECK(out == "x");
    CHECK_FALSE(ls.json_is_verbatim(style, alert_names));
    return std::nullopt;
  }
  CHECK(ls.json_is_verbatim(style, alert_names));
  return out.substr(1);
}

std::vector<core::Label> items_of(const core::Labels& ls) { return {ls.begin(), ls.end()}; }

}  // namespace

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

TEST_CASE("LabelsBuilder::equals_without_name skips __name__ wherever it sorts", "[core]") {
  // "__name__" sorts after upper-case names and before lower-case ones.
  core::LabelsBuilder b;
  b.set("job", "api");
  b.set("__name__", "up");
  b.set("Zone", "eu");
  const core::Labels without{{"Zone", "eu"}, {"job", "api"}};
  CHECK(b.equals_without_name(without));
  CHECK(b.equals_without_name(core::Labels::interned(items_of(without))));
  CHECK(b.hash_without_name() == without.hash_without_name());
  CHECK_FALSE(b.equals(without));
  // A different value, a missing or an extra label, __name__ itself in the set: not equal.
  CHECK_FALSE(b.equals_without_name(core::Labels{{"Zone", "eu"}, {"job", "web"}}));
  CHECK_FALSE(b.equals_without_name(core::Labels{{"job", "api"}}));
  CHECK_FALSE(b.equals_without_name(core::Labels{{"Zone", "eu"}, {"a", "1"}, {"job", "api"}}));
  CHECK_FALSE(b.equals_without_name(core::Labels{{"Zone", "eu"}, {"job", "api"}, {"z", "1"}}));
  CHECK_FALSE(
      b.equals_without_name(core::Labels{{"Zone", "eu"}, {"__name__", "up"}, {"job", "api"}}));
  // Without __name__ in the builder, the same as equals.
  b.erase("__name__");
  CHECK(b.equals_without_name(without));
  b.reset();
  CHECK(b.equals_without_name(core::Labels{}));
  CHECK_FALSE(b.equals_without_name(without));
  b.set("__name__", "up");
  CHECK(b.equals_without_name(core::Labels{}));
  b.reset();
  // Names and values of every length up to 20 bytes, differing in any one byte: the compare
  // goes by words, the last ones overlapping.
  for (size_t len = 0; len <= 20; ++len) {
    const std::string value(len, 'v');
    const std::string name = value.substr(0, len / 2) + "n";
    core::LabelsBuilder one;
    one.set(name, value);
    one.set("__name__", "m");
    CHECK(one.equals_without_name(core::Labels{{name, value}}));
    CHECK(one.equals_without_name(core::Labels::interned(items_of(core::Labels{{name, value}}))));
    for (size_t pos = 0; pos < len; ++pos) {
      std::string other = value;
      other[pos] = 'w';
      CHECK_FALSE(one.equals_without_name(core::Labels{{name, other}}));
      CHECK_FALSE(one.equals_without_name(core::Labels{{"x" + name.substr(1), value}}));
    }
    CHECK_FALSE(one.equals_without_name(core::Labels{{name, value + "v"}}));
  }
  CHECK(b.build().empty());
}

TEST_CASE("LabelsBuilder::reset_unsorted gives what set() of each in turn gives", "[core]") {
  // Random orders of names sharing first bytes, an empty one, bytes above 0x7f, and (rarely in
  // practice) repeated names, where the value set last stays; 9 to 80 labels (the insertion
  // sort and the stable_sort beyond 64).
  const std::vector<std::string> base{"",     "a",        "ab",   "abc",
                                      "b",    "__name__", "Z",    "\xc3\xa9t\xc3\xa9",
                                      "\x7f", "job",      "jobs", "instance"};
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> names = base;
    const size_t extra = round % 3 == 0 ? 70 : round % 5;
    for (size_t i = 0; i < extra; ++i) names.push_back("n" + std::to_string(rng() % 90));
    std::shuffle(names.begin(), names.end(), rng);
    std::vector<std::string> values;
    for (size_t i = 0; i < names.size(); ++i) values.push_back("v" + std::to_string(i));
    std::vector<core::Label> input;
    for (size_t i = 0; i < names.size(); ++i) input.push_back(core::Label{names[i], values[i]});
    core::LabelsBuilder want;
    for (const auto& l : input) want.set(l.name, l.value);
    core::LabelsBuilder got;
    got.set("stale", "x");
    got.reset_unsorted(input);
    REQUIRE(got.size() == want.size());
    CHECK(got.build() == want.build());
    CHECK(got.hash_without_name() == want.hash_without_name());
  }
  core::LabelsBuilder b;
  b.reset_unsorted(std::vector<core::Label>{});
  CHECK(b.size() == 0);
}

TEST_CASE("LabelsBuilder keeps names in byte order whatever order they are set in; get finds them",
          "[core]") {
  // Names sharing first bytes, an empty name, bytes above 0x7f (unsigned order), a prefix of
  // another name: in 200 random orders the build equals the sorted set, and get/erase find each.
  std::vector<std::string> names{"",     "a",        "ab",   "abc",
                                 "b",    "__name__", "Z",    "\xc3\xa9t\xc3\xa9",
                                 "\x7f", "job",      "jobs", "instance"};
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  std::string want = "{";
  for (const auto& n : sorted) want += (want.size() > 1 ? ", " : "") + n + "=\"v" + n + "\"";
  want += "}";
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::shuffle(names.begin(), names.end(), rng);
    std::vector<std::string> values;
    for (const auto& n : names) values.push_back("v" + n);
    core::LabelsBuilder b;
    for (size_t i = 0; i < names.size(); ++i) b.set(names[i], values[i]);
    b.set(names[0], values[0]);  // again: replaced, not added
    REQUIRE(b.size() == names.size());
    const auto items = b.items();
    for (size_t i = 0; i < items.size(); ++i) REQUIRE(items[i].name == sorted[i]);
    const core::Labels built = b.build();
    REQUIRE(built.to_string() == want);
    for (const auto& n : names) {
      REQUIRE(b.get(n) == std::optional<std::string_view>("v" + n));
      REQUIRE(built.get(n) == std::optional<std::string_view>("v" + n));
    }
    CHECK_FALSE(b.get("jo"));
    CHECK_FALSE(built.get("jo"));
    CHECK_FALSE(built.get("\x80"));
    CHECK_FALSE(b.erase("abcd"));
    for (const auto& n : names) REQUIRE(b.erase(n));
    CHECK(b.size() == 0);
  }
}

TEST_CASE("labels: the block is its own JSON object when nothing needs escaping",
          "[core][labels]") {
  using core::JsonEscape;
  CHECK(vj(core::Labels{}, JsonEscape::qtpl, true) == "{}");
  const core::Labels ls{{"job", "node"}, {"instance", "host-1:9100"}, {"expr", "a > b & c"}};
  CHECK(vj(ls, JsonEscape::qtpl, true) ==
        R"({"expr":"a > b & c","instance":"host-1:9100","job":"node"})");
  CHECK(vj(ls, JsonEscape::qtpl, false) == vj(ls, JsonEscape::qtpl, true));
  // Go escapes '>' and '&'.
  CHECK_FALSE(vj(ls, JsonEscape::go, false));
  const core::Labels plain{{"a", "1"}, {"b", ""}, {"", "empty name"}};
  CHECK(vj(plain, JsonEscape::go, false) == R"({"":"empty name","a":"1","b":""})");
  CHECK_FALSE(vj(plain, JsonEscape::go, true));  // "" is no Alertmanager label name
  // Names to sanitize, escapes, invalid UTF-8.
  CHECK_FALSE(vj(core::Labels{{"a-b", "x"}}, JsonEscape::qtpl, true));
  CHECK(vj(core::Labels{{"a-b", "x"}}, JsonEscape::qtpl, false) == R"({"a-b":"x"})");
  CHECK_FALSE(vj(core::Labels{{"q", "say \"hi\""}}, JsonEscape::qtpl, false));
  CHECK_FALSE(vj(core::Labels{{"q", "it's"}}, JsonEscape::qtpl, false));
  CHECK(vj(core::Labels{{"q", "it's"}}, JsonEscape::go, false) == R"({"q":"it's"})");
  CHECK_FALSE(vj(core::Labels{{"q", "a\xffz"}}, JsonEscape::go, false));
  CHECK(vj(core::Labels{{"q", "héllo ✓"}}, JsonEscape::qtpl, true) ==
        R"({"q":"héllo ✓"})");
  // Asked again (the answer is remembered per block) and from a copy.
  const core::Labels copy = ls;
  CHECK_FALSE(vj(copy, JsonEscape::go, false));
  CHECK(vj(copy, JsonEscape::qtpl, true));
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
  CHECK(vj(ls, core::JsonEscape::go, false)->size() == 70'000 + 26);
  // Around the boundary: text of exactly 65,535 bytes and one more.
  for (const size_t n : {size_t{65'535 - 8}, size_t{65'536 - 8}}) {
    const core::Labels edge{{"k", std::string(n, 'y')}};  // {"k":"..."} is n + 8 bytes
    CHECK(edge.get("k")->size() == n);
    CHECK(vj(edge, core::JsonEscape::qtpl, true)->size() == n + 8);
    CHECK(edge.block_bytes() == 16 + (n + 8 <= 65'535 ? 4 : 8) + n + 8);
  }
  // Small sets: 2-byte offsets.
  CHECK(core::Labels{{"a", "1"}}.block_bytes() == 16 + 4 + 9);
}

TEST_CASE("labels: the interned form is the same set as the inline one", "[core][labels]") {
  using core::JsonEscape;
  const std::string big(70'000, 'x');
  const std::vector<core::Labels> sets{
      core::Labels{{"__name__", "up"}, {"instance", "a:9100"}, {"job", "node"}},
      core::Labels{{"a\":\"", "\",\""}, {"", ""}, {"}", "{"}, {"z", "\"}"}},
      core::Labels{{"q", "say \"hi\""}, {"a-b", "x"}},
      core::Labels{{"q", "héllo ✓"}, {"r", "a\xffz"}},
      core::Labels{{"a", "1"}, {"big", big}, {"c", "3"}},
      core::Labels{{"k", std::string(65'535 - 8, 'y')}},
      core::Labels{{"k", std::string(65'536 - 8, 'y')}},
  };
  for (const auto& inl : sets) {
    const auto items = items_of(inl);
    const core::Labels in = core::Labels::interned(items);
    CAPTURE(inl.to_string().substr(0, 80));
    CHECK(in.is_interned());
    CHECK_FALSE(inl.is_interned());
    CHECK(in == inl);
    CHECK(inl == in);
    CHECK(in.size() == inl.size());
    CHECK(items_of(in) == items);
    CHECK(in.content_hash() == inl.content_hash());
    CHECK(in.hash_without_name() == inl.hash_without_name());
    CHECK(in.to_string() == inl.to_string());
    for (const auto& l : items) CHECK(in.get(l.name) == std::optional<std::string_view>(l.value));
    CHECK_FALSE(in.get("not-there"));
    for (const auto style : {JsonEscape::qtpl, JsonEscape::go}) {
      for (const bool names : {false, true}) CHECK(vj(in, style, names) == vj(inl, style, names));
    }
    // The same set interned twice: equal, and the very same pairs.
    const core::Labels again = core::Labels::interned(items);
    CHECK_FALSE(again.shares_block_with(in));
    CHECK(again == in);
    core::LabelsBuilder b;
    b.reset(in);
    CHECK(b.equals(inl));
  }
  // Different sets stay different across the forms.
  const core::Labels a = core::Labels::interned(items_of(sets[0]));
  const core::Labels b = core::Labels::interned(
      items_of(core::Labels{{"__name__", "up"}, {"instance", "a:9101"}, {"job", "node"}}));
  CHECK_FALSE(a == b);
  CHECK(a.content_hash() != b.content_hash());
  CHECK_FALSE(a == sets[1]);
  CHECK(core::Labels::interned({}).empty());
  CHECK_FALSE(core::Labels::interned({}).is_interned());
  // 13 labels: 4-byte pair numbers instead of text, offsets and punctuation.
  std::vector<std::string> names;
  for (int i = 0; i < 13; ++i) names.push_back("label_" + std::to_string(i));
  core::LabelsBuilder lb;
  for (const auto& n : names) lb.set(n, n);  // views: the strings outlive the builder
  CHECK(lb.build_interned().block_bytes() == 16 + 8 + 13 * 4);
  CHECK(lb.build().block_bytes() > 2 * lb.build_interned().block_bytes());
}

TEST_CASE("labels: interned pairs are shared, and freed with the last set holding them",
          "[core][labels]") {
  const auto base = core::Labels::intern_stats();
  {
    const core::Labels a = core::Labels::interned(
        items_of(core::Labels{{"alertname", "HighLoad"}, {"instance", "h1"}, {"job", "node"}}));
    const core::Labels b = core::Labels::interned(
        items_of(core::Labels{{"alertname", "HighLoad"}, {"instance", "h2"}, {"job", "node"}}));
    CHECK(core::Labels::intern_stats().pairs == base.pairs + 4);
    CHECK(core::Labels::intern_stats().bytes > base.bytes);
    // A change keeps the form; the old set still reads its own values.
    core::Labels c = a;
    c.set("instance", "h3");
    CHECK(c.is_interned());
    CHECK(c.get("instance") == "h3");
    CHECK(a.get("instance") == "h1");
    CHECK(core::Labels::intern_stats().pairs == base.pairs + 5);
    CHECK(c.erase("job"));
    CHECK(c.is_interned());
    CHECK(c == core::Labels{{"alertname", "HighLoad"}, {"instance", "h3"}});
    // Copies share the block, not just the pairs.
    const core::Labels d = b;  // NOLINT(performance-unnecessary-copy-initialization)
    CHECK(d.shares_block_with(b));
  }
  CHECK(core::Labels::intern_stats().pairs == base.pairs);
  CHECK(core::Labels::intern_stats().bytes <= base.bytes + 16 * 64 * sizeof(uint32_t));
}

TEST_CASE("labels: sets interned and dropped on several threads at once", "[core][labels]") {
  // A small vocabulary so threads keep finding, adding and freeing the same pairs; TSan and
  // ASan builds check the locking and the counts.
  const auto base = core::Labels::intern_stats();
  std::atomic<int> mismatches{0};  // Catch's assertions are not thread-safe: counted here
  auto work = [&mismatches](unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<core::Labels> kept(16);
    for (int step = 0; step < 4000; ++step) {
      // The builder keeps views: the values live in `values` until build.
      const std::string values[] = {"A" + std::to_string(rng() % 3),
                                    "i" + std::to_string(rng() % 5),
                                    "j" + std::to_string(rng() % 2)};
      core::LabelsBuilder b;
      b.set("alertname", values[0]);
      b.set("instance", values[1]);
      if (rng() % 2 == 0) b.set("job", values[2]);
      core::Labels ls = b.build_interned();
      if (!(ls == b.build()) || ls.content_hash() != b.build().content_hash()) ++mismatches;
      kept[rng() % kept.size()] = std::move(ls);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) threads.emplace_back(work, t + 1);
  for (auto& t : threads) t.join();
  CHECK(mismatches == 0);
  CHECK(core::Labels::intern_stats().pairs == base.pairs);
}

TEST_CASE("labels: insert_absent merges what set() would add one by one, or changes nothing",
          "[core][labels]") {
  // Random sets and additions over a small name pool (shared prefixes, an empty name, a byte
  // above 0x7f), so both outcomes come up: no name present (the merge must equal set() in
  // turn) and some name present (false, the builder as it was).
  std::mt19937 rng(77);
  const std::string pool[] = {
      "", "a", "ab", "abc", "b", "job", "instance", "z", "\xc3\xa9t\xc3\xa9", "__name__"};
  int merged = 0;
  int refused = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    core::LabelsBuilder b;
    core::LabelsBuilder ref;
    static const std::string vals[] = {"", "v1", "v2", "v3", "v4", "v5"};  // builders keep views
    for (auto k = rng() % 6; k > 0; --k) {
      const std::string& n = pool[rng() % std::size(pool)];
      b.set(n, vals[k]);
      ref.set(n, vals[k]);
    }
    std::vector<core::Label> extra;
    for (auto k = rng() % 4; k > 0; --k) extra.push_back({pool[rng() % std::size(pool)], "x"});
    std::sort(extra.begin(), extra.end(),
              [](const core::Label& x, const core::Label& y) { return x.name < y.name; });
    extra.erase(
        std::unique(extra.begin(), extra.end(),
                    [](const core::Label& x, const core::Label& y) { return x.name == y.name; }),
        extra.end());
    bool present = false;
    for (const auto& e : extra) present = present || ref.get(e.name).has_value();
    const auto before = ref.build();
    const bool ok = b.insert_absent(extra);
    CHECK(ok == !present);
    if (ok) {
      ++merged;
      for (const auto& e : extra) ref.set(e.name, e.value);
    } else {
      ++refused;
    }
    CHECK(b.build() == ref.build());
    if (!ok) CHECK(b.build() == before);
  }
  CHECK(merged > 200);
  CHECK(refused > 200);
}
