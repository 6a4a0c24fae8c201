#!/usr/bin/env bash
# Remote write against real Prometheus (--web.enable-remote-write-receiver), which is also the
# datasource: a recording rule's results and ALERTS / ALERTS_FOR_STATE are read back with PromQL;
# a series that disappears between rounds and the series of rules removed by a reload get
# staleness markers (an instant query stops returning them at once instead of for 5 minutes);
# -dryRun accepts recording rules only with -remoteWrite.url. Then a small fake receiver
# (rw_receiver.py) answers 500, 429, 400 and hangs: 429/5xx/timeouts are retried, 400 is not,
# the queue drops rows and the metrics say so, evaluation keeps its interval, and SIGTERM with a
# hanging receiver still exits within 5 s.
#   usage: remote_write_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PEERS="$HERE/peers.sh"
PY=python3
T=$(mktemp -d /tmp/alertd-rw.XXXXXX)
ALERTD_PID=""
RECV_PID=""
cleanup() {
  [ -n "$ALERTD_PID" ] && kill -KILL "$ALERTD_PID" 2>/dev/null || true
  [ -n "$RECV_PID" ] && kill -KILL "$RECV_PID" 2>/dev/null || true
  "$PEERS" stop "$T/prom/prometheus.pid" || true
  if [ "${KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- alertd log (tail)" >&2; tail -n 30 "$T/alertd.log" >&2 || true
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
ALERTD_PORT=$("$PEERS" free-port)
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" --web.enable-remote-write-receiver >/dev/null
P="http://127.0.0.1:$PROM_PORT"
A="http://127.0.0.1:$ALERTD_PORT"

# promql EXPR: the instant result as "labels-json value" lines (labels sorted), or nothing.
promql() {
  curl -fsS "$P/api/v1/query" --data-urlencode "query=$1" | $PY -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    print(json.dumps(r["metric"], sort_keys=True), r["value"][1])'
}
metric() {  # NAME: the value alertd exports
  curl -fsS "$A/metrics" | awk -v n="$1" '$1 == n {print $2}'
}
start_alertd() {  # extra flags...
  "$ALERTD" -rule="$T/rules.yml" -datasource.url="$P" -notifier.blackhole \
    -httpListenAddr="127.0.0.1:$ALERTD_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
    "$@" >"$T/alertd.log" 2>&1 &
  ALERTD_PID=$!
  wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"
}
stop_alertd() {  # SIGTERM; must exit within 5 s
  local t0=$SECONDS
  kill -TERM "$ALERTD_PID"
  local n=0
  while kill -0 "$ALERTD_PID" 2>/dev/null; do
    n=$((n + 1))
    [ "$n" -lt 60 ] || fail "alertd still running 6 s after SIGTERM"
    sleep 0.1
  done
  wait "$ALERTD_PID" || true
  ALERTD_PID=""
  echo "  stopped in $((SECONDS - t0)) s"
}

cat >"$T/rules.yml" <<'YML'
groups:
  - name: rw
    interval: 1s
    rules:
      - record: rw:seven
        expr: label_replace(vector(7), "k", "a", "", "")
        labels: {team: x}
      # Present for 4 s out of every 8: between two rounds it disappears.
      - record: rw:flip
        expr: vector(1) and on() (vector(time()) % 8 < 4)
      - alert: RWAlert
        expr: vector(1)
        for: 2s
        labels: {severity: page}
YML

# -dryRun: recording rules need -remoteWrite.url, as the daemon does.
if "$ALERTD" -dryRun -rule="$T/rules.yml" -datasource.url="$P" -notifier.blackhole \
  >"$T/dry.log" 2>&1; then
  fail "-dryRun accepted recording rules without -remoteWrite.url"
fi
grep -q "remoteWrite.url" "$T/dry.log" || fail "-dryRun did not name -remoteWrite.url"
"$ALERTD" -dryRun -rule="$T/rules.yml" -datasource.url="$P" -notifier.blackhole \
  -remoteWrite.url="$P" >"$T/dry.log" 2>&1 || fail "-dryRun refused: $(cat "$T/dry.log")"

# ---- part 1: real Prometheus
start_alertd -remoteWrite.url="$P" -remoteWrite.flushInterval=500ms
has() { [ -n "$(promql "$1")" ]; }
wait_for 20 "rw:seven in Prometheus" has 'rw:seven'
got=$(promql 'rw:seven')
[ "$got" = '{"__name__": "rw:seven", "k": "a", "team": "x"} 7' ] || fail "rw:seven: $got"
echo "recording result read back: $got"

wait_for 20 "ALERTS firing in Prometheus" has 'ALERTS{alertname="RWAlert",alertstate="firing"}'
got=$(promql 'ALERTS{alertname="RWAlert",alertstate="firing"}')
case $got in
  *'"alertgroup": "rw"'*'"severity": "page"'*' 1') ;;
  *) fail "ALERTS: $got" ;;
esac
# ALERTS_FOR_STATE holds activeAt (unix seconds), the same as alertd's API.
for_state=$(promql 'ALERTS_FOR_STATE{alertname="RWAlert"}' | awk '{print $NF}')
curl -fsS "$A/api/v1/alerts" | $PY -c '
import json, sys, datetime
want = float(sys.argv[1])
a = [x for x in json.load(sys.stdin)["data"]["alerts"] if x["name"] == "RWAlert"][0]
got = datetime.datetime.fromisoformat(a["activeAt"].replace("Z", "+00:00")).timestamp()
assert abs(got - want) < 1.0, (got, want)
' "$for_state" || fail "ALERTS_FOR_STATE $for_state differs from the API's activeAt"
# The pending phase was written too (and ended by a staleness marker when it fired).
has 'count_over_time(ALERTS{alertname="RWAlert",alertstate="pending"}[5m])' ||
  fail "no pending ALERTS sample"
has 'ALERTS{alertname="RWAlert",alertstate="pending"}' && fail "pending ALERTS still current"
echo "ALERTS and ALERTS_FOR_STATE read back (activeAt $for_state)"

# rw:flip: present, then gone at once (a stale marker, not the 5 min lookback), then back.
wait_for 20 "rw:flip present" has 'rw:flip'
absent() { ! has "$1"; }
wait_for 20 "rw:flip stale" absent 'rw:flip'
wait_for 20 "rw:flip back" has 'rw:flip'
echo "a series that disappears between rounds gets a staleness marker"

# Reload without rw:seven and RWAlert: their series are marked stale.
cat >"$T/rules.yml" <<'YML'
groups:
  - name: rw
    interval: 1s
    rules:
      - record: rw:flip
        expr: vector(1) and on() (vector(time()) % 8 < 4)
YML
kill -HUP "$ALERTD_PID"
wait_for 20 "rw:seven stale after reload" absent 'rw:seven'
wait_for 20 "ALERTS stale after reload" absent 'ALERTS{alertname="RWAlert"}'
wait_for 20 "ALERTS_FOR_STATE stale after reload" absent 'ALERTS_FOR_STATE{alertname="RWAlert"}'
has 'count_over_time(rw:seven[5m])' || fail "rw:seven history lost"
echo "removed rules: recording and ALERTS series marked stale"

sent=$(metric vmalert_remotewrite_sent_rows_total)
[ "${sent%.*}" -gt 0 ] || fail "sent_rows_total=$sent"
[ "$(metric vmalert_remotewrite_dropped_rows_total)" = 0 ] || fail "rows dropped"
[ "$(metric vmalert_remotewrite_errors_total)" = 0 ] || fail "errors"
stop_alertd
grep -q "remote write stopped: .* 0 dropped" "$T/alertd.log" || fail "no clean drain"
echo "metrics: $sent rows sent, none dropped; drained on shutdown"

# ---- part 2: a receiver that fails
RECV_PORT=$("$PEERS" free-port)
echo 204 >"$T/mode"
: >"$T/recv.log"
$PY "$HERE/rw_receiver.py" "$RECV_PORT" "$T/mode" "$T/recv.log" &
RECV_PID=$!
wait_for 10 "receiver" curl -s -o /dev/null "http://127.0.0.1:$RECV_PORT/"
cat >"$T/rules.yml" <<'YML'
groups:
  - name: rw
    interval: 1s
    rules:
      - record: rw:one
        expr: vector(1)
YML
start_alertd -remoteWrite.url="http://127.0.0.1:$RECV_PORT" -remoteWrite.flushInterval=300ms \
  -remoteWrite.concurrency=1 -remoteWrite.maxQueueSize=2 -remoteWrite.retryMinInterval=200ms \
  -remoteWrite.retryMaxTime=1500ms -remoteWrite.sendTimeout=700ms
lines() { wc -l <"$T/recv.log"; }
more_lines() { [ "$(lines)" -gt "$1" ]; }
wait_for 10 "a first request" more_lines 0
grep -q ' 0$' "$T/recv.log" && fail "a request without the remote-write headers or path"

# phase MODE SECONDS: the receiver answers MODE for SECONDS; prints the lines it logged.
phase() {
  local before
  before=$(lines)
  echo "$1" >"$T/mode"
  sleep "$2"
  echo 204 >"$T/mode"
  tail -n +"$((before + 1))" "$T/recv.log" | awk -v m="$1" '$1 == m'
}
retried() { sort | uniq -d | grep -q .; }  # some body was sent more than once

it0=$(metric 'vmalert_iteration_total{file="'"$T/rules.yml"'",group="rw"}')
out=$(phase hang 5)
it1=$(metric 'vmalert_iteration_total{file="'"$T/rules.yml"'",group="rw"}')
echo "$out" | awk '{print $2}' | retried || fail "hang: timed-out requests not retried"
[ $((${it1%.*} - ${it0%.*})) -ge 4 ] || fail "evaluation slowed down while the receiver hung: $it0 -> $it1"
echo "hang: requests time out and are retried; $((${it1%.*} - ${it0%.*})) rounds in 5 s"

for mode in 500 429; do
  out=$(phase "$mode" 4)
  [ -n "$out" ] || fail "$mode: no request"
  echo "$out" | awk '{print $2}' | retried || fail "$mode: not retried"
  echo "$mode: retried"
done
dropped=$(metric vmalert_remotewrite_dropped_rows_total)
[ "${dropped%.*}" -gt 0 ] || fail "nothing dropped after the failures (queue of 2, retryMaxTime 1.5s)"
errors=$(metric vmalert_remotewrite_errors_total)
[ "${errors%.*}" -gt 0 ] || fail "errors_total=$errors"
grep -q "dropping" "$T/alertd.log" || fail "drops not logged"

d0=$(metric vmalert_remotewrite_dropped_rows_total)
out=$(phase 400 3)
[ -n "$out" ] || fail "400: no request"
echo "$out" | awk '{print $2}' | retried && fail "400 was retried"
d1=$(metric vmalert_remotewrite_dropped_rows_total)
[ "${d1%.*}" -gt "${d0%.*}" ] || fail "400: nothing dropped"
grep -q "unexpected response code 400 for http://127.0.0.1:$RECV_PORT/api/v1/write" \
  "$T/alertd.log" || fail "400 not logged with the URL"
echo "400: not retried, dropped"

s0=$(metric vmalert_remotewrite_sent_rows_total)
sent_more() { [ "$(metric vmalert_remotewrite_sent_rows_total)" != "$s0" ]; }
wait_for 10 "sending again" sent_more
echo "recovered: sent_rows_total $s0 -> $(metric vmalert_remotewrite_sent_rows_total)," \
  "dropped $(metric vmalert_remotewrite_dropped_rows_total), errors $(metric vmalert_remotewrite_errors_total)"

# Shutdown with a hanging receiver: the drain is bounded.
echo hang >"$T/mode"
sleep 1.5
stop_alertd
grep -q "remote write stopped" "$T/alertd.log" || fail "drain did not finish"
echo "PASS"
