#!/usr/bin/env bash
# OAuth2 client credentials (app/oauth2.hpp) against a fake token endpoint and fake peers that
# record the Authorization header they get (tests/integration/fake_oauth2_peer.py; no OAuth2
# server is packaged, and a real Alertmanager does not check auth):
#   A. -datasource.oauth2.*, -notifier.oauth2.* and -remoteWrite.oauth2.*: every query, alert
#      POST and remote write carries "Bearer tok-N"; the token request has the scopes and the
#      endpoint params; tokens (expires_in 12 s, renewed 10 s early) are fetched again over
#      time, but far fewer times than requests are sent.
#   B. -notifier.config with oauth2 (client_secret_file) on a static target: the alerts carry a
#      token; after a reload with another client id the token endpoint refuses, and the error
#      names the token URL.
#   usage: oauth2_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init oauth2

PEER_PORT=$("$PEERS" free-port)
A_PORT=$("$PEERS" free-port)
P="http://127.0.0.1:$PEER_PORT"
A="http://127.0.0.1:$A_PORT"
$PY "$(dirname "$0")/fake_oauth2_peer.py" "$PEER_PORT" "$T/peer.log" "alertd id" "s3cret" 12 &
it_track $!
wait_for 10 "fake peer" curl -fsS -o /dev/null "$P/"

cat >"$T/rules.yml" <<'YML'
groups:
  - name: oauth
    interval: 1s
    rules:
      - alert: Steady
        expr: up
      - record: job:up
        expr: up
YML
OAUTH=(-oauth2.clientID="alertd id" -oauth2.clientSecret=s3cret -oauth2.tokenUrl="$P/token"
       -oauth2.scopes="read;write" -oauth2.endpointParams='{"audience":"peer"}')
"$ALERTD" -rule="$T/rules.yml" -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s \
  -group.maxStartDelay=1s -remoteWrite.flushInterval=1s \
  -datasource.url="$P" "${OAUTH[@]/#-/-datasource.}" \
  -notifier.url="$P" "${OAUTH[@]/#-/-notifier.}" \
  -remoteWrite.url="$P" "${OAUTH[@]/#-/-remoteWrite.}" >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
"$PEERS" wait-ready "$A/-/ready" 20 || { cat "$T/alertd.log"; fail "alertd not ready"; }

count() { grep -c "$1" "$T/peer.log" || true; }
wait_for 20 "a query with a token" grep -q "^query Bearer tok-" "$T/peer.log"
wait_for 20 "an alert POST with a token" grep -q "^alerts Bearer tok-" "$T/peer.log"
wait_for 20 "a remote write with a token" grep -q "^write Bearer tok-" "$T/peer.log"
sleep 6  # past the first tokens' renewal time (12 s - 10 s)
kill "$ALERTD_PID"; wait "$ALERTD_PID" 2>/dev/null || true
for kind in query alerts write; do
  total=$(count "^$kind ")
  bearer=$(count "^$kind Bearer tok-")
  [ "$total" -gt 0 ] && [ "$total" = "$bearer" ] ||
    { cat "$T/peer.log"; fail "$kind: $bearer of $total requests had a token"; }
done
grep -q "^token 1 read+write peer$" "$T/peer.log" || { cat "$T/peer.log"; fail "token request without scopes or endpoint params"; }
tokens=$(count "^token [0-9]")
requests=$(count "^\(query\|alerts\|write\) ")
# Three clients, each renewing every ~2 s over ~8 s: a handful of tokens, not one per request.
[ "$tokens" -ge 6 ] && [ "$tokens" -lt "$requests" ] ||
  { cat "$T/peer.log"; fail "$tokens tokens for $requests requests"; }
# Later requests use later tokens (renewed, not stuck on the first).
grep "^query Bearer" "$T/peer.log" | tail -1 | grep -qv "tok-1$" || fail "the datasource kept its first token"
echo "A: $requests requests with tokens, $tokens token requests"

# ---- B. -notifier.config oauth2 ------------------------------------------------------------------
: >"$T/peer.log"
printf 's3cret\n' >"$T/secret"
cat >"$T/notifier.yml" <<YML
oauth2:
  client_id: alertd id
  client_secret_file: secret
  token_url: $P/token
static_configs:
  - targets: ["127.0.0.1:$PEER_PORT"]
YML
"$ALERTD" -rule="$T/rules.yml" -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s \
  -group.maxStartDelay=1s -remoteWrite.url="$P" -datasource.url="$P" \
  -notifier.config="$T/notifier.yml" -configCheckInterval=1s >"$T/alertd2.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
"$PEERS" wait-ready "$A/-/ready" 20 || { cat "$T/alertd2.log"; fail "alertd not ready (B)"; }
wait_for 20 "an alert POST with a token (notifier config)" grep -q "^alerts Bearer tok-" "$T/peer.log"
# Another client id: the changed config is reloaded, the new client's token is refused.
sed -i 's/client_id: alertd id/client_id: intruder/' "$T/notifier.yml"
wait_for 20 "the refused token logged" grep -q "oauth2: cannot fetch token from \"$P/token\": unexpected status 401" "$T/alertd2.log"
echo "oauth2: tokens reach the datasource, Alertmanager and remote write; refusals are named"
