#!/usr/bin/env bash
# Fault matrix, datasource (docs/faults.md): one alertd, one group per fault, all at once
# against tests/integration/fake_datasource.py (the query names the fault): 5xx, 4xx, a hang
# longer than -datasource.queryTimeout, a connection reset, a truncated body, garbage, a
# 300 MB body streamed (over -datasource.maxResponseSize=8MiB), a body that never ends, a
# slow trickle (1 byte/100 ms). A healthy group beside them fires into a real Alertmanager.
# Asserts, per fault: the rule's health "err" and a lastError that says what happened
# (/api/v1/rules), its error counter in /metrics, its group's rounds at the interval with none
# missed; the healthy alert active in Alertmanager; /-/healthy; alertd's VmHWM under 200 MB
# although 300 MB bodies arrive every 4 s. Connection refused: integration.outage_keeps_firing
# (real Prometheus stopped) and integration.cli_and_faults.
#   usage: faults_datasource_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init faults-datasource
MAX_HWM_KB=$((200 * 1024))
RUN_SECS=12

DS_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
A="http://127.0.0.1:$A_PORT"
$PY "$HERE/fake_datasource.py" "$DS_PORT" >"$T/fakeds.log" 2>&1 &
it_track $!
mkdir -p "$T/am"
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null
wait_for 10 "fake datasource up" curl -fs -o /dev/null "http://127.0.0.1:$DS_PORT/"

# group -> interval (3 s unless said: 1.5 s timeouts leave room under load), what lastError must contain
declare -A IV=([huge]=4s [healthy]=2s)
declare -A WANT=(
  [5xx]="unexpected response code 503"
  [4xx]="unexpected response code 400"
  [hang]="timeout after 1.5s"
  [reset]="connection reset by peer"
  [truncated]="partial message"
  [garbage]="error parsing prometheus metrics"
  [huge]="response exceeds max size 8388608 bytes"
  [endless]="timeout after 1.5s"
  [trickle]="timeout after 1.5s"
)
FAULTS=(5xx 4xx hang reset truncated garbage huge endless trickle)
{
  echo "groups:"
  printf '  - name: healthy\n    interval: 2s\n    rules:\n      - alert: Healthy\n        expr: vector(1)\n'
  for f in "${FAULTS[@]}"; do
    printf '  - name: %s\n    interval: %s\n    rules:\n      - alert: F_%s\n        expr: fault_%s\n' \
      "$f" "${IV[$f]:-3s}" "$f" "$f"
  done
} >"$T/rules.yml"

"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$DS_PORT" \
  -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$A_PORT" \
  -rule.evalDelay=0s -group.maxStartDelay=1s -datasource.queryTimeout=1500ms \
  -datasource.maxResponseSize=8MiB >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"

metrics() { curl -fsS --max-time 3 "$A/metrics" >"$T/metrics.txt"; }
metric() {  # NAME LABEL_SUBSTRING (from $T/metrics.txt)
  awk -v n="$1" -v l="$2" '{ split($1, p, "{") } p[1] == n && index($1, l) && !found { print $2; found = 1 }' "$T/metrics.txt"
}
all_started() {
  metrics || return 1
  local g
  for g in healthy "${FAULTS[@]}"; do
    [ "$(metric vmalert_iteration_total "group=\"$g\"")" -ge 1 ] 2>/dev/null || return 1
  done
}
wait_for 15 "every group's first round" all_started
declare -A ITER0
for g in healthy "${FAULTS[@]}"; do ITER0[$g]=$(metric vmalert_iteration_total "group=\"$g\""); done
t0=$(date +%s.%N)
# Meanwhile /-/healthy answers promptly, every second.
for _ in $(seq "$RUN_SECS"); do
  curl -fsS --max-time 2 -o /dev/null "$A/-/healthy" || fail "/-/healthy did not answer within 2 s"
  sleep 1
done
metrics
secs=$($PY -c "print('%.1f' % ($(date +%s.%N) - $t0))")

curl -fsS "$A/api/v1/rules" >"$T/rules.json"
# One python3 for every check (each start costs a second on a loaded 2-core machine).
for g in healthy "${FAULTS[@]}"; do
  printf '%s\t%s\t%s\t%s\n' "$g" "${IV[$g]:-3s}" "${ITER0[$g]}" "${WANT[$g]:-}"
done >"$T/expect.tsv"
$PY - "$T" "$secs" <<'PY2' || fail "datasource faults: see above"
import json, re, sys
t, secs = sys.argv[1], float(sys.argv[2])
metrics = {}
for line in open(t + "/metrics.txt"):
    m = re.match(r'(\w+)\{.*group="([^"]*)".*\} (\S+)$', line)
    if m:
        metrics.setdefault((m.group(1), m.group(2)), float(m.group(3)))
groups = {g["name"]: g for g in json.load(open(t + "/rules.json"))["data"]["groups"]}
bad = []
for line in open(t + "/expect.tsv"):
    g, iv, iter0, want = line.rstrip("\n").split("\t")
    rounds = metrics[("vmalert_iteration_total", g)] - float(iter0)
    missed = metrics[("vmalert_iteration_missed_total", g)]
    if rounds < 0.8 * secs / float(iv.rstrip("s")) - 1:
        bad.append("group %s: %d rounds in %.1fs at interval %s" % (g, rounds, secs, iv))
    if missed:
        bad.append("group %s: %d missed rounds" % (g, missed))
    r = groups[g]["rules"][0]
    if g == "healthy":
        if r["health"] != "ok":
            bad.append("healthy: %r" % r)
        continue
    errors = metrics.get(("vmalert_alerting_rules_errors_total", g), 0)
    if errors < rounds:
        bad.append("group %s: %d errors counted in %d rounds" % (g, errors, rounds))
    if r["health"] != "err" or want not in r["lastError"]:
        bad.append("group %s: health %s, lastError %r lacks %r" % (g, r["health"], r["lastError"], want))
    print("%-9s %d rounds, %d errors: ...%s" % (g, rounds, errors, r["lastError"][-90:]))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY2
# The 300 MB answer hits -datasource.maxResponseSize every round: counted under its limit.
body_hits=$(metric alertd_limit_hits_total 'limit="response_body"')
[ "${body_hits:-0}" -ge 1 ] ||
  fail "alertd_limit_hits_total{limit=\"response_body\"} is ${body_hits:-absent} after the 300 MB answers"
curl -fsS "http://127.0.0.1:$AM_PORT/api/v2/alerts" | grep -q '"alertname":"Healthy"' ||
  fail "the healthy group's alert is not in Alertmanager"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$ALERTD_PID/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$ALERTD_PID/status")
[ "$hwm" -lt "$MAX_HWM_KB" ] || fail "alertd VmHWM ${hwm} kB over ${MAX_HWM_KB} kB"
echo "faults_datasource: ${#FAULTS[@]} faults for ${secs}s: every group at its interval, none" \
  "missed; Healthy in Alertmanager; VmHWM ${hwm} kB, VmRSS ${rss} kB (${SECONDS}s)"
