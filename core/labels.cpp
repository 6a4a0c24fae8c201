#include "core/labels.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <stdexcept>

#include "core/alert_json.hpp"
#include "core/hash.hpp"

namespace core {
namespace {

constexpr std::string_view kMetricName = "__name__";

bool name_less(const Label& a, const Label& b) { return a.name < b.name; }

// a < b as std::string_view compares them; the first byte decides without calling memcmp in
// most comparisons between a set's names (a builder's searches were 7% of alertd's instructions).
[[gnu::always_inline]] inline bool name_before(std::string_view a, std::string_view b) {
  if (!a.empty() && !b.empty() && a.front() != b.front()) {
    return static_cast<unsigned char>(a.front()) < static_cast<unsigned char>(b.front());
  }
  return a < b;
}

// The first label of `items` (sorted by name) not named before `name`.
template <class Items>
auto find_name(Items& items, std::string_view name) {
  return std::lower_bound(items.begin(), items.end(), name, [](const Label& l, std::string_view n) {
    return name_before(l.name, n);
  });
}

// Small sets (every real one) sort without allocating: insertion sort, stable.
void sort_stable(std::span<Label> items) {
  if (items.size() > 64) {
    std::stable_sort(items.begin(), items.end(), name_less);
    return;
  }
  for (size_t i = 1; i < items.size(); ++i) {
    if (!name_before(items[i].name, items[i - 1].name)) continue;
    const Label x = items[i];
    size_t j = i;
    do {
      items[j] = items[j - 1];
      --j;
    } while (j > 0 && name_before(x.name, items[j - 1].name));
    items[j] = x;
  }
}

// Sorts `items` by name and keeps the last of each run of equal names (set() semantics);
// returns how many are left, at the front.
size_t sort_keep_last(std::span<Label> items) {
  sort_stable(items);
  const size_t n = items.size();
  size_t repeat = 1;
  while (repeat < n && items[repeat].name != items[repeat - 1].name) ++repeat;
  if (repeat >= n) return n;  // no name repeated (nearly always): nothing moves
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 < n && items[i + 1].name == items[i].name) continue;
    items[out++] = items[i];
  }
  return out;
}

// The inline form's chars for `items`: {"n":"v","n":"v"}, 6 bytes of JSON around each pair,
// one less for the last, 2 braces.
size_t inline_chars(std::span<const Label> items) {
  size_t chars = 1;
  for (const auto& l : items) chars += l.name.size() + l.value.size() + 6;
  if (chars > UINT32_MAX || items.size() > UINT32_MAX / 2) throw std::length_error("label set");
  return chars;
}

// Writes `"name":"value"` (as they are, never escaped) at `w`; returns the end.
char* put_json_pair(char* w, Label l) {
  *w++ = '"';
  if (!l.name.empty()) std::memcpy(w, l.name.data(), l.name.size());
  w += l.name.size();
  std::memcpy(w, "\":\"", 3);
  w += 3;
  if (!l.value.empty()) std::memcpy(w, l.value.data(), l.value.size());
  w += l.value.size();
  *w++ = '"';
  return w;
}

// Writes the inline form's offsets (`offset_bytes` of them, 2 or 4 bytes each), then its chars,
// at `dst`.
void write_inline(char* dst, std::span<const Label> items, [[maybe_unused]] size_t chars,
                  size_t offset_bytes) {
  const bool narrow = offset_bytes == 2 * items.size() * sizeof(uint16_t);
  auto set_off = [&](size_t k, size_t v) {
    if (narrow) {
      const auto x = static_cast<uint16_t>(v);
      std::memcpy(dst + k * sizeof x, &x, sizeof x);
    } else {
      const auto x = static_cast<uint32_t>(v);
      std::memcpy(dst + k * sizeof x, &x, sizeof x);
    }
  };
  char* data = dst + offset_bytes;
  char* w = data;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& l = items[i];
    *w++ = i == 0 ? '{' : ',';
    const auto at = static_cast<size_t>(w - data);
    set_off(2 * i, at + 1);                      // after the opening quote
    set_off(2 * i + 1, at + 4 + l.name.size());  // after `":"`
    w = put_json_pair(w, l);
  }
  *w++ = '}';
  assert(static_cast<size_t>(w - data) == chars);
}

// content_hash over the inline form's offsets and chars (the chars alone are ambiguous: a
// value may hold `","`): the same for both forms of a set.
uint64_t inline_hash(std::string_view offsets_and_chars, size_t size) {
  return mix64(std::hash<std::string_view>{}(offsets_and_chars) ^ size);
}

// The verbatim-JSON bits (Labels::Block's kQtplVerbatim, kGoVerbatim, kAlertNames) of one label.
constexpr uint32_t kQtplBit = 2;
constexpr uint32_t kGoBit = 4;
constexpr uint32_t kNamesBit = 8;
uint32_t json_bits(Label l) {
  uint32_t flags = kQtplBit | kGoBit | kNamesBit;
  for (const std::string_view s : {l.name, l.value}) {
    if (!json_string_is_verbatim(s, JsonEscape::qtpl)) flags &= ~kQtplBit;
    if (!json_string_is_verbatim(s, JsonEscape::go)) flags &= ~kGoBit;
  }
  if (!is_alert_label_name(l.name)) flags &= ~kNamesBit;
  return flags;
}

}  // namespace

Labels::Labels(std::initializer_list<Label> init) {
  *this = from(std::span<const Label>(init.begin(), init.size()));
}

Labels::Labels(const Labels& o) noexcept : b_(o.b_) {
  if (b_ != nullptr) b_->refs.fetch_add(1, std::memory_order_relaxed);
}

Labels& Labels::operator=(const Labels& o) noexcept {
  if (o.b_ != nullptr) o.b_->refs.fetch_add(1, std::memory_order_relaxed);
  Block* old = b_;
  b_ = o.b_;
  if (old != nullptr && old->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(old);
  return *this;
}

Labels& Labels::operator=(Labels&& o) noexcept {
  if (this == &o) return *this;
  clear();
  b_ = o.b_;
  o.b_ = nullptr;
  return *this;
}

Labels::~Labels() { clear(); }

void Labels::clear() {
  if (b_ != nullptr && b_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(b_);
  b_ = nullptr;
}

Labels Labels::from_sorted(std::span<const Label> items) {
  if (items.empty()) return {};
  assert(std::is_sorted(items.begin(), items.end(), name_less));
  const size_t chars = inline_chars(items);
  const size_t offs = Block::offset_bytes(items.size(), chars);
  void* mem = ::operator new(sizeof(Block) + offs + chars);
  auto* b = new (mem) Block{};
  b->refs.store(1, std::memory_order_relaxed);
  b->size = static_cast<uint32_t>(items.size());
  b->chars = static_cast<uint32_t>(chars);
  write_inline(reinterpret_cast<char*>(b + 1), items, chars, offs);
  return Labels(b);
}

// ---- interned pairs ----------------------------------------------------------------------------

// Pairs by (name, value): 16 shards (a pair's hash picks one), each a chained hash table under
// its own mutex. A pair's count changes only when an interned block is built (under the lock)
// or destroyed: above 1 without the lock, from 1 to 0 under it, with the unlinking, so a lookup
// never finds a pair being freed and a freed pair is never counted down again. Indices are
// handed out and taken back under one more mutex, always taken after a shard's.
struct Labels::InternTable {
  static constexpr size_t kShards = 16;
  static constexpr size_t kMinBuckets = 64;
  struct Shard {
    std::mutex mu;
    std::vector<uint32_t> buckets = std::vector<uint32_t>(kMinBuckets, 0);
    size_t count = 0;
    size_t bytes = 0;

    void rehash(size_t n) {
      std::vector<uint32_t> next(n, 0);
      for (uint32_t head : buckets) {
        while (head != 0) {
          Pair* p = pair_at(head);
          head = p->next;
          uint32_t& slot = next[p->hash & (n - 1)];
          p->next = slot;
          slot = p->index;
        }
      }
      buckets.swap(next);
    }
  };
  Shard shards[kShards];
  std::mutex index_mu;
  std::vector<uint32_t> free_indices;
  uint32_t next_index = 1;

  static InternTable& get() {
    static auto* table = new InternTable;  // never destroyed: blocks may outlive static exit
    return *table;
  }
  Shard& shard(uint64_t hash) { return shards[hash >> 60]; }

  uint32_t add_index(Pair* p) {
    const std::lock_guard lock(index_mu);
    uint32_t index = 0;
    if (!free_indices.empty()) {
      index = free_indices.back();
      free_indices.pop_back();
    } else {
      if (next_index >> kPairChunkBits >= kPairChunks) throw std::length_error("interned labels");
      index = next_index++;
      Pair**& chunk = pair_chunks_[index >> kPairChunkBits];
      if (chunk == nullptr) chunk = new Pair*[size_t{1} << kPairChunkBits]();  // kept for good
    }
    pair_chunks_[index >> kPairChunkBits][index & ((1u << kPairChunkBits) - 1)] = p;
    return index;
  }
  void drop_index(uint32_t index) {
    const std::lock_guard lock(index_mu);
    pair_chunks_[index >> kPairChunkBits][index & ((1u << kPairChunkBits) - 1)] = nullptr;
    free_indices.push_back(index);
  }
};

uint32_t Labels::intern_pair(Label l) {
  const uint64_t hash = mix64(std::hash<std::string_view>{}(l.name) ^
                              (std::hash<std::string_view>{}(l.value) * 0x9E3779B97F4A7C15ULL));
  auto& table = InternTable::get();
  auto& sh = table.shard(hash);
  const std::lock_guard lock(sh.mu);
  for (uint32_t i = sh.buckets[hash & (sh.buckets.size() - 1)]; i != 0;) {
    Pair* p = pair_at(i);
    if (p->hash == hash && p->label() == l) {
      p->refs.fetch_add(1, std::memory_order_relaxed);
      return i;
    }
    i = p->next;
  }
  const size_t len = l.name.size() + l.value.size() + 5;
  void* mem = ::operator new(sizeof(Pair) + len);
  auto* p = new (mem) Pair{};
  p->refs.store(1, std::memory_order_relaxed);
  p->name_len = static_cast<uint32_t>(l.name.size());
  p->value_len = static_cast<uint32_t>(l.value.size());
  p->json_flags = json_bits(l);
  p->hash = hash;
  put_json_pair(reinterpret_cast<char*>(p + 1), l);
  try {
    if (sh.count >= sh.buckets.size()) sh.rehash(sh.buckets.size() * 2);
    p->index = table.add_index(p);
  } catch (...) {
    ::operator delete(p);
    throw;
  }
  uint32_t& slot = sh.buckets[hash & (sh.buckets.size() - 1)];
  p->next = slot;
  slot = p->index;
  ++sh.count;
  sh.bytes += sizeof(Pair) + len;
  return p->index;
}

void Labels::release_pair(uint32_t index) {
  Pair* p = pair_at(index);
  uint32_t refs = p->refs.load(std::memory_order_relaxed);
  while (refs > 1) {
    if (p->refs.compare_exchange_weak(refs, refs - 1, std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
      return;
    }
  }
  auto& table = InternTable::get();
  auto& sh = table.shard(p->hash);
  const std::lock_guard lock(sh.mu);
  if (p->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;  // interned again meanwhile
  for (uint32_t* link = &sh.buckets[p->hash & (sh.buckets.size() - 1)]; *link != 0;
       link = &pair_at(*link)->next) {
    if (*link == index) {
      *link = p->next;
      break;
    }
  }
  --sh.count;
  sh.bytes -= sizeof(Pair) + p->json_len();
  table.drop_index(index);
  ::operator delete(p);
  // Give a burst's buckets back once most of its pairs are gone.
  if (sh.buckets.size() > InternTable::kMinBuckets && sh.count * 8 < sh.buckets.size()) {
    sh.rehash(sh.buckets.size() / 2);
  }
}

void Labels::destroy(Block* b) {
  if (b->interned()) {
    const uint32_t* indices = b->pair_indices();
    for (uint32_t i = 0; i < b->size; ++i) release_pair(indices[i]);
  }
  ::operator delete(b);
}

Labels Labels::interned(std::span<const Label> items) {
  if (items.empty()) return {};
  assert(std::is_sorted(items.begin(), items.end(), name_less));
  const size_t chars = inline_chars(items);
  // content_hash as the inline form would give it, from its bytes laid out in a scratch buffer.
  thread_local std::string scratch;
  const size_t offs = Block::offset_bytes(items.size(), chars);
  scratch.resize(offs + chars);
  write_inline(scratch.data(), items, chars, offs);
  const uint64_t hash = inline_hash(scratch, items.size());
  if (scratch.capacity() > 64 * 1024) std::string().swap(scratch);

  const size_t bytes = sizeof(Block) + sizeof(uint64_t) + items.size() * sizeof(uint32_t);
  void* mem = ::operator new(bytes);
  auto* b = new (mem) Block{};
  b->refs.store(1, std::memory_order_relaxed);
  b->chars = static_cast<uint32_t>(chars);
  std::memcpy(reinterpret_cast<char*>(b + 1), &hash, sizeof hash);
  auto* indices = reinterpret_cast<uint32_t*>(reinterpret_cast<uint64_t*>(b + 1) + 1);
  uint32_t flags = Block::kQtplVerbatim | Block::kGoVerbatim | Block::kAlertNames;
  try {
    for (const Label l : items) {
      indices[b->size] = intern_pair(l);
      flags &= pair_at(indices[b->size])->json_flags;
      ++b->size;
    }
  } catch (...) {
    for (uint32_t i = 0; i < b->size; ++i) release_pair(indices[i]);
    ::operator delete(b);
    throw;
  }
  b->json_flags.store(flags | Block::kChecked | Block::kInterned, std::memory_order_relaxed);
  return Labels(b);
}

Labels::InternStats Labels::intern_stats() {
  InternStats st;
  for (auto& sh : InternTable::get().shards) {
    const std::lock_guard lock(sh.mu);
    st.pairs += sh.count;
    st.bytes += sh.bytes + sh.buckets.capacity() * sizeof(uint32_t);
  }
  auto& table = InternTable::get();
  const std::lock_guard lock(table.index_mu);
  const size_t chunks = ((table.next_index - 1) >> kPairChunkBits) + 1;
  st.bytes += chunks * (sizeof(Pair*) << kPairChunkBits) +
              table.free_indices.capacity() * sizeof(uint32_t);
  return st;
}

Labels Labels::from(std::span<const Label> items) {
  if (items.empty()) return {};
  constexpr size_t kStack = 32;
  Label stack[kStack];
  std::vector<Label> heap;
  std::span<Label> v;
  if (items.size() <= kStack) {
    std::copy(items.begin(), items.end(), stack);
    v = std::span<Label>(stack, items.size());
  } else {
    heap.assign(items.begin(), items.end());
    v = heap;
  }
  return from_sorted(v.first(sort_keep_last(v)));
}

void Labels::set(std::string_view name, std::string_view value) {
  LabelsBuilder b;
  b.reset(*this);
  b.set(name, value);
  // The views into the old block stay valid until here; the set keeps its form.
  *this = is_interned() ? b.build_interned() : b.build();
}

bool Labels::erase(std::string_view name) {
  if (!contains(name)) return false;
  LabelsBuilder b;
  b.reset(*this);
  b.erase(name);
  *this = is_interned() ? b.build_interned() : b.build();
  return true;
}

std::optional<std::string_view> Labels::get(std::string_view name) const {
  auto it = std::lower_bound(begin(), end(), name, [](const Label& l, std::string_view n) {
    return name_before(l.name, n);
  });
  if (it == end() || (*it).name != name) return std::nullopt;
  return (*it).value;
}

uint64_t Labels::hash_without_name() const {
  Fnv1a64 h;
  for (const Label l : *this) {
    if (l.name == kMetricName) continue;
    h.add(l.name);
    h.add(l.value);
    h.add_byte(0xFF);
  }
  return h.value();
}

// Every inline block is laid out by from_sorted, the same way for the same set: so the offsets
// and chars (contiguous in the block; json_flags, a cache, is left out) plus the size say
// exactly which set it is. An interned block keeps the hash of the bytes its inline form would
// have, so both forms of a set hash equal.
uint64_t Labels::content_hash() const {
  if (b_ == nullptr) return 0;
  if (b_->interned()) return b_->stored_hash();  // worked out from the same bytes when built
  return inline_hash(std::string_view(reinterpret_cast<const char*>(b_ + 1),
                                      Block::offset_bytes(b_->size, b_->chars) + b_->chars),
                     b_->size);
}

std::string Labels::to_string() const {
  std::string out = "{";
  bool first = true;
  for (const Label l : *this) {
    if (!first) out += ", ";
    first = false;
    out += l.name;
    out += "=\"";
    for (char c : l.value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

bool Labels::json_is_verbatim(JsonEscape style, bool alert_names) const {
  static_assert(Block::kQtplVerbatim == kQtplBit && Block::kGoVerbatim == kGoBit &&
                Block::kAlertNames == kNamesBit);
  if (b_ == nullptr) return true;
  uint32_t flags = b_->json_flags.load(std::memory_order_relaxed);
  if ((flags & Block::kChecked) == 0) {
    // Inline blocks only (interned ones are checked when built). Idempotent: threads racing
    // here store the same bits.
    flags = Block::kChecked | Block::kQtplVerbatim | Block::kGoVerbatim | Block::kAlertNames;
    for (const Label l : *this) flags &= json_bits(l) | Block::kChecked;
    b_->json_flags.store(flags, std::memory_order_relaxed);
  }
  const uint32_t need = (style == JsonEscape::qtpl ? Block::kQtplVerbatim : Block::kGoVerbatim) |
                        (alert_names ? Block::kAlertNames : 0);
  return (flags & need) == need;
}

bool Labels::append_verbatim_json(std::string& out, JsonEscape style, bool alert_names) const {
  if (!json_is_verbatim(style, alert_names)) return false;
  if (b_ == nullptr) {
    out += "{}";
  } else if (!b_->interned()) {
    out.append(b_->data(), b_->chars);
  } else {
    // Written in place: the pairs' JSON and the separators are exactly `chars` bytes (the
    // inline form's), so there is no capacity check per piece.
    const uint32_t* indices = b_->pair_indices();
    const size_t start = out.size();
    out.resize_and_overwrite(start + b_->chars, [&](char* buf, size_t n) {
      char* w = buf + start;
      char* const end = buf + n;
      for (uint32_t i = 0; i < b_->size; ++i) {
        const Pair* p = pair_at(indices[i]);
        const size_t len = p->json_len();
        if (static_cast<size_t>(end - w) < len + 2) break;  // cannot happen: chars is the sum
        *w++ = i == 0 ? '{' : ',';
        std::memcpy(w, p->json(), len);
        w += len;
      }
      if (b_->size == 0 && w < end) *w++ = '{';
      if (w < end) *w++ = '}';
      return static_cast<size_t>(w - buf);
    });
  }
  return true;
}

size_t Labels::block_bytes() const {
  if (b_ == nullptr) return 0;
  if (b_->interned()) return sizeof(Block) + sizeof(uint64_t) + b_->size * sizeof(uint32_t);
  return sizeof(Block) + Block::offset_bytes(b_->size, b_->chars) + b_->chars;
}

bool operator==(const Labels& a, const Labels& b) {
  if (a.b_ == b.b_) return true;
  if (a.size() != b.size()) return false;
  if (a.b_->chars != b.b_->chars) return false;
  const bool ai = a.b_->interned();
  const bool bi = b.b_->interned();
  if (ai && bi) {
    // One pair per (name, value): the same indices <=> the same labels.
    return std::memcmp(a.b_->pair_indices(), b.b_->pair_indices(), a.size() * sizeof(uint32_t)) ==
           0;
  }
  if (ai || bi) return std::equal(a.begin(), a.end(), b.begin());
  // Same offsets and same chars <=> same labels.
  return std::memcmp(a.b_ + 1, b.b_ + 1,
                     Labels::Block::offset_bytes(a.size(), a.b_->chars) + a.b_->chars) == 0;
}

// ---- LabelsBuilder -----------------------------------------------------------------------------

void LabelsBuilder::reset() {
  items_.clear();
  owned_.clear();
}

void LabelsBuilder::reset(const Labels& ls) {
  reset();
  items_.reserve(ls.size() + 4);
  for (const Label l : ls) items_.push_back(l);
}

void LabelsBuilder::reset(const LabelsBuilder& other) {
  reset();
  items_.reserve(other.items_.size() + 4);
  items_.assign(other.items_.begin(), other.items_.end());
}

void LabelsBuilder::set(std::string_view name, std::string_view value) {
  // Names set in order (a series' labels as Prometheus sends them) append without a search.
  if (items_.empty() || name_before(items_.back().name, name)) {
    items_.push_back(Label{name, value});
    return;
  }
  auto it = find_name(items_, name);
  if (it != items_.end() && it->name == name) {
    it->value = value;
    return;
  }
  items_.insert(it, Label{name, value});
}

void LabelsBuilder::sort_appended() { items_.resize(sort_keep_last(items_)); }

void LabelsBuilder::set_owned(std::string name, std::string_view value) {
  owned_.push_front(std::move(name));
  set(owned_.front(), value);
}

bool LabelsBuilder::insert_absent(std::span<const Label> sorted) {
  const size_t n = items_.size();
  const size_t m = sorted.size();
  for (size_t i = 0, j = 0; i < n && j < m;) {
    if (name_before(items_[i].name, sorted[j].name)) {
      ++i;
    } else if (name_before(sorted[j].name, items_[i].name)) {
      ++j;
    } else {
      return false;
    }
  }
  // Merged from the back, in place.
  items_.resize(n + m);
  size_t a = n;
  size_t b = m;
  size_t out = n + m;
  while (b > 0) {
    if (a > 0 && name_before(sorted[b - 1].name, items_[a - 1].name)) {
      items_[--out] = items_[--a];
    } else {
      items_[--out] = sorted[--b];
    }
  }
  return true;
}

bool LabelsBuilder::erase(std::string_view name) {
  auto it = find_name(items_, name);
  if (it == items_.end() || it->name != name) return false;
  items_.erase(it);
  return true;
}

std::optional<std::string_view> LabelsBuilder::get(std::string_view name) const {
  auto it = find_name(items_, name);
  if (it == items_.end() || it->name != name) return std::nullopt;
  return it->value;
}

uint64_t LabelsBuilder::hash_without_name() const {
  Fnv1a64 h;
  for (const auto& l : items_) {
    if (l.name == kMetricName) continue;
    h.add(l.name);
    h.add(l.value);
    h.add_byte(0xFF);
  }
  return h.value();
}

namespace {

// Whether a and b are the same bytes, compared inline in a few word loads (the last ones
// overlapping): label names and values are short, and a memcmp call per string cost more than
// the compare.
template <class Word>
[[gnu::always_inline]] inline bool same_word(const char* p, const char* q) {
  Word x = 0;
  Word y = 0;
  std::memcpy(&x, p, sizeof(Word));
  std::memcpy(&y, q, sizeof(Word));
  return x == y;
}

[[gnu::always_inline]] inline bool same_bytes(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (!same_word<uint64_t>(p + i, q + i)) return false;
    }
    return same_word<uint64_t>(p + n - 8, q + n - 8);
  }
  if (n >= 4) return same_word<uint32_t>(p, q) && same_word<uint32_t>(p + n - 4, q + n - 4);
  if (n >= 2) return same_word<uint16_t>(p, q) && same_word<uint16_t>(p + n - 2, q + n - 2);
  return n == 0 || *p == *q;
}

[[gnu::always_inline]] inline bool same_label(const Label& a, const Label& b) {
  return same_bytes(a.name, b.name) && same_bytes(a.value, b.value);
}

[[gnu::always_inline]] inline bool is_metric_name(std::string_view name) {
  static_assert(kMetricName.size() == 8);
  return name.size() == 8 && same_word<uint64_t>(name.data(), kMetricName.data());
}

}  // namespace

bool LabelsBuilder::equals_without_name(const Labels& ls) const {
  const size_t n = items_.size();
  size_t i = 0;
  const auto next_is = [&](const Label& l) __attribute__((always_inline)) {
    if (i < n && is_metric_name(items_[i].name)) ++i;
    return i < n && same_label(l, items_[i++]);
  };
  if (ls.is_interned()) {  // an alert's labels: the pairs straight, not a call per label
    const uint32_t* idx = ls.b_->pair_indices();
    for (uint32_t k = 0; k < ls.b_->size; ++k) {
      if (!next_is(Labels::pair_at(idx[k])->label())) return false;
    }
  } else {
    for (const Label l : ls) {
      if (!next_is(l)) return false;
    }
  }
  if (i < n && is_metric_name(items_[i].name)) ++i;
  return i == n;
}

bool LabelsBuilder::equals(const Labels& ls) const {
  if (ls.size() != items_.size()) return false;
  size_t i = 0;
  for (const Label l : ls) {
    if (!same_label(l, items_[i++])) return false;
  }
  return true;
}

}  // namespace core
