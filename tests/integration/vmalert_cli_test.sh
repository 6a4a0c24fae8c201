#!/usr/bin/env bash
# A typical vmalert v1.93 command line (the flags of VictoriaMetrics' docs, Helm chart and
# docker-compose examples, plus Go-runtime and server flags) starts alertd unchanged against
# real Prometheus and Alertmanager, some flags coming from the environment (-envflag.enable).
# Checks: each ignored flag that was set gets exactly one warning line; -http.pathPrefix,
# -httpAuth.*, -metricsAuthKey, -flagsAuthKey and /flags behave as vmalert's; -loggerTimezone
# shows in the log; `promtool check metrics` finds no problem in /metrics, which holds the
# process_* families and vmalert's families of vmalert.md §8; unknown flags and -mtls exit 2.
#   usage: vmalert_cli_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init vmalert-cli

# 1. What must not start: an unknown flag and -mtls (Enterprise) exit 2 naming the flag.
set +e
"$ALERTD" -rule=x.yml -datasource.url=http://127.0.0.1:1 -notReallyAFlag=1 2>"$T/unknown.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "unknown flag: exit $rc, want 2"
grep -q -- "-notReallyAFlag" "$T/unknown.err" || fail "unknown flag not named: $(cat "$T/unknown.err")"
set +e
"$ALERTD" -rule=x.yml -datasource.url=http://127.0.0.1:1 -tls -mtls -tlsCertFile=c.pem \
  -tlsKeyFile=k.pem 2>"$T/tls.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "-mtls: exit $rc, want 2"
grep -q -- "-mtls is refused: client certificate verification" "$T/tls.err" ||
  fail "-mtls error: $(cat "$T/tls.err")"

# 2. The vmalert command line.
PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
ALERTD_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am" "$T/rules" "$T/templates"
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" --web.enable-remote-write-receiver >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null
cat >"$T/rules/alerts.yml" <<'YML'
groups:
  - name: cli
    interval: 2s
    rules:
      - alert: AlwaysOn
        expr: vector(1)
        labels: {severity: warning}
        annotations:
          summary: '{{ template "summary" . }}'
      - record: cli:one
        expr: vector(1)
YML
printf '{{ define "summary" }}always on{{ end }}\n' >"$T/templates/summary.tmpl"

P=/vmalert-prefix
VM_rule_updateEntriesLimit=7 VM_flagsAuthKey=fkey VM_external_label=dc=x \
"$ALERTD" \
  -rule="$T/rules/*.yml" \
  -rule.templates="$T/templates/*.tmpl" \
  -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -remoteRead.url="http://127.0.0.1:$PROM_PORT" \
  -remoteRead.lookback=1h \
  -remoteWrite.url="http://127.0.0.1:$PROM_PORT" \
  -remoteWrite.concurrency=2 \
  -remoteWrite.maxQueueSize=100000 \
  -remoteWrite.flushInterval=2s \
  -notifier.url="http://127.0.0.1:$AM_PORT" \
  -evaluationInterval=15s \
  -rule.evalDelay=0s \
  -group.maxStartDelay=1s \
  -configCheckInterval=30s \
  -rule.resultsLimit=7 \
  -rule.validateExpressions \
  -rule.validateTemplates=true \
  -external.url=http://vmalert.example.com:8880 \
  -external.label=cluster=east-1 \
  -external.label=replica=a \
  -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
  -http.pathPrefix="$P" \
  -httpAuth.username=admin \
  -httpAuth.password=s3cret \
  -metricsAuthKey=mkey \
  -reloadAuthKey=rkey \
  -loggerFormat=json \
  -loggerLevel=INFO \
  -loggerOutput=stdout \
  -loggerTimezone=Europe/Berlin \
  -envflag.enable \
  -envflag.prefix=VM_ \
  -memory.allowedPercent=60 \
  -memory.allowedBytes=512MiB \
  -fs.disableMmap \
  -enableTCP6 \
  -datasource.maxIdleConnections=50 \
  -datasource.queryTimeAlignment=true \
  -promscrape.dnsSDCheckInterval=30s \
  -tlsMinVersion=TLS12 \
  -http.maxGracefulShutdownDuration=10s \
  -loggerErrorsPerSecondLimit=10 \
  -pprofAuthKey=pkey \
  -http.header.frameOptions=DENY \
  -http.shutdownDelay=2s \
  -loggerJSONFields=ts:timestamp,msg:message \
  >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
A="http://127.0.0.1:$ALERTD_PORT$P"
wait_for 15 "alertd ready (probes need no auth)" curl -fsS -o /dev/null "$A/-/ready"
curl -fsS -o /dev/null "$A/-/healthy" || fail "/-/healthy without auth"
curl -fsS -o /dev/null "$A/health" || fail "/health without auth"

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$A/api/v1/rules")" = 401 ] || fail "/api/v1/rules without basic auth: $(code "$A/api/v1/rules")"
[ "$(code -u admin:wrong "$A/api/v1/rules")" = 401 ] || fail "wrong password accepted"
[ "$(code -u admin:s3cret "$A/api/v1/rules")" = 200 ] || fail "/api/v1/rules with basic auth"
[ "$(code -u admin:s3cret "http://127.0.0.1:$ALERTD_PORT/api/v1/rules")" = 400 ] ||
  fail "a path without -http.pathPrefix answered $(code -u admin:s3cret "http://127.0.0.1:$ALERTD_PORT/api/v1/rules")"
[ "$(code -u admin:s3cret "$A/metrics")" = 401 ] || fail "/metrics without authKey"
[ "$(code "$A/metrics?authKey=mkey")" = 200 ] || fail "/metrics with authKey"
[ "$(code "$A/-/reload")" = 401 ] || fail "/-/reload without authKey"
[ "$(code "$A/flags")" = 401 ] || fail "/flags without authKey (from VM_flagsAuthKey)"

# /flags: vmalert's format, secrets hidden, environment values included, sorted by name.
curl -fsS "$A/flags?authKey=fkey" >"$T/flags.txt" || fail "/flags"
for want in "-datasource.url=\"http://127.0.0.1:$PROM_PORT\"" '-httpAuth.password="secret"' \
  '-httpAuth.username="admin"' '-flagsAuthKey="secret"' '-rule.updateEntriesLimit="7"' \
  '-external.label="cluster=east-1,replica=a"' '-memory.allowedPercent="60"'; do
  grep -qxF -- "$want" "$T/flags.txt" || fail "/flags lacks $want: $(cat "$T/flags.txt")"
done
sed "s/=.*//" "$T/flags.txt" | LC_ALL=C sort -c || fail "/flags not sorted by flag name"
grep -q s3cret "$T/flags.txt" && fail "/flags shows a password"
# The environment's -external.label lost to the command line's (the command line wins).
grep -q 'dc=x' "$T/flags.txt" && fail "an environment value overrode the command line"

# One warning per ignored flag that was set to something else than its default; none for
# flags at their default or implemented (-datasource.maxIdleConnections).
for f in memory.allowedBytes fs.disableMmap enableTCP6; do
  n=$(grep -c -- "flag -$f is accepted but ignored" "$T/alertd.log" || true)
  [ "$n" = 1 ] || fail "-$f: $n warning line(s), want 1"
done
for f in memory.allowedPercent datasource.queryTimeAlignment promscrape.dnsSDCheckInterval \
  tlsMinVersion http.maxGracefulShutdownDuration pprofAuthKey loggerErrorsPerSecondLimit \
  datasource.maxIdleConnections; do
  grep -q -- "flag -$f is" "$T/alertd.log" && fail "-$f set to its default was warned about"
done
# JSON lines with Berlin's offset (+0100 in winter, +0200 in summer).
grep -Eq '^\{"timestamp":"[0-9-]{10}T[0-9:.]{12}\+0[12]00","level":"info","caller":"[^"]*","message":' "$T/alertd.log" ||
  fail "no JSON log line in Europe/Berlin time: $(head -n 3 "$T/alertd.log")"

# 3. /metrics after a few rounds: promtool finds nothing to say; the families are there.
metric() { curl -fsS "$A/metrics?authKey=mkey" | awk -v n="$1" '$1 == n {print $2}'; }
rounds_done() { local v; v=$(curl -fsS "$A/metrics?authKey=mkey" | awk '$1 ~ /^vmalert_iteration_total/ {print $2}'); [ -n "$v" ] && [ "$v" -ge 2 ]; }
wait_for 20 "two rounds" rounds_done
curl -fsS "$A/metrics?authKey=mkey" >"$T/metrics.txt"
set +e
promtool check metrics <"$T/metrics.txt" >"$T/promtool.out" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] && [ ! -s "$T/promtool.out" ] ||
  fail "promtool check metrics: exit $rc: $(cat "$T/promtool.out")"
for fam in vmalert_iteration_total vmalert_iteration_duration_seconds \
  vmalert_iteration_missed_total vmalert_iteration_reset_total vmalert_iteration_interval_seconds \
  vmalert_group_rule_results_limit \
  vmalert_alerts_pending vmalert_alerts_firing vmalert_alerting_rules_errors_total \
  vmalert_alerting_rules_last_evaluation_samples vmalert_alerting_rules_last_evaluation_series_fetched \
  vmalert_recording_rules_errors_total vmalert_recording_rules_last_evaluation_samples \
  vmalert_alerts_fired_total vmalert_execution_total vmalert_execution_errors_total \
  vmalert_alerts_sent_total vmalert_alerts_send_errors_total vmalert_config_last_reload_successful \
  vmalert_config_last_reload_total vmalert_config_last_reload_errors_total \
  vmalert_config_last_reload_success_timestamp_seconds vmalert_remotewrite_total \
  process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes \
  process_open_fds process_max_fds process_start_time_seconds process_num_threads; do
  grep -q "^# TYPE $fam " "$T/metrics.txt" || fail "/metrics lacks $fam"
done
for q in 0.5 0.9 0.97 0.99 1; do
  grep -Eq "^vmalert_iteration_duration_seconds\{file=\"[^\"]*\",group=\"cli\",quantile=\"$q\"\} [0-9.e-]+\$" \
    "$T/metrics.txt" || fail "no quantile $q of vmalert_iteration_duration_seconds"
done
grep -Eq '^vmalert_group_rule_results_limit\{file="[^"]*",group="cli"\} 7$' "$T/metrics.txt" ||
  fail "vmalert_group_rule_results_limit: $(grep results_limit "$T/metrics.txt")"
grep -q '^vmalert_alerts_firing{alertname="AlwaysOn",file="[^"]*",group="cli",id="[0-9]*"} 1$' \
  "$T/metrics.txt" || fail "vmalert_alerts_firing of AlwaysOn: $(grep alerts_firing "$T/metrics.txt")"
# POST durations as vmalert's VictoriaMetrics histogram: `_bucket{addr,vmrange}` (non-empty only).
grep -Eq '^vmalert_alerts_send_duration_seconds_bucket\{addr="[^"]+",vmrange="[0-9]\.[0-9]{3}e[-+][0-9]{2}\.\.\.[0-9]\.[0-9]{3}e[-+][0-9]{2}"\} [1-9][0-9]*$' \
  "$T/metrics.txt" || fail "no vmrange bucket: $(grep send_duration "$T/metrics.txt")"
rss=$(metric process_resident_memory_bytes)
fds=$(metric process_open_fds)
max=$(metric process_max_fds)
start=$(metric process_start_time_seconds)
now=$(date +%s)
$PY - "$rss" "$fds" "$max" "$start" "$now" <<'PY' || fail "process_* values: rss=$rss fds=$fds max=$max start=$start"
import sys
rss, fds, mx, start, now = map(float, sys.argv[1:])
assert 1 << 20 < rss < 1 << 31, rss
assert 5 <= fds < mx, (fds, mx)
assert now - 120 < start <= now, (start, now)
PY
# RSS as the kernel reports it (VmRSS) within 1 MiB of the metric's, once the file pages only
# startup and the first rounds used have been released (twice; app/memory.hpp). Right after a
# release the code a round or /metrics runs comes back as it runs, so RSS moves by a few MB
# between two reads for a moment: the two must agree within 10 s.
released_twice() {
  [ "$(curl -fsS "$A/debug/pprof/mallinfo?authKey=pkey" | awk '$1 == "file_releases" {print $2}')" -ge 2 ]
}
wait_for 30 "the file pages only startup used released twice" released_twice
rss_agrees() {
  local vmrss m
  vmrss=$(awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$ALERTD_PID/status")
  m=$(metric process_resident_memory_bytes)
  $PY -c "import sys; sys.exit(0 if abs($vmrss - $m) < (1 << 20) else 1)"
}
wait_for 10 "process_resident_memory_bytes within 1 MiB of VmRSS" rss_agrees

curl -fsS -D "$T/headers.txt" -o /dev/null "$A/-/healthy" || fail "/-/healthy"
grep -qi '^X-Frame-Options: DENY' "$T/headers.txt" || fail "no X-Frame-Options: $(cat "$T/headers.txt")"

# 4. SIGTERM with -http.shutdownDelay=2s: /health and /-/ready answer 503 while alertd keeps
# running, then a clean exit.
kill -TERM "$ALERTD_PID"
wait_for 2 "/health 503 during the shutdown delay" test "$(code "$A/health")" = 503
[ "$(code "$A/-/ready")" = 503 ] || fail "/-/ready during the shutdown delay: $(code "$A/-/ready")"
kill -0 "$ALERTD_PID" || fail "alertd exited before -http.shutdownDelay passed"
for _ in $(seq 1 60); do kill -0 "$ALERTD_PID" 2>/dev/null || break; sleep 0.25; done
set +e
wait "$ALERTD_PID"
rc=$?
set -e
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"
echo "vmalert command line: $(grep -c '^-' "$T/flags.txt") flags set, alertd started; auth, prefix, /flags, warnings, promtool ok"
