#!/usr/bin/env bash
# Every file of the shared real-world rule corpus (../shared/corpus/rules, CTest label "shared"):
# -dryRun and the daemon agree on it. A file -dryRun accepts starts the daemon (with the flags
# its rules need: remote write for recording rules, a notifier for alerting rules) and the daemon
# is healthy and ready after its first rounds; a file -dryRun refuses makes the daemon exit
# non-zero at start with the same first error. (Before, -dryRun passed files the daemon refused:
# CI went green while a deployment crash-looped.)
# The datasource, the notifier and the remote-write receiver are dead loopback ports: the rounds
# fail, which is not what this test is about; loading and starting are.
set -euo pipefail
ALERTD=$1
CORPUS=${2:?corpus dir}
source "$(dirname "$0")/lib.sh"
if [ ! -d "$CORPUS" ]; then
  echo "ALERTD_SKIP: $CORPUS is absent (the shared/ folder exists beside CI's checkout only)"
  exit 0
fi
it_init corpus
dead=$("$PEERS" free-port)  # nothing listens there
flags=(-datasource.url="http://127.0.0.1:$dead" -notifier.url="http://127.0.0.1:$dead"
  -remoteWrite.url="http://127.0.0.1:$dead" -remoteWrite.flushInterval=1s -loggerLevel=ERROR)

mapfile -t files < <(cd "$CORPUS" && find . -type f \( -name '*.yml' -o -name '*.yaml' \) | sed 's|^\./||' | sort)
[ "${#files[@]}" -ge 40 ] || fail "only ${#files[@]} rule files under $CORPUS"
accepted=0
refused=0
for rel in "${files[@]}"; do
  f="$CORPUS/$rel"
  log="$T/run.out"
  dry=0
  "$ALERTD" -dryRun -rule="$f" "${flags[@]}" >"$T/dry.out" 2>&1 || dry=$?
  port=$("$PEERS" free-port)
  "$ALERTD" -rule="$f" "${flags[@]}" -httpListenAddr="127.0.0.1:$port" >"$log" 2>&1 &
  pid=$!
  if [ "$dry" -eq 0 ]; then
    accepted=$((accepted + 1))
    # Ready means every group has run its first round.
    ok=0
    for _ in $(seq 1 120); do
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      if curl -fsS "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then ok=1; break; fi
      sleep 0.25
    done
    if [ "$ok" != 1 ]; then
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      echo "--- daemon output for $rel:" >&2
      tail -n 20 "$log" >&2
      fail "$rel: -dryRun accepts it but the daemon did not become ready"
    fi
    kill -TERM "$pid"
    rc=0
    wait "$pid" || rc=$?
    [ "$rc" -eq 0 ] || { tail -n 20 "$log" >&2; fail "$rel: the daemon exited $rc on SIGTERM"; }
  else
    refused=$((refused + 1))
    rc=0
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      cat "$T/dry.out" >&2
      fail "$rel: -dryRun refuses it (exit $dry) but the daemon started"
    fi
    wait "$pid" || rc=$?
    [ "$rc" -ne 0 ] || fail "$rel: -dryRun refuses it but the daemon exited 0"
    # The first error -dryRun names is in the daemon's output too.
    first=$(grep -m1 -o "$(basename "$rel"):[0-9]*:[0-9]*: [^\"]*" "$T/dry.out" || true)
    if [ -n "$first" ] && ! grep -qF -- "$first" "$log"; then
      echo "--- -dryRun:" >&2; cat "$T/dry.out" >&2
      echo "--- daemon:" >&2; cat "$log" >&2
      fail "$rel: the daemon's error differs from -dryRun's ($first)"
    fi
  fi
done
echo "corpus: ${#files[@]} files, $accepted accepted (daemon ready), $refused refused by both"
[ "$accepted" -gt 0 ] && [ "$refused" -gt 0 ] || fail "expected both good and bad files"
