#include "core/labels.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>

#include "core/alert_json.hpp"
#include "core/hash.hpp"

namespace core {
namespace {

constexpr std::string_view kMetricName = "__name__";

bool name_less(const Label& a, const Label& b) { return a.name < b.name; }

// Small sets (every real one) sort without allocating: insertion sort, stable.
void sort_stable(std::span<Label> items) {
  if (items.size() > 64) {
    std::stable_sort(items.begin(), items.end(), name_less);
    return;
  }
  for (size_t i = 1; i < items.size(); ++i) {
    Label x = items[i];
    size_t j = i;
    while (j > 0 && x.name < items[j - 1].name) {
      items[j] = items[j - 1];
      --j;
    }
    items[j] = x;
  }
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
  if (old != nullptr && old->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    ::operator delete(old);
  }
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
  if (b_ != nullptr && b_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    ::operator delete(b_);
  }
  b_ = nullptr;
}

Labels Labels::from_sorted(std::span<const Label> items) {
  if (items.empty()) return {};
  assert(std::is_sorted(items.begin(), items.end(), name_less));
  // {"n":"v","n":"v"}: 6 bytes of JSON around each pair, one less for the last, 2 braces.
  size_t chars = 1;
  for (const auto& l : items) chars += l.name.size() + l.value.size() + 6;
  if (chars > UINT32_MAX || items.size() > UINT32_MAX / 2) throw std::length_error("label set");
  const size_t offset_bytes = Block::offset_bytes(items.size(), chars);
  const size_t bytes = sizeof(Block) + offset_bytes + chars;
  void* mem = ::operator new(bytes);
  auto* b = new (mem) Block{};
  b->refs.store(1, std::memory_order_relaxed);
  b->size = static_cast<uint32_t>(items.size());
  b->chars = static_cast<uint32_t>(chars);
  const bool narrow = b->narrow();
  void* offs = b + 1;
  auto set_off = [&](size_t k, size_t v) {
    if (narrow) {
      static_cast<uint16_t*>(offs)[k] = static_cast<uint16_t>(v);
    } else {
      static_cast<uint32_t*>(offs)[k] = static_cast<uint32_t>(v);
    }
  };
  char* data = reinterpret_cast<char*>(b + 1) + offset_bytes;
  char* w = data;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& l = items[i];
    *w++ = i == 0 ? '{' : ',';
    *w++ = '"';
    set_off(2 * i, static_cast<size_t>(w - data));
    if (!l.name.empty()) std::memcpy(w, l.name.data(), l.name.size());
    w += l.name.size();
    std::memcpy(w, "\":\"", 3);
    w += 3;
    set_off(2 * i + 1, static_cast<size_t>(w - data));
    if (!l.value.empty()) std::memcpy(w, l.value.data(), l.value.size());
    w += l.value.size();
    *w++ = '"';
  }
  *w++ = '}';
  assert(static_cast<size_t>(w - data) == chars);
  return Labels(b);
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
  sort_stable(v);
  // Keep the last of each run of equal names (set() semantics).
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i + 1 < v.size() && v[i + 1].name == v[i].name) continue;
    v[out++] = v[i];
  }
  return from_sorted(v.first(out));
}

void Labels::set(std::string_view name, std::string_view value) {
  LabelsBuilder b;
  b.reset(*this);
  b.set(name, value);
  *this = b.build();  // the views into the old block stay valid until here
}

bool Labels::erase(std::string_view name) {
  if (!contains(name)) return false;
  LabelsBuilder b;
  b.reset(*this);
  b.erase(name);
  *this = b.build();
  return true;
}

std::optional<std::string_view> Labels::get(std::string_view name) const {
  auto it = std::lower_bound(begin(), end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
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

// Every block is laid out by from_sorted, the same way for the same set: so the offsets and
// chars (contiguous in the block; json_flags, a cache, is left out) plus the size say exactly
// which set it is.
uint64_t Labels::content_hash() const {
  if (b_ == nullptr) return 0;
  // Offsets and chars: the chars alone are ambiguous (a value may hold `","`).
  const std::string_view bytes(reinterpret_cast<const char*>(b_ + 1),
                               Block::offset_bytes(b_->size, b_->chars) + b_->chars);
  return mix64(std::hash<std::string_view>{}(bytes) ^ b_->size);
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

std::optional<std::string_view> Labels::verbatim_json(JsonEscape style, bool alert_names) const {
  if (b_ == nullptr) return std::string_view("{}");
  uint32_t flags = b_->json_flags.load(std::memory_order_relaxed);
  if ((flags & Block::kChecked) == 0) {
    // Idempotent: threads racing here store the same bits.
    flags = Block::kChecked | Block::kQtplVerbatim | Block::kGoVerbatim | Block::kAlertNames;
    for (const Label l : *this) {
      for (const std::string_view s : {l.name, l.value}) {
        if (!json_string_is_verbatim(s, JsonEscape::qtpl)) flags &= ~Block::kQtplVerbatim;
        if (!json_string_is_verbatim(s, JsonEscape::go)) flags &= ~Block::kGoVerbatim;
      }
      if (!is_alert_label_name(l.name)) flags &= ~Block::kAlertNames;
    }
    b_->json_flags.store(flags, std::memory_order_relaxed);
  }
  const uint32_t need = (style == JsonEscape::qtpl ? Block::kQtplVerbatim : Block::kGoVerbatim) |
                        (alert_names ? Block::kAlertNames : 0);
  if ((flags & need) != need) return std::nullopt;
  return std::string_view(b_->data(), b_->chars);
}

size_t Labels::block_bytes() const {
  if (b_ == nullptr) return 0;
  return sizeof(Block) + Block::offset_bytes(b_->size, b_->chars) + b_->chars;
}

bool operator==(const Labels& a, const Labels& b) {
  if (a.b_ == b.b_) return true;
  if (a.size() != b.size()) return false;
  if (a.b_->chars != b.b_->chars) return false;
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

void LabelsBuilder::set(std::string_view name, std::string_view value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  if (it != items_.end() && it->name == name) {
    it->value = value;
    return;
  }
  items_.insert(it, Label{name, value});
}

void LabelsBuilder::set_owned(std::string name, std::string_view value) {
  owned_.push_front(std::move(name));
  set(owned_.front(), value);
}

bool LabelsBuilder::erase(std::string_view name) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
  if (it == items_.end() || it->name != name) return false;
  items_.erase(it);
  return true;
}

std::optional<std::string_view> LabelsBuilder::get(std::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const Label& l, std::string_view n) { return l.name < n; });
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

bool LabelsBuilder::equals(const Labels& ls) const {
  if (ls.size() != items_.size()) return false;
  size_t i = 0;
  for (const Label l : ls) {
    if (!(l == items_[i++])) return false;
  }
  return true;
}

}  // namespace core
