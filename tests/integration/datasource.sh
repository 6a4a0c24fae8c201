#!/bin/sh
# datasource.sh DRIVER - integration test of datasource::HttpQuerier against real Prometheus.
#
# Backfills deterministic data (promtool openmetrics, T0 = 1700000000), starts two Prometheus
# instances on free loopback ports through peers.sh - one over HTTP with basic auth, one over
# HTTPS with a CA made here - runs the Catch2 DRIVER with their coordinates in the environment,
# and stops both on exit whatever happens. Exits 77 (skipped) when Prometheus is not installed.
set -eu

DRIVER=${1:?usage: datasource.sh DRIVER [catch args...]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
PEERS="$HERE/peers.sh"

if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
    echo "datasource.sh: prometheus/promtool not installed (scripts/install-deps.sh); skipping" >&2
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/alertd-it-datasource.XXXXXX")
cleanup() {
    "$PEERS" stop "$T/auth/prometheus.pid" || true
    "$PEERS" stop "$T/tls/prometheus.pid" || true
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Deterministic data: 2 temperature series and a counter, 15 s step, 3 h from T0.
python3 - "$T/data.om" <<'PY'
import sys
T0, step, n = 1700000000, 15, 3 * 3600 // 15
with open(sys.argv[1], "w") as f:
    f.write("# HELP temperature_celsius Synthetic temperature.\n# TYPE temperature_celsius gauge\n")
    for inst, base in (("127.0.0.1:9001", 20), ("127.0.0.1:9002", 40)):
        for i in range(n + 1):
            f.write(f'temperature_celsius{{job="synthetic",instance="{inst}"}} {base + (i % 40)} {T0 + i*step}\n')
    f.write("# HELP requests Synthetic request counter.\n# TYPE requests counter\n")
    for i in range(n + 1):
        f.write(f'requests_total{{job="synthetic",instance="127.0.0.1:9001"}} {i*10} {T0 + i*step}\n')
    f.write("# EOF\n")
PY
promtool tsdb create-blocks-from openmetrics "$T/data.om" "$T/blocks" >/dev/null
"$PEERS" make-certs "$T/certs"

# bcrypt of "alertd-it-pass" (cost 4), made once with python3's crypt module.
HASH='$2b$04$Gfx6yU3ylQn369s2kxUSP.jTRiI07tpWeO9CpR2d/1JBokmla9Tmm'
mkdir -p "$T/auth" "$T/tls"
printf 'basic_auth_users:\n  alertd: %s\n' "$HASH" >"$T/auth/web.yml"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' \
    "$T/certs/server.crt" "$T/certs/server.key" >"$T/tls/web.yml"
cp -a "$T/blocks" "$T/auth/data"
cp -a "$T/blocks" "$T/tls/data"

AUTH_PORT=$("$PEERS" free-port)
PEERS_CURL_ARGS="-u alertd:alertd-it-pass" \
    "$PEERS" start-prometheus "$T/auth" "$AUTH_PORT" --web.config.file="$T/auth/web.yml" >/dev/null
TLS_PORT=$("$PEERS" free-port)
PEERS_SCHEME=https PEERS_CURL_ARGS="--cacert $T/certs/ca.crt" \
    "$PEERS" start-prometheus "$T/tls" "$TLS_PORT" --web.config.file="$T/tls/web.yml" >/dev/null

export ALERTD_IT_AUTH_URL="http://127.0.0.1:$AUTH_PORT"
export ALERTD_IT_USER=alertd
export ALERTD_IT_PASSWORD=alertd-it-pass
export ALERTD_IT_TLS_URL="https://127.0.0.1:$TLS_PORT"
export ALERTD_IT_CA_FILE="$T/certs/ca.crt"
# Not exec: the EXIT trap must stop the servers after the driver.
"$DRIVER" "$@"
