#!/usr/bin/env bash
# Quick start: installs the Debian packages, builds alertd, starts a local Prometheus and
# Alertmanager on 127.0.0.1 (ports 19090 and 19093, never the system defaults), a static
# metrics target on 19080, and runs alertd on deploy/examples/rules.yml in the foreground.
# Ctrl-C stops everything. State lives in .run/ (removed on the next start).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PROM_PORT=${PROM_PORT:-19090}
AM_PORT=${AM_PORT:-19093}
TARGET_PORT=${TARGET_PORT:-19080}
ALERTD_ADDR=${ALERTD_ADDR:-127.0.0.1:8880}

bash scripts/install-deps.sh
BUILD_DIR=build TARGETS=alertd ./scripts/build.sh

RUN="$ROOT/.run"
for pidfile in "$RUN"/*/*.pid; do
  [ -f "$pidfile" ] && tests/integration/peers.sh stop "$pidfile" || true
done
rm -rf "$RUN"
mkdir -p "$RUN/prom" "$RUN/am" "$RUN/target"

cp deploy/examples/demo-metrics.prom "$RUN/target/metrics"
python3 -m http.server --bind 127.0.0.1 --directory "$RUN/target" "$TARGET_PORT" \
  </dev/null >"$RUN/target/http.log" 2>&1 &
echo $! >"$RUN/target/http.pid"

cat >"$RUN/prom/prometheus.yml" <<YML
global: {scrape_interval: 5s}
scrape_configs:
  - job_name: demo
    static_configs: [{targets: ['127.0.0.1:$TARGET_PORT']}]
YML
cat >"$RUN/am/alertmanager.yml" <<YML
route: {receiver: blackhole, group_by: [alertname], group_wait: 1s, group_interval: 1s}
receivers: [{name: blackhole}]
YML

cleanup() {
  tests/integration/peers.sh stop "$RUN/prom/prometheus.pid" || true
  tests/integration/peers.sh stop "$RUN/am/alertmanager.pid" || true
  kill "$(cat "$RUN/target/http.pid")" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

tests/integration/peers.sh start-prometheus "$RUN/prom" "$PROM_PORT" >/dev/null
tests/integration/peers.sh start-alertmanager "$RUN/am" "$AM_PORT" >/dev/null

cat <<TXT

  Prometheus    http://127.0.0.1:$PROM_PORT/
  Alertmanager  http://127.0.0.1:$AM_PORT/#/alerts   (HighTemperature arrives in ~30 s)
  alertd        http://$ALERTD_ADDR/api/v1/alerts   and   http://$ALERTD_ADDR/metrics

  Ctrl-C stops alertd, Prometheus and Alertmanager.

TXT
./build/app/alertd \
  -rule=deploy/examples/rules.yml \
  -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="http://127.0.0.1:$AM_PORT" \
  -httpListenAddr="$ALERTD_ADDR" \
  -external.url="http://$ALERTD_ADDR" \
  -rule.evalDelay=0s \
  -group.maxStartDelay=1s \
  -state.path="$RUN/alerts.state" \
  -rule.keepFiringOnError=15m &
ALERTD_PID=$!
trap 'kill -TERM $ALERTD_PID 2>/dev/null; wait $ALERTD_PID; cleanup' EXIT INT TERM
wait $ALERTD_PID
