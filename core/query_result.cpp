#include "core/query_result.hpp"

namespace core {

std::optional<std::string_view> LabelsView::get(std::string_view name) const {
  for (auto e : *this) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

Labels LabelsView::to_labels() const {
  Labels out;
  out.reserve(size());
  for (auto e : *this) out.set(e.name, e.value);
  return out;
}

void QueryResult::clear() {
  type = ResultType::vector;
  is_partial = false;
  series_fetched.reset();
  series_.clear();
  labels_.clear();
  samples_.clear();
  values_.clear();
  string_value_.clear();
}

void QueryResult::begin_series() {
  const auto nl = static_cast<uint32_t>(labels_.size());
  const auto ns = static_cast<uint32_t>(samples_.size());
  series_.push_back(Series{nl, nl, ns, ns});
}

void QueryResult::add_label(std::string_view name, std::string_view value) {
  add_label_id(intern(name), value);
}

void QueryResult::add_label_id(uint32_t name_id, std::string_view value) {
  labels_.push_back(LabelRef{name_id, static_cast<uint32_t>(values_.size()),
                             static_cast<uint32_t>(value.size())});
  values_.append(value);
}

void QueryResult::end_series() {
  auto& s = series_.back();
  s.label_end = static_cast<uint32_t>(labels_.size());
  s.sample_end = static_cast<uint32_t>(samples_.size());
}

void QueryResult::abandon_series() {
  if (series_.empty()) return;
  const auto& s = series_.back();
  if (s.label_begin < labels_.size()) {
    values_.resize(labels_[s.label_begin].value_offset);
    labels_.resize(s.label_begin);
  }
  samples_.resize(s.sample_begin);
  series_.pop_back();
}

uint32_t QueryResult::intern(std::string_view name) {
  if (auto it = name_ids_.find(name); it != name_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  name_ids_.emplace(names_.back(), id);
  return id;
}

size_t QueryResult::capacity_bytes() const {
  return series_.capacity() * sizeof(Series) + labels_.capacity() * sizeof(LabelRef) +
         samples_.capacity() * sizeof(Sample) + values_.capacity() + string_value_.capacity();
}

}  // namespace core
