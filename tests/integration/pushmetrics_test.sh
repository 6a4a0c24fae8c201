#!/usr/bin/env bash
# -pushmetrics.*: alertd pushes its /metrics page to a receiver (push_receiver.py: Debian's
# Prometheus cannot take the text format and VictoriaMetrics is not installed) every
# -pushmetrics.interval: GET with the gzipped text, Content-Type text/plain, the
# -pushmetrics.header fields, basic auth from the URL's user:password@; every sample line carries
# the -pushmetrics.extraLabel labels and the body passes `promtool check metrics`. Pushes repeat
# at the interval; a 500 answer is counted in metrics_push_errors_total and pushes go on;
# -pushmetrics.disableCompression sends plain text; bad values are start-up errors (exit 2).
#   usage: pushmetrics_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
it_init pushmetrics

PROM_PORT=$("$PEERS" free-port)
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
P="http://127.0.0.1:$PROM_PORT"
RECV_PORT=$("$PEERS" free-port)
mkdir -p "$T/recv"
echo 204 >"$T/status"
$PY "$HERE/push_receiver.py" "$RECV_PORT" "$T/recv" "$T/status" 2>"$T/receiver.log" &
it_track $!
wait_for 10 "receiver up" curl -s -o /dev/null "http://127.0.0.1:$RECV_PORT/"
rm -f "$T/recv"/*  # the probe above

cat >"$T/rules.yml" <<'YML'
groups:
  - name: push
    interval: 1s
    rules:
      - alert: PushAlways
        expr: vector(1)
YML

ALERTD_PORT=$("$PEERS" free-port)
A="http://127.0.0.1:$ALERTD_PORT"
start_alertd() {  # LOG extra flags...
  local log=$1
  shift
  "$ALERTD" -rule="$T/rules.yml" -datasource.url="$P" -notifier.blackhole \
    -httpListenAddr="127.0.0.1:$ALERTD_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
    "$@" >"$T/$log" 2>&1 &
  ALERTD_PID=$!
  it_track "$ALERTD_PID"
  wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"
}
stop_alertd() {  # SIGTERM: a pusher must not hold the exit up
  local t=$SECONDS
  kill -TERM "$ALERTD_PID"
  wait "$ALERTD_PID" || true
  [ $((SECONDS - t)) -le 4 ] || fail "alertd took $((SECONDS - t)) s to stop"
}
requests() { ls "$T/recv" | grep -c '^req-.*\.json$' || true; }
at_least() { [ "$(requests)" -ge "$1" ]; }

# ---- 1. gzip, headers, basic auth, extra labels, the interval
t0=$(date +%s.%N)
start_alertd alertd.log \
  -pushmetrics.url="http://pushuser:pushpass@127.0.0.1:$RECV_PORT/api/v1/import/prometheus" \
  -pushmetrics.interval=1s \
  -pushmetrics.extraLabel='instance="alertd-it"' -pushmetrics.extraLabel='dc="eu,west"' \
  -pushmetrics.header='X-Scope-OrgID: team-a' -pushmetrics.header='X-Second:two'
wait_for 20 "four pushes" at_least 4
stop_alertd
grep -q 'pushing /metrics to http://pushuser:xxxxx@127.0.0.1' "$T/alertd.log" ||
  fail "no start-up line naming the redacted push URL"
grep -q 'pushpass' "$T/alertd.log" && fail "the push URL's password is in the log"

$PY - "$T/recv" "$t0" <<'PY' || fail "push requests are not as expected"
import base64, glob, json, os, sys
d, t0 = sys.argv[1], float(sys.argv[2])
reqs = sorted((json.load(open(p)) for p in glob.glob(d + "/req-*.json")), key=lambda r: r["t"])
assert len(reqs) >= 4, len(reqs)
auth = "Basic " + base64.b64encode(b"pushuser:pushpass").decode()
for r in reqs:
    h = {k.lower(): v for k, v in r["headers"].items()}
    assert r["method"] == "GET", r["method"]  # the Go library's method
    assert r["path"] == "/api/v1/import/prometheus", r["path"]
    assert h.get("content-encoding") == "gzip", h
    assert h.get("content-type") == "text/plain", h
    assert h.get("x-scope-orgid") == "team-a", h
    assert h.get("x-second") == "two", h
    assert h.get("authorization") == auth, h
for p in glob.glob(d + "/body-*.err"):
    raise AssertionError("body did not gunzip: " + open(p).read())
# Every sample line has the extra labels first; comments are kept.
samples = 0
for p in glob.glob(d + "/body-*.txt"):
    text = open(p).read()
    assert "vmalert_alerts_fired_total" in text, p
    for line in text.splitlines():
        assert line, "empty line in " + p
        if line.startswith("#"):
            continue
        samples += 1
        assert '{instance="alertd-it",dc="eu,west"' in line, line
assert samples > 50, samples
# Pushes repeat at the interval: the first one interval after start, then about 1 s apart.
ts = [r["t"] for r in reqs]
gaps = [b - a for a, b in zip(ts, ts[1:])]
assert ts[0] - t0 >= 0.9, ts[0] - t0
assert all(0.5 < g < 1.6 for g in gaps), gaps
print("pushes:", len(reqs), "gaps:", ["%.2f" % g for g in gaps], "sample lines:", samples)
PY

# The body is valid Prometheus text (the last one: it has the metrics_push_* families of the
# pushes before it).
last=$(ls "$T/recv"/body-*.txt | sort -t- -k2 -n | tail -n 1)
grep -q '^metrics_push_total{instance="alertd-it",dc="eu,west",url="http://pushuser:xxxxx@127.0.0.1:' "$last" ||
  fail "no metrics_push_total with the redacted url in $last"
set +e
promtool check metrics <"$last" >"$T/promtool.out" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] && [ ! -s "$T/promtool.out" ] ||
  fail "promtool check metrics: exit $rc: $(cat "$T/promtool.out")"
echo "part 1: gzip, headers, basic auth, extra labels, interval, promtool: ok"

# ---- 2. a failing receiver: errors counted, logged once, pushes go on; plain text when
# -pushmetrics.disableCompression
rm -f "$T/recv"/*
echo 500 >"$T/status"
start_alertd alertd2.log -pushmetrics.url="http://127.0.0.1:$RECV_PORT/x" \
  -pushmetrics.interval=500ms -pushmetrics.disableCompression
wait_for 20 "four failing pushes" at_least 4
metric() { curl -fsS "$A/metrics" | awk -v n="$1" 'index($1, n "{") == 1 {print $2}'; }
errors=$(metric metrics_push_errors_total)
total=$(metric metrics_push_total)
[ -n "$errors" ] && [ "$errors" -ge 3 ] || fail "metrics_push_errors_total=$errors after 4 failing pushes"
[ "$total" -ge "$errors" ] || fail "metrics_push_total=$total < errors $errors"
n=$(grep -c 'unexpected status code in response from "http://127.0.0.1' "$T/alertd2.log" || true)
[ "$n" = 1 ] || fail "the same push error was logged $n times, want once"
echo 204 >"$T/status"
before=$(requests)
wait_for 10 "a push that works" at_least $((before + 2))
wait_for 5 "recovery logged" grep -q 'works again' "$T/alertd2.log"
stop_alertd
[ ! -e "$T/recv/body-1.err" ] || fail "plain body reported as gzip"
$PY - "$T/recv" <<'PY' || fail "-pushmetrics.disableCompression requests are not plain text"
import glob, json, sys
d = sys.argv[1]
for p in glob.glob(d + "/req-*.json"):
    h = {k.lower(): v for k, v in json.load(open(p))["headers"].items()}
    assert "content-encoding" not in h, h
for p in glob.glob(d + "/body-*.txt"):
    assert "vmalert_execution_total" in open(p).read(), p
PY
echo "part 2: errors counted and logged once, recovery logged, plain text: ok"

# ---- 3. bad values are start-up errors naming the flag (exit 2)
for bad in '-pushmetrics.url=ftp://h/x' '-pushmetrics.interval=0s' \
  '-pushmetrics.extraLabel=instance=foo' '-pushmetrics.header=NoColon'; do
  set +e
  "$ALERTD" -rule="$T/rules.yml" -datasource.url="$P" -notifier.blackhole "$bad" >"$T/bad.log" 2>&1
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "$bad: exit $rc, want 2"
  name=${bad%%=*}
  grep -q -- "for flag $name:" "$T/bad.log" || fail "$bad: the error does not name $name: $(cat "$T/bad.log")"
done
echo "part 3: bad values refused with exit 2: ok"
echo "pushmetrics: ok"
