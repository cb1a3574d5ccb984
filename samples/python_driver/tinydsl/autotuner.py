"""The autotuner: compiles a kernel's configs in a pool of worker processes
(jitscope.ProcessPoolExecutor: each worker writes its own trace file beside
the parent's, with an arrow from the submitting span to the worker), then
ranks them.

With no GPU to benchmark on, the rank is a stand-in that needs none: PTX
instructions per element (fewer is better; ties go to the larger block).
Each config's score is a `benchmark` span's arg, so the trace shows it.
"""

from __future__ import annotations

import importlib
import multiprocessing

import jitscope

from tinydsl import compiler


class Config:
    """One config: the constexprs it sets, `Config(BLOCK=128, UNROLL=4)`."""

    def __init__(self, **constexprs):
        self.constexprs = constexprs

    def __repr__(self):
        return "Config(" + ", ".join(f"{k}={v}" for k, v in sorted(self.constexprs.items())) + ")"


def _compile_in_worker(module, name, args, constexprs, cache_dir):
    """Runs in a worker: imports the kernel by name and compiles it there."""
    compiler.set_cache_dir(cache_dir)
    kernel = getattr(importlib.import_module(module), name)
    compiled = kernel.compile(*args, **constexprs)
    return compiled.name, compiled.cache, compiled.instructions()


class Autotuner:
    def __init__(self, kernel: compiler.JITFunction, configs, per_element="UNROLL"):
        self.kernel = kernel
        self.configs = list(configs)
        self.per_element = per_element

    def tune(self, *args, jobs=2, start_method="spawn"):
        """Compiles every config in `jobs` worker processes; returns
        (best Config, [(Config, kernel name, cache, score)])."""
        # Plain descriptions cross the process boundary, not the caller's arrays.
        args = [compiler.Tensor(a.shape[0]) if hasattr(a, "shape") else float(a) for a in args]
        context = multiprocessing.get_context(start_method)
        with jitscope.span("autotune", kernel=self.kernel.__name__, configs=len(self.configs),
                           jobs=jobs):
            with jitscope.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                futures = [pool.submit(_compile_in_worker, self.kernel.__module__,
                                       self.kernel.__name__, args, c.constexprs,
                                       compiler.cache_dir())
                           for c in self.configs]
                built = [f.result() for f in futures]
            results = []
            for config, (name, cache, instructions) in zip(self.configs, built):
                per = config.constexprs.get(self.per_element, 1)
                score = instructions / per
                with jitscope.span("benchmark", kernel=name, score=score):
                    results.append((config, name, cache, score))
        best = min(results, key=lambda r: (r[3], -r[0].constexprs.get("BLOCK", 0)))
        return best[0], results


def autotune(configs, per_element="UNROLL"):
    """@tinydsl.autotune(configs=[...]) over @tinydsl.jit: .tune(*args) picks a config."""
    def wrap(kernel):
        return Autotuner(kernel, configs, per_element)
    return wrap
