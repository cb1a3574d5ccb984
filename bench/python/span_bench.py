"""The Python package's costs against its budgets (docs/performance.md,
"Python"): each form timed in one process, in repeats that alternate with
its reference's; the median of the pairs' ratios is held to the budget.

    PYTHONPATH=build/dev/python /usr/bin/python3 bench/python/span_bench.py

Budgets (issue 37): `with jitscope.span("x")` <= 1.5x `with
contextlib.nullcontext()` with a session on, <= 1.1x with none; a decorated
call <= 2x a pass-through functools.wraps wrapper; a compile unit with one
phase <= 3x nullcontext.
"""

import contextlib
import functools
import os
import statistics
import sys
import tempfile
import timeit

import jitscope

N = int(os.environ.get("SPAN_BENCH_N", "200000"))
REPEATS = int(os.environ.get("SPAN_BENCH_REPEATS", "7"))


def paired(stmt, ref_stmt, g, n=N):
    """Times `stmt` and its reference in alternating repeats, so that a slow
    stretch of a shared machine slows both sides of a pair: the medians of
    each side's ns per op, and the median of the pairs' ratios."""
    ns, ref_ns = [], []
    for _ in range(REPEATS):
        ref_ns.append(timeit.timeit(ref_stmt, number=n, globals=g) / n * 1e9)
        ns.append(timeit.timeit(stmt, number=n, globals=g) / n * 1e9)
    ratio = statistics.median(a / b for a, b in zip(ns, ref_ns))
    return statistics.median(ns), statistics.median(ref_ns), ratio


def plain(x):
    return x


def passthrough(f):
    @functools.wraps(f)
    def wrapper(*a, **k):
        return f(*a, **k)
    return wrapper


wrapped_plain = passthrough(plain)
spanned_plain = jitscope.span()(plain)


REF_NAMES = {"with contextlib.nullcontext(): pass": "nullcontext",
             "wrapped_plain(1)": "functools.wraps pass-through"}


def rows():
    g = {"jitscope": jitscope, "contextlib": contextlib, "wrapped_plain": wrapped_plain,
         "spanned_plain": spanned_plain}
    null = "with contextlib.nullcontext(): pass"
    wraps = "wrapped_plain(1)"
    forms_off = [
        ("with span, no session", "with jitscope.span('x'): pass", null, N, 1.1),
        ("decorated call, no session", "spanned_plain(1)", wraps, N, 2.0),
    ]
    forms_on = [
        ("with span, session on", "with jitscope.span('x'): pass", null, N, 1.5),
        ("with span + 2 args, session on", "with jitscope.span('x', n=1, kind='ptx'): pass",
         null, N, None),
        ("decorated call, session on", "spanned_plain(1)", wraps, N, 2.0),
        ("compile_unit + 1 phase, session on",
         "with jitscope.compile_unit('f'):\n with jitscope.phase('p'): pass", null,
         max(N // 10, 1000), 3.0),
    ]
    out = [(name, *paired(stmt, ref, g, n), ref, budget) for name, stmt, ref, n, budget in forms_off]
    with tempfile.TemporaryDirectory() as d:
        # Drop, not block, as a host runs it; rings big enough that the
        # flusher keeps up, so that what is timed is the recording path.
        jitscope.start(os.path.join(d, "bench.pftrace"), cupti="off", ring_capacity=1 << 18,
                       flush_interval_ms=5)
        out += [(name, *paired(stmt, ref, g, n), ref, budget)
                for name, stmt, ref, n, budget in forms_on]
        stats = jitscope.stop()
    return out, stats


def main():
    out, stats = rows()
    print(f"python {sys.version.split()[0]}, {N} ops x {REPEATS} repeats, each paired with its "
          f"reference (medians); events dropped: {stats.events_dropped}")
    print(f"{'form':38} {'ns/op':>8} {'ref ns':>8} {'ratio':>6}  budget  reference")
    for name, ns, ref_ns, ratio, ref, budget in out:
        verdict = "" if budget is None else ("ok" if ratio <= budget else "OVER")
        b = "" if budget is None else f"{budget:.1f}x"
        print(f"{name:38} {ns:8.1f} {ref_ns:8.1f} {ratio:6.2f}  {b:>5} {verdict:4}  {REF_NAMES[ref]}")


if __name__ == "__main__":
    main()
