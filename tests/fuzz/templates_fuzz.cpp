// templates_fuzz: parses the input as a rule value and as a -rule.templates file, renders what
// parses, and checks the engine's contract: no crash, no sanitizer report, a failed render
// leaves the output buffer as it was, and rendering is deterministic (also when an earlier
// render left other values in the reused variable slots), and the shortcut for simple templates
// writes what the interpreter writes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "templates/template.hpp"

namespace {

core::Result<std::vector<templates::QuerySample>> fake_query(std::string_view q) {
  if (q == "fail") return core::fail("datasource unreachable");
  std::vector<templates::QuerySample> out;
  out.push_back({core::Labels{{"__name__", "up"}, {"instance", "b:9100"}}, 0, 1700000000000});
  out.push_back({core::Labels{{"__name__", "up"}, {"instance", "a:9100"}}, 1.5, 1700000000000});
  return out;
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // long inputs only slow the search down
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  static const core::Labels labels{{"instance", "host-1:9100"}, {"job", "node"}, {"x", "{{ . }}"}};
  static const core::Labels ext{{"cluster", "prod"}};
  templates::TemplateData d;
  d.labels = &labels;
  d.value = 42.5;
  d.expr = "up == 0";
  d.active_at = core::from_unix_seconds(1700000000);
  d.for_ = std::chrono::minutes(5);
  templates::TemplateEnv env;
  env.external_labels = &ext;
  env.external_url = "http://vm.example.com/prefix";
  env.query = fake_query;
  env.now = [] { return core::from_unix_seconds(1700000100); };
  // A tenth of the daemon's budget: the same code path, and a looping input costs ~1 s, not ~10.
  env.max_render_steps = templates::kMaxRenderSteps / 10;

  // As a -rule.templates file: its defines become available to the value below.
  const std::vector<templates::TemplateSet::File> files{{"fuzz.tmpl", std::string(text)}};
  auto set = templates::TemplateSet::parse(files);

  auto t = templates::Template::parse(text, set ? &*set : nullptr);
  if (!t) return 0;
  // Before each render, another one leaves different values in the reused variable slots, so
  // a read of a slot the input never wrote shows up as two different outputs.
  // The two fillers are parsed once (parsing them per input took a seventh of the run).
  auto filler = [](std::string_view v) {
    std::string text;
    for (char c = 'a'; c <= 'p'; ++c) text += std::string("{{ $") + c + " := \"" + std::string(v) + "\" }}";
    auto f = templates::Template::parse(text);
    check(f.has_value());
    return std::move(*f);
  };
  static const auto stale1 = filler("stale-1");
  static const auto stale2 = filler("stale-2");
  auto fill = [&](const templates::Template& f) {
    std::string sink;
    check(f.render(d, env, sink).has_value());
  };
  fill(stale1);
  std::string out = "prefix:";
  auto r1 = t->render(d, env, out);
  if (!r1) check(out == "prefix:");
  fill(stale2);
  std::string again = "prefix:";
  auto r2 = t->render(d, env, again);
  check(r1.has_value() == r2.has_value());
  check(out == again);
  // The same text inside {{ if true }} renders through the interpreter whatever it holds, so
  // where both render, the shortcut for simple templates (texts, $labels.NAME, $value and its
  // formatting functions) must have written what the interpreter writes.
  if (r1) {
    auto wrapped = templates::Template::parse("{{ if true }}" + std::string(text) + "{{ end }}",
                                              set ? &*set : nullptr);
    std::string interpreted = "prefix:";
    if (wrapped && wrapped->render(d, env, interpreted)) check(interpreted == out);
  }
  return 0;
}
