// notifier::SlotTable: the delivery queue's index from an alert's fingerprint to what it holds
// of that alert (DeliveryQueue, delivery_queue.cpp).
//
// Open addressing with linear probing and backward-shift deletion, in one array of 16-byte
// cells, a power of two long and at most 3/4 used. std::unordered_map cost a node (with the
// queued alert in it) and a lookup with a cache miss at each step of every alert of every round:
// ~6% of alertd's CPU at 10,000 alerts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hash.hpp"

namespace notifier {

class SlotTable {
 public:
  // 16 bytes: a queue that ever held 100,000 alerts holds a 4 MiB table while they wait.
  struct Slot {
    uint64_t key = 0;
    uint64_t seq : 61 = 0;       // of the queued state, when `queued` (a counter: < 2^61)
    uint64_t used : 1 = 0;       // the cell holds a slot
    uint64_t queued : 1 = 0;     // a state waits in the queue (the one with `seq`)
    uint64_t in_flight : 1 = 0;  // a state is in a POST not answered yet

    static constexpr uint64_t kSeqMask = (uint64_t{1} << 61) - 1;
    // Marks the state `s` queued.
    void queue(uint64_t s) {
      seq = s & kSeqMask;
      queued = 1;
    }
  };
  static_assert(sizeof(Slot) == 16);

  [[nodiscard]] size_t size() const { return size_; }
  [[nodiscard]] size_t capacity() const { return cells_.size(); }

  Slot* find(uint64_t key) {
    if (size_ == 0) return nullptr;
    for (size_t i = home(key);; i = next(i)) {
      Slot& c = cells_[i];
      if (!c.used) return nullptr;
      if (c.key == key) return &c;
    }
  }

  // The slot of `key`; a new one (neither queued nor in flight) if there was none. May move
  // every other slot: pointers from find() and get() are valid until the next get() or erase().
  Slot& get(uint64_t key) {
    if ((size_ + 1) * 4 > cells_.size() * 3) rebuild(std::max<size_t>(16, cells_.size() * 2));
    size_t i = home(key);
    for (; cells_[i].used; i = next(i)) {
      if (cells_[i].key == key) return cells_[i];
    }
    cells_[i] = Slot{};
    cells_[i].key = key;
    cells_[i].used = 1;
    ++size_;
    return cells_[i];
  }

  // Room for `n` slots without growing on the way.
  void reserve(size_t n) {
    if (n == 0) return;
    size_t cap = 16;
    while (n * 4 > cap * 3) cap *= 2;
    if (cap > cells_.size()) rebuild(cap);
  }

  // Removes `slot` (a pointer from find() or get()).
  void erase(Slot* slot) {
    const size_t mask = cells_.size() - 1;
    size_t hole = static_cast<size_t>(slot - cells_.data());
    for (size_t j = next(hole); cells_[j].used; j = next(j)) {
      // The slot at j may fill the hole unless its home lies cyclically in (hole, j].
      const size_t h = home(cells_[j].key);
      if (((j - h) & mask) >= ((j - hole) & mask)) {
        cells_[hole] = cells_[j];
        hole = j;
      }
    }
    cells_[hole].used = false;
    --size_;
  }

  // Removes the slots `pred` is true for; `pred` may change the slots it keeps.
  template <class Pred>
  void erase_if(Pred pred) {
    std::vector<Slot> kept;
    for (Slot& c : cells_) {
      if (c.used && !pred(c)) kept.push_back(c);
    }
    release();
    reserve(kept.size());
    for (const Slot& c : kept) get(c.key) = c;
  }

  // Empty, and its array given back.
  void release() {
    std::vector<Slot>().swap(cells_);
    size_ = 0;
  }

 private:
  [[nodiscard]] size_t home(uint64_t key) const {
    return static_cast<size_t>(core::mix64(key)) & (cells_.size() - 1);
  }
  [[nodiscard]] size_t next(size_t i) const { return (i + 1) & (cells_.size() - 1); }

  void rebuild(size_t cap) {
    std::vector<Slot> old(cap);
    old.swap(cells_);
    size_ = 0;
    for (const Slot& c : old) {
      if (c.used) get(c.key) = c;
    }
  }

  std::vector<Slot> cells_;  // a power of two long, at most 3/4 used
  size_t size_ = 0;
};

}  // namespace notifier
