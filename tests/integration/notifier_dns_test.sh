#!/usr/bin/env bash
# dns_sd_configs with a real DNS server (Debian dnsmasq on a free loopback port, given to alertd
# by -notifier.dnsServer) and two real Alertmanagers:
#   A. AM1 is found through an SRV record (_am._tcp.alertd.test -> localhost:PORT), AM2 through an A record (am2.alertd.test, port from the config); both
#      receive alerts; AM2's group relabels them; /api/v1/notifiers lists both as dnsSD.
#      AM2 is also found through an MX record (mail.alertd.test -> localhost, port from the
#      config), with its own alert_relabel_configs and __meta_dns_mx_record_target.
#   B. dnsmasq restarts without the SRV record: AM1 goes (refresh_interval 1s), AM2 stays.
#   usage: notifier_dns_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init notifier-dns
DNSMASQ=$(command -v dnsmasq || echo /usr/sbin/dnsmasq)
[ -x "$DNSMASQ" ] || { echo "dnsmasq not installed (scripts/install-deps.sh)"; exit 1; }

PROM_PORT=$("$PEERS" free-port)
AM1_PORT=$("$PEERS" free-port)
AM2_PORT=$("$PEERS" free-port)
DNS_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am" "$T/am2"
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM1_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am2" "$AM2_PORT" >/dev/null
DNS_PID=
stop_dns() { if [ -n "$DNS_PID" ]; then kill "$DNS_PID" 2>/dev/null || true; wait "$DNS_PID" 2>/dev/null || true; DNS_PID=; fi; }
trap 'stop_dns; "$PEERS" stop "$T/am2/alertmanager.pid" || true; _it_cleanup' EXIT
start_dns() {  # extra dnsmasq arguments
  "$DNSMASQ" --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
    --listen-address=127.0.0.1 --port="$DNS_PORT" --user="$(id -un)" --pid-file= \
    --local=/alertd.test/ \
    --host-record=am2.alertd.test,127.0.0.1 \
    --mx-host=mail.alertd.test,localhost,10 \
    "$@" >>"$T/dnsmasq.log" 2>&1 &
  DNS_PID=$!
  wait_for 10 "dnsmasq answering" bash -c \
    "$PY -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"127.0.0.1\", $DNS_PORT))' 2>/dev/null && exit 1 || exit 0"
}
# The SRV target is resolved by the HTTP client through the system resolver, as in Prometheus:
# "localhost" here (dnsmasq answers only the SRV and A queries of the discovery).
start_dns --srv-host="_am._tcp.alertd.test,localhost,$AM1_PORT"
AM1="http://127.0.0.1:$AM1_PORT"
AM2="http://127.0.0.1:$AM2_PORT"
A="http://127.0.0.1:$A_PORT"

cat >"$T/rules.yml" <<'YML'
groups:
  - name: dns
    interval: 1s
    rules:
      - alert: Steady
        expr: vector(1)
YML
cat >"$T/notifier.yml" <<YML
dns_sd_configs:
  - names: [_am._tcp.alertd.test]
    refresh_interval: 1s
  - names: [am2.alertd.test]
    type: A
    port: $AM2_PORT
    refresh_interval: 1s
    alert_relabel_configs:
      - {target_label: found_by, replacement: a_record}
  - names: [mail.alertd.test]
    type: MX
    port: $AM2_PORT
    refresh_interval: 1s
    alert_relabel_configs:
      - {target_label: found_by, replacement: mx_record}
relabel_configs:
  - {source_labels: [__meta_dns_name], target_label: dns_name}
  - {source_labels: [__meta_dns_mx_record_target], target_label: mx_target}
YML
"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.config="$T/notifier.yml" -notifier.dnsServer="127.0.0.1:$DNS_PORT" \
  -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
  >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
"$PEERS" wait-ready "$A/-/ready" 20 || fail "alertd not ready"

am_alerts() { curl -fsS --max-time 2 "$1/api/v2/alerts" | $PY -c '
import json, sys
for a in json.load(sys.stdin):
    print(a["labels"]["alertname"], a["labels"].get("found_by", "-"))'; }
am_has() { am_alerts "$1" >"$T/am.out" 2>/dev/null && grep -q "^$2$" "$T/am.out"; }
notifiers() { curl -fsS --max-time 2 "$A/api/v1/notifiers" | $PY -c '
import json, sys
for k in json.load(sys.stdin)["data"]["notifiers"]:
    for t in sorted(k["targets"], key=lambda t: t["labels"].get("dns_name", "")):
        print(k["kind"], t["address"], t["labels"].get("dns_name", "-"),
              t["labels"].get("mx_target", "-"))'; }
notifiers_are() { notifiers >"$T/n.out" 2>/dev/null && [ "$(cat "$T/n.out")" = "$1" ]; }

# ---- A. SRV and A records ---------------------------------------------------------------------
wait_for 20 "Steady at AM1 (SRV)" am_has "$AM1" "Steady -"
wait_for 10 "relabeled Steady at AM2 (A)" am_has "$AM2" "Steady a_record"
wait_for 10 "relabeled Steady at AM2 (MX)" am_has "$AM2" "Steady mx_record"
notifiers_are "dnsSD http://localhost:$AM1_PORT/api/v2/alerts _am._tcp.alertd.test -
dnsSD http://127.0.0.1:$AM2_PORT/api/v2/alerts am2.alertd.test -
dnsSD http://localhost:$AM2_PORT/api/v2/alerts mail.alertd.test localhost" || { cat "$T/n.out"; fail "/api/v1/notifiers (A)"; }
echo "A: AM1 found through SRV, AM2 through A and MX"

# ---- B. the SRV record goes ------------------------------------------------------------------
stop_dns
start_dns
wait_for 15 "AM1 gone from /api/v1/notifiers" \
  notifiers_are "dnsSD http://127.0.0.1:$AM2_PORT/api/v2/alerts am2.alertd.test -
dnsSD http://localhost:$AM2_PORT/api/v2/alerts mail.alertd.test localhost"
echo "notifier_dns: targets from SRV, A and MX records of a real DNS server, refreshed"
