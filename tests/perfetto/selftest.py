#!/usr/bin/env python3
"""ctest perfetto_checker_selftest: check_pftrace.py on the traces of
make_broken_traces.py. The valid trace (and the cut and rotated ones, with
their flags) must pass; every broken variant must fail, with exit 1 and
with a problem line matching each of its expected messages. This shows that
every check can fail, and that the valid trace decodes with protoc.

usage: selftest.py OUT_DIR [--proto-dir DIR]
OUT_DIR keeps the traces (valid.pftrace is checked again by the
jitscope_check_pftrace hook, see docs/testing.md).
"""
import argparse
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import check_pftrace  # noqa: E402
import make_broken_traces

HERE = os.path.dirname(os.path.abspath(__file__))


def run_one(case, proto_dir, pb):
    """check_pftrace's own check of one file, in this process: one Python
    and one schema for all 55 (a process each cost about a second)."""
    name, path, flags, status, expect = case
    args = check_pftrace.arg_parser().parse_args([*flags, path])
    returncode, lines = check_pftrace.check_files(args, pb, proto_dir)
    failures = []
    if returncode != status:
        failures.append(f"exit {returncode}, expected {status}")
    for pattern in expect:
        if not any(re.search(pattern, line) for line in lines):
            failures.append(f"no line matches {pattern!r}")
    # Every problem names its packet and sequence, or is about the whole file.
    prefix = f"{path}: "
    if not lines or not all(line.startswith(prefix) for line in lines):
        failures.append("a line does not start with the file's name")
    if not re.search(r": \d+ packets, \d+ sequences, \d+ tracks, \d+ slices, \d+ flows", lines[-1] if lines else ""):
        failures.append("no summary line last")
    return name, flags, failures, "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--proto-dir")
    args = ap.parse_args()
    gen_dir = os.path.join(args.out_dir, "pb2")
    try:
        proto_dir, pb = check_pftrace.load_schema(args.proto_dir, gen_dir)
    except check_pftrace.SchemaError as e:
        print(f"selftest: {e}", file=sys.stderr)
        return 2
    cases = make_broken_traces.write_all(args.out_dir, pb)
    with ThreadPoolExecutor(max_workers=2) as pool:  # the CI machine has 2 cores
        results = list(pool.map(lambda c: run_one(c, proto_dir, pb), cases))
    bad = 0
    for name, flags, failures, output in results:
        verdict = "ok" if not failures else "FAILED: " + "; ".join(failures)
        print(f"{name} {' '.join(flags)}: {verdict}")
        if failures:
            bad += 1
            print("  " + output.rstrip().replace("\n", "\n  "))
    passing = sum(1 for c in cases if c[3] == 0)
    print(f"{len(cases)} traces: {passing} must pass, {len(cases) - passing} must fail; "
          f"{len(cases) - bad} behaved, {bad} did not")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
