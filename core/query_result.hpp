// QueryResult: the compact, reusable result of one datasource query.
//
// Label names are interned (a name is stored once per QueryResult, however many series use it),
// label values live in one string arena, and samples in one vector, so a parse performs no
// per-label heap allocation. clear() keeps every buffer and the interned names: a QueryResult
// that is reused for the same rule reaches a steady state with zero allocations per parse.
//
// Series are filled through the builder calls (begin_series/add_label/add_sample/end_series),
// which parsers and tests use; readers use size(), labels(i), samples(i).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/labels.hpp"

namespace core {

enum class ResultType { vector, scalar, matrix, string };

struct Sample {
  int64_t timestamp_ms = 0;
  double value = 0;
};

class QueryResult;

// A read-only view of one series' labels, in the order the datasource sent them.
class LabelsView {
 public:
  struct Entry {
    std::string_view name;
    std::string_view value;
  };
  class Iterator {
   public:
    Iterator(const QueryResult* r, uint32_t pos) : r_(r), pos_(pos) {}
    Entry operator*() const;
    Iterator& operator++() {
      ++pos_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return pos_ == o.pos_; }

   private:
    const QueryResult* r_;
    uint32_t pos_;
  };

  LabelsView(const QueryResult* r, uint32_t begin, uint32_t end) : r_(r), begin_(begin), end_(end) {}
  [[nodiscard]] Iterator begin() const { return {r_, begin_}; }
  [[nodiscard]] Iterator end() const { return {r_, end_}; }
  [[nodiscard]] size_t size() const { return end_ - begin_; }
  [[nodiscard]] std::optional<std::string_view> get(std::string_view name) const;
  // Copies into an owning, sorted Labels.
  [[nodiscard]] Labels to_labels() const;

 private:
  const QueryResult* r_;
  uint32_t begin_;
  uint32_t end_;
};

class QueryResult {
 public:
  ResultType type = ResultType::vector;
  // VictoriaMetrics' top-level "isPartial".
  bool is_partial = false;
  // "stats.seriesFetched" when the datasource sends it.
  std::optional<uint64_t> series_fetched;

  [[nodiscard]] size_t size() const { return series_.size(); }
  [[nodiscard]] bool empty() const { return series_.empty(); }
  [[nodiscard]] LabelsView labels(size_t i) const {
    return {this, series_[i].label_begin, series_[i].label_end};
  }
  [[nodiscard]] std::span<const Sample> samples(size_t i) const {
    return {samples_.data() + series_[i].sample_begin,
            static_cast<size_t>(series_[i].sample_end - series_[i].sample_begin)};
  }
  // The first sample's value (instant queries carry exactly one).
  [[nodiscard]] double value(size_t i) const { return samples_[series_[i].sample_begin].value; }
  [[nodiscard]] int64_t timestamp_ms(size_t i) const {
    return samples_[series_[i].sample_begin].timestamp_ms;
  }
  // For resultType "string": the string.
  [[nodiscard]] std::string_view string_value() const { return string_value_; }

  // Drops the series but keeps capacity and interned names.
  void clear();

  // Builder.
  void begin_series();
  void add_label(std::string_view name, std::string_view value);
  void add_label_id(uint32_t name_id, std::string_view value);
  void add_sample(Sample s) { samples_.push_back(s); }
  void end_series();
  // Removes the series being built (after a parse error inside it).
  void abandon_series();
  void set_string_value(std::string_view v) { string_value_.assign(v); }

  uint32_t intern(std::string_view name);
  [[nodiscard]] std::string_view name(uint32_t id) const { return names_[id]; }

  // Bytes held by the buffers (capacity), for memory accounting in benchmarks.
  [[nodiscard]] size_t capacity_bytes() const;

 private:
  friend class LabelsView;
  struct LabelRef {
    uint32_t name_id;
    uint32_t value_offset;
    uint32_t value_size;
  };
  struct Series {
    uint32_t label_begin;
    uint32_t label_end;
    uint32_t sample_begin;
    uint32_t sample_end;
  };

  std::vector<Series> series_;
  std::vector<LabelRef> labels_;
  std::vector<Sample> samples_;
  std::string values_;
  std::string string_value_;
  // deque: element addresses stay valid, so the map can key on views into them.
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, uint32_t> name_ids_;
};

inline LabelsView::Entry LabelsView::Iterator::operator*() const {
  const auto& ref = r_->labels_[pos_];
  return {r_->names_[ref.name_id],
          std::string_view(r_->values_).substr(ref.value_offset, ref.value_size)};
}

}  // namespace core
