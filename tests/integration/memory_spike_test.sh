#!/usr/bin/env bash
# Memory comes back after a spike (issue 12 item 2; docs/faults.md): four groups, each one
# rule against tests/integration/fake_datasource.py, answer one sample per round until armed;
# then each gets one 300 MB answer of distinct series, parsed up to
# -datasource.maxResponseSize=64MiB and refused (four at once: a spike of a few hundred MB).
# Asserts: the spike happened (VmHWM well above the resident memory before it), each group
# counted its refused answer and kept its interval, and within 15 s VmRSS is back within 10%
# of where it was before the spike. Before the spike: API reads leave one allocator arena.
#   usage: memory_spike_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init memory-spike
GROUPS_N=4

DS_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
A="http://127.0.0.1:$A_PORT"
$PY "$HERE/fake_datasource.py" "$DS_PORT" >"$T/fakeds.log" 2>&1 &
it_track $!
wait_for 10 "fake datasource up" curl -fs -o /dev/null "http://127.0.0.1:$DS_PORT/"
{
  echo "groups:"
  for i in $(seq 1 $GROUPS_N); do
    printf '  - name: spike%d\n    interval: 1s\n    rules:\n      - alert: Spike%d\n        expr: fault_spike\n' "$i" "$i"
  done
} >"$T/rules.yml"

"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$DS_PORT" \
  -notifier.blackhole -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s \
  -group.maxStartDelay=1s -datasource.maxResponseSize=64MiB >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"

metric() {  # NAME LABEL_SUBSTRING
  curl -fsS "$A/metrics" |
    awk -v n="$1" -v l="$2" '{ split($1, p, "{") } p[1] == n && index($1, l) && !found { print $2; found = 1 }'
}
status_kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$ALERTD_PID/status"; }
rounds_of_all() {  # MIN: every group has done at least MIN rounds
  local i n
  for i in $(seq 1 $GROUPS_N); do
    n=$(metric vmalert_iteration_total "group=\"spike$i\"")
    [ "${n:-0}" -ge "$1" ] || return 1
  done
}

# Steady state first: a few rounds, the two releases of file pages only startup and the first
# rounds used (app/memory.hpp; their timing would otherwise decide which code pages the
# baseline holds), then a few seconds for the releaser's own check.
wait_for 20 "5 rounds of every group" rounds_of_all 5
file_releases() { curl -fsS "$A/debug/pprof/mallinfo" | awk '$1 == "file_releases" {print $2}'; }
released_twice() { [ "$(file_releases)" -ge 2 ]; }
wait_for 30 "the file pages only startup used released twice" released_twice
# One allocator arena (app/memory.hpp, tune_malloc): API reads on the HTTP thread, several at
# once, allocate from the main heap; glibc would otherwise give that thread an arena of its own.
readers=()
for i in 1 2 3 4; do
  for path in api/v1/rules api/v1/alerts metrics; do
    curl -fsS -o /dev/null "$A/$path" &
    readers+=($!)
  done
done
for pid in "${readers[@]}"; do wait "$pid" || fail "an API read failed"; done
arenas=$(curl -fsS "$A/debug/pprof/malloc_info" | grep -c '<heap nr=')
[ "$arenas" -eq 1 ] || fail "malloc_info shows $arenas arenas after API reads, want 1"
sleep 6
rss0=$(status_kb VmRSS)
hits0=$(metric alertd_limit_hits_total 'limit="response_body"')
curl -fsS -o /dev/null "http://127.0.0.1:$DS_PORT/arm?n=$GROUPS_N"
refused() { [ "$(metric alertd_limit_hits_total 'limit="response_body"')" -ge $((hits0 + GROUPS_N)) ]; }
wait_for 60 "$GROUPS_N answers refused at -datasource.maxResponseSize" refused
hwm=$(status_kb VmHWM)
[ "$hwm" -gt $((rss0 + 64 * 1024)) ] ||
  fail "no spike: VmHWM ${hwm} kB, VmRSS before it ${rss0} kB"
back() { [ "$(status_kb VmRSS)" -le $((rss0 * 110 / 100)) ]; }
wait_for 15 "VmRSS back within 10% of ${rss0} kB (now $(status_kb VmRSS) kB, peak ${hwm} kB)" back
rss1=$(status_kb VmRSS)
grep -q 'response exceeds max size 67108864 bytes' "$T/alertd.log" ||
  fail "the refused answers are not logged with the limit"
missed=$(curl -fsS "$A/metrics" | awk '$1 ~ /^vmalert_iteration_missed_total/ {s += $2} END {print s + 0}')
curl -fsS -o /dev/null "$A/-/healthy" || fail "alertd is not healthy after the spike"
echo "memory_spike: VmRSS ${rss0} kB before, peak ${hwm} kB, ${rss1} kB after" \
  "($(( (rss1 - rss0) * 100 / rss0 ))% over); ${missed} rounds missed (${SECONDS}s)"
