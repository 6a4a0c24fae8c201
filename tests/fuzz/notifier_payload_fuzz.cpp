// notifier_payload_fuzz: the Alertmanager payload encoder must always write valid JSON in valid
// UTF-8 (invalid input bytes become U+FFFD), and strings that are valid UTF-8 must decode back
// to themselves, and a label set gives the same bytes in its inline and interned forms. The
// input is split at 0xFF bytes into label names, values and annotations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "notifier/alertmanager_payload.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// RFC 3629 well-formedness, written independently of the encoder (the oracle).
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= in.size(); ++i) {
    if (i == in.size() || static_cast<unsigned char>(in[i]) == 0xFF) {
      parts.push_back(in.substr(start, i - start));
      start = i + 1;
    }
  }

  notifier::Alert a;
  a.starts_at = core::from_unix_ms(1700000000123);
  if (size % 2 == 0) a.ends_at = core::from_unix_ms(1700000060000);
  a.generator_url = std::string(parts[0]);
  // One builder per set, as rules/ builds them (Labels::set rebuilds the block each call:
  // quadratic in the number of labels, which held the run under 1,000 inputs a second).
  core::LabelsBuilder b;
  for (size_t i = 1; i + 1 < parts.size(); i += 2) b.set(parts[i], parts[i + 1]);
  a.labels = b.build();
  // Alerts keep their labels interned (rules/): the same set, hashes and payload bytes.
  const core::Labels interned = b.build_interned();
  check(interned == a.labels && a.labels == interned);
  check(interned.content_hash() == a.labels.content_hash());
  check(interned.hash_without_name() == a.labels.hash_without_name());
  b.reset();
  for (size_t i = 2; i + 1 < parts.size(); i += 2) b.set(parts[i], parts[i + 1]);
  a.annotations = b.build();

  std::string out;
  notifier::encode_alerts(std::span<const notifier::Alert>(&a, 1), out);

  // The pre-built fragments (as rules/ sends alerts) give the very same bytes.
  notifier::Alert built = a;
  built.json = core::AlertJson::build(a.labels, a.annotations, a.generator_url);
  built.generator_url.clear();
  std::string from_fragments;
  notifier::encode_alerts(std::span<const notifier::Alert>(&built, 1), from_fragments);
  check(from_fragments == out);
  notifier::Alert with_interned = a;
  with_interned.labels = interned;
  std::string from_interned;
  notifier::encode_alerts(std::span<const notifier::Alert>(&with_interned, 1), from_interned);
  check(from_interned == out);

  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(out.data(), out.size());
  check(!doc.HasParseError());
  check(doc.IsArray() && doc.Size() == 1);
  const auto& obj = doc[0];
  check(obj.HasMember("startsAt") && obj.HasMember("labels") && obj.HasMember("annotations"));
  check(obj.HasMember("endsAt") == a.ends_at.has_value());

  // Label names are sanitized, so every name in the output is a valid label name (or empty).
  for (const auto& m : obj["labels"].GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    check(name.empty() || notifier::is_valid_label_name(name));
  }
  // Annotation values that were valid UTF-8 come back byte for byte (when every name is valid:
  // an invalid name becomes U+FFFD and may then equal another name).
  for (const auto& l : a.annotations) {
    if (!valid_utf8(l.name)) return 0;
  }
  for (const auto& l : a.annotations) {
    if (!valid_utf8(l.value)) continue;
    auto it = obj["annotations"].FindMember(
        rapidjson::Value(l.name.data(), static_cast<rapidjson::SizeType>(l.name.size())));
    check(it != obj["annotations"].MemberEnd());
    check(std::string_view(it->value.GetString(), it->value.GetStringLength()) == l.value);
  }
  return 0;
}
