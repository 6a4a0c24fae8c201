#!/bin/sh
# notifier.sh DRIVER - integration test of notifier::AlertmanagerClient against a real
# Alertmanager (Debian's prometheus-alertmanager 0.25).
#
# Starts two Alertmanagers on free loopback ports through peers.sh - one plain, one behind
# basic auth (--web.config.file) - runs the Catch2 DRIVER with their URLs in ALERTD_IT_AM_*,
# and stops both on exit whatever happens. Exits 77 (skipped) when Alertmanager is missing.
set -eu

DRIVER=${1:?usage: notifier.sh DRIVER [catch args...]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
PEERS="$HERE/peers.sh"

if ! command -v prometheus-alertmanager >/dev/null; then
    echo "notifier.sh: prometheus-alertmanager not installed (scripts/install-deps.sh); skipping" >&2
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/alertd-it-notifier.XXXXXX")
cleanup() {
    "$PEERS" stop "$T/plain/alertmanager.pid" || true
    "$PEERS" stop "$T/auth/alertmanager.pid" || true
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$T/plain" "$T/auth"
# bcrypt of "alertd-it-pass" (cost 4), the same as datasource.sh uses.
HASH='$2b$04$Gfx6yU3ylQn369s2kxUSP.jTRiI07tpWeO9CpR2d/1JBokmla9Tmm'
printf 'basic_auth_users:\n  alertd: %s\n' "$HASH" >"$T/auth/web.yml"

PLAIN_PORT=$("$PEERS" free-port)
"$PEERS" start-alertmanager "$T/plain" "$PLAIN_PORT" >/dev/null
AUTH_PORT=$("$PEERS" free-port)
PEERS_CURL_ARGS="-u alertd:alertd-it-pass" \
    "$PEERS" start-alertmanager "$T/auth" "$AUTH_PORT" --web.config.file="$T/auth/web.yml" >/dev/null

export ALERTD_IT_AM_URL="http://127.0.0.1:$PLAIN_PORT"
export ALERTD_IT_AM_AUTH_URL="http://127.0.0.1:$AUTH_PORT"
export ALERTD_IT_USER=alertd
export ALERTD_IT_PASSWORD=alertd-it-pass
# Not exec: the EXIT trap must stop the servers after the driver.
"$DRIVER" "$@"
