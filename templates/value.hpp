// templates::tmpl::Value: the tagged value the template evaluator passes around, standing in for
// the Go values text/template sees in vmalert (float64, int, string, time.Time, map, ...).
//
// Strings are views when they point into data that outlives the render (label values, literals
// of the parsed template) and owned otherwise; an owned short string uses std::string's inline
// buffer, so typical renders do not allocate for intermediate values. Values taken out of a
// query result keep that result alive through `metrics`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/labels.hpp"
#include "core/time.hpp"
#include "templates/template.hpp"

namespace templates::tmpl {

enum class Kind : uint8_t {
  nil,       // Go's invalid reflect.Value / nil interface
  boolean,   // bool
  int_,      // int (number constants, len)
  int64_,    // int64 (Unix, UnixMilli, metric Timestamp)
  uint8_,    // uint8 (index into a string)
  uint64_,   // uint64 ($alertID, $groupID)
  float_,    // float64
  string,    // string
  html,      // html/template.HTML (safeHtml)
  duration,  // time.Duration
  time,      // time.Time (always UTC)
  labels,    // map[string]string
  args,      // map[string]interface {}
  metrics,   // []templates.metric
  metric,    // templates.metric
  root,      // notifier.tplData
};

struct ArgsMap;
using Metrics = std::vector<QuerySample>;
struct RootData;  // the data and env of one render

struct Value {
  Kind kind = Kind::nil;
  bool owned = false;  // string payload lives in `own`
  int64_t i = 0;       // int kinds, duration ns, time ns since epoch, metric index
  uint64_t u = 0;
  double f = 0;
  bool b = false;
  std::string_view sv;
  std::string own;
  const core::Labels* labels = nullptr;
  const RootData* root = nullptr;
  std::shared_ptr<Metrics> metrics;  // metrics/metric payload; keep-alive for views into it
  std::shared_ptr<const ArgsMap> args;

  [[nodiscard]] std::string_view str() const { return owned ? std::string_view(own) : sv; }
  [[nodiscard]] bool is_nil() const { return kind == Kind::nil; }
  [[nodiscard]] const QuerySample& sample() const { return (*metrics)[static_cast<size_t>(i)]; }

  static Value make_bool(bool v) {
    Value x;
    x.kind = Kind::boolean;
    x.b = v;
    return x;
  }
  static Value make_int(int64_t v, Kind k = Kind::int_) {
    Value x;
    x.kind = k;
    x.i = v;
    return x;
  }
  static Value make_uint(uint64_t v, Kind k) {
    Value x;
    x.kind = k;
    x.u = v;
    return x;
  }
  static Value make_float(double v) {
    Value x;
    x.kind = Kind::float_;
    x.f = v;
    return x;
  }
  static Value make_view(std::string_view v, Kind k = Kind::string) {
    Value x;
    x.kind = k;
    x.sv = v;
    return x;
  }
  static Value make_string(std::string v, Kind k = Kind::string) {
    Value x;
    x.kind = k;
    x.owned = true;
    x.own = std::move(v);
    return x;
  }
  static Value make_duration(core::Duration d) { return make_int(d.count(), Kind::duration); }
  // time.Time as Go keeps it: Unix seconds in `i`, nanoseconds (0..999999999) in `u`.
  static Value make_go_time(int64_t sec, int64_t nsec) {
    Value x;
    x.kind = Kind::time;
    x.i = sec;
    x.u = static_cast<uint64_t>(nsec);
    return x;
  }
  // An unset TimePoint (the epoch) stands for Go's zero time, which vmalert passes to label
  // templates ($activeAt prints 0001-01-01 00:00:00 +0000 UTC there).
  static Value make_time(core::TimePoint t) {
    const int64_t ns = t.time_since_epoch().count();
    if (ns == 0) return make_go_time(kGoZeroTimeUnixSec, 0);
    int64_t sec = ns / 1000000000;
    int64_t nsec = ns % 1000000000;
    if (nsec < 0) {
      nsec += 1000000000;
      --sec;
    }
    return make_go_time(sec, nsec);
  }
  static constexpr int64_t kGoZeroTimeUnixSec = -62135596800;
  static Value make_labels(const core::Labels* l, std::shared_ptr<Metrics> keep = nullptr) {
    Value x;
    x.kind = Kind::labels;
    x.labels = l;
    x.metrics = std::move(keep);
    return x;
  }
};

struct ArgsMap {
  // Sorted by key bytewise (arg0, arg1, arg10, arg2, ...), as fmt prints Go maps.
  std::vector<std::pair<std::string, Value>> items;
  [[nodiscard]] const Value* find(std::string_view key) const {
    for (const auto& [k, v] : items) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

// Go's type name of the value (%T, error messages).
[[nodiscard]] std::string_view type_name(const Value& v);
// Go's truth: false for zero numbers, "", empty maps and lists, nil.
[[nodiscard]] bool truth(const Value& v);

}  // namespace templates::tmpl
