#!/usr/bin/env python3
"""Keeps a fuzz corpus in the repository small: the named seeds, plus the
fuzzer-found units (SHA-1 names) that add the most coverage, up to
--max-files files and --max-bytes bytes in all.

usage: select_corpus.py CONTROL_FILE CORPUS_DIR [--max-files 60] [--max-bytes 1000000]

CONTROL_FILE is what `<fuzzer> -merge=1 -use_counters=0
-merge_control_file=CONTROL_FILE SEEDS CANDIDATES...` wrote, SEEDS being a
folder holding copies of CORPUS_DIR's named files (hand-written seeds and
repro_* reproducers). libFuzzer runs SEEDS first, then the candidates
smallest first, and records for each input the coverage edges (COV lines)
that no input run before it had: so a candidate's count is what it adds
beyond the seeds and the smaller candidates. The candidates with the largest
counts (ties: the smaller file) fill the room the seeds leave. CORPUS_DIR
then holds exactly the seeds and those: new ones copied in under their
SHA-1, the others removed.
"""
import argparse
import hashlib
import os
import re
import shutil
import sys

UNIT_NAME = re.compile(r"[0-9a-f]{40}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("control")
    ap.add_argument("corpus")
    ap.add_argument("--max-files", type=int, default=60)
    ap.add_argument("--max-bytes", type=int, default=1000000)
    args = ap.parse_args()

    with open(args.control) as f:
        lines = f.read().splitlines()
    n, n_seeds = int(lines[0]), int(lines[1])
    files = lines[2:2 + n]
    new_edges = [0] * n
    for line in lines[2 + n:]:
        if line.startswith("COV "):
            parts = line.split()
            new_edges[int(parts[1])] = len(parts) - 2

    wanted = {os.path.basename(p) for p in files[:n_seeds]}
    size = sum(os.path.getsize(p) for p in files[:n_seeds])
    seed_edges = sum(new_edges[:n_seeds])
    seen = {hashlib.sha1(open(p, "rb").read()).hexdigest() for p in files[:n_seeds]}
    added_edges, added = 0, 0
    candidates = sorted(range(n_seeds, n), key=lambda i: (-new_edges[i], os.path.getsize(files[i])))
    for i in candidates:
        if new_edges[i] == 0 or len(wanted) >= args.max_files:
            break
        data = open(files[i], "rb").read()
        digest = hashlib.sha1(data).hexdigest()
        if digest in seen or size + len(data) > args.max_bytes:
            continue
        seen.add(digest)
        target = os.path.join(args.corpus, digest)
        if os.path.realpath(files[i]) != os.path.realpath(target):
            shutil.copyfile(files[i], target)
        wanted.add(digest)
        size += len(data)
        added_edges += new_edges[i]
        added += 1
    for name in os.listdir(args.corpus):
        if name not in wanted and UNIT_NAME.fullmatch(name):
            os.remove(os.path.join(args.corpus, name))
    left = sum(new_edges[n_seeds:]) - added_edges
    print(f"{args.corpus}: {len(wanted)} files, {size} bytes: {n_seeds} named seeds ({seed_edges} edges) "
          f"+ {added} units adding {added_edges} edges ({left} edges of other units left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
