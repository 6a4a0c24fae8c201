#!/usr/bin/env bash
# -state.path against real Prometheus and Alertmanager: an alert fires (for: 6s), alertd is
# killed with SIGKILL and started again. The alert is firing again at once with the same
# activeAt, Alertmanager keeps the same startsAt, and its webhook receiver never gets a
# "resolved" notification (without the state file the alert would be pending for 6 s after the
# restart while its endsAt, 4 s after the last send, passes: resolved, then firing again).
# Then a corrupt state file is reported and ignored: alertd starts and evaluates as usual.
#   usage: state_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init state

PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am"
it_webhook

"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null

cat >"$T/rules.yml" <<'YML'
groups:
  - name: state
    interval: 1s
    rules:
      - alert: Sticky
        expr: vector(1)
        for: 6s
        annotations:
          summary: "still here"
YML

start_alertd() {  # LOG
  ALERTD_PORT=$("$PEERS" free-port)
  "$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
    -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
    -rule.evalDelay=0s -group.maxStartDelay=1s -state.path="$T/alerts.state" >"$T/$1" 2>&1 &
  ALERTD_PID=$!
  it_track "$ALERTD_PID"
  A="http://127.0.0.1:$ALERTD_PORT"
  wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"
}
state_of() {  # -> "state activeAt" of Sticky in alertd
  curl -fsS "$A/api/v1/alerts" | $PY -c '
import json, sys
a = [x for x in json.load(sys.stdin)["data"]["alerts"] if x["name"] == "Sticky"]
print(a[0]["state"], a[0]["activeAt"]) if a else print("none")'
}
is_firing() { state_of | grep -q '^firing '; }
am_starts() {
  curl -fsS "http://127.0.0.1:$AM_PORT/api/v2/alerts?filter=alertname%3D%22Sticky%22" |
    $PY -c 'import json,sys; a=json.load(sys.stdin); print(a[0]["startsAt"] if a else "")'
}
hook_has() { grep -q "\"$1\"" "$T/hook.jsonl"; }

start_alertd alertd1.log
wait_for 20 "Sticky firing in alertd" is_firing
wait_for 10 "the firing notification at the webhook" hook_has firing
before=$(state_of)
starts=$(am_starts)
[ -n "$starts" ] || fail "Sticky not in Alertmanager"
wait_for 5 "the state file" test -s "$T/alerts.state"

kill -KILL "$ALERTD_PID"
wait "$ALERTD_PID" 2>/dev/null || true
start_alertd alertd2.log
grep -q "restored 1 pending or firing alert" "$T/alertd2.log" || fail "no restore logged"
is_firing || fail "Sticky not firing right after the restart: $(state_of)"
[ "$(state_of)" = "$before" ] || fail "activeAt changed: $before -> $(state_of)"
# Longer than the 4 s endsAt and the 6 s 'for' together.
sleep 12
is_firing || fail "Sticky stopped firing"
[ "$(am_starts)" = "$starts" ] || fail "startsAt in Alertmanager changed: $starts -> $(am_starts)"
if hook_has resolved; then fail "Alertmanager resolved the alert across the restart"; fi
[ "$(grep -c . "$T/hook.jsonl")" = 1 ] || fail "more than one notification: $(cat "$T/hook.jsonl")"

# A corrupt state file is reported and ignored; alertd starts and fires as usual.
kill -KILL "$ALERTD_PID"
wait "$ALERTD_PID" 2>/dev/null || true
printf '{"format":"alertd-state","version":1,"groups":[{"id":"1' >"$T/alerts.state"
start_alertd alertd3.log
grep -q "starting without the saved alert state" "$T/alertd3.log" || fail "corrupt file not reported"
wait_for 20 "Sticky firing again after a corrupt state file" is_firing
echo "state: firing alert kept across kill -9 (startsAt $starts), corrupt file ignored"
