#!/usr/bin/env bash
# alertd's HTTP server options against curl and a certificate made by `openssl req`:
#   - three -httpListenAddr, the second with -tls (-tls=false,true): /-/healthy and
#     /api/v1/rules over plain HTTP on the first and over HTTPS (curl --cacert) on the second;
#     the third with -httpListenAddr.useProxyProtocol: a PROXY protocol v2 header then a
#     request is answered, curl without it (or with v1's text header) is not;
#   - plain HTTP to the HTTPS port gets Go's "400 Client sent an HTTP request to an HTTPS
#     server"; -tlsMinVersion=TLS13 refuses curl --tls-max 1.2;
#   - 200 connections to the HTTPS port that never start the handshake are closed by the 5 s
#     header deadline, and HTTPS keeps answering meanwhile;
#   - /debug/pprof/cmdline behind -pprofAuthKey, in Go's NUL-separated format;
#   - SIGTERM with a request in progress: the request gets its answer (within
#     -http.maxGracefulShutdownDuration), then alertd exits;
#   - start-up errors: a missing certificate file and -tls without -tlsKeyFile exit 1 naming
#     the file or the flag; -version shows the git revision.
#   usage: server_tls_test.sh ALERTD_BINARY
set -euo pipefail
ALERTD=$1
source "$(dirname "$0")/lib.sh"
it_init server-tls

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=alertd-test -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$T/key.pem" -out "$T/cert.pem" >"$T/openssl.log" 2>&1 || fail "openssl req"
cat >"$T/rules.yml" <<'YML'
groups:
  - name: steady
    interval: 1s
    rules:
      - alert: Steady
        expr: vector(1)
YML
P_HTTP=$("$PEERS" free-port)
P_TLS=$("$PEERS" free-port)
P_PROXY=$("$PEERS" free-port)
DEAD="http://127.0.0.1:$("$PEERS" free-port)"
"$ALERTD" -rule="$T/rules.yml" -datasource.url="$DEAD" -notifier.blackhole \
  -httpListenAddr="127.0.0.1:$P_HTTP" -httpListenAddr="127.0.0.1:$P_TLS" \
  -httpListenAddr="127.0.0.1:$P_PROXY" -httpListenAddr.useProxyProtocol=false,false,true \
  -tls=false,true -tlsCertFile=",$T/cert.pem" -tlsKeyFile=",$T/key.pem" -tlsMinVersion=,TLS13 \
  -pprofAuthKey=pkey -http.maxGracefulShutdownDuration=3s \
  -rule.evalDelay=0s -group.maxStartDelay=1s -datasource.queryTimeout=1s >"$T/alertd.log" 2>&1 &
ALERTD_PID=$!
it_track "$ALERTD_PID"
H="http://127.0.0.1:$P_HTTP"
S="https://127.0.0.1:$P_TLS"
wait_for 10 "alertd ready over HTTP" curl -fs -o /dev/null "$H/-/ready"
grep -q "listening on http://127.0.0.1:$P_HTTP (port $P_HTTP), https://127.0.0.1:$P_TLS (port $P_TLS), http://127.0.0.1:$P_PROXY (port $P_PROXY, PROXY protocol)" "$T/alertd.log" ||
  fail "the start-up line does not list the three listeners"

# 1. Both listeners serve; HTTPS with the test's CA.
for base in "$H" "$S"; do
  curl -fsS --cacert "$T/cert.pem" "$base/-/healthy" >/dev/null || fail "$base/-/healthy"
  curl -fsS --cacert "$T/cert.pem" "$base/api/v1/rules" | grep -q '"name":"steady"' ||
    fail "$base/api/v1/rules"
done
rc=0; curl -fsS -o /dev/null "$S/-/healthy" 2>/dev/null || rc=$?
[ "$rc" = 60 ] || fail "an untrusted certificate was not refused by curl (exit $rc)"

# PROXY protocol v2 on the third address (as HAProxy's send-proxy-v2 writes it).
$PY - "$P_PROXY" >"$T/proxy.out" 2>&1 <<'PY' || fail "PROXY protocol v2: $(cat "$T/proxy.out")"
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
block = socket.inet_aton("10.0.0.1") + socket.inet_aton("10.0.0.2") + struct.pack("!HH", 4242, 8880)
s.sendall(b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11]) + struct.pack("!H", len(block)) + block +
          b"GET /-/healthy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
answer = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    answer += chunk
assert answer.startswith(b"HTTP/1.1 200"), answer
PY
rc=0; curl -sS --max-time 5 -o /dev/null "http://127.0.0.1:$P_PROXY/-/healthy" 2>/dev/null || rc=$?
[ "$rc" != 0 ] || fail "a request without the PROXY header was answered"
rc=0; curl -sS --max-time 5 --haproxy-protocol -o /dev/null "http://127.0.0.1:$P_PROXY/-/healthy" 2>/dev/null || rc=$?
[ "$rc" != 0 ] || fail "a PROXY protocol v1 header was accepted (VictoriaMetrics takes v2 only)"
grep -q "proxy protocol: the connection does not start with the PROXY protocol v2 signature" "$T/alertd.log" ||
  fail "the refused PROXY connection was not logged"

# 2. Plain HTTP to the HTTPS port; TLS 1.2 against -tlsMinVersion=TLS13.
out=$(curl -sS --max-time 5 -i "http://127.0.0.1:$P_TLS/-/healthy" 2>&1) || true
echo "$out" | grep -q "^HTTP/1.0 400 Bad Request" || fail "plain HTTP to the HTTPS port: $out"
echo "$out" | grep -q "Client sent an HTTP request to an HTTPS server." || fail "plain HTTP: $out"
rc=0; curl -sS --max-time 5 --cacert "$T/cert.pem" --tls-max 1.2 -o /dev/null "$S/-/healthy" 2>/dev/null || rc=$?
[ "$rc" = 35 ] || fail "a TLS 1.2 client was not refused (curl exit $rc, want 35)"
curl -fsS --cacert "$T/cert.pem" --tlsv1.3 -o /dev/null "$S/-/healthy" || fail "TLS 1.3 client refused"

# 3. Connections that never start the handshake: closed at the header deadline; HTTPS answers.
$PY - "$P_TLS" >"$T/silent.json" 2>"$T/silent.log" <<'PY' &
import json, socket, sys, time
port = int(sys.argv[1])
socks = []
for _ in range(200):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(12)
    socks.append(s)
t0 = time.time()
closed, worst = 0, 0.0
for s in socks:
    try:
        if s.recv(1) == b"":
            closed += 1
    except OSError:
        closed += 1
    worst = max(worst, time.time() - t0)
print(json.dumps({"closed": closed, "worst": worst}))
PY
SILENT_PID=$!
it_track "$SILENT_PID"
sleep 1
for _ in 1 2 3; do
  curl -fsS --max-time 2 --cacert "$T/cert.pem" -o /dev/null "$S/-/healthy" ||
    fail "HTTPS did not answer beside 200 silent connections"
  sleep 0.5
done
wait "$SILENT_PID" || fail "silent clients: $(cat "$T/silent.log")"
$PY - "$T/silent.json" <<'PY' || fail "silent connections: $(cat "$T/silent.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["closed"] == 200, r
assert r["worst"] < 8, r
PY

# 4. /debug/pprof behind -pprofAuthKey (over HTTPS here).
code=$(curl -s --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' "$S/debug/pprof/cmdline")
[ "$code" = 401 ] || fail "/debug/pprof/cmdline without authKey: $code"
curl -fsS --cacert "$T/cert.pem" "$S/debug/pprof/cmdline?authKey=pkey" | tr '\0' '\n' >"$T/cmdline"
grep -qx -- "-pprofAuthKey=pkey" "$T/cmdline" || fail "cmdline: $(cat "$T/cmdline")"
[ "$(head -n 1 "$T/cmdline")" = "$ALERTD" ] || fail "cmdline's first argument: $(head -n 1 "$T/cmdline")"
code=$(curl -s -o "$T/profile" -w '%{http_code}' "$H/debug/pprof/profile?authKey=pkey")
[ "$code" = 501 ] && grep -q "perf record" "$T/profile" || fail "/debug/pprof/profile: $code $(cat "$T/profile")"
curl -fsS "$H/debug/pprof/malloc_info?authKey=pkey" | grep -q "^<malloc version=" || fail "malloc_info"

# 5. SIGTERM with a request in progress: it is answered, then alertd exits.
exec 3<>"/dev/tcp/127.0.0.1/$P_HTTP"
printf 'GET /-/healthy HTTP/1.1\r\nHost: x\r\n' >&3
sleep 0.3
kill -TERM "$ALERTD_PID"
sleep 1
kill -0 "$ALERTD_PID" 2>/dev/null || fail "alertd exited with a request in progress"
printf '\r\n' >&3
answer=$(timeout 5 cat <&3 || true)
exec 3<&-
echo "$answer" | grep -q "^HTTP/1.1 200" || fail "the request in progress got: $answer"
echo "$answer" | grep -qi "^Connection: close" || fail "no Connection: close during shutdown: $answer"
for _ in $(seq 1 40); do kill -0 "$ALERTD_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$ALERTD_PID" 2>/dev/null && fail "alertd still running 4 s after its last request"
wait "$ALERTD_PID" || fail "alertd exited non-zero"

# 6. Start-up errors name the file or the flag.
rc=0; "$ALERTD" -rule="$T/rules.yml" -datasource.url="$DEAD" -notifier.blackhole \
  -httpListenAddr="127.0.0.1:$P_TLS" -tls -tlsCertFile="$T/missing.pem" -tlsKeyFile="$T/key.pem" \
  >"$T/missing.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a missing certificate file: exit $rc"
grep -q "cannot read TLS certificate file \"$T/missing.pem\": no such file or directory" "$T/missing.out" ||
  fail "a missing certificate file: $(cat "$T/missing.out")"
rc=0; "$ALERTD" -rule="$T/rules.yml" -datasource.url="$DEAD" -notifier.blackhole \
  -httpListenAddr="127.0.0.1:$P_TLS" -tls -tlsCertFile="$T/cert.pem" >"$T/nokey.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q -- "-tls is set but -tlsKeyFile is empty" "$T/nokey.out" ||
  fail "-tls without -tlsKeyFile: exit $rc: $(cat "$T/nokey.out")"
"$ALERTD" -version | grep -Eq '^alertd v[0-9.]+ \(vmalert-compatible\), revision [0-9a-f]{12}$' ||
  fail "-version: $("$ALERTD" -version)"
echo "server_tls: three listeners (HTTP, HTTPS, PROXY protocol), TLS 1.3 minimum, 200 silent connections closed, pprof, graceful shutdown, start-up errors"
