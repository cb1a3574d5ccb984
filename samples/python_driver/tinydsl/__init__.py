"""tinydsl: a small Triton-shaped DSL, the Python half of samples/python_driver.

    @tinydsl.jit
    def axpy(x, y, out, alpha, BLOCK: tinydsl.constexpr):
        i = tinydsl.program_id() * BLOCK + tinydsl.thread_id()
        out[i] = alpha * x[i] + y[i]

    axpy.compile(Tensor(n), Tensor(n), Tensor(n), 2.0, BLOCK=128)

compile() traces the function, writes MLIR, and hands it to the C++
extension (_tinydsl_backend: mlir_gpu's compiler), every stage timed by
jitscope in the same compile unit.
"""

from tinydsl.autotuner import Config, autotune  # noqa: F401
from tinydsl.compiler import (  # noqa: F401
    Compiled,
    JITFunction,
    Tensor,
    backend_available,
    constexpr,
    jit,
    set_cache_dir,
)
from tinydsl.tracer import TraceError, program_id, thread_id  # noqa: F401

__all__ = ["Compiled", "Config", "JITFunction", "Tensor", "TraceError", "autotune",
           "backend_available", "constexpr", "jit", "program_id", "set_cache_dir", "thread_id"]
