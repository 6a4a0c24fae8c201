#!/usr/bin/env python3
"""Two or more alertd builds measured at the same time, each with its own fakes.

    tests/bench/daemon/side_by_side.py [--size 10k] [--seconds 120] [--repeat 1] BASE OTHER...

run.sh measures one build after another, and on a shared 2-core VM the CPU a build uses per
alert-round moves by 20-30% between runs (docs/performance.md): a 10% change is invisible. Here
every build runs at once on the same rule file, with its own fake datasource and Alertmanager,
and the CPU each used in one common window is divided by the alert-rounds it completed. What
disturbs one build disturbs all of them. Prints µs per alert-round per build and its ratio to
the first (BASE); with --repeat, the builds start in rotated order each time and the medians
come last. A binary named vmalert* can be one of them (get_vmalert.sh fetches Debian's).
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import (alertd_cmd, free_port, iterations, start_fake, status_kb,  # noqa: E402
                   stop_on_sigterm, wait_for, window_cpu)
from gen_rules import generate  # noqa: E402

# groups, rules per group, series per rule, interval (run.sh's sizes, 10k at 5 s so a window
# holds many rounds).
SIZES = {"1k": (10, 10, 10, 5), "10k": (10, 100, 10, 5), "100k": (10, 10, 1000, 30)}


def ratio(us, base):
    """1.07x; below a tenth of the baseline, 1/95 (against vmalert)."""
    return "%.2fx" % (us / base) if us * 10 >= base else "1/%.0f" % (base / us)


def run_once(bins, groups, rules, k, interval, seconds, workdir):
    rule_file = os.path.join(workdir, "rules.yml")
    with open(rule_file, "w") as f:
        f.write(generate(groups, rules, k))
    procs = []  # (bin, alertd Popen, port)
    children = []  # every process started, alertd and fakes, stopped in `finally`
    try:
        for i, b in enumerate(bins):
            log = open(os.path.join(workdir, "run%d.log" % i), "w")
            ds_port, am_port, port = free_port(), free_port(), free_port()
            children.append(start_fake("ds", ds_port, log))
            children.append(start_fake("am", am_port, log))
            cmd = alertd_cmd(b, rule_file, ds_port, am_port, interval, port)
            children.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT))
            procs.append((b, children[-1], port))
        for b, p, port in procs:
            wait_for(lambda: iterations(port)[1] >= 2 * groups, 3 * interval + 60,
                     "two rounds of " + b)
        time.sleep(interval / 2)
        start = [(window_cpu(p.pid), iterations(port)[1]) for _, p, port in procs]
        time.sleep(seconds)
        out = {}
        for (b, p, port), (c0, n0) in zip(procs, start):
            c1, n1 = window_cpu(p.pid, c0), iterations(port)[1]
            alert_rounds = max(1, n1 - n0) * rules * k
            out[b] = (c1 * 1e6 / alert_rounds, status_kb(p.pid)["VmRSS"] / 1024)
        return out
    finally:
        for q in children:
            q.send_signal(signal.SIGTERM)
        for q in children:
            try:
                q.wait(30)
            except subprocess.TimeoutExpired:
                q.kill()
                q.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="10k", choices=sorted(SIZES))
    ap.add_argument("--seconds", type=int, default=120, help="measured window per repeat")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--interval", type=int,
                    help="evaluation interval in s (default: 5 at 1k and 10k, 30 at 100k; "
                         "vmalert needs ~1 ms of CPU per alert-round, so 30 at 10k and 120 at "
                         "100k with it on 2 cores)")
    ap.add_argument("bins", nargs="+", metavar="ALERTD")
    args = ap.parse_args()
    stop_on_sigterm()
    if len(args.bins) < 2:
        ap.error("give at least two builds (the first is the baseline)")
    groups, rules, k, interval = SIZES[args.size]
    interval = args.interval or interval
    results = {b: [] for b in args.bins}
    with tempfile.TemporaryDirectory(prefix="alertd-sidebyside-") as workdir:
        for r in range(args.repeat):
            order = args.bins[r % len(args.bins):] + args.bins[:r % len(args.bins)]
            got = run_once(order, groups, rules, k, interval, args.seconds, workdir)
            base = got[args.bins[0]][0]
            print("run %d (%s, interval %d s, %d s):" % (r + 1, args.size, interval,
                                                          args.seconds))
            for b in args.bins:
                us, rss = got[b]
                results[b].append(us)
                print("  %-40s %7.2f µs/alert-round  %s  VmRSS %.1f MB" % (b, us, ratio(us, base),
                                                                         rss))
    if args.repeat > 1:
        base = statistics.median(results[args.bins[0]])
        print("medians over %d runs:" % args.repeat)
        for b in args.bins:
            m = statistics.median(results[b])
            print("  %-40s %7.2f µs/alert-round  %s" % (b, m, ratio(m, base)))


if __name__ == "__main__":
    main()
