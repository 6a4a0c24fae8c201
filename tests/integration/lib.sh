# lib.sh: what every daemon integration test needs, sourced after `set -euo pipefail`:
#   it_init NAME            T (a temp dir, removed at exit unless KEEP_TMP=1), PEERS, PY; an
#                           EXIT trap that kills what it_track registered and stops the peers
#                           started under $T/prom and $T/am
#   it_track PID            kill PID (SIGKILL) at exit
#   fail MSG...             print FAIL, the tail of every $T/*.log and $T/hook*.jsonl, exit 1
#   wait_for SECS WHAT CMD...   poll CMD every 0.25 s; fail after SECS
#   it_webhook              an Alertmanager webhook receiver on HOOK_PORT appending
#                           {"status", "alerts": [status...]} per notification to
#                           $T/hook.jsonl and to $T/hook-ALERTNAME.jsonl (its commonLabels)
#                           and writes $T/am/alertmanager.yml routing every alert to it
#                           (grouped by alertname, 1 s group wait and interval, send_resolved)
#   it_scrape_target JOB TEXT   serves TEXT as /metrics on TARGET_PORT (python3 http.server)
#                           and writes $T/prom/prometheus.yml scraping it every 1 s as job JOB
# Peers come from peers.sh ($PEERS start-prometheus "$T/prom" PORT, ...).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PEERS="$HERE/peers.sh"
PY=python3
_IT_PIDS=()

it_init() {
  T=$(mktemp -d "/tmp/alertd-$1.XXXXXX")
  trap _it_cleanup EXIT
}

it_track() { _IT_PIDS+=("$1"); }

_it_cleanup() {
  local pid
  for pid in "${_IT_PIDS[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true  # reaped quietly: no "Killed" line from bash
  done
  "$PEERS" stop "$T/prom/prometheus.pid" || true
  "$PEERS" stop "$T/am/alertmanager.pid" || true
  if [ "${KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; fi
}

fail() {
  local f
  echo "FAIL: $*" >&2
  for f in "$T"/*.log; do
    [ -f "$f" ] || continue
    echo "--- $f (tail)" >&2
    tail -n 30 "$f" >&2
  done
  for f in "$T"/hook*.jsonl; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    cat "$f" >&2
  done
  exit 1
}

wait_for() {
  # A deadline on the clock, not a count of polls: under load each poll (often a curl or a
  # python3 start) takes far longer than the 0.25 s sleep.
  local secs=$1 what=$2
  shift 2
  local deadline=$((SECONDS + secs))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for: $what"
    sleep 0.25
  done
}

it_webhook() {
  HOOK_PORT=$("$PEERS" free-port)
  cat >"$T/hook.py" <<'PY'
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        line = json.dumps({"status": body["status"],
                           "alerts": [a["status"] for a in body["alerts"]]}) + "\n"
        name = body.get("commonLabels", {}).get("alertname", "")
        for path in [sys.argv[2] + "/hook.jsonl"] + ([sys.argv[2] + "/hook-" + name + ".jsonl"] if name else []):
            with open(path, "a") as f:
                f.write(line)
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
  mkdir -p "$T/am"
  cat >"$T/am/alertmanager.yml" <<YML
route: {receiver: hook, group_by: [alertname], group_wait: 1s, group_interval: 1s, repeat_interval: 1h}
receivers:
  - name: hook
    webhook_configs: [{url: 'http://127.0.0.1:$HOOK_PORT/', send_resolved: true}]
YML
  touch "$T/hook.jsonl"
  $PY "$T/hook.py" "$HOOK_PORT" "$T" >"$T/hook.out" 2>&1 &
  it_track $!
}

it_scrape_target() {
  local job=$1 text=$2
  TARGET_PORT=$("$PEERS" free-port)
  mkdir -p "$T/target" "$T/prom"
  printf '%s\n' "$text" >"$T/target/metrics"
  $PY -m http.server --bind 127.0.0.1 --directory "$T/target" "$TARGET_PORT" </dev/null \
    >"$T/target/http.log" 2>&1 &
  it_track $!
  cat >"$T/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: $job
    static_configs: [{targets: ['127.0.0.1:$TARGET_PORT']}]
YML
}
