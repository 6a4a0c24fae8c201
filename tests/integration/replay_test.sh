#!/usr/bin/env bash
# Replay (backfill) against real Prometheus. A source Prometheus holds two hours of synthetic
# data written with `promtool tsdb create-blocks-from openmetrics`; alertd replays one hour of a
# recording rule and an alerting rule from it into a second Prometheus (remote-write receiver).
# Then, at every point of the replay grid:
#   - the recorded series read back from the receiver equals the source Prometheus evaluating
#     the rule's expression over the same grid (query_range), value for value;
#   - ALERTS{alertstate="firing"} is there exactly where the condition held at this point and
#     at the previous one (`for: 1m` at a 1m interval), pending where it held only here.
#   usage: replay_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
PEERS="$HERE/peers.sh"
PY=python3
T=$(mktemp -d /tmp/alertd-replay.XXXXXX)
cleanup() {
  "$PEERS" stop "$T/src/prometheus.pid" || true
  "$PEERS" stop "$T/dst/prometheus.pid" || true
  if [ "${KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- alertd output (tail)" >&2; tail -n 30 "$T/alertd.log" >&2 || true
  exit 1
}

# Two hours of data ending 10 minutes ago, on whole minutes, 15 s apart.
NOW=$(date +%s)
T0=$(( (NOW / 60) * 60 - 130 * 60 ))
mkdir -p "$T/src" "$T/dst"
$PY - "$T0" >"$T/data.om" <<'PY'
import sys
t0, step, n = int(sys.argv[1]), 15, 2 * 3600 // 15
print("# TYPE temperature_celsius gauge")
for inst, base in (("a", 20), ("b", 40)):
    for i in range(n + 1):
        print(f'temperature_celsius{{job="synthetic",instance="{inst}"}} {base + (i % 40)} {t0 + i * step}')
print("# TYPE requests counter")
for i in range(n + 1):
    print(f'requests_total{{job="synthetic",instance="a"}} {i * 10 + (i % 7)} {t0 + i * step}')
print("# EOF")
PY
promtool tsdb create-blocks-from openmetrics "$T/data.om" "$T/src/data" >/dev/null
printf 'global: {scrape_interval: 15s, evaluation_interval: 15s}\n' >"$T/src/prometheus.yml"
printf 'global: {scrape_interval: 15s, evaluation_interval: 15s}\nstorage:\n  tsdb:\n    out_of_order_time_window: 1d\n' \
  >"$T/dst/prometheus.yml"
SRC_PORT=$("$PEERS" free-port)
"$PEERS" start-prometheus "$T/src" "$SRC_PORT" --storage.tsdb.retention.time=30d >/dev/null
DST_PORT=$("$PEERS" free-port)
"$PEERS" start-prometheus "$T/dst" "$DST_PORT" --web.enable-remote-write-receiver >/dev/null
SRC="http://127.0.0.1:$SRC_PORT"
DST="http://127.0.0.1:$DST_PORT"

cat >"$T/rules.yml" <<'YML'
groups:
  - name: replayed
    interval: 1m
    rules:
      - record: job:requests:rate2m
        expr: sum by (job) (rate(requests_total[2m]))
      - record: instance:temperature:double
        expr: temperature_celsius * 2
        labels: {source: replay}
      - alert: Hot
        expr: temperature_celsius > 50
        for: 1m
YML

FROM=$(( T0 + 30 * 60 ))
TO=$(( FROM + 3600 ))
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# 20 points per request: three requests per rule, boundaries included.
"$ALERTD" -rule="$T/rules.yml" -datasource.url="$SRC" -remoteWrite.url="$DST" \
  -remoteWrite.flushInterval=100ms -replay.timeFrom="$(iso $FROM)" -replay.timeTo="$(iso $TO)" \
  -replay.maxDatapointsPerQuery=20 -replay.rulesDelay=0s -replay.disableProgressBar \
  >"$T/alertd.log" 2>&1 || fail "alertd -replay exited with $?"
grep -q 'requests to make: 	3' "$T/alertd.log" || fail "expected 3 requests per rule"
grep -q 'replay succeeded' "$T/alertd.log" || fail "no success line"

# Prometheus makes remote-written samples queryable at once; compare over the replay grid.
range() {  # URL EXPR -> JSON result of query_range over [FROM, TO] at 60s
  curl -fsS "$1/api/v1/query_range" --data-urlencode "query=$2" \
    --data-urlencode "start=$FROM" --data-urlencode "end=$TO" --data-urlencode "step=60"
}
range "$SRC" 'sum by (job) (rate(requests_total[2m]))' >"$T/want_rate.json"
range "$DST" 'job:requests:rate2m' >"$T/got_rate.json"
range "$SRC" 'temperature_celsius * 2' >"$T/want_double.json"
range "$DST" 'instance:temperature:double' >"$T/got_double.json"
range "$SRC" 'temperature_celsius > 50' >"$T/cond.json"
range "$DST" 'ALERTS' >"$T/alerts.json"

$PY - "$T" "$FROM" "$TO" <<'PY' || fail "replayed series differ from Prometheus' evaluation"
import json, sys
d, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(name):
    out = {}
    for s in json.load(open(f"{d}/{name}.json"))["data"]["result"]:
        m = dict(s["metric"])
        out[tuple(sorted(m.items()))] = {int(float(t)): v for t, v in s["values"]}
    return out
def strip(key, drop):
    return tuple((k, v) for k, v in key if k not in drop)
grid = list(range(start, end + 1, 60))
problems = []
def compare(want_name, got_name, name, extra):
    want, got = load(want_name), load(got_name)
    got = {strip(k, {"__name__"} | set(extra)): v for k, v in got.items()}
    points = 0
    for key, series in want.items():
        g = got.get(key)
        if g is None:
            problems.append(f"{name}: series {key} missing")
            continue
        for t in grid:
            if series.get(t) != g.get(t):
                problems.append(f"{name}{key} at {t}: want {series.get(t)} got {g.get(t)}")
            points += t in series
    extra_series = set(got) - set(want)
    if extra_series:
        problems.append(f"{name}: unexpected series {extra_series}")
    return points
n = compare("want_rate", "got_rate", "job:requests:rate2m", [])
n += compare("want_double", "got_double", "instance:temperature:double", ["source"])
# ALERTS: firing where the condition held here and one minute before, pending where it held
# only here (the first point of the window is pending: nothing before it was replayed).
cond = {dict(k)["instance"]: v for k, v in load("cond").items()}
alerts = load("alerts")
state = {}
for key, series in alerts.items():
    m = dict(key)
    for t in series:
        state[(m["instance"], t)] = m["alertstate"]
fired = 0
for inst, series in cond.items():
    for t in grid:
        here, before = t in series, (t - 60) in series and t > start
        want = "firing" if here and before else "pending" if here else None
        got = state.get((inst, t))
        if want != got:
            problems.append(f"ALERTS instance={inst} at {t}: want {want} got {got}")
        fired += want == "firing"
for p in problems[:20]:
    print(p, file=sys.stderr)
if problems or n < 100 or fired == 0:
    print(f"{len(problems)} problem(s), {n} points compared, {fired} firing points", file=sys.stderr)
    sys.exit(1)
print(f"replay: {n} recorded points and {len(grid) * len(cond)} alert points match")
PY
echo "PASS"
