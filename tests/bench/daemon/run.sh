#!/usr/bin/env bash
# Daemon-level benchmark (issue 12 §1): fake datasource + fake Alertmanager (fakes.py), G x R x K
# firing alerts (gen_rules.py), the built alertd; prints a markdown table. Not part of CTest.
#   tests/bench/daemon/run.sh [--alertd build/app/alertd] [--sizes 1k,10k,100k] [--rounds 3]
#                             [--repeat 2] [--interval-100k 120]
# See docs/performance.md for what each column means.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
args=("$@")
if [[ " $* " != *" --alertd "* ]]; then
  args=(--alertd "${ALERTD:-$root/build/app/alertd}" "${args[@]}")
fi
exec python3 "$here/bench.py" "${args[@]}"
