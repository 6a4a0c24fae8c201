#!/usr/bin/env python3
"""One big answer (issue 12 item 2): peak and resident memory of alertd when a rule's query
returns N series in one ~100 MB body (792,000 series of 3 labels, ~126 bytes each, by default).

  tests/bench/daemon/big_answer.py [--alertd build/app/alertd] [--series 792000]
                                   [--rule alerting|recording|both] [--rounds 2]
                                   [--flag=-notifier.maxQueueSize=1000000 ...]

Starts a datasource that answers every query with the same body, the fake Alertmanager (and
remote-write receiver) from fakes.py, and alertd with one group evaluating every 20 s; prints
VmHWM and VmRSS after each round and the alerts and rows delivered. Not part of CTest.
"""
import argparse
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
from bench import (am_count, free_port, iterations, rw_count, status_kb,  # noqa: E402
                   stop_on_sigterm)


def body(n):
    parts = [b'{"status":"success","data":{"resultType":"vector","result":[']
    for i in range(n):
        parts.append(b'%s{"metric":{"__name__":"big_metric_total","instance":"host-%07d.example.org:9100",'
                     b'"job":"node-exporter"},"value":[1,"%d"]}' % (b"," if i else b"", i, i % 1000))
    parts.append(b"]}}")
    return b"".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--alertd", default=os.path.join(ROOT, "build", "app", "alertd"))
    ap.add_argument("--series", type=int, default=792000)
    ap.add_argument("--rule", choices=["alerting", "recording", "both"], default="alerting")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--flag", action="append", default=[],
                    help="one more alertd flag, e.g. --flag=-notifier.maxQueueSize=1000000")
    args = ap.parse_args()
    stop_on_sigterm()

    payload = body(args.series)
    print("answer: %d series, %.1f MB" % (args.series, len(payload) / 1e6), flush=True)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.do_POST()

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *a):
            pass

    ds_port, am_port, port = free_port(), free_port(), free_port()
    ds = http.server.ThreadingHTTPServer(("127.0.0.1", ds_port), Handler)
    threading.Thread(target=ds.serve_forever, daemon=True).start()
    work = tempfile.mkdtemp(prefix="alertd-big-")
    am = subprocess.Popen([sys.executable, os.path.join(HERE, "fakes.py"), "am", str(am_port)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rules = ["groups:", "  - name: big", "    interval: 20s", "    rules:"]
    if args.rule in ("alerting", "both"):
        rules += ["      - alert: BigAnswer", "        expr: big_metric_total",
                  "        labels:", "          severity: warning", "        annotations:",
                  "          summary: 'High value on {{ $labels.instance }}: {{ $value }}'"]
    if args.rule in ("recording", "both"):
        rules += ["      - record: big:copy", "        expr: big_metric_total"]
    rule_file = os.path.join(work, "rules.yml")
    with open(rule_file, "w") as f:
        f.write("\n".join(rules) + "\n")
    log = open(os.path.join(work, "alertd.log"), "w")
    cmd = [args.alertd, "-rule=" + rule_file, "-datasource.url=http://127.0.0.1:%d" % ds_port,
           "-notifier.url=http://127.0.0.1:%d" % am_port,
           "-remoteWrite.url=http://127.0.0.1:%d" % am_port, "-rule.evalDelay=0s",
           "-group.maxStartDelay=1s", "-httpListenAddr=127.0.0.1:%d" % port] + args.flag
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        done = 0
        deadline = time.time() + 60 * (args.rounds + 1)
        while done < args.rounds and time.time() < deadline:
            time.sleep(1)
            n = iterations(port)[1]
            if n > done:
                done = n
                time.sleep(3)  # the round's notifications and rows leave, the releaser runs
                st = status_kb(proc.pid)
                print("after round %d: VmHWM %.1f MB, VmRSS %.1f MB" %
                      (n, st["VmHWM"] / 1024, st["VmRSS"] / 1024), flush=True)
        alerts, posts = am_count(am_port)
        writes, write_bytes = rw_count(am_port)
        print("delivered: %d alerts in %d posts, %d remote-write requests (%.1f MB)" %
              (alerts, posts, writes, write_bytes / 1e6))
        print("alertd log: %s" % log.name)
    finally:
        proc.terminate()
        proc.wait(30)
        am.terminate()
        ds.shutdown()


if __name__ == "__main__":
    main()
