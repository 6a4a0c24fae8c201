#!/usr/bin/env bash
# The HTTP API against a running alertd fed by real Prometheus and sending to real Alertmanager:
# /api/v1/rules filters (type, state, match[], rule_group[], file[], search, paging,
# exclude_alerts, errors), /api/v1/alerts filters, the single-object endpoints, and the
# generatorURL that Alertmanager received answering 200 with the alert's page; then
# -external.alert.source (Grafana's explore link): the exact generatorURL in Alertmanager and
# the API, and a bad template refused at start-up; gzip-compressed answers (plain, whole and
# streamed) and -http.disableResponseCompression.
#   usage: api_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PEERS="$HERE/peers.sh"
PY=python3
T=$(mktemp -d /tmp/alertd-api.XXXXXX)
ALERTD_PID=""
HTTP_PID=""

cleanup() {
  [ -n "$ALERTD_PID" ] && kill -KILL "$ALERTD_PID" 2>/dev/null || true
  [ -n "$HTTP_PID" ] && kill "$HTTP_PID" 2>/dev/null || true
  "$PEERS" stop "$T/prom/prometheus.pid" || true
  "$PEERS" stop "$T/am/alertmanager.pid" || true
  if [ "${KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "--- alertd log (tail)" >&2; tail -n 40 "$T/alertd.log" >&2 || true
  exit 1
}

wait_for() {  # SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s.
  local secs=$1 what=$2
  shift 2
  local n=0
  until "$@"; do
    n=$((n + 1))
    [ "$n" -lt $((secs * 2)) ] || fail "timed out after ${secs}s waiting for: $what"
    sleep 0.5
  done
}

PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
TARGET_PORT=$("$PEERS" free-port)
ALERTD_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am" "$T/target"

printf 'api_temperature_celsius{sensor="a"} 85\napi_temperature_celsius{sensor="b"} 20\n' \
  >"$T/target/metrics"
$PY -m http.server --bind 127.0.0.1 --directory "$T/target" "$TARGET_PORT" </dev/null \
  >"$T/target/http.log" 2>&1 &
HTTP_PID=$!
cat >"$T/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: api
    static_configs: [{targets: ['127.0.0.1:$TARGET_PORT']}]
YML
cat >"$T/am/alertmanager.yml" <<YML
route: {receiver: blackhole, group_by: [alertname], group_wait: 1s, group_interval: 1s}
receivers: [{name: blackhole}]
YML
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null

cat >"$T/hot.yml" <<'YML'
groups:
  - name: api-hot
    interval: 1s
    rules:
      - alert: Hot
        expr: api_temperature_celsius > 80
        labels: {severity: page}
        annotations: {summary: "Sensor {{ $labels.sensor }} is <hot>"}
      - alert: Never
        expr: api_temperature_celsius > 1e9
        labels: {severity: info}
YML
cat >"$T/other.yml" <<'YML'
groups:
  - name: api-other
    interval: 1s
    rules:
      - alert: Slow
        expr: api_temperature_celsius > 0
        for: 1h
        labels: {team: x}
YML

# -external.url is this alertd itself, so the generatorURL Alertmanager holds can be followed.
"$ALERTD" -rule="$T/hot.yml" -rule="$T/other.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
  -external.url="http://127.0.0.1:$ALERTD_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
  >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
A="http://127.0.0.1:$ALERTD_PORT"
wait_for 10 "alertd /-/ready" curl -fsS -o /dev/null "$A/-/ready"

am_hot() { curl -fsS "http://127.0.0.1:$AM_PORT/api/v2/alerts?filter=alertname%3D%22Hot%22"; }
has_hot() { [ "$(am_hot | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1 ]; }
wait_for 60 "Hot in Alertmanager" has_hot
slow_pending() {
  curl -fsS "$A/api/v1/alerts?rule_group%5B%5D=api-other" | $PY -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if len(alerts) == 2 and all(a["state"] == "pending" for a in alerts) else 1)'
}
wait_for 30 "Slow pending for both sensors" slow_pending

# 1. The generatorURL Alertmanager received answers 200 with the alert's page, whose rule link
#    answers too.
url=$(am_hot | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["generatorURL"])')
case "$url" in "$A/vmalert/alert?group_id="*"&alert_id="*) ;; *) fail "generatorURL $url" ;; esac
code=$(curl -sS -o "$T/alert.html" -w '%{http_code}' "$url")
[ "$code" = 200 ] || fail "generatorURL $url answered $code"
grep -q '<title>Alert Hot - alertd</title>' "$T/alert.html" || fail "alert page title"
grep -q 'Sensor a is &lt;hot&gt;' "$T/alert.html" || fail "alert page annotation"
rule_href=$(grep -o 'href="rule?[^"]*"' "$T/alert.html" | head -1 | sed 's/^href="//; s/"$//; s/&amp;/\&/g')
[ -n "$rule_href" ] || fail "no rule link on the alert page"
code=$(curl -sS -o "$T/rule.html" -w '%{http_code}' "$A/vmalert/$rule_href")
[ "$code" = 200 ] || fail "rule page answered $code"
grep -q 'Alerting rule Hot' "$T/rule.html" || fail "rule page content"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$A/vmalert/alert?group_id=1&alert_id=2")
[ "$code" = 404 ] || fail "unknown alert page answered $code"

# 2. /api/v1/rules filters. rules QUERY prints "group:rule,rule|group:..." (names in order).
rules() {
  curl -fsS "$A/api/v1/rules?$1" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
print("|".join(g["name"] + ":" + ",".join(r["name"] for r in g["rules"]) for g in d["data"]["groups"]))'
}
check_rules() {  # QUERY EXPECTED
  local got
  got=$(rules "$1") || fail "GET /api/v1/rules?$1"
  [ "$got" = "$2" ] || fail "/api/v1/rules?$1: got '$got', want '$2'"
}
check_rules "" "api-hot:Hot,Never|api-other:Slow"
check_rules "type=alert" "api-hot:Hot,Never|api-other:Slow"
check_rules "type=record" ""
check_rules "state=firing" "api-hot:Hot"
check_rules "state=pending" "api-other:Slow"
check_rules "state=inactive" "api-hot:Never"
check_rules "filter=normal,pending" "api-hot:Never|api-other:Slow"
check_rules "match%5B%5D=%7Bseverity%3D~%22page%7Cinfo%22%7D" "api-hot:Hot,Never"
check_rules "match%5B%5D=%7Bteam%3D%22x%22%7D&match%5B%5D=%7Bseverity%3D%22page%22%7D" \
  "api-hot:Hot|api-other:Slow"
check_rules "rule_group%5B%5D=api-other" "api-other:Slow"
check_rules "file%5B%5D=$T/hot.yml" "api-hot:Hot,Never"
check_rules "rule_name%5B%5D=Never" "api-hot:Never"
check_rules "search=NEV" "api-hot:Never"
check_rules "group_limit=1&page_num=2" "api-other:Slow"
curl -fsS "$A/vmalert/api/v1/rules?group_limit=1&page_num=2" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert (d["page"], d["total_pages"], d["total_groups"], d["total_rules"]) == (2, 2, 2, 3), d
' || fail "paging fields"
curl -fsS "$A/api/v1/rules?exclude_alerts=true&extended_states=true" | $PY -c '
import json, sys
rules = {r["name"]: r for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]}
assert all("alerts" not in r for r in rules.values()), rules
assert rules["Hot"]["state"] == "firing" and rules["Never"]["state"] == "inactive", rules
' || fail "exclude_alerts"
code=$(curl -sS -o "$T/err.json" -w '%{http_code}' "$A/api/v1/rules?state=bogus")
[ "$code" = 400 ] || fail "state=bogus answered $code"
$PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "error" and d["errorType"] == "bad_data", d
assert "bogus" in d["error"], d
' "$T/err.json" || fail "error body"

# 3. /api/v1/alerts filters, then the single-object endpoints for one alert and its rule.
curl -fsS "$A/api/v1/alerts?match%5B%5D=%7Bsensor%3D%22a%22%7D" | $PY -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
assert sorted(a["name"] for a in alerts) == ["Hot", "Slow"], alerts
' || fail "/api/v1/alerts match[]"
curl -fsS "$A/api/v1/alerts?file%5B%5D=$T/hot.yml" | $PY -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
assert [a["name"] for a in alerts] == ["Hot"], alerts
' || fail "/api/v1/alerts file[]"
read -r gid aid rid < <(curl -fsS "$A/api/v1/alerts?rule_group%5B%5D=api-hot" | $PY -c '
import json, sys
a = json.load(sys.stdin)["data"]["alerts"][0]
print(a["group_id"], a["id"], a["rule_id"])')
curl -fsS "$A/api/v1/alert?group_id=$gid&alert_id=$aid" | $PY -c '
import json, sys
a = json.load(sys.stdin)
assert a["name"] == "Hot" and a["state"] == "firing" and a["labels"]["sensor"] == "a", a
' || fail "/api/v1/alert"
curl -fsS "$A/vmalert/api/v1/rule?group_id=$gid&rule_id=$rid" | $PY -c '
import json, sys
r = json.load(sys.stdin)
assert r["name"] == "Hot" and r["type"] == "alerting", r
u = r["updates"]
assert len(u) >= 1 and u[0]["error"] is None and u[0]["samples"] == 1, u
assert "/api/v1/query" in u[0]["curl"], u[0]
# Each update shows the request it made: its own query time (made when read, from "at").
from urllib.parse import quote
for e in u:
    want = "time=" + quote(e["at"].split(".")[0].rstrip("Z") + "Z", safe="")
    assert want in e["curl"], (want, e)
' || fail "/api/v1/rule updates"
curl -fsS "$A/api/v1/group?group_id=$gid" | $PY -c '
import json, sys
g = json.load(sys.stdin)
assert g["name"] == "api-hot" and [r["name"] for r in g["rules"]] == ["Hot", "Never"], g
' || fail "/api/v1/group"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$A/api/v1/rule?group_id=$gid&rule_id=1")
[ "$code" = 404 ] || fail "unknown rule answered $code"
curl -fsS "$A/api/v1/notifiers" | $PY -c '
import json, sys
n = json.load(sys.stdin)["data"]["notifiers"]
assert n[0]["kind"] == "static", n
assert n[0]["targets"][0]["address"] == "http://127.0.0.1:'"$AM_PORT"'/api/v2/alerts", n
' || fail "/api/v1/notifiers"

# 3. -external.alert.source: alertd again with Grafana's explore link (the flag's classic
#    example); a run=2 external label makes its alert a new one in Alertmanager. The exact
#    generatorURL: <external.url>/explore?...{"expr":<jsonEscape|queryEscape>}...{"from":"<ms>"}.
kill -TERM "$ALERTD_PID"; wait "$ALERTD_PID" 2>/dev/null || true; ALERTD_PID=""
SOURCE='explore?orgId=1&left={"datasource":"VictoriaMetrics","queries":[{"expr":{{.Expr|jsonEscape|queryEscape}},"refId":"A"}],"range":{"from":"{{ .ActiveAt.UnixMilli }}","to":"now"}}'
"$ALERTD" -rule="$T/hot.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
  -external.url="http://127.0.0.1:$ALERTD_PORT" -external.label=run=2 \
  -external.alert.source="$SOURCE" -rule.evalDelay=0s -group.maxStartDelay=1s \
  >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
wait_for 10 "alertd /-/ready (alert source)" curl -fsS -o /dev/null "$A/-/ready"
am_hot2() {
  curl -fsS "http://127.0.0.1:$AM_PORT/api/v2/alerts?filter=alertname%3D%22Hot%22&filter=run%3D%222%22"
}
has_hot2() { [ "$(am_hot2 | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1 ]; }
wait_for 60 "Hot (run=2) in Alertmanager" has_hot2
am_hot2 >"$T/am_hot2.json"
curl -fsS "$A/api/v1/alerts" >"$T/alerts2.json"
$PY - "$T/am_hot2.json" "$T/alerts2.json" "$A" <<'PYEOF' || fail "-external.alert.source generatorURL"
import json, sys
from datetime import datetime, timezone
am = json.load(open(sys.argv[1]))[0]
api = json.load(open(sys.argv[2]))["data"]["alerts"]
hot = [a for a in api if a["name"] == "Hot"][0]
# activeAt: RFC3339 with up to 9 fraction digits; UnixMilli truncates.
ts = hot["activeAt"].rstrip("Z")
whole, _, frac = ts.partition(".")
secs = int(datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp())
ms = secs * 1000 + int((frac + "000")[:3])
want = (sys.argv[3] + '/explore?orgId=1&left={"datasource":"VictoriaMetrics","queries":'
        '[{"expr":%22api_temperature_celsius+%3E+80%22,"refId":"A"}],'
        '"range":{"from":"' + str(ms) + '","to":"now"}}')
assert am["generatorURL"] == want, (am["generatorURL"], want)
assert hot["source"] == want, (hot["source"], want)
PYEOF
# A template that does not parse is a start-up error naming the flag.
if "$ALERTD" -rule="$T/hot.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$("$PEERS" free-port)" \
  -external.alert.source='foo?{{invalid}}' >"$T/bad_source.log" 2>&1; then
  fail "a bad -external.alert.source was accepted"
fi
grep -q 'external.alert.source' "$T/bad_source.log" || fail "bad source error: $(cat "$T/bad_source.log")"

# 4. gzip-compressed answers, as vmalert's lib/httpserver: curl --compressed gets /api/v1/rules
#    and /metrics gzip (and decodes them), a client without Accept-Encoding gets them plain.
#    400 more series make /api/v1/alerts a streamed answer (pieces of 64 KiB): it comes chunked
#    and gzip, and decodes whole. With -http.disableResponseCompression nothing is compressed.
kill -TERM "$ALERTD_PID"; wait "$ALERTD_PID" 2>/dev/null || true; ALERTD_PID=""
for i in $(seq 1 400); do echo "api_bulk{i=\"$i\"} 1"; done >>"$T/target/metrics"
cat >"$T/bulk.yml" <<'YML'
groups:
  - name: api-bulk
    interval: 1s
    rules:
      - alert: Bulk
        expr: api_bulk > 0
        annotations: {summary: "Bulk series {{ $labels.i }} is set"}
YML
start_bulk() {  # EXTRA_FLAGS...
  "$ALERTD" -rule="$T/hot.yml" -rule="$T/bulk.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
    -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
    -rule.evalDelay=0s -group.maxStartDelay=1s "$@" >"$T/alertd.log" 2>&1 &
  ALERTD_PID=$!
  wait_for 10 "alertd /-/ready (bulk)" curl -fsS -o /dev/null "$A/-/ready"
  wait_for 60 "400 Bulk alerts" bulk_alerts
}
bulk_alerts() {
  curl -fsS "$A/api/v1/alerts?rule_group%5B%5D=api-bulk" | $PY -c '
import json, sys
sys.exit(0 if len(json.load(sys.stdin)["data"]["alerts"]) == 400 else 1)'
}
header() {  # FILE NAME: the value of a response header (the last response in FILE), or empty
  tr -d '\r' <"$1" | awk -v n="$(echo "$2" | tr 'A-Z' 'a-z')" -F': ' \
    '/^HTTP\//{v=""} tolower($1)==n{v=$2} END{print v}'
}
start_bulk
for path in /api/v1/rules /metrics /api/v1/alerts; do
  name=$(echo "$path" | tr '/' '_')
  curl -fsS --compressed -D "$T/gz$name.h" -o "$T/gz$name.body" "$A$path" || fail "GET $path (gzip)"
  curl -fsS -D "$T/plain$name.h" -o "$T/plain$name.body" "$A$path" || fail "GET $path (plain)"
  [ "$(header "$T/gz$name.h" Content-Encoding)" = gzip ] || fail "$path with --compressed not gzip"
  [ "$(header "$T/gz$name.h" Vary)" = Accept-Encoding ] || fail "$path: no Vary: Accept-Encoding"
  [ -z "$(header "$T/plain$name.h" Content-Encoding)" ] || fail "$path without Accept-Encoding compressed"
done
for path in /api/v1/rules /api/v1/alerts; do  # decoded, the same JSON as the plain answer
  name=$(echo "$path" | tr '/' '_')
  $PY -c '
import json, sys
gz, plain = (json.load(open(f)) for f in sys.argv[1:3])
def names(d):
    if "groups" in d["data"]:
        return sorted(r["name"] for g in d["data"]["groups"] for r in g["rules"])
    return sorted(a["name"] + str(a["labels"]) for a in d["data"]["alerts"])
assert gz["status"] == "success" and names(gz) == names(plain), (names(gz), names(plain))
' "$T/gz$name.body" "$T/plain$name.body" || fail "$path: decoded answer is not the JSON answer"
done
grep -q '^vmalert_alerts_fired_total' "$T/gz_metrics.body" || fail "/metrics decoded"
[ "$(header "$T/gz_api_v1_alerts.h" Transfer-Encoding)" = chunked ] || fail "/api/v1/alerts not streamed"
$PY -c '
import json, sys
alerts = json.load(open(sys.argv[1]))["data"]["alerts"]
assert sum(a["name"] == "Bulk" for a in alerts) == 400, len(alerts)
' "$T/gz_api_v1_alerts.body" || fail "streamed gzip /api/v1/alerts incomplete"
# On the wire: gzip, and several times smaller than the plain answer.
curl -fsS -H 'Accept-Encoding: gzip' -o "$T/alerts.gz" "$A/api/v1/alerts" || fail "raw gzip GET"
gzip -dc "$T/alerts.gz" >"$T/alerts.raw" || fail "/api/v1/alerts is not valid gzip"
[ $(($(stat -c %s "$T/alerts.gz") * 4)) -lt "$(stat -c %s "$T/alerts.raw")" ] ||
  fail "gzip answer not smaller: $(stat -c %s "$T/alerts.gz") vs $(stat -c %s "$T/alerts.raw")"
kill -TERM "$ALERTD_PID"; wait "$ALERTD_PID" 2>/dev/null || true; ALERTD_PID=""
start_bulk -http.disableResponseCompression
grep -q 'disableResponseCompression' "$T/alertd.log" && fail "the flag is warned about: $(grep disableResponseCompression "$T/alertd.log")"
for path in /api/v1/rules /metrics /api/v1/alerts; do
  curl -fsS -H 'Accept-Encoding: gzip' -D "$T/off.h" -o "$T/off.body" "$A$path" || fail "GET $path (off)"
  [ -z "$(header "$T/off.h" Content-Encoding)" ] || fail "$path compressed with -http.disableResponseCompression"
done
$PY -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/off.body" || fail "plain /api/v1/alerts"

echo "api: filters, single objects, notifiers, the generatorURL page and gzip answers as expected"
