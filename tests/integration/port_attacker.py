# Attacks alertd's own HTTP port for the fault matrix (faults_server_test.sh), all at once for
# SECS seconds, and reports what the server did as JSON on stdout:
#   - IDLE connections that send nothing, each reopened when the server closes it;
#   - one POST with a 100 MB body (Content-Length 104857600), sent as fast as the server reads;
#   - SLOW slowloris connections sending one header byte every 0.5 s, never finishing.
#   usage: python3 port_attacker.py PORT SECS IDLE SLOW
import json, resource, select, socket, sys, threading, time

port, secs, n_idle, n_slow = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * (n_idle + n_slow) + 64)), hard))
end = time.monotonic() + secs
out = {"idle_opened": 0, "idle_closed_by_server": 0, "idle_open_max": 0}


def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setblocking(False)
    return s


def idle():
    socks = []
    while time.monotonic() < end:
        while len(socks) < n_idle and time.monotonic() < end:
            try:
                socks.append(connect())
                out["idle_opened"] += 1
            except OSError as e:
                out["idle_connect_error"] = str(e)
                time.sleep(0.1)
                break
        out["idle_open_max"] = max(out["idle_open_max"], len(socks))
        # poll, not select: select() cannot watch descriptors above 1023.
        p = select.poll()
        by_fd = {s.fileno(): s for s in socks}
        for fd in by_fd:
            p.register(fd, select.POLLIN)
        for fd, _ in p.poll(200):
            s = by_fd[fd]
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data or data.startswith(b"HTTP/1.1 503"):
                out["idle_closed_by_server"] += 1
                if data:
                    out["idle_got_503"] = out.get("idle_got_503", 0) + 1
                socks.remove(s)
                s.close()
    for s in socks:
        s.close()


def big_body():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    size = 100 * 1024 * 1024
    s.sendall(b"POST /api/v1/rules HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % size)
    chunk = b"x" * (1 << 20)
    sent, t0 = 0, time.monotonic()
    try:
        while sent < size:
            sent += s.send(chunk)
    except OSError:
        pass
    out["big_sent_bytes"] = sent
    try:
        s.settimeout(5)
        out["big_status"] = s.recv(4096).split(b"\r\n", 1)[0].decode()
    except OSError as e:
        out["big_status"] = "no answer: %s" % e
    out["big_secs"] = round(time.monotonic() - t0, 2)
    s.close()


def slowloris():
    socks = [(connect(), time.monotonic()) for _ in range(n_slow)]
    header = b"GET /-/healthy HTTP/1.1\r\nHost: x\r\nX-a: " + b"a" * 10000
    i, closed_after = 0, []
    while socks and time.monotonic() < end:
        for s, t0 in list(socks):
            try:
                s.send(header[i % len(header):i % len(header) + 1])
                p = select.poll()
                p.register(s.fileno(), select.POLLIN)
                if p.poll(0) and not s.recv(4096):
                    raise OSError("closed")
            except OSError:
                closed_after.append(time.monotonic() - t0)
                socks.remove((s, t0))
                s.close()
        i += 1
        time.sleep(0.5)
    out["slow_closed"] = len(closed_after)
    out["slow_closed_after_max"] = round(max(closed_after), 2) if closed_after else None
    for s, _ in socks:
        s.close()


threads = [threading.Thread(target=f) for f in (idle, big_body, slowloris)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(out))
