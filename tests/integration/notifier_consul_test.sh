#!/usr/bin/env bash
# consul_sd_configs with two real Alertmanagers found through a fake of Consul's catalog and
# health API (tests/integration/fake_consul.py: Consul's documented JSON; Consul is not packaged):
#   A. service "alertmanager" has two instances with tag "prod": AM1 (ServiceAddress set, tag
#      "primary") and AM2 (ServiceAddress empty: the node's Address is used); a third instance
#      without "prod" and a service "web" are not selected. Both AMs receive alerts relabeled by
#      the consul config's alert_relabel_configs; relabel_configs on __meta_consul_tags,
#      __meta_consul_node, __meta_consul_dc and __meta_consul_service_metadata_* show in
#      /api/v1/notifiers (kind "consulSD"). Every request to Consul carries the token, dc,
#      stale and an OAuth2 bearer token (the entry's oauth2, from a fake token endpoint).
#   B. the catalog changes (AM1's instance deregistered): AM1 goes, AM2 stays
#      (-promscrape.consulSDCheckInterval=1s).
#   C. Consul fails (500): the last targets are kept and the error is logged; AM1 comes back
#      under another node once Consul answers again.
#   usage: notifier_consul_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init notifier-consul

PROM_PORT=$("$PEERS" free-port)
AM1_PORT=$("$PEERS" free-port)
AM2_PORT=$("$PEERS" free-port)
CONSUL_PORT=$("$PEERS" free-port)
IDP_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
mkdir -p "$T/prom" "$T/am" "$T/am2"
"$PEERS" start-prometheus "$T/prom" "$PROM_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am" "$AM1_PORT" >/dev/null
"$PEERS" start-alertmanager "$T/am2" "$AM2_PORT" >/dev/null
trap '"$PEERS" stop "$T/am2/alertmanager.pid" || true; _it_cleanup' EXIT
AM1="http://127.0.0.1:$AM1_PORT"
AM2="http://127.0.0.1:$AM2_PORT"
A="http://127.0.0.1:$A_PORT"

# catalog [AM1_NODE]: the health entries; AM1's instance is left out when AM1_NODE is "none".
catalog() {
  $PY - "$1" "$AM1_PORT" "$AM2_PORT" >"$T/catalog.json.tmp" <<'PY'
import json, sys
am1_node, am1_port, am2_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def entry(node, node_addr, sid, service, addr, port, tags, meta=None):
    return {"Node": {"ID": node + "-id", "Node": node, "Address": node_addr, "Datacenter": "dc1",
                     "TaggedAddresses": {"lan": node_addr, "wan": "203.0.113.9"},
                     "Meta": {"rack": "r-" + node}},
            "Service": {"ID": sid, "Service": service, "Tags": tags, "Address": addr,
                        "Port": port, "Meta": meta or {}},
            "Checks": [{"CheckID": "serfHealth", "Status": "passing"}]}
out = []
if am1_node != "none":
    out.append(entry(am1_node, "10.0.0.1", "am-1", "alertmanager", "127.0.0.1", am1_port,
                     ["prod", "primary"], {"team": "sre"}))
out.append(entry("node2", "127.0.0.1", "am-2", "alertmanager", "", am2_port, ["prod"]))
out.append(entry("node3", "127.0.0.1", "am-3", "alertmanager", "", 1, ["staging"]))
out.append(entry("node2", "127.0.0.1", "web-1", "web", "", 2, ["prod"]))
json.dump(out, sys.stdout)
PY
  mv "$T/catalog.json.tmp" "$T/catalog.json"
}
catalog node1
$PY "$(dirname "$0")/fake_oauth2_peer.py" "$IDP_PORT" "$T/idp.log" "alertd" "idp-secret" 3600 &
it_track $!
wait_for 10 "fake token endpoint" curl -fsS -o /dev/null "http://127.0.0.1:$IDP_PORT/"
$PY "$(dirname "$0")/fake_consul.py" "$CONSUL_PORT" "$T/catalog.json" s3cret "$T/consul.fail" \
  "$T/consul.log" &
it_track $!
wait_for 10 "fake consul" curl -fsS -o /dev/null -H "X-Consul-Token: s3cret" \
  "http://127.0.0.1:$CONSUL_PORT/v1/catalog/services"
: >"$T/consul.log"  # only alertd's requests from here on

cat >"$T/rules.yml" <<'YML'
groups:
  - name: consul
    interval: 1s
    rules:
      - alert: Steady
        expr: vector(1)
YML
cat >"$T/notifier.yml" <<YML
consul_sd_configs:
  - server: 127.0.0.1:$CONSUL_PORT
    token: s3cret
    datacenter: dc1
    services: [alertmanager]
    tags: [prod]
    oauth2:
      client_id: alertd
      client_secret: idp-secret
      token_url: http://127.0.0.1:$IDP_PORT/token
    alert_relabel_configs:
      - {target_label: found_by, replacement: consul}
relabel_configs:
  - {source_labels: [__meta_consul_tags], regex: ".*,primary,.*", target_label: role, replacement: primary}
  - {source_labels: [__meta_consul_node], target_label: node}
  - {source_labels: [__meta_consul_dc], target_label: dc}
  - {source_labels: [__meta_consul_service_metadata_team], target_label: team}
YML
"$ALERTD" -rule="$T/rules.yml" -datasource.url="http://127.0.0.1:$PROM_PORT" \
  -notifier.config="$T/notifier.yml" -promscrape.consulSDCheckInterval=1s \
  -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
  >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
"$PEERS" wait-ready "$A/-/ready" 20 || { cat "$T/alertd.log"; fail "alertd not ready"; }

am_alerts() { curl -fsS --max-time 2 "$1/api/v2/alerts" | $PY -c '
import json, sys
for a in json.load(sys.stdin):
    print(a["labels"]["alertname"], a["labels"].get("found_by", "-"))'; }
am_has() { am_alerts "$1" >"$T/am.out" 2>/dev/null && grep -q "^$2$" "$T/am.out"; }
notifiers() { curl -fsS --max-time 2 "$A/api/v1/notifiers" | $PY -c '
import json, sys
for k in json.load(sys.stdin)["data"]["notifiers"]:
    for t in sorted(k["targets"], key=lambda t: t["address"]):
        l = t["labels"]
        print(k["kind"], t["address"], l.get("node", "-"), l.get("dc", "-"), l.get("role", "-"),
              l.get("team", "-"))'; }
notifiers_are() { notifiers >"$T/n.out" 2>/dev/null && [ "$(cat "$T/n.out")" = "$1" ]; }
# Sorted by address: 127.0.0.1:AM1 and 127.0.0.1:AM2 compare as text.
expect_both() {
  $PY -c '
import sys
a1, a2 = sys.argv[1], sys.argv[2]
rows = [f"consulSD http://127.0.0.1:{a1}/api/v2/alerts {sys.argv[3]} dc1 primary sre",
        f"consulSD http://127.0.0.1:{a2}/api/v2/alerts node2 dc1 - -"]
print("\n".join(sorted(rows, key=lambda r: r.split()[1])))' "$AM1_PORT" "$AM2_PORT" "$1"
}

# ---- A. two instances found ------------------------------------------------------------------
wait_for 20 "relabeled Steady at AM1" am_has "$AM1" "Steady consul"
wait_for 10 "relabeled Steady at AM2 (node address)" am_has "$AM2" "Steady consul"
notifiers_are "$(expect_both node1)" || { cat "$T/n.out"; fail "/api/v1/notifiers (A)"; }
$PY - "$T/consul.log" <<'PY' || fail "requests to Consul"
import json, sys, urllib.parse
reqs = [json.loads(l) for l in open(sys.argv[1])]
paths = {urllib.parse.urlsplit(r["path"]).path for r in reqs}
assert paths == {"/v1/catalog/services", "/v1/health/service/alertmanager"}, paths
for r in reqs:
    assert r["token"] == "s3cret", r
    assert (r["auth"] or "").startswith("Bearer tok-"), r
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(r["path"]).query, keep_blank_values=True)
    assert q.get("dc") == ["dc1"] and "stale" in q, r
    if "health" in r["path"]:
        assert q.get("tag") == ["prod"], r
PY
echo "A: AM1 and AM2 found through Consul, alerts relabeled, meta labels relabeled"

# ---- B. AM1's instance deregistered ----------------------------------------------------------
catalog none
wait_for 10 "AM1 gone" notifiers_are "consulSD $AM2/api/v2/alerts node2 dc1 - -"
echo "B: a deregistered instance goes"

# ---- C. Consul fails: the last targets stay ----------------------------------------------------
touch "$T/consul.fail"
catalog node9
wait_for 10 "the failure logged" grep -q "consul_sd_configs: consul: GET .*unexpected status 500.*keeping the last targets" "$T/alertd.log"
notifiers_are "consulSD $AM2/api/v2/alerts node2 dc1 - -" || { cat "$T/n.out"; fail "targets not kept while Consul fails"; }
rm "$T/consul.fail"
wait_for 10 "AM1 back as node9" notifiers_are "$(expect_both node9)"
echo "notifier_consul: targets from Consul's catalog and health API, refreshed, kept on failure"
