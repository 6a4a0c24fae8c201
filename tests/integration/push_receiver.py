#!/usr/bin/env python3
"""A -pushmetrics.url receiver (VictoriaMetrics' /api/v1/import/prometheus stand-in: Debian's
Prometheus cannot take the text format). Accepts any method, answers with the status in
STATUS_FILE (default 204), and records request N as DIR/req-N.json ({"t", "method", "path",
"headers"}) plus DIR/body-N.txt, the body gunzipped when Content-Encoding is gzip (DIR/body-N.err
when it does not gunzip).
    usage: push_receiver.py PORT DIR STATUS_FILE
"""
import gzip
import os
import http.server
import itertools
import json
import sys
import threading
import time

PORT, DIR, STATUS_FILE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
counter = itertools.count(1)
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def handle_any(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            n = next(counter)
        try:
            with open(STATUS_FILE) as f:
                status = int(f.read().strip() or "204")
        except (OSError, ValueError):
            status = 204
        if self.headers.get("Content-Encoding", "") == "gzip":
            try:
                body = gzip.decompress(body)
            except OSError as e:
                with open(f"{DIR}/body-{n}.err", "w") as f:
                    f.write(str(e))
        with open(f"{DIR}/body-{n}.txt", "wb") as f:
            f.write(body)
        headers = {k: v for k, v in self.headers.items()}
        with open(f"{DIR}/req-{n}.json.tmp", "w") as f:
            json.dump({"t": time.time(), "method": self.command, "path": self.path,
                       "headers": headers}, f)
        os.rename(f"{DIR}/req-{n}.json.tmp", f"{DIR}/req-{n}.json")
        text = b"" if status == 204 else b"injected failure"
        self.send_response(status)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    do_GET = do_POST = do_PUT = handle_any

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer.daemon_threads = True
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
