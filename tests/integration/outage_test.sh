#!/usr/bin/env bash
# A datasource outage longer than 4 intervals against real Prometheus and Alertmanager.
# With -rule.keepFiringOnError=1m the firing alert is re-sent while queries fail: Alertmanager
# never resolves it (its webhook sees no "resolved"). With the setting at 0 (vmalert's
# behaviour) the alert's endsAt passes during the outage and Alertmanager resolves it.
# Evaluation keeps its interval through the outage (rule errors are counted every round).
#   usage: outage_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init outage

PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am"
it_webhook
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null

start_alertd() {  # NAME KEEP_FIRING_ON_ERROR
  cat >"$T/rules-$1.yml" <<YML
groups:
  - name: outage-$1
    interval: 1s
    rules:
      - alert: $1
        expr: vector(1)
YML
  local port
  port=$("$PEERS" free-port)
  "$ALERTD" -rule="$T/rules-$1.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
    -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$port" \
    -rule.evalDelay=0s -group.maxStartDelay=1s -datasource.queryTimeout=1s \
    -rule.keepFiringOnError="$2" >"$T/alertd-$1.log" 2>&1 &
  echo "$! http://127.0.0.1:$port"
}
hook_has() { grep -q "\"$2\"" "$T/hook-$1.jsonl" 2>/dev/null; }
errors() { curl -fsS "$2/metrics" | awk '$1 == "vmalert_execution_errors_total" {print $2}'; }

read -r HELD_PID HELD <<<"$(start_alertd Held 1m)"
read -r PLAIN_PID PLAIN <<<"$(start_alertd Plain 0s)"

it_track "$HELD_PID"
it_track "$PLAIN_PID"
wait_for 20 "Held firing at the webhook" hook_has Held firing
wait_for 20 "Plain firing at the webhook" hook_has Plain firing

# The outage: 10 s, more than 4 intervals (endsAt is 4 s after each send).
"$PEERS" stop "$T/prom/prometheus.pid"
sleep 10
[ "$(errors Held "$HELD")" -ge 5 ] 2>/dev/null || fail "evaluation did not go on during the outage: $(errors Held "$HELD") errors"
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
sleep 4

if hook_has Held resolved; then fail "keepFiringOnError=1m: Alertmanager resolved the alert"; fi
hook_has Plain resolved || fail "keepFiringOnError=0: expected vmalert's behaviour (resolved)"
curl -fsS "$HELD/api/v1/rules" | $PY -c '
import json, sys
r = json.load(sys.stdin)["data"]["groups"][0]["rules"][0]
assert r["health"] == "ok", r  # healthy again after the outage
' || fail "rule health after the outage"
echo "outage: held alert never resolved; plain alert resolved as vmalert's would"
