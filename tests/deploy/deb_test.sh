#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` from the build folder $1 (only the installed files, no
# rebuild), then `apt-get install ./alertd_*.deb` on this machine, checks what landed, and
# `dpkg --purge`. Needs root (CI runs as root); prints ALERTD_SKIP otherwise.
set -euo pipefail
build=$(cd "$1" && pwd)
if [ "$(id -u)" -ne 0 ]; then echo "ALERTD_SKIP: installing a package needs root"; exit 0; fi
if dpkg-query -W alertd >/dev/null 2>&1; then
  echo "ALERTD_SKIP: an alertd package is already installed here; not touching it"; exit 0
fi
tmp=$(mktemp -d)
cleanup() { dpkg --purge alertd >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log" >&2; fail cpack; }
deb=$(ls "$tmp"/pkg/alertd_*.deb)
ddeb=$(ls "$tmp"/pkg/alertd-dbgsym_*.ddeb)
echo "package: $(basename "$deb") $(stat -c %s "$deb") bytes; debug info: $(stat -c %s "$ddeb") bytes"

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libstdc++6 libssl3 libyaml-cpp libre2 libspdlog; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
dpkg-deb -I "$deb" conffiles | grep -qx /etc/default/alertd || fail "/etc/default/alertd not a conffile"

DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" \
  >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log" >&2; fail "apt-get install"; }

for f in /usr/bin/alertd /usr/lib/systemd/system/alertd.service /usr/lib/sysusers.d/alertd.conf \
  /etc/default/alertd /usr/share/doc/alertd/examples/rules.yml; do
  [ -f "$f" ] || fail "$f not installed"
done
[ -d /etc/alertd/rules ] || fail "/etc/alertd/rules not created"
getent passwd alertd >/dev/null || fail "system user alertd not created"
/usr/bin/alertd -version | grep -q '^alertd v' || fail "alertd -version"
# Stripped, with a link to its split-off debug info.
readelf -S /usr/bin/alertd | grep -q '\.debug_info' && fail "/usr/bin/alertd is not stripped"
readelf -n /usr/bin/alertd | grep -q 'Build ID' || fail "no build-id to find the debug info"
dpkg-deb -c "$ddeb" | grep -q '/usr/lib/debug/.build-id/.*\.debug' || fail "no .debug file in $ddeb"
# The installed binary runs the example rules in -dryRun.
/usr/bin/alertd -rule=/usr/share/doc/alertd/examples/rules.yml -dryRun >"$tmp/dry.log" 2>&1 \
  || { cat "$tmp/dry.log" >&2; fail "installed alertd -dryRun"; }

dpkg --purge alertd >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log" >&2; fail "dpkg --purge"; }
[ ! -e /usr/bin/alertd ] || fail "/usr/bin/alertd left after purge"
echo "PASS: package installs, runs and purges"
