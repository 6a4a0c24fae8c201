#!/usr/bin/env bash
# Command-line behaviour and fault tolerance of the alertd binary, no real peers needed:
# flag errors exit 2 naming the flag; -dryRun exit codes; a dead datasource, a datasource
# answering garbage or HTTP 500, and a dead Alertmanager are logged with group and rule,
# counted in /metrics, and the daemon keeps serving.
#   usage: faults_test.sh ALERTD_BINARY REPO_ROOT
set -euo pipefail
ALERTD=$1
ROOT=$2
PEERS="$ROOT/tests/integration/peers.sh"
T=$(mktemp -d /tmp/alertd-faults.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  # run_daemon runs in $(...) subshells: their PIDS+= is lost, so they also record here.
  if [ -f "$T/pids" ]; then
    while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$T/pids"
  fi
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$T"/*.log; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done
  exit 1
}
expect_rc() {  # want_rc stderr_substring args...
  local want=$1 text=$2 rc=0
  shift 2
  "$ALERTD" "$@" >"$T/out.txt" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || fail "alertd $* exited $rc, want $want: $(cat "$T/out.txt")"
  grep -qF -- "$text" "$T/out.txt" || fail "alertd $*: output lacks \"$text\": $(cat "$T/out.txt")"
}

# Flags.
expect_rc 2 "flag provided but not defined: -nosuchflag" -nosuchflag=1
expect_rc 2 "flag -evaluationInterval" -evaluationInterval=soon
expect_rc 0 "alertd v" -version
expect_rc 0 "-datasource.url" -help
expect_rc 0 "-datasource.url" -h
expect_rc 0 "-reloadAuthKey string" --help

# -dryRun.
expect_rc 0 "are valid" -dryRun -rule="$ROOT/deploy/examples/rules.yml"
# The success line goes to stdout; errors stay on stderr.
"$ALERTD" -dryRun -rule="$ROOT/deploy/examples/rules.yml" 2>/dev/null | grep -qF "are valid" ||
  fail "-dryRun's success line is not on stdout"
expect_rc 1 "/dev/zero: rule file too large: over 32 MiB" -dryRun -rule=/dev/zero
expect_rc 1 "no such file or directory" -dryRun -rule="$T/missing.yml"
cat >"$T/bad.yml" <<'YML'
groups:
  - name: g
    rules:
      - alert: A
        expr: up ==
      - alrt: B
        expr: up
YML
expect_rc 1 "bad.yml:" -dryRun -rule="$T/bad.yml"
grep -q "error(s) found" "$T/out.txt" || fail "dryRun summary"
expect_rc 1 "no groups found" -dryRun -rule="$T/nothing-here/*.yml"
# -rule.validateTemplates (default true): a Go template parse error fails the load at
# file:line:column, also an unclosed action in a value without "}}" (rendering would copy it).
cat >"$T/badtpl.yml" <<'YML'
groups:
  - name: g
    rules:
      - alert: A
        expr: up == 0
        annotations:
          summary: '{{ $labels.instance '
          description: 'ok {{ $value }}'
        labels:
          team: '{{ if $value }}x'
YML
expect_rc 1 'badtpl.yml:7:20: group "g": rule "A": invalid annotations: annotation "summary": template: :1: unclosed action' \
  -dryRun -rule="$T/badtpl.yml"
grep -qF 'badtpl.yml:10:17: group "g": rule "A": invalid labels: label "team": template: :1: unexpected EOF' \
  "$T/out.txt" || fail "label template error: $(cat "$T/out.txt")"
# Without validation the unclosed action loads: rendering copies a value without "}}" as is.
sed '/labels:/,$d' "$T/badtpl.yml" >"$T/unclosed.yml"
expect_rc 0 "are valid" -dryRun -rule.validateTemplates=false -rule="$T/unclosed.yml"
expect_rc 1 "unclosed action" -dryRun -rule="$T/unclosed.yml"

# -rule.templates: shared {{ define }} blocks; a broken templates file fails the load.
mkdir -p "$T/tpl"
printf '{{ define "hello" }}hello {{ . }}{{ end }}\n' >"$T/tpl/ok.tmpl"
cat >"$T/uses-define.yml" <<'YML'
groups:
  - name: g
    rules:
      - alert: A
        expr: up == 0
        annotations:
          summary: '{{ template "hello" $labels.job }}'
YML
expect_rc 0 "are valid" -dryRun -rule="$T/uses-define.yml" -rule.templates="$T/tpl/*.tmpl"
printf '{{ define "broken" }}{{ if }}{{ end }}\n' >"$T/broken.tmpl"
expect_rc 1 "broken.tmpl" -dryRun -rule="$T/uses-define.yml" -rule.templates="$T/broken.tmpl"

# A fake datasource for faults a real Prometheus does not produce: garbage, 500.
cat >"$T/fakeds.py" <<'PY'
import http.server, sys
mode = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if mode == "ok":
            body = b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]}]}}'
            self.send_response(200)
        elif mode == "garbage":
            body = b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{'
            self.send_response(200)
        else:
            body = b"fake datasource: forced internal error"
            self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
cat >"$T/rules.yml" <<'YML'
groups:
  - name: faults
    interval: 1s
    rules:
      - alert: Always
        expr: vector(1)
YML

# run_daemon NAME DATASOURCE_URL NOTIFIER_URL: starts alertd, echoes its base URL.
run_daemon() {
  local port
  port=$("$PEERS" free-port)
  "$ALERTD" -rule="$T/rules.yml" -datasource.url="$2" -notifier.url="$3" \
    -httpListenAddr="127.0.0.1:$port" -rule.evalDelay=0s -group.maxStartDelay=1s \
    -datasource.queryTimeout=2s >"$T/$1.log" 2>&1 &
  echo $! >>"$T/pids"
  "$PEERS" wait-ready "http://127.0.0.1:$port/-/ready" 10 || fail "$1: not ready"
  echo "http://127.0.0.1:$port"
}
metric() {  # base name -> value (first sample)
  curl -fsS "$1/metrics" | awk -v n="$2" '!done && ($1 == n || index($1, n"{") == 1) {print $2; done = 1}'
}
wait_metric_positive() {  # base name
  local n=0
  while :; do
    v=$(metric "$1" "$2")
    [ -n "$v" ] && [ "${v%%.*}" -gt 0 ] 2>/dev/null && return 0
    n=$((n + 1))
    [ "$n" -lt 30 ] || return 1
    sleep 0.5
  done
}

DEAD=$("$PEERS" free-port)
for mode in garbage status500; do
  port=$("$PEERS" free-port)
  python3 "$T/fakeds.py" "$port" "$mode" >"$T/fakeds-$mode.log" 2>&1 &
  PIDS+=($!)
  "$PEERS" wait-ready "http://127.0.0.1:$port/" 10 >/dev/null 2>&1 || true
  base=$(run_daemon "$mode" "http://127.0.0.1:$port" "http://127.0.0.1:$DEAD")
  wait_metric_positive "$base" vmalert_execution_errors_total || fail "$mode: errors not counted"
  curl -fsS "$base/-/healthy" >/dev/null || fail "$mode: daemon not healthy"
  grep -q 'group "faults": rule "Always": failed to execute' "$T/$mode.log" ||
    fail "$mode: error log lacks group and rule"
done
grep -q "unexpected response code 500" "$T/status500.log" || fail "500 error text"
grep -q "error parsing prometheus metrics" "$T/garbage.log" || fail "garbage error text"

# Dead datasource.
base=$(run_daemon deadds "http://127.0.0.1:$DEAD" "http://127.0.0.1:$DEAD")
wait_metric_positive "$base" vmalert_execution_errors_total || fail "dead datasource not counted"
rules_json=$(curl -fsS "$base/api/v1/rules")
grep -q '"health":"err"' <<<"$rules_json" || fail "rule health not err"

# A dead Alertmanager: sends fail, are counted, evaluation goes on.
port=$("$PEERS" free-port)
python3 "$T/fakeds.py" "$port" ok >"$T/fakeds-ok.log" 2>&1 &
PIDS+=($!)
base=$(run_daemon deadam "http://127.0.0.1:$port" "http://127.0.0.1:$DEAD")
wait_metric_positive "$base" vmalert_alerts_send_errors_total || fail "send errors not counted"
alerts_json=$(curl -fsS "$base/api/v1/alerts")
grep -q '"state":"firing"' <<<"$alerts_json" || fail "alert not firing"
grep -q "failed to send alerts to addr" "$T/deadam.log" || fail "send error text"

echo "faults: flags, -dryRun, garbage/500/dead datasource all handled"
