// Labels: an immutable, shared label set kept sorted by name, for alerts, rules and
// notifications. The datasource hot path uses the compact QueryResult instead and converts only
// what it keeps.
//
// Storage (why: an alert's labels are held by the rule, by every API snapshot and by the
// notifier batch; issue 12 wants well under 1 kB per alert all in): one heap block per set,
// reference-counted (atomic: snapshots are read on the HTTP thread). Copying a Labels is a count
// increment; a mutation (set, erase) builds a new block, so copies never see it (copy on write).
// A block has one of two forms, the same set either way (==, hashes, iteration, JSON):
// - inline (Labels::from, from_sorted, LabelsBuilder::build): a header, two 2- or 4-byte
//   offsets per label and the names and values laid out as a JSON object,
//   {"name":"value",...}, so that a set whose JSON needs no escaping (nearly every real one) is
//   its own JSON: the Alertmanager payload and the API copy it instead of keeping a second copy
//   per alert (append_verbatim_json). For sets that live a round or hold values of their own
//   (annotations, a series' labels while templates read them).
// - interned (Labels::interned, LabelsBuilder::build_interned): a header and, per label, the
//   4-byte number of a process-wide, reference-counted `"name":"value"` pair, so alerts that
//   share a label (alertname, job, region, one instance across many rules...) share its bytes:
//   4 bytes a label instead of its text plus 10 of offsets and punctuation. For alerts' labels,
//   built once per alert and kept for its life. A pair is freed with the last set holding it.
// Build a set in one step with Labels::from or a LabelsBuilder when it has more than a label or
// two. A Label is a pair of views into the block or its pairs: valid while some Labels holds
// that block.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_string.hpp"

namespace core {

struct Label {
  std::string_view name;
  std::string_view value;
  friend bool operator==(const Label&, const Label&) = default;
};

class Labels {
  struct Block;
  struct Pair;

 public:
  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Label;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Label;
    struct Arrow {
      Label l;
      const Label* operator->() const { return &l; }
    };

    Iterator() = default;
    Iterator(const Block* b, uint32_t i) : b_(b), i_(i) {}
    Label operator*() const;
    Arrow operator->() const { return Arrow{**this}; }
    Label operator[](difference_type n) const { return *(*this + n); }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator t = *this;
      ++i_;
      return t;
    }
    Iterator& operator--() {
      --i_;
      return *this;
    }
    Iterator operator--(int) {
      Iterator t = *this;
      --i_;
      return t;
    }
    Iterator& operator+=(difference_type n) {
      i_ = static_cast<uint32_t>(static_cast<difference_type>(i_) + n);
      return *this;
    }
    Iterator& operator-=(difference_type n) { return *this += -n; }
    friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
    friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
    friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const Iterator& a, const Iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const Iterator& a, const Iterator& b) { return a.i_ <=> b.i_; }

   private:
    const Block* b_ = nullptr;
    uint32_t i_ = 0;
  };

  Labels() = default;
  Labels(std::initializer_list<Label> init);
  Labels(const Labels& o) noexcept;
  Labels(Labels&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
  Labels& operator=(const Labels& o) noexcept;
  Labels& operator=(Labels&& o) noexcept;
  ~Labels();

  // A set of `items` in any order; of two with the same name the later one wins (as set()).
  [[nodiscard]] static Labels from(std::span<const Label> items);
  // `items` already sorted by name, names unique (not checked beyond a debug assertion).
  [[nodiscard]] static Labels from_sorted(std::span<const Label> items);
  // The same set in the interned form (see the top of this file): for sets kept long, whose
  // labels other sets are likely to hold too. Takes a lock per label; meant for a set built
  // once (a new alert), not once per round.
  [[nodiscard]] static Labels interned(std::span<const Label> sorted_items);
  [[nodiscard]] bool is_interned() const;

  // Sets name=value, replacing an existing value. Keeps the set sorted. Builds a new block.
  void set(std::string_view name, std::string_view value);
  // Removes name; returns whether it was present.
  bool erase(std::string_view name);
  [[nodiscard]] std::optional<std::string_view> get(std::string_view name) const;
  [[nodiscard]] bool contains(std::string_view name) const { return get(name).has_value(); }

  [[nodiscard]] size_t size() const;
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] Iterator begin() const { return {b_, 0}; }
  [[nodiscard]] Iterator end() const { return {b_, static_cast<uint32_t>(size())}; }
  void clear();
  void reserve(size_t) {}  // kept for callers; a block is sized when it is built

  // vmalert's alert/series identity: FNV-1a 64 over (name, value, 0xFF) for every label in
  // name order, skipping __name__.
  [[nodiscard]] uint64_t hash_without_name() const;
  // A fast 64-bit hash of the whole set (names, values, __name__ included), for in-memory
  // keys: equal sets hash equal. One pass over the block's bytes, several times cheaper than
  // the byte-at-a-time FNV-1a above; not an ID anyone outside the process sees.
  [[nodiscard]] uint64_t content_hash() const;
  // Prometheus text form: {a="x", b="y"}.
  [[nodiscard]] std::string to_string() const;
  // Whether both hold the very same block (a copy, not just equal labels).
  [[nodiscard]] bool shares_block_with(const Labels& o) const { return b_ == o.b_; }
  // Whether the set's JSON object {"name":"value",...} (names in order) is exactly what
  // writing each name and value with `style` would give, nothing escaped; `alert_names` also
  // asks that every name be a valid Alertmanager label name ([a-zA-Z_:][a-zA-Z0-9_:]*, nothing
  // to sanitize). When it is, append_verbatim_json copies the object from the block (or its
  // pairs) and returns true; when not, it appends nothing and returns false: the caller writes
  // the object itself then. The empty set is "{}". Worked out once per block and remembered.
  [[nodiscard]] bool json_is_verbatim(JsonEscape style, bool alert_names) const;
  bool append_verbatim_json(std::string& out, JsonEscape style, bool alert_names) const;
  // Heap bytes of the block (0 when empty), for memory accounting in tests and benchmarks; an
  // interned block's pairs are shared and not counted here (see intern_stats).
  [[nodiscard]] size_t block_bytes() const;

  // The process's interned pairs: how many are alive and the heap bytes they hold.
  struct InternStats {
    size_t pairs = 0;
    size_t bytes = 0;
  };
  [[nodiscard]] static InternStats intern_stats();

  friend bool operator==(const Labels& a, const Labels& b);
  friend class LabelsBuilder;  // compares with an interned block's pairs directly

 private:
  struct InternTable;
  explicit Labels(Block* b) : b_(b) {}
  // Frees a block whose count reached zero, releasing its pairs when interned.
  static void destroy(Block* b);
  // Interns `l`: its pair's index, counted once more.
  static uint32_t intern_pair(Label l);
  static void release_pair(uint32_t index);
  // The pair index: an interned block names its pairs by 4-byte numbers (a pointer would be 8
  // bytes a label). Chunks of 4,096 slots, allocated when a number is first used and kept;
  // number 0 is never a pair. A block is published to other threads only after its pairs'
  // slots are written, and a slot is reused only after its pair is freed, so reads take no lock.
  static constexpr uint32_t kPairChunkBits = 12;
  static constexpr uint32_t kPairChunks = 1u << 16;
  inline static Pair** pair_chunks_[kPairChunks] = {};
  [[nodiscard]] static Pair* pair_at(uint32_t index) {
    return pair_chunks_[index >> kPairChunkBits][index & ((1u << kPairChunkBits) - 1)];
  }
  Block* b_ = nullptr;
};

// Builds a label set from views, then freezes it into a Labels with one allocation. The views
// must stay valid until build(); names it makes itself (set_owned) live in the builder.
// Reused across calls, it allocates nothing in the steady state.
class LabelsBuilder {
 public:
  // Starts over with no labels.
  void reset();
  // Starts over from `ls` (views into its block: keep `ls` alive while building).
  void reset(const Labels& ls);
  // Starts over with `other`'s labels (views into its names and values: keep `other` alive,
  // and the names it owns unchanged, while building).
  void reset(const LabelsBuilder& other);
  void set(std::string_view name, std::string_view value);
  // Starts over with `labels` (each has .name and .value, views that must stay valid while
  // building) in any order, as a set() of each in turn would: appended, then sorted once
  // instead of a search and an insert per label. For a query result's series (names unique).
  template <class Range>
  void reset_unsorted(const Range& labels) {
    reset();
    for (const auto& e : labels) items_.push_back(Label{e.name, e.value});
    sort_appended();
  }
  // Like set, with a name built by the caller (e.g. "exported_" + k): the builder keeps it.
  void set_owned(std::string name, std::string_view value);
  bool erase(std::string_view name);
  // Adds `sorted` (sorted by name, names unique) when none of their names is here yet, in one
  // merge instead of a search and an insert per label; otherwise changes nothing and returns
  // false.
  bool insert_absent(std::span<const Label> sorted);
  [[nodiscard]] std::optional<std::string_view> get(std::string_view name) const;
  [[nodiscard]] size_t size() const { return items_.size(); }
  [[nodiscard]] std::span<const Label> items() const { return items_; }
  // Same hash as Labels::hash_without_name of the built set.
  [[nodiscard]] uint64_t hash_without_name() const;
  [[nodiscard]] Labels build() const { return Labels::from_sorted(items_); }
  [[nodiscard]] Labels build_interned() const { return Labels::interned(items_); }
  // Whether build() would equal `ls`.
  [[nodiscard]] bool equals(const Labels& ls) const;
  // Whether build() without __name__ would equal `ls` (which then has the same
  // hash_without_name).
  [[nodiscard]] bool equals_without_name(const Labels& ls) const;

 private:
  // Sorts items_ by name, stably; of a repeated name the last value stays (as set() gives).
  void sort_appended();

  std::vector<Label> items_;  // sorted by name, unique
  // Stable addresses, and nothing allocated until used: a std::deque allocated ~600 bytes up
  // front, and every alerting rule keeps two builders (1.1 MB at 1,000 rules).
  std::forward_list<std::string> owned_;
};

// An interned pair: its count (the interned blocks holding it), the lengths, its verbatim-JSON
// bits (Block's), its table hash, its index and the next pair of its hash chain (by index, 0
// for none), then the chars "name":"value".
struct Labels::Pair {
  std::atomic<uint32_t> refs;
  uint32_t name_len;
  uint32_t value_len;
  uint32_t json_flags;
  uint64_t hash;
  uint32_t index;
  uint32_t next;

  [[nodiscard]] const char* json() const { return reinterpret_cast<const char*>(this + 1); }
  [[nodiscard]] size_t json_len() const { return size_t{name_len} + value_len + 5; }
  [[nodiscard]] Label label() const {
    const char* j = json();
    return Label{{j + 1, name_len}, {j + 4 + name_len, value_len}};
  }
};

// The block. Inline form: header, 2 x size offsets (name i, value i) into the chars that
// follow, then the chars: {"name0":"value0","name1":"value1"} (names and values as they are,
// never escaped). Name i ends 3 bytes (`":"`) before value i starts; value i ends 3 bytes
// (`","`) before name i+1 starts, the last one 2 bytes (`"}`) before `chars`. Offsets are 2
// bytes each when the chars fit in 64 KB (every real set: 52 bytes less for 13 labels), else 4.
// Interned form (kInterned): header, the set's content_hash, then `size` 4-byte pair indices;
// `chars` is what the inline form's chars would be.
struct Labels::Block {
  std::atomic<uint32_t> refs;
  uint32_t size;
  uint32_t chars;
  // Whether the chars are valid JSON in each escaping (bits below), worked out on first use;
  // kInterned is set when the block is built and never changes.
  mutable std::atomic<uint32_t> json_flags;
  static constexpr uint32_t kChecked = 1;
  static constexpr uint32_t kQtplVerbatim = 2;
  static constexpr uint32_t kGoVerbatim = 4;
  static constexpr uint32_t kAlertNames = 8;
  static constexpr uint32_t kInterned = 16;
  static constexpr uint32_t kNarrowMax = 0xFFFF;

  [[nodiscard]] static size_t offset_bytes(size_t size, size_t chars) {
    return 2 * size * (chars <= kNarrowMax ? sizeof(uint16_t) : sizeof(uint32_t));
  }
  [[nodiscard]] bool interned() const {
    return (json_flags.load(std::memory_order_relaxed) & kInterned) != 0;
  }
  [[nodiscard]] bool narrow() const { return chars <= kNarrowMax; }
  [[nodiscard]] const char* data() const {
    return reinterpret_cast<const char*>(this + 1) + offset_bytes(size, chars);
  }
  // Offset k (2i: name i, 2i+1: value i).
  [[nodiscard]] uint32_t off(uint32_t k) const {
    if (narrow()) return reinterpret_cast<const uint16_t*>(this + 1)[k];
    return reinterpret_cast<const uint32_t*>(this + 1)[k];
  }
  // Interned form.
  [[nodiscard]] uint64_t stored_hash() const {
    return *reinterpret_cast<const uint64_t*>(this + 1);
  }
  [[nodiscard]] const uint32_t* pair_indices() const {
    return reinterpret_cast<const uint32_t*>(reinterpret_cast<const uint64_t*>(this + 1) + 1);
  }
  [[nodiscard]] Label at(uint32_t i) const {
    if (interned()) return pair_at(pair_indices()[i])->label();
    const uint32_t name = off(2 * i);
    const uint32_t value = off(2 * i + 1);
    const uint32_t end = (i + 1 < size ? off(2 * i + 2) : chars + 1) - 3;
    const char* d = data();
    return Label{{d + name, value - 3 - name}, {d + value, end - value}};
  }
};

inline Label Labels::Iterator::operator*() const { return b_->at(i_); }
inline size_t Labels::size() const { return b_ == nullptr ? 0 : b_->size; }
inline bool Labels::is_interned() const { return b_ != nullptr && b_->interned(); }

}  // namespace core
