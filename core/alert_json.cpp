#include "core/alert_json.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "core/json_string.hpp"

namespace core {
namespace {

// 1: may start a label name, 2: may continue one.
constexpr std::array<uint8_t, 256> kNameClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<size_t>(c)] = 3;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<size_t>(c)] = 3;
  for (int c = '0'; c <= '9'; ++c) t[static_cast<size_t>(c)] = 2;
  t['_'] = t[':'] = 3;
  return t;
}();

bool is_name_start(char c) { return (kNameClass[static_cast<unsigned char>(c)] & 1) != 0; }
bool is_name_char(char c) { return (kNameClass[static_cast<unsigned char>(c)] & 2) != 0; }

void append_pair(std::string& out, bool& first, std::string_view k, std::string_view v) {
  if (!first) out += ',';
  first = false;
  append_json_string(out, k, JsonEscape::qtpl);
  out += ':';
  append_json_string(out, v, JsonEscape::qtpl);
}

}  // namespace

bool is_alert_label_name(std::string_view name) {
  if (name.empty() || !is_name_start(name[0])) return false;
  for (size_t i = 1; i < name.size(); ++i) {
    if (!is_name_char(name[i])) return false;
  }
  return true;
}

std::string sanitize_alert_label_name(std::string_view name) {
  std::string out(name);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 0 ? !is_name_start(out[i]) : !is_name_char(out[i])) out[i] = '_';
  }
  return out;
}

void append_alert_label_object(std::string& out, const Labels& items, bool sanitize_names) {
  out += '{';
  bool first = true;
  bool all_valid = true;
  if (sanitize_names) {
    for (const auto& l : items) {
      if (!is_alert_label_name(l.name)) {
        all_valid = false;
        break;
      }
    }
  }
  if (all_valid) {
    for (const auto& l : items) append_pair(out, first, l.name, l.value);
  } else {
    // Rare: sanitize, then sort again since '_' may reorder names; a later duplicate wins,
    // like a Go map assignment.
    std::vector<std::pair<std::string, std::string_view>> fixed;
    fixed.reserve(items.size());
    for (const auto& l : items) fixed.emplace_back(sanitize_alert_label_name(l.name), l.value);
    std::stable_sort(fixed.begin(), fixed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < fixed.size(); ++i) {
      if (i + 1 < fixed.size() && fixed[i + 1].first == fixed[i].first) continue;
      append_pair(out, first, fixed[i].first, fixed[i].second);
    }
  }
  out += '}';
}

bool AlertJson::generator_url_is(std::string_view url) const {
  thread_local std::string scratch;
  scratch.clear();
  scratch += "\"generatorURL\":";
  append_json_string(scratch, url, JsonEscape::qtpl);
  return scratch == generator_url_json();
}

std::shared_ptr<const AlertJson> AlertJson::build(const Labels& labels, const Labels& annotations,
                                                  std::string_view generator_url) {
  // Written into a reused scratch buffer first (append_json_string reserves for the worst case,
  // 6 bytes a byte), then copied at its exact size: two allocations a fragment, no slack kept.
  thread_local std::string scratch;
  scratch.clear();
  scratch += "\"generatorURL\":";
  append_json_string(scratch, generator_url, JsonEscape::qtpl);
  auto j = std::make_shared<AlertJson>();
  j->labels_at_ = static_cast<uint32_t>(scratch.size());
  j->labels_kept_ = !labels.json_is_verbatim(JsonEscape::qtpl, true);
  if (j->labels_kept_) append_alert_label_object(scratch, labels, true);
  j->annotations_at_ = static_cast<uint32_t>(scratch.size());
  j->annotations_kept_ = !annotations.json_is_verbatim(JsonEscape::qtpl, false);
  if (j->annotations_kept_) append_alert_label_object(scratch, annotations, false);
  j->labels_ = labels;
  j->annotations_ = annotations;
  j->json_.assign(scratch);
  return j;
}

void AlertJson::append_labels_json(std::string& out) const {
  if (labels_kept_) {
    out += std::string_view(json_).substr(labels_at_, annotations_at_ - labels_at_);
  } else {
    labels_.append_verbatim_json(out, JsonEscape::qtpl, true);
  }
}

void AlertJson::append_annotations_json(std::string& out) const {
  if (annotations_kept_) {
    out += std::string_view(json_).substr(annotations_at_);
  } else {
    annotations_.append_verbatim_json(out, JsonEscape::qtpl, false);
  }
}

std::string AlertJson::labels_json() const {
  std::string s;
  append_labels_json(s);
  return s;
}

std::string AlertJson::annotations_json() const {
  std::string s;
  append_annotations_json(s);
  return s;
}

}  // namespace core
