#!/usr/bin/env bash
# Fault matrix, Alertmanager (docs/faults.md): one alertd sending to five Alertmanagers, each
# with its own fault, with -rule.resendDelay=60s so that no resend papers over a lost send:
#   down    a real Alertmanager not running at alertd's start, started 4 s later;
#   hang    a real Alertmanager SIGSTOPped for 6 s;
#   flap    fake_alertmanager.py killed (SIGKILL) and restarted three times, 1.5 s apart (it
#           keeps what it accepted in a file: a real Alertmanager keeps alerts in memory only,
#           so a restart would lose what alertd had delivered, through no fault of alertd's);
#   5xx     fake_alertmanager.py answering 503 for the first ~9 s;
#   slow    fake_alertmanager.py answering every POST after 1.5 s (send timeout 3 s).
# During the faults one alert starts firing (Late) and one resolves (Gone: its rule removed by
# a reload). Once every Alertmanager is healthy, each must hold every alert's latest state:
# Steady and Late active, Gone not active (the fakes: the latest state received). Meanwhile the
# group keeps its 1 s interval with no missed round, nothing is dropped, VmHWM < 100 MB.
#   usage: faults_alertmanager_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init faults-am
MAX_HWM_KB=$((100 * 1024))

DS_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
declare -A PORT
for am in down hang flap 5xx slow; do PORT[$am]=$("$PEERS" free-port); done
A="http://127.0.0.1:$A_PORT"
$PY "$HERE/fake_datasource.py" "$DS_PORT" >"$T/fakeds.log" 2>&1 &
it_track $!
touch "$T/5xx.fail"
$PY "$HERE/fake_alertmanager.py" "${PORT[5xx]}" "$T/5xx.json" "$T/5xx.fail" 0 >"$T/fake5xx.log" 2>&1 &
it_track $!
$PY "$HERE/fake_alertmanager.py" "${PORT[slow]}" "$T/slow.json" "$T/none" 1.5 >"$T/fakeslow.log" 2>&1 &
it_track $!
flap_start() {
  $PY "$HERE/fake_alertmanager.py" "${PORT[flap]}" "$T/flap.json" "$T/none" 0 >>"$T/fakeflap.log" 2>&1 &
  FLAP_PID=$!
  it_track "$FLAP_PID"
}
flap_stop() { kill -KILL "$FLAP_PID"; wait "$FLAP_PID" 2>/dev/null || true; }
flap_start
mkdir -p "$T/am" "$T/amdown"
"$PEERS" start-alertmanager "$T/am" "${PORT[hang]}" >/dev/null
HANG_PID=$(cat "$T/am/alertmanager.pid")
trap 'kill -CONT "$HANG_PID" 2>/dev/null || true; "$PEERS" stop "$T/amdown/alertmanager.pid" || true; _it_cleanup' EXIT
wait_for 10 "fake datasource up" curl -fs -o /dev/null "http://127.0.0.1:$DS_PORT/"

rules() {
  {
    echo "groups:"
    echo "  - name: am-faults"
    echo "    interval: 1s"
    echo "    rules:"
    local r
    for r in "$@"; do printf '      - alert: %s\n        expr: vector(1)\n' "$r"; done
  } >"$T/rules.yml.tmp"
  mv "$T/rules.yml.tmp" "$T/rules.yml"
}
rules Steady Gone
urls=""
for am in down hang flap 5xx slow; do urls+="${urls:+,}http://127.0.0.1:${PORT[$am]}"; done
"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$DS_PORT" -notifier.url="$urls" \
  -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
  -rule.resendDelay=60s -notifier.sendTimeout=3s -notifier.retryMinInterval=500ms \
  -notifier.retryMaxInterval=2s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
wait_for 10 "alertd ready" curl -fs -o /dev/null "$A/-/ready"
metric() {  # NAME [LABEL_SUBSTRING]
  curl -fsS --max-time 2 "$A/metrics" | awk -v n="$1" -v l="${2:-}" \
    '{ split($1, p, "{") } p[1] == n && index($1, l) && !found { print $2; found = 1 }'
}
am_has() { curl -fsS --max-time 2 "http://127.0.0.1:$1/api/v2/alerts" 2>/dev/null | grep -q "\"alertname\":\"$2\""; }
wait_for 15 "Gone at the hanging Alertmanager before it hangs" am_has "${PORT[hang]}" Gone
wait_for 15 "Gone at the flapping Alertmanager before it flaps" grep -q Gone "$T/flap.json"
iter0=$(metric vmalert_iteration_total)
t0=$(date +%s.%N)

# ---- the faults ---------------------------------------------------------------------------
kill -STOP "$HANG_PID"
flap_stop
rules Steady Late
kill -HUP "$ALERTD_PID"
sleep 1.5
flap_start
sleep 1.5
flap_stop
"$PEERS" start-alertmanager "$T/amdown" "${PORT[down]}" >/dev/null
sleep 1.5
flap_start
sleep 1.5
flap_stop
kill -CONT "$HANG_PID"
sleep 1.5
flap_start
sleep 1.5
rm "$T/5xx.fail"
healthy_at=$(date +%s.%N)

# ---- every Alertmanager ends with every alert's latest state ------------------------------
all_delivered() {
  $PY - "$T" "${PORT[down]}" "${PORT[hang]}" <<'PY' >"$T/delivered.txt" 2>&1
import json, sys, urllib.request
t, ports = sys.argv[1], dict(zip(["down", "hang"], sys.argv[2:]))
want = {"Steady": "firing", "Late": "firing", "Gone": "resolved"}
ok = True
for name, port in ports.items():
    active = {a["labels"]["alertname"] for a in json.load(urllib.request.urlopen(
        "http://127.0.0.1:%s/api/v2/alerts" % port, timeout=2)) if a["status"]["state"] == "active"}
    got = {n: ("firing" if n in active else "resolved") for n in want}
    ok &= got == want
    print(name, got)
for name in ("flap", "5xx", "slow"):
    try:
        got = json.load(open("%s/%s.json" % (t, name)))["alerts"]
    except OSError:
        got = {}
    ok &= got == want
    print(name, got)
sys.exit(0 if ok else 1)
PY
}
wait_for 30 "every Alertmanager holds every latest state" all_delivered
took=$($PY -c "print('%.1f' % ($(date +%s.%N) - $healthy_at))")
cat "$T/delivered.txt"
iter1=$(metric vmalert_iteration_total)
missed=$(metric vmalert_iteration_missed_total)
secs=$($PY -c "print('%.1f' % ($(date +%s.%N) - $t0))")
rounds=$((iter1 - iter0))
$PY -c "import sys; sys.exit(0 if $rounds >= 0.8 * $secs - 1 else 1)" ||
  fail "evaluation slowed down: $rounds rounds in ${secs}s"
[ "${missed:-0}" = 0 ] || fail "$missed missed rounds"
curl -fsS "$A/metrics" >"$T/metrics.txt"
dropped=$(awk '$1 ~ /^vmalert_alerts_dropped_total/ {s += $2} END {print s + 0}' "$T/metrics.txt")
[ "$dropped" = 0 ] || fail "$dropped alerts dropped"
queue_hits=$(awk '$1 == "alertd_limit_hits_total{limit=\"notifier_queue\"}" { print $2 }' "$T/metrics.txt")
[ "$queue_hits" = 0 ] || fail "notifier queue limit hit ${queue_hits:-absent} times (want a series at 0)"
errors=$(awk '$1 ~ /^vmalert_alerts_send_errors_total/ {s += $2} END {print s + 0}' "$T/metrics.txt")
[ "$errors" -gt 0 ] || fail "no send errors counted"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$ALERTD_PID/status")
[ "$hwm" -lt "$MAX_HWM_KB" ] || fail "VmHWM ${hwm} kB"
echo "faults_alertmanager: down/hang/flap/5xx/slow: every latest state delivered ${took}s after" \
  "the last fault ended; $rounds rounds in ${secs}s, none missed; $errors failed sends" \
  "retried, none dropped; VmHWM ${hwm} kB"
