#!/usr/bin/env bash
# Fetches the baseline for the daemon benchmark: vmalert from Debian's victoria-metrics package
# (v1.79.5 on Debian 12), unpacked under DIR (default build/vmalert), not installed. Prints the
# binary's path, for side_by_side.py or run.sh --alertd.
#   tests/bench/daemon/get_vmalert.sh [DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(realpath -m "${1:-$here/../../../build/vmalert}")"
bin="$dir/usr/bin/vmalert"
if [[ ! -x "$bin" ]]; then
  mkdir -p "$dir"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # root's temp dir is not readable by apt's sandbox user: download as root, quietly.
  (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root victoria-metrics >&2)
  dpkg -x "$tmp"/victoria-metrics_*.deb "$dir"
fi
echo "$bin"
