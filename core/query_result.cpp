#include "core/query_result.hpp"

#include <algorithm>
#include <cstring>

#include "core/hash.hpp"

namespace core {

uint64_t hash_bytes(std::string_view bytes, uint64_t seed) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ULL);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
  }
  return mix64(h);
}

std::optional<std::string_view> LabelsView::get(std::string_view name) const {
  for (auto e : *this) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

Labels LabelsView::to_labels() const {
  constexpr size_t kStack = 32;
  if (size() > kStack) {
    std::vector<Label> items;
    items.reserve(size());
    for (auto e : *this) items.push_back(Label{e.name, e.value});
    return Labels::from(items);
  }
  Label items[kStack];
  size_t n = 0;
  for (auto e : *this) items[n++] = Label{e.name, e.value};
  return Labels::from(std::span<const Label>(items, n));
}

void QueryResult::clear() {
  type = ResultType::vector;
  is_partial = false;
  series_fetched.reset();
  series_.clear();
  complete_ = 0;
  labels_.clear();
  samples_.clear();
  values_.clear();
  string_value_.clear();
  if (!refs_.empty()) std::fill(ref_slots_.begin(), ref_slots_.end(), 0);
  refs_.clear();
}

void QueryResult::begin_series() {
  if (series_.size() > complete_) abandon_series();
  series_.push_back(
      Series{static_cast<uint32_t>(labels_.size()), static_cast<uint32_t>(samples_.size())});
}

void QueryResult::add_label(std::string_view name, std::string_view value) {
  add_label_id(intern(name), value);
}

void QueryResult::add_label_id(uint32_t name_id, std::string_view value) {
  labels_.push_back(intern_label(name_id, value));
}

void QueryResult::end_series() {
  if (series_.size() > complete_) ++complete_;
}

void QueryResult::abandon_series() {
  if (series_.empty()) return;
  const auto s = series_.back();
  labels_.resize(s.label_begin);
  samples_.resize(s.sample_begin);
  series_.pop_back();
  if (complete_ > series_.size()) complete_ = static_cast<uint32_t>(series_.size());
}

uint32_t QueryResult::intern(std::string_view name) {
  if (auto it = name_ids_.find(name); it != name_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  name_ids_.emplace(names_.back(), id);
  return id;
}

void QueryResult::grow_ref_table() {
  const size_t n = ref_slots_.empty() ? 256 : ref_slots_.size() * 2;
  std::vector<uint64_t> slots(n, 0);
  const size_t mask = n - 1;
  for (uint32_t id = 0; id < refs_.size(); ++id) {
    const auto& r = refs_[id];
    const uint64_t h = hash_bytes({values_.data() + r.value_offset, r.value_size}, r.name_id);
    size_t i = h & mask;
    while (slots[i] != 0) i = (i + 1) & mask;
    slots[i] = (h & 0xFFFFFFFF00000000ULL) | (uint64_t{id} + 1);
  }
  ref_slots_.swap(slots);
}

uint32_t QueryResult::intern_label(uint32_t name_id, std::string_view value) {
  if ((refs_.size() + 1) * 2 > ref_slots_.size()) grow_ref_table();
  const uint64_t h = hash_bytes(value, name_id);
  const uint64_t tag = h & 0xFFFFFFFF00000000ULL;
  const size_t mask = ref_slots_.size() - 1;
  size_t i = h & mask;
  while (ref_slots_[i] != 0) {
    const uint64_t s = ref_slots_[i];
    if ((s & 0xFFFFFFFF00000000ULL) == tag) {
      const auto id = static_cast<uint32_t>((s & 0xFFFFFFFFULL) - 1);
      const auto& r = refs_[id];
      if (r.name_id == name_id && r.value_size == value.size() &&
          std::memcmp(values_.data() + r.value_offset, value.data(), value.size()) == 0) {
        return id;
      }
    }
    i = (i + 1) & mask;
  }
  const auto id = static_cast<uint32_t>(refs_.size());
  refs_.push_back(LabelRef{name_id, static_cast<uint32_t>(values_.size()),
                           static_cast<uint32_t>(value.size())});
  values_.append(value);
  ref_slots_[i] = tag | (uint64_t{id} + 1);
  return id;
}

size_t QueryResult::capacity_bytes() const {
  return series_.capacity() * sizeof(Series) + labels_.capacity() * sizeof(uint32_t) +
         refs_.capacity() * sizeof(LabelRef) + ref_slots_.capacity() * sizeof(uint64_t) +
         samples_.capacity() * sizeof(Sample) + values_.capacity() + string_value_.capacity();
}

}  // namespace core
