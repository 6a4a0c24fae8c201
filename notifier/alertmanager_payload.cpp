#include "notifier/alertmanager_payload.hpp"

#include <charconv>

#include "core/time.hpp"

namespace notifier {

void encode_alerts(std::span<const Alert> alerts, std::string& out) {
  // The alerts of one round share their endsAt (now + resolve duration): format it once. Most
  // alerts of a rule became active in the same round: their startsAt is formatted again only
  // when it differs from the alert's before.
  char ends[core::kRfc3339NanoMax];
  size_t ends_len = 0;
  core::TimePoint ends_of{};
  char starts[core::kRfc3339NanoMax];
  size_t starts_len = 0;
  core::TimePoint starts_of{};
  out += '[';
  bool first = true;
  for (const auto& a : alerts) {
    if (!first) out += ',';
    first = false;
    const core::AlertJson* j = a.json.get();
    out += "{\"startsAt\":\"";
    if (starts_len == 0 || a.starts_at != starts_of) {
      starts_len = core::put_rfc3339_nano(starts, a.starts_at);
      starts_of = a.starts_at;
    }
    out.append(starts, starts_len);
    out += "\",";
    if (j != nullptr) {
      out += j->generator_url_json();
    } else if (a.url_prefix_json) {
      out += *a.url_prefix_json;
      char id[24];
      const auto r = std::to_chars(id, id + sizeof id, a.url_id);
      out.append(id, r.ptr);
      out += '"';
    } else {
      out += "\"generatorURL\":";
      append_json_string(out, a.generator_url);
    }
    if (a.ends_at && *a.ends_at != core::TimePoint{}) {
      if (ends_len == 0 || *a.ends_at != ends_of) {
        ends_len = core::put_rfc3339_nano(ends, *a.ends_at);
        ends_of = *a.ends_at;
      }
      out += ",\"endsAt\":\"";
      out.append(ends, ends_len);
      out += '"';
    }
    out += ",\"labels\": ";
    if (j != nullptr && j->labels_from(a.labels)) {
      j->append_labels_json(out);
    } else if (!a.labels.append_verbatim_json(out, core::JsonEscape::qtpl, true)) {
      core::append_alert_label_object(out, a.labels, true);
    }
    out += ",\"annotations\": ";
    if (j != nullptr && j->annotations_from(a.annotations)) {
      j->append_annotations_json(out);
    } else if (!a.annotations.append_verbatim_json(out, core::JsonEscape::qtpl, false)) {
      core::append_alert_label_object(out, a.annotations, false);
    }
    out += '}';
  }
  out += ']';
}

}  // namespace notifier
