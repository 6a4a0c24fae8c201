#!/usr/bin/env bash
# -remoteRead.url restore against real Prometheus. Prometheus evaluates the same alerting rule
# (for: 1h) and so keeps an ALERTS_FOR_STATE series whose value is the alert's activeAt. alertd
# starts later with `for: 4s`, -remoteRead.url pointing at Prometheus and -disableAlertgroupLabel
# (Prometheus' series carry no alertgroup): its first round already finds the alert firing,
# with Prometheus' activeAt, instead of pending for 4 s.
#   usage: restore_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init restore

PROM_PORT=$("$PEERS" free-port)
ALERTD_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom"
cat >"$T/prom/alerts.yml" <<'YML'
groups:
  - name: restore
    rules:
      - alert: Restored
        expr: vector(1)
        for: 1h
        labels: {severity: page}
YML
cat >"$T/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ['$T/prom/alerts.yml']
YML
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
P="http://127.0.0.1:$PROM_PORT"

for_state() {  # the ALERTS_FOR_STATE value Prometheus holds now, or empty
  curl -fsS "$P/api/v1/query" --data-urlencode 'query=ALERTS_FOR_STATE{alertname="Restored"}' |
    $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
has_for_state() { [ -n "$(for_state)" ]; }
wait_for 30 "ALERTS_FOR_STATE in Prometheus" has_for_state
active=$(for_state)
sleep 5  # older than alertd's `for: 4s`

cat >"$T/rules.yml" <<'YML'
groups:
  - name: restore
    interval: 10s
    # Unaligned: with alignment the round's time is rounded down to the 10 s grid, up to 10 s
    # before now, where activeAt (5 s old) may not yet be 4 s in the past.
    eval_alignment: false
    rules:
      - alert: Restored
        expr: vector(1)
        for: 4s
        labels: {severity: page}
YML
"$ALERTD" -rule="$T/rules.yml" -datasource.url="$P" -notifier.blackhole \
  -remoteRead.url="$P" -disableAlertgroupLabel -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
  -rule.evalDelay=0s -group.maxStartDelay=1s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
A="http://127.0.0.1:$ALERTD_PORT"
wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"
evaluated() {
  curl -fsS "$A/metrics" | awk '$1 ~ /^vmalert_iteration_total/ {print $2}' | grep -q '^[1-9]'
}
wait_for 10 "the first round" evaluated
# With a 10 s interval, only one round has run: the alert fired on it.
curl -fsS "$A/api/v1/alerts" | $PY -c '
import json, sys, datetime
want = float(sys.argv[1])
a = [x for x in json.load(sys.stdin)["data"]["alerts"] if x["name"] == "Restored"]
assert a, "no alert"
assert a[0]["state"] == "firing", a[0]
assert a[0]["restored"] is True, a[0]
got = datetime.datetime.fromisoformat(a[0]["activeAt"].replace("Z", "+00:00")).timestamp()
assert abs(got - want) < 1.0, (got, want)
' "$active" || fail "restored alert: $(curl -fsS "$A/api/v1/alerts")"
grep -q "restored the activeAt of 1 alert" "$T/alertd.log" || fail "restore not logged"
echo "restore: alert firing on the first round with activeAt $active from Prometheus"
