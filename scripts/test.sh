#!/usr/bin/env bash
# The whole test suite, as CI runs it (README: "Run the tests"):
#   1. installs the Debian packages (scripts/install-deps.sh),
#   2. builds and runs the unit tests under ASan+UBSan (build-asan/),
#   3. builds the libFuzzer targets with clang and runs each for FUZZ_SECONDS (default 30 here,
#      scripts/fuzz.sh alone: 60),
#   4. builds everything warning-free with -Werror (build/) and runs every CTest test, the
#      integration tests against real Prometheus and Alertmanager included. CTest's summary
#      is the last thing printed.
#   (between 2 and 3: a ThreadSanitizer build of the daemon and its threaded tests)
# Env: SKIP_ASAN=1, SKIP_TSAN=1, SKIP_FUZZ=1 to leave out those steps locally; FUZZ_SECONDS.
# CI=true (set by .ci/run): a test that reports "Skipped" (a missing peer, or ../shared/ absent:
# CTest label "shared") fails the run; on a user's clone such tests skip with a one-line reason.
set -euo pipefail
cd "$(dirname "$0")/.."

# run_ctest BUILD_DIR ARGS...: CTest, and in CI no skipped test.
run_ctest() {
  local dir=$1 log
  shift
  log=$(mktemp)
  local rc=0
  (cd "$dir" && ctest "$@") 2>&1 | tee "$log" || rc=$?
  if [ "${CI:-}" = true ] && grep -q '(Skipped)$' "$log"; then
    echo "CI=true: tests were skipped (listed above); in CI every peer and ../shared/ must be there" >&2
    rc=1
  fi
  rm -f "$log"
  return "$rc"
}
bash scripts/install-deps.sh
echo "== include borders (scripts/check-borders.sh)" >&2
bash scripts/check-borders.sh

if [ "${SKIP_ASAN:-0}" != 1 ]; then
  echo "== ASan+UBSan build and unit tests" >&2
  BUILD_DIR=build-asan BUILD_TYPE=Debug ./scripts/build.sh -DALERTD_SANITIZE=ON -DALERTD_BENCH=OFF \
    -DALERTD_WERROR=ON
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_ctest build-asan --output-on-failure -LE 'integration|deploy' -j2
fi

if [ "${SKIP_TSAN:-0}" != 1 ]; then
  # ThreadSanitizer: the daemon's threads (evaluation loop, HTTP server, per-group query
  # workers, reload, state writer) under the unit tests and the daemon integration tests that
  # reload, restart and survive outages; core's for the label sets' shared pairs.
  echo "== ThreadSanitizer build, unit tests and daemon tests" >&2
  BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo TARGETS="alertd unit_app unit_core unit_net unit_rules" \
    ./scripts/build.sh -DALERTD_TSAN=ON -DALERTD_BENCH=OFF -DALERTD_WERROR=ON
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    run_ctest build-tsan --output-on-failure -R '^(app|core|net|rules):|integration\.(e2e|reload|state|outage)'
fi

if [ "${SKIP_FUZZ:-0}" != 1 ] && [ -x scripts/fuzz.sh ]; then
  echo "== fuzzing, ${FUZZ_SECONDS:-30} s per target" >&2
  # 30 s per target keeps CI's whole run near 40 minutes on 2 cores with a cold ccache; the
  # long runs toward issue 12's 10 million executions are done by hand (docs/performance.md).
  # Every target (rules_file_fuzz's old "ASan blow-up" was yaml-cpp's endless empty-document
  # stream, refused by the loader since a4453bc).
  FUZZ_TARGETS=${FUZZ_TARGETS:-"notifier_payload_fuzz parser_fuzz promql_fuzz relabel_fuzz remote_write_fuzz rules_file_fuzz templates_fuzz"} \
    FUZZ_SECONDS=${FUZZ_SECONDS:-30} ./scripts/fuzz.sh
fi

echo "== release build (-Werror) and every test" >&2
BUILD_DIR=build ./scripts/build.sh -DALERTD_WERROR=ON
run_ctest build --output-on-failure -j2
