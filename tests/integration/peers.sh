#!/bin/sh
# peers.sh - run the real Prometheus / Alertmanager (Debian 12 packages
# `prometheus` 2.42, `prometheus-alertmanager` 0.25) on 127.0.0.1 for tests.
#
#   peers.sh start-prometheus DIR PORT [extra prometheus args...]
#       config DIR/prometheus.yml (a minimal one is written if absent),
#       TSDB DIR/data (locked), log DIR/prometheus.log, pid DIR/prometheus.pid
#   peers.sh start-alertmanager DIR PORT [extra alertmanager args...]
#       config DIR/alertmanager.yml (a null receiver is written if absent),
#       state DIR/am-data, log DIR/alertmanager.log, pid DIR/alertmanager.pid,
#       gossip disabled (--cluster.listen-address=)
#   peers.sh wait-ready URL [TIMEOUT_S]     poll until URL answers 2xx
#   peers.sh stop PIDFILE                   SIGTERM, then SIGKILL after 10 s
#   peers.sh free-port                      print a free loopback TCP port, reserved for 30 min
#   peers.sh make-certs DIR                 self-signed CA (DIR/ca.crt, ca.key) and a server
#       certificate for localhost and 127.0.0.1 signed by it (DIR/server.crt, server.key)
#
# start-* return once /-/ready answers and print "PID URL". Extra args must
# not repeat a flag set here (the binaries reject repeated flags).
# Env: PROMETHEUS, ALERTMANAGER (binaries), READY_TIMEOUT (s, default 30),
#      PEERS_SCHEME (http or https, for the readiness URL; default http),
#      PEERS_CURL_ARGS (extra curl arguments for the readiness check, e.g.
#      "--cacert DIR/ca.crt -u user:pass" when --web.config.file enables TLS or auth).
# Never uses the default ports 9090/9093/9094: the caller picks free ones.
set -eu

PROMETHEUS=${PROMETHEUS:-prometheus}
ALERTMANAGER=${ALERTMANAGER:-prometheus-alertmanager}
READY_TIMEOUT=${READY_TIMEOUT:-30}
PEERS_SCHEME=${PEERS_SCHEME:-http}
PEERS_CURL_ARGS=${PEERS_CURL_ARGS:-}

die() { echo "peers.sh: $*" >&2; exit 1; }

# wait_ready URL TIMEOUT [PID]: fail early if PID dies.
wait_ready() {
    n=0
    while [ "$n" -lt $(($2 * 10)) ]; do
        # shellcheck disable=SC2086
        curl -fs -o /dev/null --max-time 1 $PEERS_CURL_ARGS "$1" && return 0
        if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
            echo "peers.sh: process $3 exited before $1 was ready" >&2
            return 1
        fi
        sleep 0.1
        n=$((n + 1))
    done
    echo "peers.sh: not ready after $2 s: $1" >&2
    return 1
}

# launch NAME DIR PORT CMD... : start CMD in the background, record its pid.
launch() {
    name=$1 dir=$2 port=$3
    shift 3
    if [ -f "$dir/$name.pid" ] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then
        die "$name already running from $dir (pid $(cat "$dir/$name.pid"))"
    fi
    # a server already on the port would pass the readiness check
    if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
        die "127.0.0.1:$port is already in use"
    fi
    "$@" </dev/null >"$dir/$name.log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/$name.pid"
    if ! wait_ready "$PEERS_SCHEME://127.0.0.1:$port/-/ready" "$READY_TIMEOUT" "$pid" ||
        ! kill -0 "$pid" 2>/dev/null; then
        tail -n 5 "$dir/$name.log" >&2
        kill "$pid" 2>/dev/null || true
        rm -f "$dir/$name.pid"
        exit 1
    fi
    echo "$pid $PEERS_SCHEME://127.0.0.1:$port"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
start-prometheus)
    [ $# -ge 2 ] || die "usage: start-prometheus DIR PORT [args...]"
    dir=$1 port=$2
    shift 2
    mkdir -p "$dir"
    [ -f "$dir/prometheus.yml" ] ||
        printf 'global:\n  scrape_interval: 15s\n  evaluation_interval: 15s\n' \
            >"$dir/prometheus.yml"
    launch prometheus "$dir" "$port" "$PROMETHEUS" \
        --config.file="$dir/prometheus.yml" \
        --storage.tsdb.path="$dir/data" --storage.tsdb.use-lockfile \
        --web.listen-address="127.0.0.1:$port" "$@"
    ;;
start-alertmanager)
    [ $# -ge 2 ] || die "usage: start-alertmanager DIR PORT [args...]"
    dir=$1 port=$2
    shift 2
    mkdir -p "$dir"
    [ -f "$dir/alertmanager.yml" ] ||
        printf 'route: {receiver: blackhole, group_by: [alertname], group_wait: 1s, group_interval: 1s}\nreceivers: [{name: blackhole}]\n' \
            >"$dir/alertmanager.yml"
    launch alertmanager "$dir" "$port" "$ALERTMANAGER" \
        --config.file="$dir/alertmanager.yml" \
        --storage.path="$dir/am-data" \
        --web.listen-address="127.0.0.1:$port" \
        --cluster.listen-address= "$@"
    ;;
wait-ready)
    [ $# -ge 1 ] || die "usage: wait-ready URL [TIMEOUT_S]"
    wait_ready "$1" "${2:-$READY_TIMEOUT}" || exit 1
    ;;
stop)
    [ $# -eq 1 ] || die "usage: stop PIDFILE"
    [ -f "$1" ] || exit 0
    pid=$(cat "$1")
    kill -TERM "$pid" 2>/dev/null || true
    n=0
    while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 100 ]; do
        case $(ps -o stat= -p "$pid" 2>/dev/null || true) in Z*) break ;; esac
        sleep 0.1
        n=$((n + 1))
    done
    [ "$n" -lt 100 ] || kill -KILL "$pid" 2>/dev/null || true
    rm -f "$1"
    ;;
free-port)
    # A random port below the kernel's ephemeral range (32768-60999) that binds now. Not port 0:
    # the kernel hands out ephemeral ports, and a test running beside this one that opens many
    # client connections (faults_server_port: 1,100) can take the port before its server binds.
    # A port handed out is reserved for 30 minutes by a file in $ALERTD_PORTS_DIR (created
    # exclusively), so two tests running side by side, or two picks in one test made before
    # anything binds, never get the same port.
    ALERTD_PORTS_DIR=${ALERTD_PORTS_DIR:-${TMPDIR:-/tmp}/alertd-test-ports} python3 -c '
import os, random, socket, time
d = os.environ["ALERTD_PORTS_DIR"]
os.makedirs(d, exist_ok=True)
for _ in range(400):
    p = random.randint(20000, 32000)
    mark = os.path.join(d, str(p))
    try:
        if time.time() - os.stat(mark).st_mtime < 1800:
            continue
        os.unlink(mark)
    except FileNotFoundError:
        pass
    try:
        os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
else:
    raise SystemExit("no free port in 20000-32000")'
    ;;
make-certs)
    [ $# -eq 1 ] || die "usage: make-certs DIR"
    dir=$1
    mkdir -p "$dir"
    ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    # shellcheck disable=SC2086
    openssl req -x509 $ec -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 2 \
        -subj "/CN=alertd test CA" >/dev/null 2>&1 || die "openssl: cannot create the CA"
    # shellcheck disable=SC2086
    openssl req $ec -keyout "$dir/server.key" -out "$dir/server.csr" \
        -subj "/CN=localhost" >/dev/null 2>&1 || die "openssl: cannot create the server CSR"
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
        -CAcreateserial -out "$dir/server.crt" -days 2 -extfile "$dir/server.ext" \
        >/dev/null 2>&1 || die "openssl: cannot sign the server certificate"
    rm -f "$dir/server.csr" "$dir/server.ext" "$dir/ca.srl"
    ;;
*)
    sed -n '2,25s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
