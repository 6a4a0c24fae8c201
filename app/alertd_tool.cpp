// alertd-tool: companion commands.
//
//   alertd-tool render [--rule-templates FILE]...
//     Reads one JSON object per line from stdin and renders its `template` exactly as vmalert
//     renders an annotation; writes one JSON line per input: {"output": "..."} or
//     {"error": "..."} (vmalert's error text). Fields (all optional but `template`):
//       template, value (number or numeric string), labels, external_labels, external_url,
//       expr, active_at (RFC 3339), for (duration), queries ({query: [{labels, value}]}),
//       now (Unix seconds for `now`; default: the wall clock), type, interval, alert_id,
//       group_id, is_partial. See docs/templates.md.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/duration.hpp"
#include "core/time.hpp"
#include "templates/go_fmt.hpp"
#include "templates/template.hpp"

namespace {

int usage() {
  std::fputs(
      "usage: alertd-tool render [--rule-templates FILE]...\n"
      "  reads JSON lines {\"template\": ..., \"value\": ..., \"labels\": {...}, ...} from stdin\n"
      "  and writes {\"output\": ...} or {\"error\": ...} per line (see docs/templates.md)\n",
      stderr);
  return 2;
}

core::Labels read_labels(const rapidjson::Value& v) {
  core::Labels out;
  if (!v.IsObject()) return out;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    if (it->value.IsString()) {
      out.set(std::string_view(it->name.GetString(), it->name.GetStringLength()),
              std::string_view(it->value.GetString(), it->value.GetStringLength()));
    }
  }
  return out;
}

std::string str_field(const rapidjson::Value& doc, const char* name) {
  auto it = doc.FindMember(name);
  if (it == doc.MemberEnd() || !it->value.IsString()) return {};
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

core::Result<double> number_field(const rapidjson::Value& doc, const char* name) {
  auto it = doc.FindMember(name);
  if (it == doc.MemberEnd() || it->value.IsNull()) return 0.0;
  if (it->value.IsNumber()) return it->value.GetDouble();
  if (it->value.IsString()) {
    return templates::gofmt::parse_float(std::string_view(it->value.GetString(), it->value.GetStringLength()));
  }
  return core::fail(std::string("field \"") + name + "\" must be a number or a numeric string");
}

void write_result(const char* key, std::string_view text) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key(key);
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  w.EndObject();
  std::fwrite(buf.GetString(), 1, buf.GetSize(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string render_line(const std::string& line, const templates::TemplateSet* shared, bool& ok) {
  ok = false;
  rapidjson::Document doc;
  doc.Parse(line.c_str(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) return "alertd-tool: input line is not a JSON object";
  auto tmpl_it = doc.FindMember("template");
  if (tmpl_it == doc.MemberEnd() || !tmpl_it->value.IsString()) {
    return "alertd-tool: field \"template\" (string) is required";
  }
  const std::string text(tmpl_it->value.GetString(), tmpl_it->value.GetStringLength());

  core::Labels labels, external;
  if (auto it = doc.FindMember("labels"); it != doc.MemberEnd()) labels = read_labels(it->value);
  if (auto it = doc.FindMember("external_labels"); it != doc.MemberEnd()) external = read_labels(it->value);
  const std::string external_url = str_field(doc, "external_url");
  const std::string expr = str_field(doc, "expr");
  const std::string type = str_field(doc, "type");

  templates::TemplateData data;
  data.labels = &labels;
  auto value = number_field(doc, "value");
  if (!value) return "alertd-tool: value: " + value.error().message;
  data.value = *value;
  data.expr = expr;
  if (!type.empty()) data.type = type;
  if (const std::string at = str_field(doc, "active_at"); !at.empty()) {
    if (!core::parse_rfc3339(at, data.active_at)) return "alertd-tool: active_at: not RFC 3339: " + at;
  }
  if (const std::string f = str_field(doc, "for"); !f.empty()) {
    auto d = core::parse_duration(f);
    if (!d) return "alertd-tool: for: " + d.error().message;
    data.for_ = *d;
  }
  if (const std::string f = str_field(doc, "interval"); !f.empty()) {
    auto d = core::parse_duration(f);
    if (!d) return "alertd-tool: interval: " + d.error().message;
    data.interval = *d;
  }
  if (auto it = doc.FindMember("alert_id"); it != doc.MemberEnd() && it->value.IsUint64()) {
    data.alert_id = it->value.GetUint64();
  }
  if (auto it = doc.FindMember("group_id"); it != doc.MemberEnd() && it->value.IsUint64()) {
    data.group_id = it->value.GetUint64();
  }
  if (auto it = doc.FindMember("is_partial"); it != doc.MemberEnd() && it->value.IsBool()) {
    data.is_partial = it->value.GetBool();
  }

  std::map<std::string, std::vector<templates::QuerySample>, std::less<>> queries;
  if (auto it = doc.FindMember("queries"); it != doc.MemberEnd() && it->value.IsObject()) {
    for (auto q = it->value.MemberBegin(); q != it->value.MemberEnd(); ++q) {
      std::vector<templates::QuerySample> samples;
      if (q->value.IsArray()) {
        for (const auto& s : q->value.GetArray()) {
          templates::QuerySample smp;
          if (auto l = s.FindMember("labels"); l != s.MemberEnd()) smp.labels = read_labels(l->value);
          if (auto v = s.FindMember("value"); v != s.MemberEnd() && v->value.IsNumber()) {
            smp.value = v->value.GetDouble();
          }
          samples.push_back(std::move(smp));
        }
      }
      queries[std::string(q->name.GetString(), q->name.GetStringLength())] = std::move(samples);
    }
  }

  templates::TemplateEnv env;
  env.external_labels = &external;
  env.external_url = external_url;
  env.query = [&](std::string_view q) -> core::Result<std::vector<templates::QuerySample>> {
    auto it = queries.find(q);
    if (it == queries.end()) return std::vector<templates::QuerySample>{};
    return it->second;
  };
  if (auto it = doc.FindMember("now"); it != doc.MemberEnd() && it->value.IsNumber()) {
    const auto fixed = core::from_unix_seconds(it->value.GetDouble());
    env.now = [fixed] { return fixed; };
  } else {
    // alertd-tool is an edge program: the wall clock is allowed here.
    env.now = [] {
      return core::TimePoint{std::chrono::duration_cast<core::Duration>(
          std::chrono::system_clock::now().time_since_epoch())};
    };
  }

  auto r = templates::render_vmalert(text, data, env, shared);
  if (!r) return r.error().message;
  ok = true;
  return std::move(*r);
}

int cmd_render(int argc, char** argv) {
  std::vector<templates::TemplateSet::File> files;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rule-templates" && i + 1 < argc) {
      const std::string path = argv[++i];
      std::ifstream in(path);
      if (!in) {
        std::fprintf(stderr, "alertd-tool: cannot read %s\n", path.c_str());
        return 1;
      }
      std::stringstream ss;
      ss << in.rdbuf();
      const size_t slash = path.find_last_of('/');
      files.push_back({slash == std::string::npos ? path : path.substr(slash + 1), ss.str()});
    } else {
      return usage();
    }
  }
  templates::TemplateSet set;
  if (!files.empty()) {
    auto parsed = templates::TemplateSet::parse(files);
    if (!parsed) {
      std::fprintf(stderr, "alertd-tool: %s\n", parsed.error().message.c_str());
      return 1;
    }
    set = std::move(*parsed);
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    bool ok = false;
    const std::string out = render_line(line, &set, ok);
    write_result(ok ? "output" : "error", out);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  if (cmd == "render") return cmd_render(argc, argv);
  return usage();
}
