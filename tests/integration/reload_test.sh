#!/usr/bin/env bash
# Reload against real Prometheus and Alertmanager: SIGHUP with one annotation changed keeps the
# alert (same startsAt in Alertmanager, new annotation); a removed rule's alert is resolved at
# once (gone from Alertmanager long before its endsAt would pass); a broken file keeps the old
# configuration running with vmalert_config_last_reload_successful 0; POST /-/reload works too.
#   usage: reload_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init reload

PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
ALERTD_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am"
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null

# interval 3s: a firing alert is sent with endsAt = now + 12s, so a rule removal that merely
# stopped sending would leave the alert active in Alertmanager for up to 12 s.
write_rules() {  # summary of Keep, include Gone (1/0)
  {
    cat <<YML
groups:
  - name: reload
    interval: 3s
    rules:
      - alert: Keep
        expr: vector(1)
        annotations:
          summary: "$1"
YML
    if [ "$2" = 1 ]; then
      cat <<'YML'
      - alert: Gone
        expr: vector(2)
YML
    fi
  } >"$T/rules.yml.tmp"
  mv "$T/rules.yml.tmp" "$T/rules.yml"
}
write_rules first 1

"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
  -rule.evalDelay=0s -group.maxStartDelay=1s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
A="http://127.0.0.1:$ALERTD_PORT"
wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"

am() {  # alertname -> JSON list of active alerts
  curl -fsS "http://127.0.0.1:$AM_PORT/api/v2/alerts?filter=alertname%3D%22$1%22"
}
count() { am "$1" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
field() { am "$1" | $PY -c "import json,sys; a=json.load(sys.stdin); print(a[0]$2 if a else '')"; }
has() { [ "$(count "$1")" = "$2" ]; }
field_is() { [ "$(field "$1" "$2")" = "$3" ]; }
metric() { curl -fsS "$A/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }

wait_for 30 "Keep and Gone in Alertmanager" has Keep 1
wait_for 10 "Gone in Alertmanager" has Gone 1
starts=$(field Keep '["startsAt"]')
[ "$(field Keep '["annotations"]["summary"]')" = first ] || fail "first summary"

# 1. One annotation changes, Gone is removed: SIGHUP.
write_rules second 0
kill -HUP "$ALERTD_PID"
wait_for 10 "the new annotation in Alertmanager" field_is Keep '["annotations"]["summary"]' second
[ "$(field Keep '["startsAt"]')" = "$starts" ] || fail "startsAt changed across reload: $starts -> $(field Keep '["startsAt"]')"
wait_for 5 "Gone resolved in Alertmanager right after the reload" has Gone 0
wait_for 5 "reload counted" metric_is vmalert_config_last_reload_successful 1
[ "$(metric vmalert_config_last_reload_total)" = 1 ] || fail "reload total"

# 2. A broken file: the old configuration keeps running, the metric says 0.
printf 'groups:\n  - name: reload\n    rules:\n      - alert: Keep\n        expr: vector(1\n' >"$T/rules.yml"
kill -HUP "$ALERTD_PID"
wait_for 10 "failed reload counted" metric_is vmalert_config_last_reload_successful 0
[ "$(metric vmalert_config_last_reload_errors_total)" = 1 ] || fail "reload errors total"
grep -q "configuration reload failed" "$T/alertd.log" || fail "reload error not logged"
sleep 4
has Keep 1 || fail "Keep no longer active after a failed reload"
[ "$(field Keep '["startsAt"]')" = "$starts" ] || fail "startsAt changed after a failed reload"
curl -fsS "$A/api/v1/rules" | $PY -c '
import json, sys
d = json.load(sys.stdin)
names = [r["name"] for g in d["data"]["groups"] for r in g["rules"]]
assert names == ["Keep"], names
' || fail "rules after a failed reload"

# 3. Fixed again, through POST /-/reload.
write_rules third 0
curl -fsS -X POST -o /dev/null "$A/-/reload" || fail "POST /-/reload"
wait_for 10 "reload through /-/reload" metric_is vmalert_config_last_reload_successful 1
wait_for 10 "the third annotation" field_is Keep '["annotations"]["summary"]' third
[ "$(field Keep '["startsAt"]')" = "$starts" ] || fail "startsAt changed"
echo "reload: state kept across 3 reloads, removed rule resolved, broken file rejected"
