#!/usr/bin/env bash
# Fault matrix, rule files (docs/faults.md): a 50 MB file, deeply nested YAML (flow and block),
# a YAML anchor bomb, binary garbage, a directory, a FIFO (opening one waits for a writer) and a
# file whose read fails (a symlink to /proc/self/mem: EIO at offset 0; chmod 000 does not stop
# root, who runs the tests). For each: -dryRun and a daemon start exit 1 within seconds with an
# error naming the file, peak RSS (/usr/bin/time -v) under 100 MB; a reload onto it fails
# (vmalert_config_last_reload_errors_total +1, the file named in the log) while the old
# configuration keeps evaluating at its interval and /-/healthy answers.
# No peers needed: the rules use vector(1) against a datasource nobody listens on (errors are
# counted, iterations still advance).
#   usage: faults_rulefiles_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init faults-rulefiles
MAX_RSS_KB=$((100 * 1024))

mkdir -p "$T/bad"
$PY - "$T/bad" <<'PY'
import os, sys
d = sys.argv[1]
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
rule = "groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: vector(1)\n"
w("big.yml", rule + ("# " + "x" * 97 + "\n") * 500000)                  # 50 MB
w("nested-flow.yml", "groups: " + "[" * 100000 + "]" * 100000 + "\n")
w("nested-block.yml", "groups:\n" + "".join(" " * i + "a:\n" for i in range(1, 3000)))
lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
for p, c in zip("abcdefgh", "bcdefghi"):
    lol.append("%s: &%s [%s]" % (c, c, ",".join(["*" + p] * 9)))
w("bomb.yml", "\n".join(lol) + "\n" + rule + "        labels: {x: *i}\n")  # 9^9 strings
w("binary.yml", os.urandom(1 << 20))
PY
mkdir "$T/bad/dir.yml"
mkfifo "$T/bad/fifo.yml"
ln -s /proc/self/mem "$T/bad/eio.yml"
# case -> what the error must say
declare -A WANT=(
  [big]="rule file too large: over 32 MiB"
  [nested-flow]="cannot parse YAML: nested too deeply"
  [nested-block]="cannot parse YAML: nested too deeply"
  [bomb]="cannot parse YAML: document contains excessive aliasing"
  [binary]="invalid UTF-8"
  [dir]="is a directory"
  [fifo]="a FIFO, not a regular file"
  [eio]="failed to read file: input/output error"
)
CASES=(big nested-flow nested-block bomb binary dir fifo eio)
DEAD="http://127.0.0.1:$("$PEERS" free-port)"

# run_bounded OUT ARGS...: alertd under /usr/bin/time -v with a 20 s deadline; echoes its rc.
run_bounded() {
  local out=$1 rc=0
  shift
  timeout 20 /usr/bin/time -v -o "$out.time" "$ALERTD" "$@" >"$out" 2>&1 || rc=$?
  echo "$rc"
}
maxrss() { awk -F': ' '/Maximum resident set size/ {print $2}' "$1.time"; }

# ---- -dryRun and daemon start, all cases at once (each is a short-lived process) ----------
for c in "${CASES[@]}"; do
  (
    rc=$(run_bounded "$T/dry-$c.out" -dryRun -rule="$T/bad/$c.yml")
    echo "$rc" >"$T/dry-$c.rc"
    port=$("$PEERS" free-port)
    rc=$(run_bounded "$T/start-$c.out" -rule="$T/bad/$c.yml" -datasource.url="$DEAD" \
      -notifier.blackhole -httpListenAddr="127.0.0.1:$port")
    echo "$rc" >"$T/start-$c.rc"
  ) &
done
wait
for c in "${CASES[@]}"; do
  for mode in dry start; do
    rc=$(cat "$T/$mode-$c.rc")
    [ "$rc" = 1 ] || fail "$mode $c: exit status $rc, want 1 (124 = hung): $(head -c 500 "$T/$mode-$c.out")"
    grep -qF "$T/bad/$c.yml" "$T/$mode-$c.out" || fail "$mode $c: error does not name the file: $(head -c 500 "$T/$mode-$c.out")"
    grep -qF "${WANT[$c]}" "$T/$mode-$c.out" || fail "$mode $c: error lacks \"${WANT[$c]}\": $(head -c 500 "$T/$mode-$c.out")"
    rss=$(maxrss "$T/$mode-$c.out")
    [ "$rss" -lt "$MAX_RSS_KB" ] || fail "$mode $c: peak RSS ${rss} kB over ${MAX_RSS_KB} kB"
    echo "$mode $c: rc 1, peak RSS ${rss} kB: $(grep -F "$T/bad/$c.yml" "$T/$mode-$c.out" | head -1 | cut -c1-160)"
  done
done

# ---- reload onto each broken file: the old configuration keeps running ----------------------
# Two -rule paths; the second, other.yml, is swapped for each broken file in turn (a symlink
# to it, or a directory) and restored after each failed reload.
mkdir -p "$T/rules"
group() {  # NAME
  printf 'groups:\n  - name: %s\n    interval: 1s\n    rules:\n      - alert: %s\n        expr: vector(1)\n' "$1" "$1"
}
group Good >"$T/rules/good.yml"
group Other >"$T/other.yml"
OTHER="$T/rules/other.yml"
cp "$T/other.yml" "$OTHER"
A_PORT=$("$PEERS" free-port)
A="http://127.0.0.1:$A_PORT"
"$ALERTD" -rule="$T/rules/good.yml" -rule="$OTHER" -datasource.url="$DEAD" -notifier.blackhole \
  -httpListenAddr="127.0.0.1:$A_PORT" -rule.evalDelay=0s -group.maxStartDelay=1s \
  -datasource.queryTimeout=1s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
wait_for 10 "alertd ready" curl -fsS -o /dev/null "$A/-/ready"
metric() {  # NAME [LABEL_SUBSTRING]
  curl -fsS --max-time 2 "$A/metrics" | awk -v n="$1" -v l="${2:-}" \
    '{ split($1, p, "{") } p[1] == n && index($1, l) && !found { print $2; found = 1 }'
}
reload_errors_above() { [ "$(metric vmalert_config_last_reload_errors_total)" -gt "$1" ]; }
first_round() { [ "$(metric vmalert_iteration_total 'group="Good"')" -ge 1 ] 2>/dev/null; }
wait_for 10 "first round" first_round
iter0=$(metric vmalert_iteration_total 'group="Good"')
t0=$(date +%s.%N)
for c in "${CASES[@]}"; do
  before=$(metric vmalert_config_last_reload_errors_total)
  rm -f "$OTHER"
  if [ "$c" = dir ]; then mkdir "$OTHER"; else ln -s "$T/bad/$c.yml" "$OTHER"; fi
  kill -HUP "$ALERTD_PID"
  wait_for 15 "reload onto $c fails" reload_errors_above "$before"
  grep -F "$OTHER" "$T/alertd.log" | grep -qF "${WANT[$c]}" ||
    fail "reload $c: the log lacks \"$OTHER: ...${WANT[$c]}\""
  [ "$(metric vmalert_config_last_reload_successful)" = 0 ] || fail "reload $c: counted as successful"
  curl -fsS --max-time 2 -o /dev/null "$A/-/healthy" || fail "reload $c: /-/healthy"
  if [ "$c" = dir ]; then rmdir "$OTHER"; else rm -f "$OTHER"; fi
  cp "$T/other.yml" "$OTHER"
done
kill -0 "$ALERTD_PID" || fail "alertd died"
# The 50 MB file was refused at the rule-file cap on reload: counted under its limit.
size_hits=$(metric alertd_limit_hits_total 'limit="rule_file_size"')
[ "${size_hits:-0}" -ge 1 ] || fail "alertd_limit_hits_total{limit=\"rule_file_size\"} is ${size_hits:-absent}"
rules=$(curl -fsS "$A/api/v1/rules")
grep -q '"name":"Good"' <<<"$rules" && grep -q '"name":"Other"' <<<"$rules" ||
  fail "the old configuration is gone: $rules"
iter1=$(metric vmalert_iteration_total 'group="Good"')
missed=$(metric vmalert_iteration_missed_total 'group="Good"')
secs=$($PY -c "print('%.1f' % ($(date +%s.%N) - $t0))")
rounds=$((iter1 - iter0))
$PY -c "import sys; sys.exit(0 if $rounds >= 0.8 * $secs - 1 else 1)" ||
  fail "evaluation slowed during the reloads: $rounds rounds in ${secs}s"
[ "${missed:-0}" = 0 ] || fail "$missed missed iterations during the reloads"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$ALERTD_PID/status")
[ "$hwm" -lt "$MAX_RSS_KB" ] || fail "daemon peak RSS ${hwm} kB over ${MAX_RSS_KB} kB after the reloads"
echo "faults_rulefiles: ${#CASES[@]} broken files refused by -dryRun, start and reload;" \
  "$rounds rounds in ${secs}s during the reloads, none missed; daemon VmHWM ${hwm} kB"
