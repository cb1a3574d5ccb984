"""python_driver: a Triton-shaped Python compiler driver, traced by jitscope
from the Python stages down to each MLIR and LLVM pass.

    PYTHONPATH=build/dev/python:build/dev/samples/python_driver \\
        python3 samples/python_driver/driver.py --trace driver.json

compile kernels   three kernels, each a compile unit in this process
autotune axpy     six configs compiled in a pool of worker processes, each
                  writing its trace beside this one; then ranked
report            the compile_times table, and how to merge the traces
"""

from __future__ import annotations

import argparse
import sys
import threading

try:
    import jitscope
except ImportError as e:
    sys.exit(f"python_driver: cannot import jitscope ({e}): put build/<preset>/python on "
             "PYTHONPATH, or install the package (docs/python.md)")

import tinydsl
import kernels
from tinydsl import Tensor

N = 1 << 20


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", default="python_driver.json",
                   help="the trace (.json or .pftrace); workers write beside it")
    p.add_argument("--metrics", default=None, help="one compile-unit record per line (JSONL)")
    p.add_argument("--cache-dir", default="python_driver_cache", help="the disk cache's folder")
    p.add_argument("--no-cache", action="store_true", help="compile everything")
    p.add_argument("--jobs", type=int, default=2, help="autotuning worker processes")
    p.add_argument("--start-method", default="spawn", choices=["spawn", "forkserver", "fork"],
                   help="how workers start (spawn: this process runs MLIR's threads)")
    p.add_argument("--inject-error", action="store_true",
                   help="also compile a kernel whose trace stage fails")
    return p.parse_args()


def compile_kernels(inject_error):
    """The kernels of this run, each compiled once; failures said, not fatal."""
    jobs = [("axpy", lambda: kernels.axpy.compile(Tensor(N), Tensor(N), Tensor(N), 2.0,
                                                   BLOCK=256, UNROLL=1)),
            ("fma3", lambda: kernels.fma3.compile(Tensor(N), Tensor(N), Tensor(N), Tensor(N),
                                                   BLOCK=128)),
            ("normalize", lambda: kernels.normalize.compile(Tensor(N), Tensor(N), 0.5, 4.0,
                                                             BLOCK=128))]
    if inject_error:
        jobs.append(("broken", lambda: kernels.broken.compile(Tensor(N), Tensor(N), BLOCK=128)))
    built = []
    with jitscope.span("compile kernels", kernels=len(jobs)):
        for name, job in jobs:
            try:
                c = job()
            except (tinydsl.TraceError, RuntimeError) as e:  # the unit says it failed too
                print(f"python_driver: kernel {name} failed: {type(e).__name__}: {e}",
                      file=sys.stderr)
                continue
            built.append(c)
            size = "" if c.cubin is None else f", ptx {len(c.ptx)} B, cubin {len(c.cubin)} B"
            print(f"python_driver: {c.name}: cache {c.cache}{size}")
    return built


def main():
    o = parse()
    tinydsl.set_cache_dir(None if o.no_cache else o.cache_dir)
    config = {"metrics": o.metrics} if o.metrics else {}
    with jitscope.session(o.trace, **config) as stats:
        threading.current_thread().name = "driver"
        jitscope.set_model_name("python_driver")
        tinydsl.backend_available()  # says once which stages are skipped
        built = compile_kernels(o.inject_error)
        best, results = kernels.axpy_tuned.tune(Tensor(N), Tensor(N), Tensor(N), 2.0,
                                                 jobs=o.jobs, start_method=o.start_method)
        for config_, name, cache, score in results:
            print(f"python_driver: autotune {config_}: {name}, cache {cache}, "
                  f"score {score:.2f} instructions per element")
        print(f"python_driver: autotune picked {best}")
        print(jitscope.compile_times(), end="")
    print(f"python_driver: {len(built)} kernels and {len(results)} configs built; "
          f"{stats.events_written} events in {o.trace}")
    print(f"python_driver: one timeline with the workers: jitscope-merge --children {o.trace} "
          "-o merged.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
