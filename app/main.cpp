// alertd: evaluates vmalert/Prometheus alerting rules against a Prometheus-compatible
// datasource and sends alerts to Alertmanager. See README.md.
#include <cstdio>
#include <cstdlib>

#include "app/daemon.hpp"
#include "app/flags.hpp"
#include "app/memory.hpp"

#ifndef ALERTD_VERSION
#define ALERTD_VERSION "0.1.0"
#endif
#ifndef ALERTD_GIT_REVISION
#define ALERTD_GIT_REVISION "unknown"
#endif

int main(int argc, char** argv) {
  auto parsed = app::parse_flags(argc, argv, [](const char* name) { return std::getenv(name); });
  if (!parsed) {
    std::fprintf(stderr, "alertd: %s\nRun alertd -help for the list of flags.\n",
                 parsed.error().message.c_str());
    return 2;
  }
  const auto& flags = parsed->flags;
  if (flags.help) {
    // Go's flag package: -h and -help print the usage on stderr and exit 0.
    std::fputs(parsed->help_text.c_str(), stderr);
    return 0;
  }
  if (flags.print_flags_markdown) {
    std::fputs(app::flags_markdown().c_str(), stdout);
    return 0;
  }
  if (flags.version) {
    std::printf("alertd v%s (vmalert-compatible), revision %s\n", ALERTD_VERSION,
                ALERTD_GIT_REVISION);
    return 0;
  }
  if (flags.dry_run) return app::dry_run(flags);
  if (!flags.replay_time_from.empty() || !flags.replay_time_to.empty()) return app::replay(flags);
  // The daemon only: one exec, so that no late symbol binding brings the libraries' symbol
  // tables back after the memory releaser took them out (app/memory.hpp).
  app::bind_symbols_at_start(argv);
  return app::run(flags);
}
