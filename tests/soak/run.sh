#!/usr/bin/env bash
# Soak test (issue 12 item 6), not part of CTest's default run: A firing alerts whose series
# change over time, faults injected at random, VmRSS sampled; fails if RSS trends upward or the
# final alert state (alertd's /api/v1/alerts and a real Alertmanager) is not what the fake
# datasource's final series imply. See soak.py's header and docs/performance.md ("Soak").
#   tests/soak/run.sh [--duration 30m] [--alerts 2000] [--seed N] [--json FILE] [--keep]
#                     [--alertd build/app/alertd]
# Run it niced on a shared machine: `nice tests/soak/run.sh --duration 30m`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
args=("$@")
if [[ " $* " != *" --alertd "* ]]; then
  args=(--alertd "${ALERTD:-$root/build/app/alertd}" "${args[@]}")
fi
exec python3 -u "$here/soak.py" "${args[@]}"
