#!/usr/bin/env bash
# Fault matrix, alertd's own port (docs/faults.md), all at once for 12 s (port_attacker.py):
# 1,100 idle connections kept open (each reopened when closed; more than the server's cap of
# min(1024, fd limit / 2), so silent ones must be evicted), a POST with a 100 MB body, 20
# slowloris connections (a header byte every 0.5 s). Meanwhile /-/healthy answers every
# second within 2 s, /api/v1/rules answers, the group keeps its 1 s interval with no missed
# round, the 100 MB body gets 413 after ~1 MiB, every slowloris connection is closed by the
# 5 s header deadline, and alertd's VmHWM stays under 100 MB.
#   usage: faults_server_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init faults-server
MAX_HWM_KB=$((100 * 1024))
SECS=12

cat >"$T/rules.yml" <<'YML'
groups:
  - name: steady
    interval: 1s
    rules:
      - alert: Steady
        expr: vector(1)
YML
A_PORT=$("$PEERS" free-port)
A="http://127.0.0.1:$A_PORT"
DEAD="http://127.0.0.1:$("$PEERS" free-port)"
"$ALERTD" -rule="$T/rules.yml" -datasource.url="$DEAD" -notifier.blackhole \
  -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
  -datasource.queryTimeout=1s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
wait_for 10 "alertd ready" curl -fs -o /dev/null "$A/-/ready"
metric() {
  curl -fsS --max-time 2 "$A/metrics" | awk -v n="$1" '{ split($1, p, "{") } p[1] == n && !found { print $2; found = 1 }'
}
first_round() { [ "$(metric vmalert_iteration_total)" -ge 1 ] 2>/dev/null; }
wait_for 10 "first round" first_round
iter0=$(metric vmalert_iteration_total)
t0=$(date +%s.%N)

$PY "$HERE/port_attacker.py" "$A_PORT" "$SECS" 1100 20 >"$T/attack.json" 2>"$T/attack.log" &
ATTACK_PID=$!
it_track "$ATTACK_PID"
sleep 2  # let the connections pile up
worst=0
while kill -0 "$ATTACK_PID" 2>/dev/null; do
  took=$(curl -fsS --max-time 2 -o /dev/null -w '%{time_total}' "$A/-/healthy") ||
    fail "/-/healthy did not answer within 2 s under attack: $(cat "$T/attack.log")"
  curl -fsS --max-time 2 -o /dev/null "$A/api/v1/rules" || fail "/api/v1/rules did not answer under attack"
  worst=$($PY -c "print(max($worst, $took))")
  sleep 1
done
wait "$ATTACK_PID" || fail "the attacker failed: $(cat "$T/attack.log")"
[ ! -s "$T/attack.log" ] || fail "the attacker reported errors: $(cat "$T/attack.log")"
iter1=$(metric vmalert_iteration_total)
missed=$(metric vmalert_iteration_missed_total)
secs=$($PY -c "print('%.1f' % ($(date +%s.%N) - $t0))")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$ALERTD_PID/status")
$PY - "$T/attack.json" <<PY || fail "attack results: $(cat "$T/attack.json")"
import json, sys
a = json.load(open(sys.argv[1]))
print("attack:", a)
assert a["idle_open_max"] >= 1100, "never held 1,100 idle connections"
assert a["idle_closed_by_server"] >= 1000, "idle connections not closed by the 5 s header deadline"
assert a["big_status"].startswith("HTTP/1.1 413"), a["big_status"]
assert a["big_sent_bytes"] < 100 * 1024 * 1024, "the whole 100 MB body was read"
assert a["slow_closed"] == 20, "slowloris connections left open"
assert a["slow_closed_after_max"] < 8, "slowloris held past the 5 s header deadline"
rounds = $iter1 - $iter0
assert rounds >= 0.8 * $secs - 1, "%d rounds in %ss" % (rounds, "$secs")
assert "${missed:-0}" == "0", "missed rounds: ${missed:-0}"
assert $hwm < $MAX_HWM_KB, "VmHWM $hwm kB"
PY
kill -0 "$ALERTD_PID" || fail "alertd died"
# The 100 MB body and the 1,100 connections hit their limits: each counted under its name.
curl -fsS "$A/metrics" >"$T/metrics.txt"
for limit in request_body connections; do
  hits=$(awk -v l="alertd_limit_hits_total{limit=\"$limit\"}" '$1 == l { print $2 }' "$T/metrics.txt")
  [ "${hits:-0}" -ge 1 ] || fail "alertd_limit_hits_total{limit=\"$limit\"} is ${hits:-absent}"
done
echo "faults_server: 1,100 idle + 100 MB body + 20 slowloris for ${secs}s: /-/healthy worst" \
  "${worst}s, $((iter1 - iter0)) rounds, none missed, VmHWM ${hwm} kB"
