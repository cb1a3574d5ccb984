"""The kernels python_driver compiles, in a module of their own so that the
autotuner's worker processes import them by name (spawn re-imports nothing
from the driver's __main__)."""

import tinydsl
from tinydsl import constexpr, program_id, thread_id


@tinydsl.jit
def axpy(x, y, out, alpha, BLOCK: constexpr, UNROLL: constexpr):
    """out = alpha * x + y, UNROLL consecutive elements per thread."""
    base = (program_id() * BLOCK + thread_id()) * UNROLL
    for k in range(UNROLL):  # unrolled while tracing: UNROLL is a constexpr
        i = base + k
        out[i] = alpha * x[i] + y[i]


@tinydsl.jit
def fma3(a, b, c, out, BLOCK: constexpr):
    """out = a * b + c."""
    i = program_id() * BLOCK + thread_id()
    out[i] = a[i] * b[i] + c[i]


@tinydsl.jit
def normalize(x, out, shift, scale, BLOCK: constexpr):
    """out = (x - shift) / scale."""
    i = program_id() * BLOCK + thread_id()
    out[i] = (x[i] - shift) / scale


@tinydsl.jit
def broken(x, out, BLOCK: constexpr):
    """Adds an index to data: the trace stage refuses it (--inject-error)."""
    i = program_id() * BLOCK + thread_id()
    out[i] = x[i] + i


axpy_tuned = tinydsl.autotune(
    configs=[tinydsl.Config(BLOCK=b, UNROLL=u) for b in (128, 256) for u in (1, 2, 4)],
    per_element="UNROLL")(axpy)
