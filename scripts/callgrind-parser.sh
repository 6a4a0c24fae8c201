#!/usr/bin/env bash
# Instructions per input byte of each query-response parser variant, counted by callgrind.
# Runs tests/bench/parser_driver with 0 and N iterations and divides the difference by
# N x body bytes, so start-up (reading or generating the body) cancels out.
#   BUILD_DIR   build folder with parser_driver (default: build; built if missing)
#   $1          iterations (default 20)
#   $2          series: 0 = vmalert's instant_response.json (default), else a generated response
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
N=${1:-20}
SERIES=${2:-0}
driver="$BUILD_DIR/tests/bench/parser_driver"
if [[ ! -x "$driver" ]]; then
  cmake --build "$BUILD_DIR" --target parser_driver
fi
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ir VARIANT ITERATIONS -> total instructions (Ir) of the run
ir() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$driver" "$1" "$SERIES" "$2" \
    >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
  awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.out"
}

printf '%-16s %14s %10s %8s\n' variant Ir/iteration bytes Ir/byte
for v in alertd alertd_chunked split_rapidjson rapidjson_sax rapidjson_dom; do
  base=$(ir "$v" 0)
  total=$(ir "$v" "$N")
  bytes=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' "$tmp/stdout")
  awk -v v="$v" -v b="$base" -v t="$total" -v n="$N" -v bytes="$bytes" 'BEGIN {
    per = (t - b) / n; printf "%-16s %14.0f %10d %8.1f\n", v, per, bytes, per / bytes }'
done
