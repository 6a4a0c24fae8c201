#!/usr/bin/env bash
# Delivery to two real Alertmanagers (notifier/delivery_queue.hpp), with -rule.resendDelay=60s
# so that nothing is papered over by a resend:
#   A. AM2 hangs (SIGSTOP) for several 1 s rounds while one alert starts firing (Late) and one
#      resolves (Gone, its rule removed by a reload): AM1 receives both changes at once (within
#      4 s of startsAt, below the 5 s -notifier.sendTimeout a blocked AM1 would have waited),
#      evaluation keeps its interval, AM2's queue grows; after SIGCONT AM2 holds every alert's
#      latest state (Late listed, Gone no longer listed although its last firing notice had
#      endsAt 4 minutes ahead).
#   B. AM2 is stopped, an alert starts firing (Later), AM2 starts again: the alert reaches it
#      within seconds (vmalert: not before the next resend, 60 s later).
# Conditions are waited on with deadlines in seconds.
#   usage: delivery_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init delivery

PROM_PORT=$("$PEERS" free-port)
AM1_PORT=$("$PEERS" free-port)
AM2_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am" "$T/am2"
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM1_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am2" "$AM2_PORT" >/dev/null
AM1="http://127.0.0.1:$AM1_PORT"
AM2="http://127.0.0.1:$AM2_PORT"
A="http://127.0.0.1:$A_PORT"
AM2_PID=$(cat "$T/am2/alertmanager.pid")
am2_cleanup() { kill -CONT "$AM2_PID" 2>/dev/null || true; "$PEERS" stop "$T/am2/alertmanager.pid" || true; }

rules() {  # the group's rules, one alert name per argument (Gone, Late, ... fire at once)
  {
    echo "groups:"
    echo "  - name: delivery"
    echo "    interval: 1s"
    echo "    rules:"
    local r
    for r in "$@"; do
      printf '      - alert: %s\n        expr: vector(1)\n        annotations: {note: "%s"}\n' "$r" "$r"
    done
  } >"$T/rules.yml.tmp"
  mv "$T/rules.yml.tmp" "$T/rules.yml"
}
rules Steady Gone

"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="$AM1,$AM2" -httpListenAddr="127.0.0.1:$A_PORT" \
  -rule.evalDelay=0s -group.maxStartDelay=1s -rule.resendDelay=60s \
  -notifier.sendTimeout=5s -notifier.retryMinInterval=500ms -notifier.retryMaxInterval=2s \
  >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
"$PEERS" wait-ready "$A/-/ready" 20 || fail "alertd not ready"

# am_alerts URL: "name state" per alert Alertmanager lists (resolved ones are not listed).
am_alerts() { curl -fsS --max-time 2 "$1/api/v2/alerts" | $PY -c '
import json, sys
for a in json.load(sys.stdin):
    print(a["labels"]["alertname"], a["status"]["state"])'; }
am_has() { am_alerts "$1" >"$T/am.out" 2>/dev/null && grep -q "^$2 " "$T/am.out"; }
am_lacks() { am_alerts "$1" >"$T/am.out" 2>/dev/null && ! grep -q "^$2 " "$T/am.out"; }
metric() {  # NAME [LABEL_SUBSTRING]: the value of the first matching sample
  curl -fsS --max-time 2 "$A/metrics" | awk -v n="$1" -v l="${2:-}" \
    '{ split($1, p, "{") } p[1] == n && index($1, l) && !found { print $2; found = 1 }'
}
# delay NAME AM: seconds between the alert's startsAt and Alertmanager's first updatedAt.
delay() { curl -fsS --max-time 2 "$2/api/v2/alerts?filter=alertname%3D%22$1%22" | $PY -c '
import calendar, json, re, sys, time
def t(s):  # RFC 3339 in UTC, as Alertmanager writes it
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$", s)
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) + float(m.group(2) or 0)
a = json.load(sys.stdin)[0]
print("%.2f" % (t(a["updatedAt"]) - t(a["startsAt"])))'; }

wait_for 20 "Steady and Gone at AM1" am_has "$AM1" Gone
wait_for 10 "Steady and Gone at AM2" am_has "$AM2" Gone
am_has "$AM1" Steady && am_has "$AM2" Steady || fail "Steady missing"

# ---- A. AM2 hangs for several rounds -----------------------------------------------------------
kill -STOP "$AM2_PID"
trap 'am2_cleanup; _it_cleanup' EXIT
iter0=$(metric vmalert_iteration_total)
t0=$(date +%s.%N)
rules Steady Late
kill -HUP "$ALERTD_PID"
wait_for 15 "Late at AM1 while AM2 hangs" am_has "$AM1" Late
wait_for 15 "Gone resolved at AM1 while AM2 hangs" am_lacks "$AM1" Gone
d1=$(delay Late "$AM1")
$PY -c "import sys; sys.exit(0 if $d1 < 4.0 else 1)" ||
  fail "AM1 got Late ${d1}s after it fired: held back by the hanging AM2"
wait_for 15 "AM2's queue holds the changes" \
  bash -c "[ \"\$(curl -fsS $A/metrics | awk '\$1 ~ /^vmalert_alerts_queue_size/ && \$1 ~ /$AM2_PORT/ {print \$2}')\" != 0 ]"
am2_shows_error() { curl -fsS --max-time 2 "$A/api/v1/notifiers" | $PY -c '
import json, sys
ts = json.load(sys.stdin)["data"]["notifiers"][0]["targets"]
am2 = [t for t in ts if ":'"$AM2_PORT"'/" in t["address"]][0]
sys.exit(0 if am2["lastError"] != "" and am2["queueLength"] + am2["inFlight"] >= 2 else 1)'; }
wait_for 20 "/api/v1/notifiers shows AM2's error and queue" am2_shows_error
sleep 3  # a few more rounds with AM2 hanging
t1=$(date +%s.%N)
iter1=$(metric vmalert_iteration_total)
missed=$(metric vmalert_iteration_missed_total)
$PY -c "
import sys
rounds, secs = $iter1 - $iter0, $t1 - $t0
print('rounds %d in %.1fs' % (rounds, secs))
sys.exit(0 if rounds >= 0.8 * secs - 1 else 1)" || fail "evaluation slowed down while AM2 hung"
[ "${missed:-0}" = 0 ] || fail "$missed missed iterations while AM2 hung"
kill -CONT "$AM2_PID"
wait_for 15 "Late at AM2 after it came back" am_has "$AM2" Late
wait_for 15 "Gone resolved at AM2 after it came back" am_lacks "$AM2" Gone
am_has "$AM2" Steady || fail "AM2 lost Steady"
wait_for 10 "AM2's queue drained" \
  bash -c "[ \"\$(curl -fsS $A/metrics | awk '\$1 ~ /^vmalert_alerts_queue_size/ && \$1 ~ /$AM2_PORT/ {print \$2}')\" = 0 ]"
[ "$(metric vmalert_alerts_dropped_total "$AM2_PORT")" = 0 ] || fail "alerts dropped for AM2"
echo "A: AM1 got Late ${d1}s after it fired; AM2 got the latest states after hanging"

# ---- B. AM2 restarts while an alert starts firing --------------------------------------------------
"$PEERS" stop "$T/am2/alertmanager.pid"
rules Steady Late Later
kill -HUP "$ALERTD_PID"
wait_for 15 "Later at AM1 while AM2 is down" am_has "$AM1" Later
sleep 4  # several rounds with AM2 down: connections refused, retried
"$PEERS" start-alertmanager "$T/am2" "$AM2_PORT" >/dev/null
AM2_PID=$(cat "$T/am2/alertmanager.pid")
back=$(date +%s.%N)
wait_for 15 "Later at AM2 after its restart (resendDelay=60s)" am_has "$AM2" Later
took=$($PY -c "print('%.1f' % ($(date +%s.%N) - $back))")
errors=$(metric vmalert_alerts_send_errors_total "$AM2_PORT")
[ "${errors:-0}" != 0 ] || fail "no send errors counted for AM2"
echo "delivery: AM1 undelayed by a hanging AM2 (${d1}s); AM2 received every latest state after" \
  "a hang, and an alert that fired while it was down ${took}s after its restart"
