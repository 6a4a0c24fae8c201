#!/usr/bin/env bash
# Regenerates app/link_order.txt: the functions a running alertd uses, in the order the linker
# lays them out (see the file's header and docs/performance.md, "Code a running daemon uses").
# Runs the daemon benchmark's workload (tests/bench/daemon: fake datasource and Alertmanager,
# every alert firing) under callgrind and records what ran, in this order:
#   1. rounds of the 1k size (10 groups x 10 rules x 10 series): alerting rules, notifications
#      (after start-up, which is left out);
#   2. what remote write and recording rules add (a second run with both);
#   3. what rounds of the 10k size (10 x 100 x 10) add;
#   4. what scraping /metrics adds, then reading /api/v1/rules, /api/v1/alerts, /api/v1/groups.
# Needs valgrind and python3; takes about five minutes.
#   BIN   the alertd to profile (default: build/app/alertd, built if missing)
#   PORT  first of nine local ports to use (default 18760)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/app/alertd}
PORT=${PORT:-18760}
INTERVAL=2
[[ -x "$BIN" ]] || ./scripts/build.sh >/dev/null
command -v valgrind >/dev/null || { echo "link-order.sh: valgrind not found" >&2; exit 1; }
BIN=$(readlink -f "$BIN")
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

bench=tests/bench/daemon
python3 "$bench/gen_rules.py" 10 10 10 >"$tmp/alerts.yml"
cat >"$tmp/recording.yml" <<'EOF'
groups:
  - name: recording
    rules:
      - record: bench:instances:count
        expr: 'bench_k10{rule="rec_a"}'
        labels:
          source: link-order
      - record: bench:load:sum
        expr: 'bench_k10{rule="rec_b"}'
EOF

# run NAME PORT EXTRA_FLAGS...: starts alertd under callgrind (instrumentation off) with its
# fakes on PORT+1 and PORT+2, and waits until it has evaluated for two intervals.
run() {
  local name=$1 port=$2
  shift 2
  python3 "$bench/fakes.py" ds $((port + 1)) >/dev/null 2>&1 &
  pids+=($!)
  python3 "$bench/fakes.py" am $((port + 2)) >/dev/null 2>&1 &
  pids+=($!)
  sleep 1
  valgrind --tool=callgrind --instr-atstart=no --demangle=no \
    --callgrind-out-file="$tmp/$name.%p" "$BIN" \
    -datasource.url=http://127.0.0.1:$((port + 1)) -notifier.url=http://127.0.0.1:$((port + 2)) \
    -evaluationInterval=${INTERVAL}s -rule.evalDelay=0s -group.maxStartDelay=1s \
    -httpListenAddr=127.0.0.1:$port "$@" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do
    curl -sf "127.0.0.1:$port/-/healthy" >/dev/null 2>&1 && break
    sleep 1
  done
  sleep $((2 * INTERVAL + 2))
  vg=$(pgrep -f "callgrind-out-file=$tmp/$name" | head -1)
}

# profile STEP SECONDS [COMMAND...]: instructions counted for SECONDS while COMMAND runs each
# second, dumped as the STEP-th part of the run's output.
profile() {
  local seconds=$2
  shift 2
  callgrind_control -i on "$vg" >/dev/null 2>&1
  for _ in $(seq 1 "$seconds"); do
    if (($# > 0)); then "$@" >/dev/null 2>&1 || true; fi
    sleep 1
  done
  callgrind_control -d "$vg" >/dev/null 2>&1
  callgrind_control -i off "$vg" >/dev/null 2>&1
}

part() { ls "$tmp"/"$1".*."$2" 2>/dev/null | head -1; }

run alerts "$PORT" -rule="$tmp/alerts.yml"
# 25 rounds: past the 20 a rule's update history holds, so the ring's wrap-around is in.
profile 1 $((25 * INTERVAL))
profile 2 6 curl -s "127.0.0.1:$PORT/metrics"
api() {
  for p in api/v1/rules api/v1/alerts api/v1/groups; do curl -s "127.0.0.1:$PORT/$p" >/dev/null; done
}
profile 3 4 api
kill "$vg"
run recording $((PORT + 3)) -rule="$tmp/alerts.yml" -rule="$tmp/recording.yml" \
  -remoteWrite.url=http://127.0.0.1:$((PORT + 5)) -remoteWrite.flushInterval=1s
profile 1 $((10 * INTERVAL))
kill "$vg"
# The 10k size: its rounds fill several POSTs, supersede queued notifications and trim the
# heap, which the 1k rounds above do not.
python3 "$bench/gen_rules.py" 10 100 10 >"$tmp/alerts10k.yml"
INTERVAL=10
run alerts10k $((PORT + 6)) -rule="$tmp/alerts10k.yml"
profile 1 $((8 * INTERVAL))
kill "$vg"
sleep 2

python3 scripts/link_order.py "$BIN" app/link_order.txt "$(part alerts 1)" \
  "$(part recording 1)" "$(part alerts10k 1)" "$(part alerts 2)" "$(part alerts 3)"
