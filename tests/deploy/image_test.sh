#!/usr/bin/env bash
# The container image (deploy/Dockerfile), built and run without Docker Hub:
#   1. makes the base images if missing: `debootstrap --variant=minbase bookworm`, imported with
#      `podman import` as debian:bookworm and debian:bookworm-slim (the names the Dockerfile uses);
#   2. builds with `buildah bud --isolation chroot`:
#        default (CI): --target prebuilt with the alertd binary $1 (built on this bookworm host,
#          stripped into a small context), so CI does not compile alertd a second time;
#        IMAGE_FULL=1: the whole multi-stage build from source (build stage compiles alertd;
#          the host's ccache is mounted at /ccache);
#   3. runs it with `buildah run --isolation chroot` (host network; `podman run` fails here):
#      `alertd -version`, then alertd with the image's CMD defaults overridden only for the port,
#      answering /-/healthy, and the HEALTHCHECK command itself.
# Needs root, buildah and debootstrap; prints ALERTD_SKIP otherwise.
set -euo pipefail
alertd=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then echo "ALERTD_SKIP: buildah --isolation chroot needs root"; exit 0; fi
for tool in buildah debootstrap; do
  command -v "$tool" >/dev/null || { echo "ALERTD_SKIP: $tool not installed (scripts/install-deps.sh)"; exit 0; }
done
tmp=$(mktemp -d)
ctr=""
run_pid=""
cleanup() {
  if [ -n "$run_pid" ]; then kill -- -"$run_pid" 2>/dev/null || true; fi
  if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/run.log" ] && cat "$tmp/run.log" >&2; exit 1; }
t0=$(date +%s)

# 1. Base images, made once per machine (kept in buildah's store).
if ! buildah inspect --type image debian:bookworm-slim >/dev/null 2>&1; then
  rootfs=$tmp/rootfs
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$tmp/debootstrap.log" 2>&1 \
    || { tail -20 "$tmp/debootstrap.log" >&2; fail debootstrap; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import - debian:bookworm >/dev/null
  buildah tag localhost/debian:bookworm debian:bookworm-slim
  rm -rf "$rootfs"
fi
t1=$(date +%s)

# 2. The image.
tag=localhost/alertd-test:$$
if [ "${IMAGE_FULL:-0}" = 1 ]; then
  mkdir -p "${CCACHE_HOST_DIR:=$(ccache -k cache_dir 2>/dev/null || echo "$HOME/.cache/ccache")}"
  buildah bud --format docker --isolation chroot --network host -v "$CCACHE_HOST_DIR:/ccache" \
    -f "$root/deploy/Dockerfile" -t "$tag" "$root" >"$tmp/bud.log" 2>&1 \
    || { tail -40 "$tmp/bud.log" >&2; fail "buildah bud (full)"; }
else
  ctx=$tmp/ctx
  mkdir -p "$ctx/deploy/examples"
  cp "$root/deploy/examples/rules.yml" "$ctx/deploy/examples/"
  strip -o "$ctx/alertd" "$alertd"
  buildah bud --format docker --isolation chroot --network host --target prebuilt --build-arg BINARY=alertd \
    -f "$root/deploy/Dockerfile" -t "$tag" "$ctx" >"$tmp/bud.log" 2>&1 \
    || { tail -40 "$tmp/bud.log" >&2; fail "buildah bud (prebuilt)"; }
fi
t2=$(date +%s)
trap 'cleanup; buildah rmi "$tag" >/dev/null 2>&1 || true' EXIT

cfg=$(buildah inspect --type image "$tag" | tr -d ' \n')
for want in '"User":"alertd:alertd"' '"/var/lib/alertd":{}' '"Entrypoint":["/usr/bin/alertd"]' \
  '-state.path=/var/lib/alertd/alerts.state'; do
  [[ $cfg == *"$want"* ]] || fail "image config lacks $want: $cfg"
done
[[ $cfg == *'"Healthcheck":{'*'/-/healthy'* ]] \
  || fail "image has no HEALTHCHECK on /-/healthy"

# 3. Run it.
ctr=$(buildah from "$tag")
buildah run --isolation chroot "$ctr" -- /usr/bin/alertd -version >"$tmp/version" 2>&1 \
  || { cat "$tmp/version" >&2; fail "alertd -version in the image"; }
grep -q '^alertd v' "$tmp/version" || fail "unexpected -version: $(cat "$tmp/version")"
[ "$(buildah run --isolation chroot "$ctr" -- id -un)" = alertd ] || fail "image does not run as alertd"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid buildah run --isolation chroot "$ctr" -- /usr/bin/alertd \
  -rule=/usr/share/doc/alertd/examples/rules.yml -datasource.url=http://127.0.0.1:1 \
  -notifier.blackhole -httpListenAddr=127.0.0.1:"$port" -state.path=/var/lib/alertd/alerts.state \
  >"$tmp/run.log" 2>&1 &
run_pid=$!
ok=0
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/-/healthy" 2>/dev/null | grep -q OK; then ok=1; break; fi
  kill -0 "$run_pid" 2>/dev/null || fail "alertd exited in the container"
  sleep 0.2
done
[ "$ok" = 1 ] || fail "/-/healthy did not answer from the container"
# The HEALTHCHECK's own command (bash /dev/tcp, no curl in the image), pointed at this port.
hc=$(buildah inspect --type image --format '{{index .Docker.Config.Healthcheck.Test 3}}' "$tag")
buildah run --isolation chroot "$ctr" -- bash -c "${hc//8880/$port}" \
  || fail "the HEALTHCHECK command fails against a healthy alertd"
t3=$(date +%s)
echo "PASS: image builds, alertd -version and /-/healthy answer (base $((t1 - t0)) s, build $((t2 - t1)) s, run $((t3 - t2)) s)"
