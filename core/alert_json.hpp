// core::AlertJson: the parts of one Alertmanager v2 alert that stay the same from one
// notification to the next, kept per alert so a payload is assembled from them rather than
// escaped afresh each round, in the exact JSON vmalert's alertmanager_request.qtpl writes
// (quicktemplate escaping, core::JsonEscape::qtpl; label names sanitized to the metric-name
// charset, sorted, a later duplicate winning):
//   "generatorURL":"<url>"     labels: {"a":"x",...}     annotations: {"k":"v",...}
// (the idea of the seed mattermost-raw-json-encoding: parts that are already JSON are written
// straight into the output).
//
// Memory (issue 12): the generator URL is kept as JSON text; the labels and the annotations
// are kept as JSON text only when their JSON differs from the block's own bytes (a name to
// sanitize, a byte to escape, invalid UTF-8). Otherwise, the common case, the label block it
// holds already is that JSON (core::Labels lays its names and values out as a JSON object,
// Labels::append_verbatim_json) and is copied from it. Storing those blocks again as text cost
// ~480 bytes per alert (about 48 MB at 100,000 alerts).
//
// Why it is here and holds Labels: rules/ keeps one per alert (rules::Alert::json) and must not
// see notifier/; the labels and annotations it was built from are held (a reference count each,
// the blocks are the alert's own), so "is it still valid" is a pointer comparison of blocks
// that cannot be fooled by a freed block's address being reused. Labels are immutable and an
// alert keeps its annotation block while the rendered text does not change
// (rules/alerting_rule.cpp), so an unchanged alert finds its fragment valid and a changed one
// does not. Immutable once built: shared by the rule, queued alerts and every Alertmanager.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/labels.hpp"

namespace core {

class AlertJson {
 public:
  // The fragment is built only for alerts that are sent.
  [[nodiscard]] static std::shared_ptr<const AlertJson> build(const Labels& labels,
                                                             const Labels& annotations,
                                                             std::string_view generator_url);

  // Whether the fragments were built from these very label blocks (not just equal ones).
  [[nodiscard]] bool labels_from(const Labels& labels) const {
    return labels_.shares_block_with(labels);
  }
  [[nodiscard]] bool annotations_from(const Labels& annotations) const {
    return annotations_.shares_block_with(annotations);
  }

  // Whether the fragment's generatorURL is `url` (compared in its escaped form).
  [[nodiscard]] bool generator_url_is(std::string_view url) const;
  // `"generatorURL":"<url>"`
  [[nodiscard]] std::string_view generator_url_json() const {
    return std::string_view(json_).substr(0, labels_at_);
  }
  // Appends `{"a":"x",...}` (sanitized names).
  void append_labels_json(std::string& out) const;
  // Appends `{"k":"v",...}`.
  void append_annotations_json(std::string& out) const;
  // The same as strings (tests, tools).
  [[nodiscard]] std::string labels_json() const;
  [[nodiscard]] std::string annotations_json() const;
  // Whether the labels / annotations are kept as text (their JSON differs from their bytes).
  [[nodiscard]] bool labels_kept_as_text() const { return labels_kept_; }
  [[nodiscard]] bool annotations_kept_as_text() const { return annotations_kept_; }
  // Heap bytes held by the fragment itself (not the shared label blocks), for memory figures.
  [[nodiscard]] size_t heap_bytes() const { return sizeof(AlertJson) + json_.capacity(); }

 private:
  Labels labels_;
  Labels annotations_;
  // The generator URL's JSON, then the labels' and the annotations' JSON when kept as text.
  std::string json_;
  uint32_t labels_at_ = 0;
  uint32_t annotations_at_ = 0;
  bool labels_kept_ = false;
  bool annotations_kept_ = false;
};

// Appends `items` as a JSON object in the payload's form: {"name":"value",...} in name order,
// qtpl escaping. With `sanitize_names`, names outside [a-zA-Z_:][a-zA-Z0-9_:]* are sanitized
// (every other byte becomes '_'), sorted again, and of two equal names the later one wins.
void append_alert_label_object(std::string& out, const Labels& items, bool sanitize_names);

// Label names must match [a-zA-Z_:][a-zA-Z0-9_:]*: every other byte becomes '_' (a leading
// digit too). An empty name stays empty.
[[nodiscard]] std::string sanitize_alert_label_name(std::string_view name);
[[nodiscard]] bool is_alert_label_name(std::string_view name);

}  // namespace core
