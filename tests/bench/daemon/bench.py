#!/usr/bin/env python3
"""Daemon-level benchmark driver; run it through run.sh (see docs/performance.md)."""
import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_rules import generate  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def stop_on_sigterm():
    """SIGTERM (kill, a timeout) unwinds like Ctrl-C, so the caller's `finally` blocks stop
    every daemon and fake it started."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def cpu_ns(pid):
    """On-CPU nanoseconds summed over live threads (/proc/PID/task/*/schedstat): the quantity
    utime + stime report, unrounded. A window of rounds is timed with it too: at 1k alerts twelve
    rounds took 11-19 clock ticks (10 ms each), so a tick was 0.8 us of the result. Threads that
    exit inside a window would be missed: window_cpu() checks against utime + stime."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def window_cpu(pid, start=None):
    """(schedstat ns, utime+stime s) now; with `start` (an earlier result), the seconds between,
    from schedstat, after checking that utime + stime agree to within their rounding."""
    now = (cpu_ns(pid), cpu_seconds(pid))
    if start is None:
        return now
    precise = (now[0] - start[0]) / 1e9
    ticks = now[1] - start[1]
    if abs(precise - ticks) > 3.0 / TICK + 0.02 * ticks:
        print("warning: pid %d: schedstat %.3f s against utime+stime %.3f s (a thread exited?)"
              % (pid, precise, ticks), file=sys.stderr)
    return precise


def status_kb(pid):
    got = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                got[line.split(":")[0]] = int(line.split()[1])
    return got


def mem_kb(pid):
    got = status_kb(pid)
    return got["VmRSS"], got["VmHWM"]


def get(url, timeout=300):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def iterations(port):
    """(sum of iteration seconds, count of iterations) over all groups, from /metrics."""
    total, count = 0.0, 0
    for line in get("http://127.0.0.1:%d/metrics" % port).decode().splitlines():
        if line.startswith("vmalert_iteration_duration_seconds_sum"):
            total += float(line.rsplit(" ", 1)[1])
        elif line.startswith("vmalert_iteration_duration_seconds_count"):
            count += int(float(line.rsplit(" ", 1)[1]))
    return total, count


def am_count(port):
    alerts, posts, _, _ = get("http://127.0.0.1:%d/count" % port).split()
    return int(alerts), int(posts)


def rw_count(port):
    _, _, writes, nbytes = get("http://127.0.0.1:%d/count" % port).split()
    return int(writes), int(nbytes)


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if pred():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("timed out waiting for " + what)


def start_fake(mode, port, log):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fakes.py"), mode, str(port)],
                         stdout=log, stderr=subprocess.STDOUT)
    wait_for(lambda: socket.create_connection(("127.0.0.1", port), 1).close() or True, 10,
             "fake " + mode)
    return p


def is_vmalert(binary):
    return os.path.basename(binary).startswith("vmalert")


def alertd_cmd(alertd, rule_file, ds_port, am_port, interval, port):
    """The benchmark's alertd command line: every rule evaluated at `interval`, right away.

    A binary named vmalert* (the baseline: tests/bench/daemon/get_vmalert.sh) gets the same
    command line without alertd's -group.maxStartDelay (vmalert spreads its groups' first
    rounds over one interval) and -rule.evalDelay (not in vmalert v1.79; it only moves the
    query's `time`, which the fake datasource ignores)."""
    cmd = [alertd, "-rule=" + rule_file, "-datasource.url=http://127.0.0.1:%d" % ds_port,
           "-notifier.url=http://127.0.0.1:%d" % am_port, "-evaluationInterval=%ds" % interval,
           "-httpListenAddr=127.0.0.1:%d" % port]
    if not is_vmalert(alertd):
        cmd[-1:-1] = ["-rule.evalDelay=0s", "-group.maxStartDelay=1s"]
    return cmd


def measure(args, size, ds_port, am_port, fakes, workdir):
    label, groups, rules, k, interval = size
    # At least 60 s measured, so clock-tick rounding (10 ms) stays under ~1% at 1k alerts.
    rounds = max(args.rounds, -(-60 // interval))
    alerts = groups * rules * k
    rule_file = os.path.join(workdir, "rules_%s.yml" % label)
    with open(rule_file, "w") as f:
        f.write(generate(groups, rules, k))
    port = free_port()
    log = open(os.path.join(workdir, "alertd_%s.log" % label), "w")
    cmd = alertd_cmd(args.alertd, rule_file, ds_port, am_port, interval, port)
    if args.remote_write:
        # The fake Alertmanager is the receiver too; flushed every second like vmalert's default.
        cmd.append("-remoteWrite.url=http://127.0.0.1:%d" % am_port)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        # Warm-up: two whole rounds of every group, then move half an interval away from the
        # evaluation instants so the window [t0, t0 + N*interval] holds exactly N rounds.
        wait_for(lambda: iterations(port)[1] >= 2 * groups, 3 * interval + 60 + alerts / 1000,
                 "two rounds of %s" % label)
        time.sleep(interval / 2)
        c0, f0 = window_cpu(proc.pid), [window_cpu(p.pid) for p in fakes]
        s0, n0 = iterations(port)
        a0, p0 = am_count(am_port)
        w0 = rw_count(am_port)
        time.sleep(rounds * interval)
        c1 = window_cpu(proc.pid, c0)
        f1 = [window_cpu(p.pid, f) for p, f in zip(fakes, f0)]
        s1, n1 = iterations(port)
        a1, p1 = am_count(am_port)
        w1 = rw_count(am_port)
        st = status_kb(proc.pid)
        rss, hwm = st["VmRSS"], st["VmHWM"]
        done = max(1, n1 - n0) * alerts / groups
        row = {
            "label": label, "alerts": alerts, "interval": interval, "rounds": rounds,
            "iterations": n1 - n0, "iterations_expected": rounds * groups,
            "am_alerts": a1 - a0, "am_expected": rounds * alerts, "am_posts": p1 - p0,
            # Divided by the alert-rounds alertd completed in the window (iterations x alerts per
            # group): equal to alerts x rounds when nothing lags, and honest when a round slips.
            "cpu_us": c1 * 1e6 / done,
            "ds_cpu_us": f1[0] * 1e6 / done,
            "am_cpu_us": f1[1] * 1e6 / done,
            "rss_mb": rss / 1024, "hwm_mb": hwm / 1024,
            # VmRSS = RssAnon (heap, stacks) + RssFile (mapped code and data of the binary and
            # its libraries, shared with other processes) + RssShmem.
            "anon_mb": st["RssAnon"] / 1024, "file_mb": st["RssFile"] / 1024,
            "bytes_per_alert": rss * 1024 / alerts,
            "iter_ms": (s1 - s0) * 1e3 / max(1, n1 - n0),
            "rw_requests": w1[0] - w0[0], "rw_mb": (w1[1] - w0[1]) / 1e6,
        }
        # One GET of each API, half an interval away from the evaluations (same phase as t0).
        for name, path in (("rules", "/api/v1/rules"), ("alerts", "/api/v1/alerts")):
            c0, (_, h0) = cpu_ns(proc.pid), mem_kb(proc.pid)
            body = get("http://127.0.0.1:%d%s" % (port, path))
            c1, (r1, h1) = cpu_ns(proc.pid), mem_kb(proc.pid)
            row[name + "_ms"] = (c1 - c0) / 1e6
            row[name + "_hwm_mb"] = (h1 - h0) / 1024
            row[name + "_body_mb"] = len(body) / 1e6
        row["rss_after_api_mb"] = mem_kb(proc.pid)[0] / 1024
        return row
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


COLUMNS = [
    ("alerts", "alerts", "{:,}"),
    ("interval", "interval s", "{}"),
    ("rounds", "rounds", "{}"),
    ("cpu_us", "CPU µs / alert-round", "{:.1f}"),
    ("rss_mb", "VmRSS MB", "{:.1f}"),
    ("anon_mb", "RssAnon MB", "{:.1f}"),
    ("file_mb", "RssFile MB", "{:.1f}"),
    ("hwm_mb", "VmHWM MB", "{:.1f}"),
    ("bytes_per_alert", "bytes / alert", "{:,.0f}"),
    ("iter_ms", "group iteration ms", "{:.1f}"),
    ("rules_ms", "/api/v1/rules CPU ms", "{:.1f}"),
    ("rules_hwm_mb", "rules ΔHWM MB", "{:.1f}"),
    ("alerts_ms", "/api/v1/alerts CPU ms", "{:.1f}"),
    ("alerts_hwm_mb", "alerts ΔHWM MB", "{:.1f}"),
    ("rss_after_api_mb", "VmRSS after API MB", "{:.1f}"),
    ("ds_cpu_us", "fake DS µs / alert-round", "{:.2f}"),
    ("am_cpu_us", "fake AM µs / alert-round", "{:.2f}"),
]


def table(rows):
    lines = ["| " + " | ".join(c[1] for c in COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for r in rows:
        lines.append("| " + " | ".join(fmt.format(r[key]) for key, _, fmt in COLUMNS) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--alertd", required=True)
    ap.add_argument("--sizes", default="1k,10k,100k")
    ap.add_argument("--rounds", type=int, default=3, help="whole rounds measured per size")
    ap.add_argument("--repeat", type=int, default=1, help="runs of all sizes; medians reported")
    ap.add_argument("--interval-100k", type=int, default=120,
                    help="evaluation interval at 100k alerts (120 s like vmalert's run)")
    ap.add_argument("--interval-10k", type=int, default=30)
    ap.add_argument("--interval-1k", type=int, default=5)
    ap.add_argument("--remote-write", action="store_true",
                    help="also -remoteWrite.url (ALERTS and ALERTS_FOR_STATE for every alert), "
                         "received and counted by the fake Alertmanager")
    args = ap.parse_args()
    stop_on_sigterm()
    sizes = {
        "1k": ("1k", 10, 10, 10, args.interval_1k),
        "10k": ("10k", 10, 100, 10, args.interval_10k),
        "100k": ("100k", 10, 10, 1000, args.interval_100k),
    }
    workdir = tempfile.mkdtemp(prefix="alertd-daemonbench-")
    ds_port, am_port = free_port(), free_port()
    flog = open(os.path.join(workdir, "fakes.log"), "w")
    fakes = [start_fake("ds", ds_port, flog), start_fake("am", am_port, flog)]
    runs = []
    try:
        for rep in range(args.repeat):
            rows = []
            for s in args.sizes.split(","):
                row = measure(args, sizes[s], ds_port, am_port, fakes, workdir)
                print("run %d %s: %s" % (rep + 1, s, row), file=sys.stderr, flush=True)
                rows.append(row)
            runs.append(rows)
    finally:
        for p in fakes:
            p.terminate()
            p.wait()
    medians = []
    for i, first in enumerate(runs[0]):
        row = dict(first)
        for key, _, _ in COLUMNS:
            if key in ("alerts", "interval", "rounds"):
                continue
            row[key] = statistics.median(run[i][key] for run in runs)
        medians.append(row)
    print("alertd daemon benchmark: >= %d round(s) and >= 60 s per size, median of %d run(s); "
          "logs in %s" % (args.rounds, args.repeat, workdir))
    print()
    print(table(medians))
    print()
    for rows in runs:
        for r in rows:
            ok = r["iterations"] == r["iterations_expected"] and r["am_alerts"] == r["am_expected"]
            if args.remote_write and r["rw_requests"] == 0:
                ok = False
            rw = ""
            if args.remote_write:
                rw = ", %d remote-write requests (%.1f MB compressed)" % (r["rw_requests"],
                                                                        r["rw_mb"])
            print("- %s: %d group iterations (expected %d), %d alerts in %d posts to the fake "
                  "Alertmanager (expected %d)%s%s" % (
                      r["label"], r["iterations"], r["iterations_expected"], r["am_alerts"],
                      r["am_posts"], r["am_expected"], rw, "" if ok else "  **MISMATCH**"))


if __name__ == "__main__":
    main()
