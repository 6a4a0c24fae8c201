#!/usr/bin/env python3
"""A remote-write receiver for faults only: answers POST /api/v1/write as the file MODE_FILE says
(204, 400, 429, 500, or "hang": hold the request for 30 s), and appends one line per request to
LOG_FILE: "<mode> <sha1 of the body> <headers ok 0|1>". Identical bodies in a row are retries.
    usage: rw_receiver.py PORT MODE_FILE LOG_FILE
"""
import hashlib
import http.server
import sys
import time

PORT, MODE_FILE, LOG_FILE = int(sys.argv[1]), sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            with open(MODE_FILE) as f:
                mode = f.read().strip() or "204"
        except OSError:
            mode = "204"
        ok = (self.path == "/api/v1/write"
              and self.headers.get("Content-Encoding") == "snappy"
              and self.headers.get("Content-Type") == "application/x-protobuf"
              and self.headers.get("X-Prometheus-Remote-Write-Version") == "0.1.0")
        with open(LOG_FILE, "a") as f:
            f.write(f"{mode} {hashlib.sha1(body).hexdigest()} {int(ok)}\n")
        if mode == "hang":
            time.sleep(30)
            return
        status = int(mode)
        self.send_response(status)
        text = b"" if status == 204 else b"injected failure"
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer.daemon_threads = True
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
