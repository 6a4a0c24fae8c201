// The daemon: loads the rules, wires datasource, notifiers, group runners and the HTTP server
// onto one io_context, and runs until SIGTERM/SIGINT.
#pragma once

#include "app/flags.hpp"

namespace app {

// Returns the process exit code: 0 after a clean shutdown or a good -dryRun, 1 on a rule or
// start-up error (printed), 2 is left to flag errors in main.
[[nodiscard]] int run(const Flags& flags);

// -dryRun: loads and validates, prints every error to stderr; exit code as vmalert's.
[[nodiscard]] int dry_run(const Flags& flags);

// -replay.timeFrom (or -replay.timeTo) set: backfills the rules over the time range through
// remote write and exits (app/replay.hpp): 0 when every range was replayed and every row
// delivered, 1 otherwise.
[[nodiscard]] int replay(const Flags& flags);

}  // namespace app
