#!/usr/bin/env bash
# Builds every libFuzzer target with clang (ALERTD_FUZZ=ON: core/ and tests/fuzz/ only) and runs
# each for FUZZ_SECONDS on a temporary copy of its seed corpus, so the repository is not
# modified. Fails if any target crashes, leaks or trips a sanitizer; the crashing input is
# kept in $BUILD_DIR/fuzz-artifacts/ to reproduce with `<target> <file>`.
#   BUILD_DIR      default build-fuzz
#   FUZZ_SECONDS   seconds per target, default 60
#   FUZZ_TARGETS   optional space-separated subset of target names (e.g. "parser_fuzz")
# Target X_fuzz uses tests/fuzz/corpus/X/ as seeds and tests/fuzz/X.dict when present.
# Long runs (issue 12's 10 million executions): run the binary directly with -runs=10000000 and
# ASAN_OPTIONS=malloc_context_size=2, or ASan's stack depot grows (docs/performance.md, "Fuzzing").
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# One cache for every checkout path (CI's clean clones, a second clone): ccache hashes paths
# under the source tree relative to it and leaves the build folder's own path out.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
CXX=${CXX:-clang++} cmake -S . -B "$BUILD_DIR" -G Ninja -DALERTD_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build "$BUILD_DIR" -- -j"${JOBS:-$(nproc)}"

mapfile -t targets < <(find "$BUILD_DIR/tests/fuzz" -maxdepth 1 -type f -name '*_fuzz' -perm -u+x | sort)
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz.sh: no *_fuzz targets in $BUILD_DIR/tests/fuzz" >&2
  exit 1
fi

# Any UBSan report stops the target (a failure here), except the one in Debian's RapidJSON
# header listed in tests/fuzz/ubsan.supp. Long runs by hand: set the same UBSAN_OPTIONS.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/ubsan.supp:halt_on_error=1:print_stacktrace=1}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$BUILD_DIR/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
for t in "${targets[@]}"; do
  target=$(basename "$t")
  if [[ -n "${FUZZ_TARGETS:-}" && " $FUZZ_TARGETS " != *" $target "* ]]; then continue; fi
  name=${target%_fuzz}
  corpus="$work/corpus-$name"
  mkdir -p "$corpus"
  if [[ -d "tests/fuzz/corpus/$name" ]]; then cp -R "tests/fuzz/corpus/$name/." "$corpus/"; fi
  args=(-max_total_time="$FUZZ_SECONDS" -print_final_stats=1 -artifact_prefix="$artifacts/$name-")
  if [[ -f "tests/fuzz/$name.dict" ]]; then args+=(-dict="tests/fuzz/$name.dict"); fi
  echo "== $target: ${FUZZ_SECONDS}s, $(find "$corpus" -type f | wc -l) seed inputs"
  # A hard wall-clock bound too, so a target that stalls cannot hang CI.
  if timeout --kill-after=10 $((FUZZ_SECONDS + 120)) "$t" "${args[@]}" "$corpus" >"$work/$name.log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$work/$name.log" | sed 's/^/   /' || true
    echo "   ok"
  else
    echo "FAIL: $target (last lines of its log; crash input in $artifacts/)"
    tail -40 "$work/$name.log"
    status=1
  fi
done
exit $status
