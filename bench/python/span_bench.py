"""The Python package's costs against its budgets (docs/performance.md,
"Python"): each form timed in one process, median of several repeats, as a
ratio to its reference.

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


def per_op_ns(stmt, setup="pass", n=N, g=None):
    runs = timeit.repeat(stmt, setup, number=n, repeat=REPEATS, globals=g)
    return statistics.median(runs) / n * 1e9


def plain(x):
    return x


def passthrough(f):
    @functools.wraps(f)
    def wrapper(*a, **k):
        return f(*a, **k)
    return wrapper


wrapped_plain = passthrough(plain)
spanned_plain = jitscope.span()(plain)


def rows():
    g = {"jitscope": jitscope, "contextlib": contextlib, "wrapped_plain": wrapped_plain,
         "spanned_plain": spanned_plain}
    out = []
    null = per_op_ns("with contextlib.nullcontext(): pass", g=g)
    wraps = per_op_ns("wrapped_plain(1)", g=g)
    off = per_op_ns("with jitscope.span('x'): pass", g=g)
    out.append(("with span, no session", off, null, "nullcontext", 1.1))
    off_dec = per_op_ns("spanned_plain(1)", g=g)
    out.append(("decorated call, no session", off_dec, wraps, "functools.wraps pass-through", 2.0))
    with tempfile.TemporaryDirectory() as d:
        # Drop, not block, as a host runs it; rings big enough that the
        # flusher keeps up, so that what is timed is the recording path.
        jitscope.start(os.path.join(d, "bench.pftrace"), cupti="off", ring_capacity=1 << 18,
                       flush_interval_ms=5)
        on = per_op_ns("with jitscope.span('x'): pass", g=g)
        out.append(("with span, session on", on, null, "nullcontext", 1.5))
        args = per_op_ns("with jitscope.span('x', n=1, kind='ptx'): pass", g=g)
        out.append(("with span + 2 args, session on", args, null, "nullcontext", None))
        dec = per_op_ns("spanned_plain(1)", g=g)
        out.append(("decorated call, session on", dec, wraps, "functools.wraps pass-through", 2.0))
        unit = per_op_ns("with jitscope.compile_unit('f'):\n with jitscope.phase('p'): pass",
                         g=g, n=max(N // 10, 1000))
        out.append(("compile_unit + 1 phase, session on", unit, null, "nullcontext", 3.0))
        stats = jitscope.stop()
    return out, stats


def main():
    out, stats = rows()
    print(f"python {sys.version.split()[0]}, {N} ops x {REPEATS} repeats (median); "
          f"events dropped: {stats.events_dropped}")
    print(f"{'form':38} {'ns/op':>8} {'ref ns':>8} {'ratio':>6}  budget  reference")
    for name, ns, ref, ref_name, budget in out:
        ratio = ns / ref
        verdict = "" if budget is None else ("ok" if ratio <= budget else "OVER")
        b = "" if budget is None else f"{budget:.1f}x"
        print(f"{name:38} {ns:8.1f} {ref:8.1f} {ratio:6.2f}  {b:>5} {verdict:4}  {ref_name}")


if __name__ == "__main__":
    main()
