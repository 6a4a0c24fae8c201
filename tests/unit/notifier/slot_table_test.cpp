// SlotTable against std::unordered_map under random inserts, finds and erases: keys chosen so
// that many share a home cell and probe runs wrap around the end of the array (where
// backward-shift deletion is easiest to get wrong), growth, release, reserve and erase_if.
#include "notifier/slot_table.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

using Slot = notifier::SlotTable::Slot;

// The table holds exactly `model`: every key found with its seq, and its size.
void check_same(notifier::SlotTable& t, const std::unordered_map<uint64_t, uint64_t>& model,
                const std::vector<uint64_t>& keys) {
  REQUIRE(t.size() == model.size());
  for (const uint64_t k : keys) {
    const Slot* s = t.find(k);
    const auto it = model.find(k);
    if (it == model.end()) {
      REQUIRE(s == nullptr);
    } else {
      REQUIRE(s != nullptr);
      REQUIRE(s->key == k);
      REQUIRE(s->used);
      REQUIRE(s->seq == it->second);
    }
  }
}

}  // namespace

TEST_CASE("SlotTable: an empty table finds nothing and holds no array", "[slot_table]") {
  notifier::SlotTable t;
  CHECK(t.size() == 0);
  CHECK(t.capacity() == 0);
  CHECK(t.find(0) == nullptr);
  CHECK(t.find(42) == nullptr);
  t.reserve(0);
  CHECK(t.capacity() == 0);
}

TEST_CASE("SlotTable: get makes an idle slot once; key 0 is a key like any other", "[slot_table]") {
  notifier::SlotTable t;
  Slot& a = t.get(0);
  CHECK(a.key == 0);
  CHECK(a.used);
  CHECK_FALSE(a.queued);
  CHECK_FALSE(a.in_flight);
  a.queue(7);
  CHECK(t.get(0).seq == 7);  // the same slot, not a new one
  CHECK(t.size() == 1);
  CHECK(t.capacity() == 16);
  REQUIRE(t.find(0) != nullptr);
  CHECK(t.find(0)->queued);
  t.erase(t.find(0));
  CHECK(t.size() == 0);
  CHECK(t.find(0) == nullptr);
}

TEST_CASE("SlotTable: random operations agree with std::unordered_map", "[slot_table]") {
  // Few distinct keys in a small table: long probe runs, wrap-around, every erase shifting.
  for (const size_t universe : {24, 200, 5000}) {
    std::mt19937_64 rng(universe);
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < universe; ++i) keys.push_back(rng());
    keys.push_back(0);
    notifier::SlotTable t;
    std::unordered_map<uint64_t, uint64_t> model;
    size_t most = 0;
    for (int step = 0; step < 40'000; ++step) {
      const uint64_t k = keys[rng() % keys.size()];
      const int op = static_cast<int>(rng() % 10);
      if (op < 5) {
        Slot& s = t.get(k);
        s.queue(static_cast<uint64_t>(step));
        model[k] = static_cast<uint64_t>(step);
      } else if (op < 9) {
        if (Slot* s = t.find(k)) {
          t.erase(s);
          model.erase(k);
        } else {
          REQUIRE(model.count(k) == 0);
        }
      } else {
        const Slot* s = t.find(k);
        REQUIRE((s != nullptr) == (model.count(k) == 1));
        if (s != nullptr) REQUIRE(s->seq == model[k]);
      }
      if (step % 2'000 == 0) check_same(t, model, keys);
      most = std::max(most, model.size());
      REQUIRE(t.size() * 4 <= t.capacity() * 3);
    }
    check_same(t, model, keys);
    INFO("universe " << universe << ", most held " << most);
    CHECK(most > universe / 3);
  }
}

TEST_CASE("SlotTable: a run that wraps past the array's end survives erasing its head",
          "[slot_table]") {
  // Keys whose home is the last cell of a 16-cell table: their run wraps to cells 0, 1, ...
  notifier::SlotTable t;
  t.reserve(10);
  REQUIRE(t.capacity() == 16);
  std::vector<uint64_t> last;
  for (uint64_t k = 1; last.size() < 6; ++k) {
    if ((core::mix64(k) & 15) == 15) last.push_back(k);
  }
  std::unordered_map<uint64_t, uint64_t> model;
  for (const uint64_t k : last) {
    t.get(k).queue(k * 10);
    model[k] = k * 10;
  }
  REQUIRE(t.capacity() == 16);
  for (const uint64_t k : last) {
    t.erase(t.find(k));
    model.erase(k);
    check_same(t, model, last);
  }
}

TEST_CASE("SlotTable: grows past 3/4, reserve sizes once, release gives the array back",
          "[slot_table]") {
  notifier::SlotTable t;
  for (uint64_t k = 1; k <= 12; ++k) t.get(k);
  CHECK(t.capacity() == 16);  // 12 of 16: at the bound
  t.get(13);
  CHECK(t.capacity() == 32);
  for (uint64_t k = 1; k <= 13; ++k) CHECK(t.find(k) != nullptr);

  t.release();
  CHECK(t.size() == 0);
  CHECK(t.capacity() == 0);
  CHECK(t.find(1) == nullptr);

  t.reserve(10'000);
  const size_t cap = t.capacity();
  CHECK(cap == 16'384);
  for (uint64_t k = 1; k <= 10'000; ++k) t.get(k * 7919);
  CHECK(t.capacity() == cap);  // no growth on the way
  CHECK(t.size() == 10'000);
}

TEST_CASE("SlotTable: erase_if drops what the predicate says and keeps its changes",
          "[slot_table]") {
  notifier::SlotTable t;
  for (uint64_t k = 0; k < 100; ++k) {
    Slot& s = t.get(k);
    s.queued = true;
    s.in_flight = k % 3 == 0;
  }
  t.erase_if([](Slot& s) {
    s.queued = false;
    return !s.in_flight;
  });
  CHECK(t.size() == 34);
  for (uint64_t k = 0; k < 100; ++k) {
    const Slot* s = t.find(k);
    if (k % 3 == 0) {
      REQUIRE(s != nullptr);
      CHECK_FALSE(s->queued);
      CHECK(s->in_flight);
    } else {
      CHECK(s == nullptr);
    }
  }
}
