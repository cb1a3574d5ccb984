#!/usr/bin/env python3
"""Requires jitscope-report to say the same of two traces of one program, the
one in the JSON form and the other in the Perfetto form (both_forms.sh).

usage: report_agree.py <json-prefix> <pftrace-prefix>
  reads <prefix>.txt (the table report) and <prefix>.json (--format json).

The two traces come from two runs, so times differ and are left out: every
member named *_ns, *_us, *_pct, ts, dur, a histogram, the input's name and
size, pids and tids (and the thread labels that hold them); lists ranked by
time (the slowest spans) are compared by length only, rows of a unit's
spans by their names (the lane a worker took differs between runs). What must agree is
all the rest: event, span, unit and GPU counts, span and unit names, failed
units, flows, warnings, the session's metadata. The table report is
compared line by line with numbers blanked, sorted (rows ranked by time
change places between runs), without the ranked section.
Exit 0 when they agree, 1 otherwise (the differences on stdout).
"""
import json
import re
import sys

TIMING_SUFFIXES = ("_ns", "_us", "_ms", "_pct", "_percent", "_share")
DROPPED = {"input", "bytes", "ts", "dur", "histogram", "pid", "tid", "thread", "time_span",
           "begin", "end", "rank"}
RANKED = re.compile(r"slowest|longest|top_spans", re.I)


def normalize(value, key=""):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in DROPPED or k.endswith(TIMING_SUFFIXES):
                continue
            if RANKED.search(k) and isinstance(v, list):
                out[k] = f"<{len(v)} ranked>"
                continue
            out[k] = normalize(v, k)
        return out
    if isinstance(value, list):
        # A unit's spans are rows [name, offset_ns, dur_ns, lane]: the lane
        # a worker thread took differs between runs; the name is compared.
        items = [normalize(v[0] if isinstance(v, list) and v and isinstance(v[0], str) else v, key)
                 for v in value]
        # Rows ranked by time change places between two runs: compare as a set.
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def table_lines(text):
    lines, skip = [], False
    for line in text.splitlines():
        if line.startswith("== "):
            skip = bool(re.search(r"slowest|longest", line, re.I))
        if skip or re.match(r"\s*(input|bytes|time span)\s", line):
            continue
        line = re.sub(r"\(\d+/\d+\)", "(pid/tid)", line)
        line = re.sub(r"\d+(\.\d+)?( ?(ns|µs|us|ms|s|B|KiB|MiB|GiB)\b)?", "#", line)
        line = re.sub(r"[ \t-]+", " ", line).strip()
        lines.append(line)
    return sorted(lines)


def diff(a, b, path, out):
    if type(a) is not type(b):
        out.append(f"{path}: {json.dumps(a)[:200]} (json) vs {json.dumps(b)[:200]} (pftrace)")
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in the {'json' if k in a else 'pftrace'} report: "
                           f"{json.dumps(a.get(k, b.get(k)))[:200]}")
            else:
                diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:200]} (json) vs {json.dumps(b)[:200]} (pftrace)")


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    j, p = sys.argv[1], sys.argv[2]
    problems = []
    with open(j + ".json") as f:
        a = normalize(json.load(f))
    with open(p + ".json") as f:
        b = normalize(json.load(f))
    diff(a, b, "report", problems)
    with open(j + ".txt") as f:
        ta = table_lines(f.read())
    with open(p + ".txt") as f:
        tb = table_lines(f.read())
    if ta != tb:
        only_a = sorted(set(ta) - set(tb))
        only_b = sorted(set(tb) - set(ta))
        problems += [f"table line only for json: {x}" for x in only_a[:20]]
        problems += [f"table line only for pftrace: {x}" for x in only_b[:20]]
        if not only_a and not only_b:
            problems.append("the table reports hold the same lines a different number of times")
    for line in problems[:60]:
        print(line)
    print(f"report_agree: {j} vs {p}: " + ("agree" if not problems else f"{len(problems)} differences"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
