#!/usr/bin/env python3
"""Rule-file generator for the daemon benchmark: gen_rules.py G R K > rules.yml

G groups x R alerting rules, each querying K series from fakes.py (`bench_k<K>{rule="..."}`),
for: 0 so every alert fires on its first round, with templated labels and annotations.
"""
import sys


def generate(groups, rules, k):
    out = ["groups:"]
    for g in range(groups):
        out.append("  - name: bench_g%03d" % g)
        out.append("    rules:")
        for r in range(rules):
            name = "g%03d_r%04d" % (g, r)
            out += [
                "      - alert: Bench_%s" % name,
                "        expr: 'bench_k%d{rule=\"%s\"}'" % (k, name),
                "        for: 0s",
                "        labels:",
                "          severity: warning",
                "          host: '{{ $labels.instance }}'",
                "        annotations:",
                "          summary: 'High load on {{ $labels.instance }} in {{ $labels.region }}'",
                "          description: 'Value {{ $value | humanize }} above threshold for job "
                "{{ $labels.job }} (rule %s)'" % name,
            ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    g, r, k = (int(a) for a in sys.argv[1:4])
    sys.stdout.write(generate(g, r, k))
