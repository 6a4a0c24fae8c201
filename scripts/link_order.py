#!/usr/bin/env python3
"""Turns callgrind profiles of a running alertd into app/link_order.txt (scripts/link-order.sh).

  link_order.py OBJECT OUT PROFILE... : the functions of OBJECT (the alertd binary's path as
  callgrind names it) that ran in each PROFILE, most instructions first, each function once, in
  the order of the profiles given (the first is the steady round, later ones add what a round
  did not run), written to OUT with a header.

A profile is a callgrind output file made with --demangle=no, so names are the linker's symbols.
Split-off cold parts (`name.cold`) are left out: they belong with the other cold code.
"""
import re
import sys

HEADER = """\
# alertd's link order (lld --symbol-ordering-file; see app/CMakeLists.txt and
# docs/performance.md): the functions alertd runs while it evaluates rules, most instructions
# first, then those that scraping /metrics and reading the API add. Laid out together, the code a
# running daemon uses fills a few hundred contiguous kB instead of pages scattered over the
# whole binary, so less of the binary stays resident. Made by scripts/link-order.sh: rerun it
# after a change that moves work between functions; a stale entry is ignored by the linker and
# costs nothing but a little locality.
"""

NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")
RECURSION = re.compile(r"'\d+$")  # callgrind's name for a recursion level: `fn'2`


def functions(path, wanted_object):
    """Self instructions per function of `wanted_object` in one callgrind file."""
    names = {"ob": {}, "fn": {}}
    obj = None
    fn = None
    skip_next = False
    cost = {}

    def name_of(kind, text):
        m = NAME.match(text)
        if not m:
            return text
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), "")

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                obj = name_of("ob", line[3:])
            elif line.startswith("cob="):
                name_of("ob", line[4:])
            elif line.startswith("fn="):
                fn = RECURSION.sub("", name_of("fn", line[3:]))
            elif line.startswith("cfn="):
                name_of("fn", line[4:])
            elif line.startswith("calls="):
                skip_next = True  # the next cost line is the call's inclusive cost
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                if obj == wanted_object and fn:
                    parts = line.split()
                    if len(parts) >= 2 and parts[1].isdigit():
                        cost[fn] = cost.get(fn, 0) + int(parts[1])
    return cost


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    wanted, out_path, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
    seen = set()
    order = []
    for p in profiles:
        cost = functions(p, wanted)
        for fn, ir in sorted(cost.items(), key=lambda kv: (-kv[1], kv[0])):
            if ir <= 0 or fn in seen or ".cold" in fn or fn.startswith("0x"):
                continue
            seen.add(fn)
            order.append(fn)
    if not order:
        sys.exit("link_order.py: no function of %s in the profiles" % wanted)
    with open(out_path, "w") as f:
        f.write(HEADER)
        for fn in order:
            f.write(fn + "\n")
    print("%s: %d functions" % (out_path, len(order)))


if __name__ == "__main__":
    main()
