#!/usr/bin/env bash
# Installs every Debian package alertd's build, tests, benchmarks and quick start need.
# Idempotent: packages already present are skipped, apt-get update runs only when needed.
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake ninja-build ccache pkg-config lld
  clang libclang-rt-14-dev
  libboost-dev libboost-program-options-dev
  rapidjson-dev libyaml-cpp-dev libspdlog-dev libfmt-dev catch2 libre2-dev
  libbenchmark-dev libprotobuf-dev protobuf-compiler libsnappy-dev libssl-dev
  prometheus prometheus-alertmanager dnsmasq-base
  curl procps ca-certificates openssl valgrind python3
  dpkg-dev file binutils systemd buildah debootstrap podman
  chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends keeps Prometheus from pulling node-exporter and friends.
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
