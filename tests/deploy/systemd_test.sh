#!/usr/bin/env bash
# deploy/alertd.service and deploy/alertd.env: the unit passes `systemd-analyze verify`, carries
# the hardening docs/deploy.md promises, and the flags in the environment file are all accepted
# by the alertd binary given as $1 (checked with -dryRun against the example rules).
set -euo pipefail
alertd=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
unit=$root/deploy/alertd.service
envfile=$root/deploy/alertd.env
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# verify wants ExecStart's binary to exist: point it at the one just built.
sed "s|/usr/bin/alertd|$alertd|" "$unit" > "$tmp/alertd.service"
if ! out=$(systemd-analyze verify "$tmp/alertd.service" 2>&1); then
  echo "$out" >&2
  fail "systemd-analyze verify"
fi
# verify exits 0 on some warnings; this unit must produce none about itself.
if echo "$out" | grep -q 'alertd.service'; then
  echo "$out" >&2
  fail "systemd-analyze verify warned about the unit"
fi

for directive in DynamicUser=yes ProtectSystem=strict StateDirectory=alertd \
  'ExecReload=/bin/kill -HUP $MAINPID' LimitNOFILE= Restart=on-failure NoNewPrivileges=yes \
  EnvironmentFile=-/etc/default/alertd 'ExecStart=/usr/bin/alertd $ALERTD_ARGS'; do
  grep -qF -- "$directive" "$unit" || fail "unit lacks $directive"
done

# The environment file's flags, as systemd would split them, with the example rules.
# shellcheck disable=SC1090
ALERTD_ARGS=$(. "$envfile"; echo "$ALERTD_ARGS")
[ -n "$ALERTD_ARGS" ] || fail "ALERTD_ARGS empty in $envfile"
args=()
for a in $ALERTD_ARGS; do
  case $a in
    -rule=*) args+=("-rule=$root/deploy/examples/rules.yml") ;;
    -state.path=*) args+=("-state.path=$tmp/alerts.state") ;;
    *) args+=("$a") ;;
  esac
done
if ! "$alertd" "${args[@]}" -dryRun > "$tmp/dry.log" 2>&1; then
  cat "$tmp/dry.log" >&2
  fail "alertd rejects the flags of $envfile"
fi
echo "PASS: unit verified, environment file flags accepted"
