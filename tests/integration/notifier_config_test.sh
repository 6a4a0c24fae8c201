#!/usr/bin/env bash
# -notifier.config with two real Alertmanagers (app/notifier_discovery.hpp):
#   A. -dryRun reports a bad notifier config with file:line:column; -notifier.config with
#      -notifier.url is refused at start, naming the flags.
#   B. file_sd_configs finds AM1 only: it receives alerts relabeled by the global and the
#      group's alert_relabel_configs (label added, alert Noisy dropped); AM2 receives nothing;
#      /api/v1/notifiers lists AM1 under kind "fileSD" with its relabeled target labels.
#   C. The file_sd file is rewritten: AM1 goes, AM2 comes (refresh_interval 1s): AM2 receives
#      the relabeled alerts, /api/v1/notifiers lists only AM2.
#   D. The notifier config gains a static_configs entry for AM1 without group rules (SIGHUP):
#      AM1 now receives Noisy too, AM2 still does not, AM2's target kept (no send error).
#   usage: notifier_config_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init notifier-config

PROM_PORT=$("$PEERS" free-port)
AM1_PORT=$("$PEERS" free-port)
AM2_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am" "$T/am2"
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM1_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am2" "$AM2_PORT" >/dev/null
trap '"$PEERS" stop "$T/am2/alertmanager.pid" || true; _it_cleanup' EXIT
AM1="http://127.0.0.1:$AM1_PORT"
AM2="http://127.0.0.1:$AM2_PORT"
A="http://127.0.0.1:$A_PORT"

cat >"$T/rules.yml" <<'YML'
groups:
  - name: nc
    interval: 1s
    rules:
      - alert: Steady
        expr: vector(1)
      - alert: Noisy
        expr: vector(1)
YML
sd() {  # the file_sd file: one target group with the given Alertmanager
  printf '[{"targets": ["%s"], "labels": {"dc": "%s"}}]\n' "$1" "$2" >"$T/sd.json.tmp"
  mv "$T/sd.json.tmp" "$T/sd.json"
}
write_config() {  # [STATIC_TARGET]
  {
    if [ -n "${1:-}" ]; then
      echo "static_configs:"
      echo "  - targets: [\"$1\"]"
    fi
    cat <<'YML'
file_sd_configs:
  - files: [sd.json]
    refresh_interval: 1s
    alert_relabel_configs:
      - {source_labels: [alertname], regex: Noisy, action: drop}
      - {target_label: relabeled, replacement: "yes"}
relabel_configs:
  - {source_labels: [dc], regex: "(.*)", target_label: datacenter, replacement: "dc-$1"}
alert_relabel_configs:
  - {target_label: via, replacement: alertd}
YML
  } >"$T/notifier.yml.tmp"
  mv "$T/notifier.yml.tmp" "$T/notifier.yml"
}

# ---- A. -dryRun and the mutually exclusive modes ---------------------------------------------
printf 'static_configs:\n  - targets: [a]\nalert_relabel_configs:\n  - {action: replace}\n' >"$T/bad.yml"
if "$ALERTD" -dryRun -rule="$T/rules.yml" -notifier.config="$T/bad.yml" >"$T/dry.out" 2>&1; then
  fail "-dryRun accepted a bad notifier config"
fi
grep -q "$T/bad.yml:4:5: " "$T/dry.out" || { cat "$T/dry.out"; fail "-dryRun error without file:line:column"; }
sd "127.0.0.1:$AM1_PORT" east
write_config
"$ALERTD" -dryRun -rule="$T/rules.yml" -notifier.config="$T/notifier.yml" >"$T/dry.out" 2>&1 ||
  { cat "$T/dry.out"; fail "-dryRun refused a good notifier config"; }
if "$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.config="$T/notifier.yml" -notifier.url="$AM1" -httpListenAddr="127.0.0.1:$A_PORT" \
  >"$T/both.out" 2>&1; then
  fail "-notifier.config with -notifier.url was accepted"
fi
grep -q -- "-notifier.url, -notifier.config and -notifier.blackhole" "$T/both.out" ||
  { cat "$T/both.out"; fail "the mode error does not name the flags"; }

# ---- B. AM1 through file_sd -------------------------------------------------------------------
"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.config="$T/notifier.yml" -httpListenAddr="127.0.0.1:$A_PORT" \
  -rule.evalDelay=0s -group.maxStartDelay=1s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
"$PEERS" wait-ready "$A/-/ready" 20 || fail "alertd not ready"

# am_alerts URL: "name relabeled via" per alert the Alertmanager lists.
am_alerts() { curl -fsS --max-time 2 "$1/api/v2/alerts" | $PY -c '
import json, sys
for a in json.load(sys.stdin):
    l = a["labels"]
    print(l["alertname"], l.get("relabeled", "-"), l.get("via", "-"))'; }
am_has() { am_alerts "$1" >"$T/am.out" 2>/dev/null && grep -q "^$2$" "$T/am.out"; }
notifiers() { curl -fsS --max-time 2 "$A/api/v1/notifiers" | $PY -c '
import json, sys
for k in json.load(sys.stdin)["data"]["notifiers"]:
    for t in k["targets"]:
        print(k["kind"], t["address"], t["labels"].get("datacenter", "-"), t["lastError"] or "-")'; }
notifiers_are() { notifiers >"$T/n.out" 2>/dev/null && [ "$(cat "$T/n.out")" = "$1" ]; }

wait_for 20 "relabeled Steady at AM1" am_has "$AM1" "Steady yes alertd"
sleep 2  # two more rounds
am_alerts "$AM1" | grep -q "^Noisy" && fail "AM1 received Noisy, dropped by the group's rules"
[ -z "$(am_alerts "$AM2")" ] || fail "AM2 received alerts before it was discovered"
notifiers_are "fileSD $AM1/api/v2/alerts dc-east -" || { cat "$T/n.out"; fail "/api/v1/notifiers (B)"; }
echo "B: AM1 found through file_sd, receives relabeled alerts"

# ---- C. the file_sd file changes: AM1 goes, AM2 comes ----------------------------------------
sd "127.0.0.1:$AM2_PORT" west
wait_for 15 "relabeled Steady at AM2" am_has "$AM2" "Steady yes alertd"
wait_for 5 "/api/v1/notifiers lists only AM2" notifiers_are "fileSD $AM2/api/v2/alerts dc-west -"
am_alerts "$AM2" | grep -q "^Noisy" && fail "AM2 received Noisy"
echo "C: file_sd change: AM1 gone, AM2 found"

# ---- D. reload: a static AM1 without group rules ---------------------------------------------
write_config "127.0.0.1:$AM1_PORT"
kill -HUP "$ALERTD_PID"
wait_for 15 "Noisy (not dropped: no group rules) at the static AM1" am_has "$AM1" "Noisy - alertd"
# (relabel_configs run on static targets too: no dc label, so datacenter="dc-".)
wait_for 5 "/api/v1/notifiers lists both" notifiers_are "fileSD $AM2/api/v2/alerts dc-west -
static $AM1/api/v2/alerts dc- -"
sleep 2
am_alerts "$AM2" | grep -q "^Noisy" && fail "AM2 received Noisy after the reload"
grep -q "notifier.config=.* changed" "$T/alertd.log" || fail "reload did not apply the changed config"
echo "notifier_config: file_sd targets found, swapped on a file change and on reload; relabeling per target"
