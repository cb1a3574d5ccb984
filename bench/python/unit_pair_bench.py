"""A compile unit with one phase against `with contextlib.nullcontext()`,
timed in alternating pairs in one process, so that a slow stretch of a
shared machine slows both sides of a pair (docs/performance.md, "Python").

    PYTHONPATH=build/dev/python /usr/bin/python3 bench/python/unit_pair_bench.py [ROUNDS]

Rings of 2^20 records, 32 MiB (UNIT_BENCH_RING, in records, to change;
empty: the default, 2 MiB), so that the loop records every event: a
dropped event costs the host less than a recorded one, and would flatter
the unit. The ring's size moves the result: a ring first touched during
the loop pays its page faults (2^22 records: 750 ns and more a unit +
phase), and a ring larger than the caches pays their misses. Prints the minimum of each side,
their ratio, and the median of the pairs' ratios (budget: 3x).
"""

import contextlib
import os
import statistics
import sys
import tempfile
import timeit

import jitscope

N = 20000
ring = os.environ.get("UNIT_BENCH_RING", str(1 << 20))
config = {"ring_capacity": int(ring)} if ring else {}
jitscope.start(os.path.join(tempfile.mkdtemp(), "b.pftrace"), cupti="off", **config)
g = {"cu": jitscope.compile_unit, "ph": jitscope.phase, "contextlib": contextlib}
null_stmt = "with contextlib.nullcontext(): pass"
unit_stmt = "with cu(frame='f'):\n with ph('p'): pass"
null_ns, unit_ns = [], []
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
    null_ns.append(timeit.timeit(null_stmt, globals=g, number=N) / N * 1e9)
    unit_ns.append(timeit.timeit(unit_stmt, globals=g, number=N) / N * 1e9)
stats = jitscope.stop()
pairs = [u / n for u, n in zip(unit_ns, null_ns)]
print(f"nullcontext min {min(null_ns):.0f} ns, unit + phase min {min(unit_ns):.0f} ns: "
      f"{min(unit_ns) / min(null_ns):.2f}x; median of pairs {statistics.median(pairs):.2f}x; "
      f"events dropped {stats.events_dropped}")
