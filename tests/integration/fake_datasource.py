# A Prometheus query API that misbehaves on demand, for the fault matrix
# (faults_datasource_test.sh). The fault is the query itself: `fault_<mode>` (a valid metric
# name, so -rule.validateExpressions passes); anything else answers one sample of value 1.
#   usage: python3 fake_datasource.py PORT
# Modes: 5xx, 4xx, hang (answers after 60 s), truncated (Content-Length 1000, 60 bytes sent),
# garbage (an HTML page), huge (300 MB of series, streamed in 1 MiB pieces, never held),
# endless (a valid start, then whitespace forever), trickle (a valid answer, 1 byte/100 ms),
# reset (closes the connection without an answer), spike (huge for the next N queries after
# `GET /arm?n=N`, one sample otherwise: a one-off spike, memory_spike_test.sh).
# Bodies are close-delimited (HTTP/1.0, no Content-Length) unless said otherwise, so the
# client cannot refuse them from a header: it must count bytes.
import http.server, socket, sys, threading, time, urllib.parse

OK = b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{"src":"fake"},"value":[1,"1"]}]}}'
HEAD = b'{"status":"success","data":{"resultType":"vector","result":['


ARMED = [0]
ARMED_LOCK = threading.Lock()


class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        if u.path == "/arm":
            with ARMED_LOCK:
                ARMED[0] = int(urllib.parse.parse_qs(u.query).get("n", ["1"])[0])
        self.answer(200, b"ok")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode() if n else ""
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        q.update(urllib.parse.parse_qs(body))
        mode = q.get("query", [""])[0]
        mode = mode[len("fault_"):] if mode.startswith("fault_") else "ok"
        getattr(self, "mode_" + mode)()

    def answer(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def start(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()

    def mode_ok(self):
        self.answer(200, OK)

    def mode_5xx(self):
        self.answer(503, b"fake datasource: overloaded", "text/plain")

    def mode_4xx(self):
        self.answer(400, b'{"status":"error","errorType":"bad_data","error":"fake: parse error at char 3"}')

    def mode_hang(self):
        time.sleep(60)
        self.answer(200, OK)

    def mode_truncated(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(OK[:60])
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)

    def mode_garbage(self):
        self.answer(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")

    def mode_reset(self):
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.connection.close()

    def mode_huge(self):
        self.start()
        # Distinct series (a duplicate would end the parse early): each 1 MiB piece has its
        # own number in the job label and its series numbered within it.
        n = (1 << 20) // 90
        template = b"".join(b'{"metric":{"__name__":"m","instance":"host-%06d","job":"PIECE#"},"value":[1,"1"]},' % i
                            for i in range(n))
        sent, piece_no = 0, 0
        self.wfile.write(HEAD)
        while sent < 300_000_000:
            piece = template.replace(b"PIECE#", b"%06d" % piece_no)
            self.wfile.write(piece)
            sent += len(piece)
            piece_no += 1
        self.wfile.write(b'{"metric":{},"value":[1,"1"]}]}}')

    def mode_spike(self):
        with ARMED_LOCK:
            armed = ARMED[0] > 0
            ARMED[0] -= 1 if armed else 0
        if armed:
            self.mode_huge()
        else:
            self.mode_ok()

    def mode_endless(self):
        self.start()
        self.wfile.write(HEAD)
        pad = b" " * 65536
        while True:
            self.wfile.write(pad)
            time.sleep(0.1)

    def mode_trickle(self):
        self.start()
        for b in OK:
            self.wfile.write(bytes([b]))
            self.wfile.flush()
            time.sleep(0.1)

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            self.close_connection = True

    def log_message(self, *a):
        pass


class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
