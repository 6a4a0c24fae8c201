// QueryResult: the compact, reusable result of one datasource query.
//
// Storage (why it is shaped like this: a 1M-series response must fit in well under half the
// size of its JSON body, and a reused result must parse with zero allocations):
//   - label names are interned once per QueryResult (ids stay valid across clear());
//   - every distinct (name, value) pair is stored once ("label ref": name id + value in one string
//     arena); a series' labels are a run of 4-byte label-ref ids. Real responses repeat most label
//     values (job, cluster, __name__), so values cost bytes only the first time they appear;
//   - samples live in one vector; a series is two 4-byte offsets.
// clear() keeps every buffer and the interned names.
//
// Series are filled through the builder calls (begin_series/add_label/add_sample/end_series),
// which parsers and tests use; readers use size(), labels(i), samples(i). Fast builders (the
// datasource parser) may intern pairs themselves (intern_label) and append ids (add_label_refs).
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

  [[nodiscard]] size_t size() const { return complete_; }
  [[nodiscard]] bool empty() const { return complete_ == 0; }
  [[nodiscard]] LabelsView labels(size_t i) const {
    return {this, series_[i].label_begin, label_end(i)};
  }
  [[nodiscard]] std::span<const Sample> samples(size_t i) const {
    const uint32_t b = series_[i].sample_begin;
    return {samples_.data() + b, static_cast<size_t>(sample_end(i) - b)};
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
  // Removes the series being built (after a parse error inside it); without one in progress,
  // removes the last series.
  void abandon_series();
  void set_string_value(std::string_view v) { string_value_.assign(v); }

  uint32_t intern(std::string_view name);
  [[nodiscard]] std::string_view name(uint32_t id) const { return names_[id]; }
  [[nodiscard]] size_t name_count() const { return names_.size(); }

  // Label refs: one id per distinct (name, value) pair of this result (valid until clear()).
  uint32_t intern_label(uint32_t name_id, std::string_view value);
  [[nodiscard]] uint32_t label_name_id(uint32_t label_id) const { return refs_[label_id].name_id; }
  [[nodiscard]] std::string_view label_value(uint32_t label_id) const {
    const auto& r = refs_[label_id];
    return {values_.data() + r.value_offset, r.value_size};
  }
  // Appends label refs to the series being built.
  void add_label_refs(std::span<const uint32_t> ids) {
    labels_.insert(labels_.end(), ids.begin(), ids.end());
  }
  // The label-ref ids of series i (two series have the same label set iff these are equal
  // as multisets).
  [[nodiscard]] std::span<const uint32_t> label_ids(size_t i) const {
    const uint32_t b = series_[i].label_begin;
    return {labels_.data() + b, static_cast<size_t>(label_end(i) - b)};
  }

  // Bytes held by the buffers (capacity), for memory accounting in benchmarks.
  [[nodiscard]] size_t capacity_bytes() const;

 private:
  friend class LabelsView;
  struct LabelRef {
    uint32_t name_id;
    uint32_t value_offset;
    uint32_t value_size;
  };
  // A series ends where the next one (or the buffer) begins.
  struct Series {
    uint32_t label_begin;
    uint32_t sample_begin;
  };

  [[nodiscard]] uint32_t label_end(size_t i) const {
    return i + 1 < series_.size() ? series_[i + 1].label_begin
                                  : static_cast<uint32_t>(labels_.size());
  }
  [[nodiscard]] uint32_t sample_end(size_t i) const {
    return i + 1 < series_.size() ? series_[i + 1].sample_begin
                                  : static_cast<uint32_t>(samples_.size());
  }
  void grow_ref_table();

  std::vector<Series> series_;  // complete_ series, plus the one being built if any
  uint32_t complete_ = 0;
  std::vector<uint32_t> labels_;  // label-ref ids, series after series
  std::vector<LabelRef> refs_;
  // Open addressing over refs_: (hash >> 32) << 32 | (ref id + 1); 0 = empty.
  std::vector<uint64_t> ref_slots_;
  std::vector<Sample> samples_;
  std::string values_;
  std::string string_value_;
  // deque: element addresses stay valid, so the map can key on views into them.
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, uint32_t> name_ids_;
};

inline LabelsView::Entry LabelsView::Iterator::operator*() const {
  const uint32_t id = r_->labels_[pos_];
  return {r_->names_[r_->refs_[id].name_id], r_->label_value(id)};
}

// A fast 64-bit hash of bytes (multiply-xorshift over 8-byte words), used to intern label
// values and to detect duplicate label sets. Not for untrusted-key hash tables exposed to
// adversaries beyond one response.
uint64_t hash_bytes(std::string_view bytes, uint64_t seed);

}  // namespace core
