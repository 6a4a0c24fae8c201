#!/usr/bin/env python3
"""Runs every row of template_cases.json through `alertd-tool render` and compares the output
with the row's `vmalert` column (see docs/templates.md, "Conformance tests").

usage: render_cases.py ALERTD_TOOL TEMPLATE_CASES_JSON [-v]
Exit status 0 when every row passes."""
import json
import os
import re
import subprocess
import sys

FIXED_NOW = 1353755652  # the harness fixed vmalert's wall clock to Prometheus' eval time


def error_tail(msg):
    """The part of a Go template error that does not depend on the harness: after the last
    'executing "..." at <...>: ' or after 'template: NAME:LINE: '."""
    m = re.search(r'executing "[^"]*" at <.*?>: ', msg)
    if m:
        return msg[m.end():]
    m = re.search(r'template: [^:]*:\d+: ', msg)
    if m:
        return msg[m.end():]
    return msg


def main():
    tool, cases_path = sys.argv[1], sys.argv[2]
    if not os.path.exists(cases_path):
        print(f"ALERTD_SKIP: {cases_path} is absent "
              "(../shared/ exists beside CI's checkout, not in a clone)")
        sys.exit(77)  # CTest: SKIP_RETURN_CODE
    verbose = '-v' in sys.argv
    data = json.load(open(cases_path))
    d = data['defaults']
    vm = d['vmalert_data']
    lines = []
    for row in data['cases']:
        queries = dict(d['default_query_results'])
        if row.get('queries'):
            queries.update(row['queries'])
        lines.append(json.dumps({
            'template': row['template'],
            'value': row.get('value', d['value']),
            'labels': row.get('labels', d['labels']),
            'external_labels': row.get('external_labels', d['external_labels']),
            'external_url': row.get('external_url', d['external_url']),
            'expr': vm['Expr'], 'active_at': vm['ActiveAt'], 'for': vm['For'],
            'queries': queries, 'now': FIXED_NOW,
        }))
    proc = subprocess.run([tool, 'render'], input='\n'.join(lines) + '\n',
                          capture_output=True, text=True, check=True)
    outs = [json.loads(l) for l in proc.stdout.splitlines()]
    assert len(outs) == len(lines), (len(outs), len(lines))
    failed = exact = 0
    for row, out in zip(data['cases'], outs):
        want = row['vmalert']
        want_error = want.startswith('error parsing template: ') or \
            want.startswith('error evaluating template: ')
        if want_error:
            want = want.replace('main.vmData', 'notifier.tplData')
            got = out.get('error')
            ok = got is not None and error_tail(want) in got
            exact += got == want
        else:
            got = out.get('output')
            ok = got == want
            exact += ok
        if not ok:
            failed += 1
            print(f"FAIL id={row['id']} template={row['template']!r}\n  want={want!r}\n  got ={out!r}")
        elif verbose and want_error and got != want:
            print(f"tail-only id={row['id']}\n  want={want!r}\n  got ={got!r}")
    print(f"{len(outs) - failed}/{len(outs)} rows pass ({exact} byte-identical)")
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
