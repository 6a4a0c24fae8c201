#!/usr/bin/env bash
# End to end: real Prometheus scrapes a static target, alertd evaluates an alerting rule
# against it and sends to a real Alertmanager. Asserts, through Alertmanager's
# GET /api/v2/alerts, that the alert arrives with the expected labels and rendered
# annotations, then that it resolves when the condition turns false; also checks alertd's
# /api/v1/alerts, /metrics, health endpoints and a clean SIGTERM shutdown within 5 s.
#   usage: e2e_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init e2e

PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
ALERTD_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am" "$T/target"

write_metrics() {  # sensor a value, sensor b value
  printf 'e2e_temperature_celsius{sensor="a"} %s\ne2e_temperature_celsius{sensor="b"} %s\n' "$1" "$2" \
    >"$T/target/metrics.tmp"
  mv "$T/target/metrics.tmp" "$T/target/metrics"
}
it_scrape_target e2e ""
write_metrics 85.5 1234567
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null

cat >"$T/rules.yml" <<'YML'
groups:
  - name: e2e
    interval: 1s
    labels:
      team: storage
    rules:
      - alert: E2EHot
        expr: e2e_temperature_celsius > 80
        for: 2s
        labels:
          severity: page
        annotations:
          summary: "Sensor {{ $labels.sensor }} is hot"
          description: "{{ $labels.sensor }} reads {{ $value | humanize }}"
YML

# The notifier URL carries secrets (userinfo, a token query argument) that must never be shown,
# and a query string that must stay after /api/v2/alerts (Alertmanager ignores both).
printf 'e2e-file-token\n' >"$T/am.token"
"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="http://e2euser:e2e-pass@127.0.0.1:$AM_PORT/?tenant=e2e&token=e2e-tok" \
  -notifier.bearerTokenFile="$T/am.token" -notifier.headers="X-E2E: 1" \
  -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
  -external.url="http://alertd.test:$ALERTD_PORT" -external.label=cluster=e2e \
  -rule.evalDelay=0s -group.maxStartDelay=1s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"

A="http://127.0.0.1:$ALERTD_PORT"
wait_for 10 "alertd /-/ready" curl -fsS -o /dev/null "$A/-/ready"
[ "$(curl -fsS "$A/-/healthy")" = OK ] || fail "/-/healthy"
# It executed itself once at start (LD_BIND_NOW, docs/deploy.md): same PID, same name.
NAME=$(cat "/proc/$ALERTD_PID/comm")
[ "$NAME" = "$(basename "$ALERTD" | cut -c1-15)" ] || fail "process name after start: $NAME"

am_alerts() { curl -fsS "http://127.0.0.1:$AM_PORT/api/v2/alerts?filter=alertname%3D%22E2EHot%22"; }
has_alerts() {  # expected count
  [ "$(am_alerts | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))')" = "$1" ]
}
wait_for 60 "E2EHot for both sensors in Alertmanager" has_alerts 2

am_alerts | $PY -c '
import json, sys
alerts = {a["labels"]["sensor"]: a for a in json.load(sys.stdin)}
a, b = alerts["a"], alerts["b"]
want = {"alertname": "E2EHot", "alertgroup": "e2e", "severity": "page", "team": "storage",
        "cluster": "e2e", "sensor": "a", "job": "e2e"}
for k, v in want.items():
    assert a["labels"].get(k) == v, (k, a["labels"])
assert "__name__" not in a["labels"], a["labels"]
assert a["annotations"]["summary"] == "Sensor a is hot", a["annotations"]
assert a["annotations"]["description"] == "a reads 85.5", a["annotations"]
assert b["annotations"]["description"] == "b reads 1.235M", b["annotations"]
assert a["generatorURL"].startswith("http://alertd.test:"), a["generatorURL"]
assert "/vmalert/alert?group_id=" in a["generatorURL"], a["generatorURL"]
assert a["status"]["state"] == "active", a["status"]
' || fail "alert content in Alertmanager"

curl -fsS "$A/api/v1/alerts" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success"
firing = [a for a in d["data"]["alerts"] if a["state"] == "firing" and a["name"] == "E2EHot"]
assert len(firing) == 2, d
assert firing[0]["expression"] == "e2e_temperature_celsius > 80"
' || fail "alertd /api/v1/alerts"
curl -fsS "$A/metrics" >"$T/metrics.txt" || fail "GET /metrics"
grep -qE '^vmalert_alerts_firing\{alertname="E2EHot",.*\} 2$' "$T/metrics.txt" \
  || fail "vmalert_alerts_firing in /metrics"
grep -qE '^vmalert_alerts_sent_total\{addr="http://127.0.0.1:'"$AM_PORT"'/api/v2/alerts\?tenant=e2e&token=secret"\} [1-9]' \
  "$T/metrics.txt" || fail "vmalert_alerts_sent_total{addr} in /metrics, redacted"
for secret in e2e-pass e2e-tok e2e-file-token; do
  ! grep -q "$secret" "$T/metrics.txt" "$T/alertd.log" || fail "$secret shown in /metrics or the log"
done

# The condition turns false for sensor a: its alert resolves and leaves Alertmanager's list.
write_metrics 20 1234567
wait_for 30 "E2EHot{sensor=a} resolved in Alertmanager" has_alerts 1
am_alerts | $PY -c '
import json, sys
alerts = json.load(sys.stdin)
assert [a["labels"]["sensor"] for a in alerts] == ["b"], alerts
' || fail "only sensor b still active"
curl -fsS "$A/api/v1/alerts" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert sorted(a["labels"]["sensor"] for a in d["data"]["alerts"]) == ["b"], d
' || fail "alertd lists only sensor b"

# SIGTERM: clean exit within 5 s.
start=$(date +%s%N)
kill -TERM "$ALERTD_PID"
rc=0
wait "$ALERTD_PID" || rc=$?
ALERTD_PID=""
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 0 ] || fail "alertd exited with $rc after SIGTERM"
[ "$elapsed_ms" -lt 5000 ] || fail "shutdown took ${elapsed_ms} ms"
echo "e2e: alert fired, resolved and alertd stopped in ${elapsed_ms} ms"
