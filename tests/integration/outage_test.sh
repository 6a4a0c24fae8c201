#!/usr/bin/env bash
# A datasource outage longer than 4 intervals against real Prometheus and Alertmanager.
# With -rule.keepFiringOnError=1m the firing alert is re-sent while queries fail: Alertmanager
# never resolves it (its webhook sees no "resolved"). With the setting at 0 (vmalert's
# behaviour) the alert's endsAt passes during the outage and Alertmanager resolves it.
# Evaluation keeps its interval through the outage (rule errors are counted every round).
#   usage: outage_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PEERS="$HERE/peers.sh"
PY=python3
T=$(mktemp -d /tmp/alertd-outage.XXXXXX)
ALERTD_PID=""
HOOK_PID=""
cleanup() {
  [ -n "$ALERTD_PID" ] && kill -KILL "$ALERTD_PID" 2>/dev/null || true
  [ -n "$HOOK_PID" ] && kill "$HOOK_PID" 2>/dev/null || true
  "$PEERS" stop "$T/prom/prometheus.pid" || true
  "$PEERS" stop "$T/am/alertmanager.pid" || true
  if [ "${KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$T"/alertd*.log; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done
  echo "--- webhook" >&2; cat "$T"/hook*.jsonl >&2 || true
  exit 1
}
wait_for() {  # SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2 n=0
  shift 2
  until "$@"; do
    n=$((n + 1))
    [ "$n" -lt $((secs * 4)) ] || fail "timed out after ${secs}s waiting for: $what"
    sleep 0.25
  done
}

PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
HOOK_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am"
cat >"$T/hook.py" <<'PY'
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(sys.argv[2] + "/hook-" + body["commonLabels"]["alertname"] + ".jsonl", "a") as f:
            f.write(json.dumps({"status": body["status"]}) + "\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
$PY "$T/hook.py" "$HOOK_PORT" "$T" >"$T/hook.log" 2>&1 &
HOOK_PID=$!
cat >"$T/am/alertmanager.yml" <<YML
route: {receiver: hook, group_by: [alertname], group_wait: 1s, group_interval: 1s, repeat_interval: 1h}
receivers:
  - name: hook
    webhook_configs: [{url: 'http://127.0.0.1:$HOOK_PORT/', send_resolved: true}]
YML
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

cleanup_pids() { kill -KILL $HELD_PID $PLAIN_PID 2>/dev/null || true; }
trap 'cleanup_pids; cleanup' EXIT
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
