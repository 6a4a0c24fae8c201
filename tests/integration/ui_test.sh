#!/usr/bin/env bash
# The web UI in a real browser: headless Chromium (Debian `chromium`) loads every page of a
# running alertd fed by real Prometheus and sending to real Alertmanager, and the test checks what
# the rendered page holds: the groups page (rules, states, health), the alerts page (the firing
# and the pending alert with labels and annotations), the alert page reached from the alerts page
# (the generatorURL target), the rule page with its history, the notifiers page, and the banner
# after a reload that failed. Screenshots (desktop and phone width) are kept in ARTIFACT_DIR.
#   usage: ui_test.sh ALERTD_BINARY ARTIFACT_DIR
set -euo pipefail
ALERTD=$1
ARTIFACTS=$2
source "$(dirname "$0")/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  echo "ALERTD_SKIP: chromium is not installed (scripts/install-deps.sh installs it)"
  exit 0
fi
it_init ui
mkdir -p "$ARTIFACTS" "$T/prom" "$T/am" "$T/target" "$T/chrome"

PROM_PORT=$("$PEERS" free-port)
AM_PORT=$("$PEERS" free-port)
ALERTD_PORT=$("$PEERS" free-port)
it_scrape_target ui 'ui_temperature_celsius{sensor="a",room="lab"} 85
ui_temperature_celsius{sensor="b",room="hall"} 20'
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM_PORT" >/dev/null

cat >"$T/rules.yml" <<'YML'
groups:
  - name: ui-temperature
    interval: 1s
    rules:
      - alert: TooHot
        expr: ui_temperature_celsius > 80
        labels: {severity: page}
        annotations: {summary: "Sensor {{ $labels.sensor }} in {{ $labels.room }} is hot"}
      - alert: Warm
        expr: ui_temperature_celsius > 10 and ui_temperature_celsius < 50
        for: 1h
        annotations: {summary: "Sensor {{ $labels.sensor }} is warm"}
      - alert: Frozen
        expr: ui_temperature_celsius < -50
YML
"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.url="http://127.0.0.1:$AM_PORT" -httpListenAddr="127.0.0.1:$ALERTD_PORT" \
  -external.url="http://127.0.0.1:$ALERTD_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
  >"$T/alertd.log" 2>&1 &
it_track $!
A="http://127.0.0.1:$ALERTD_PORT"
wait_for 20 "alertd /-/ready" curl -fs -o /dev/null "$A/-/ready"
both_active() {
  curl -fsS "$A/api/v1/alerts" | $PY -c '
import json, sys
s = sorted(a["name"] + ":" + a["state"] for a in json.load(sys.stdin)["data"]["alerts"])
sys.exit(0 if s == ["TooHot:firing", "Warm:pending"] else 1)'
}
wait_for 60 "TooHot firing and Warm pending" both_active

# browse NAME URL: the DOM after Chromium rendered URL, in $T/NAME.html.
browse() {
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$T/chrome" --dump-dom "$2" >"$T/$1.html" 2>"$T/chrome-$1.err" \
    || fail "chromium could not load $2: $(tail -3 "$T/chrome-$1.err")"
}
shot() {  # shot NAME URL WIDTH HEIGHT
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$T/chrome" --window-size="$3,$4" --screenshot="$ARTIFACTS/$1.png" "$2" \
    >/dev/null 2>"$T/chrome-shot.err" || fail "chromium screenshot of $2"
  [ "$(head -c 4 "$ARTIFACTS/$1.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] \
    || fail "$1.png is not a PNG"
}
has() {  # has NAME TEXT...: every TEXT is in the rendered page
  local page=$1 want
  shift
  for want in "$@"; do
    grep -qF -- "$want" "$T/$page.html" || fail "$page page lacks: $want (see $T/$page.html)"
  done
}

browse groups "$A/"
has groups "<title>Groups - alertd</title>" ">ui-temperature <span" ">TooHot</a>" ">Warm</a>" \
  ">Frozen</a>" 'class="badge firing"' 'class="badge pending"' 'class="badge inactive"'
shot groups "$A/" 1280 900
shot groups-phone "$A/" 390 844

browse firing "$A/vmalert/groups?state=firing"
has firing ">TooHot</a>"
! grep -qF ">Frozen</a>" "$T/firing.html" || fail "state=firing shows Frozen"

browse alerts "$A/vmalert/alerts"
has alerts "Alerts (1 firing, 1 pending)" "sensor=a" "room=lab" "Sensor a in lab is hot" \
  "Sensor b is warm"
shot alerts "$A/vmalert/alerts" 1280 900

# The alert page through the alerts page's own link, as a person would click it.
href=$(grep -o 'href="alert?group_id=[0-9]*&amp;alert_id=[0-9]*"' "$T/alerts.html" | head -1 \
  | sed 's/^href="//; s/"$//; s/&amp;/\&/g')
[ -n "$href" ] || fail "no alert link on the alerts page"
browse alert "$A/vmalert/$href"
has alert "<h1>Alert " "ui_temperature_celsius &gt; 80"
shot alert "$A/vmalert/$href" 1280 900

rule_href=$(grep -o 'href="rule?group_id=[0-9]*&amp;rule_id=[0-9]*"' "$T/alert.html" | head -1 \
  | sed 's/^href="//; s/"$//; s/&amp;/\&/g')
[ -n "$rule_href" ] || fail "no rule link on the alert page"
browse rule "$A/vmalert/$rule_href"
has rule "Alerting rule TooHot" "Last updates" "curl"

browse notifiers "$A/vmalert/notifiers"
has notifiers "Notifiers (1)" "127.0.0.1:$AM_PORT/api/v2/alerts"

# A reload that fails shows on the pages; the old rules keep running.
printf 'groups:\n  - name: broken\n    rules:\n      - alert: X\n        expr: "up >"\n' >"$T/rules.yml"
curl -fsS -o /dev/null "$A/-/reload"
banner() { curl -fsS "$A/vmalert/alerts" | grep -q 'id="reload-error"'; }
wait_for 20 "the reload error on the alerts page" banner
browse broken "$A/vmalert/groups"
has broken "The last configuration reload" "rules.yml" ">TooHot</a>"
shot reload-error "$A/vmalert/groups" 1280 600
echo "ui: every page rendered in Chromium; screenshots in $ARTIFACTS"
