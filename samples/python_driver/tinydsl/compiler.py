"""@jit and the compile driver: one jitscope compile unit per kernel
specialization, its stages in Python and C++ on one thread.

    trace         trace_us          the Python function -> a Graph  (Python)
    mlir_gen      mlir_gen_us       the Graph -> MLIR text          (Python)
    cache lookup  cache_lookup_us   the disk cache                   (Python)
    tinydsl.backend (a span)        the C++ extension, whose phases are
                                    mlir_parse ... nvjitlink, each pass a span
    cache store   cache_store_us    the new entry                    (Python)

The C++ half (_tinydsl_backend) links libjitscope.so, as the jitscope
package does, so its phases and pass spans land in the unit opened here.
Without it (built only with MLIR 16, LLVM 16 and nvJitLink) the Python
stages still run, and the unit's record says backend = "skipped".
"""

from __future__ import annotations

import functools
import inspect
import sys

import jitscope

from tinydsl import cache as _cache
from tinydsl import mlir_gen, tracer

try:
    import _tinydsl_backend as backend
except ImportError as _why:
    backend = None
    _backend_missing = str(_why)


class constexpr:
    """Annotates a parameter that specializes the kernel: `BLOCK: constexpr`."""


class Tensor:
    """A tensor argument's description: `Tensor(1 << 20)` is a 1-D f32 tensor.
    Anything with a 1-D `.shape` (a numpy array) is taken the same way."""

    def __init__(self, size: int):
        self.shape = (int(size),)

    def __reduce__(self):
        return (Tensor, (self.shape[0],))


class Compiled:
    """What compile() returns: the kernel's name, MLIR, PTX and cubin (None
    when the backend is skipped), and where it came from ("hit", "miss", "off")."""

    def __init__(self, name, mlir, ptx=None, cubin=None, cache="off"):
        self.name, self.mlir, self.ptx, self.cubin, self.cache = name, mlir, ptx, cubin, cache

    def instructions(self) -> int:
        """PTX instructions (the lines ending in ';' that are not directives),
        or MLIR operations when the backend is skipped."""
        if self.ptx is None:
            return sum(1 for line in self.mlir.splitlines() if " = " in line)
        return sum(1 for line in map(str.strip, self.ptx.splitlines())
                   if line.endswith(";") and not line.startswith((".", "//")))


_settings = {"cache_dir": None}
_skipping_said = False


def set_cache_dir(path):
    """Where compiled kernels are kept (None: no disk cache)."""
    _settings["cache_dir"] = path


def cache_dir():
    return _settings["cache_dir"]


def backend_available() -> bool:
    """Whether the C++ backend is here; without it, says once which stages
    this process skips."""
    global _skipping_said
    if backend is None and not _skipping_said:
        _skipping_said = True
        print("python_driver: the C++ backend (_tinydsl_backend) is not available "
              f"({_backend_missing}): skipping MLIR parse and lowering, LLVM O3, NVPTX codegen "
              "and nvJitLink; the Python stages still run", file=sys.stderr)
    return backend is not None


@functools.lru_cache(maxsize=None)
def _toolchain() -> str:
    """The backend's toolchain description, part of every cache key: the
    same for the life of the process, so asked once."""
    return backend.toolchain()


class JITFunction:
    """A Python function made a kernel by @jit. compile(*args, **constexprs)
    specializes it on the arguments' sizes and the constexprs' values."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self._params = list(inspect.signature(fn).parameters.values())
        self._constexprs = {p.name for p in self._params if p.annotation in (constexpr, "constexpr")}

    def _specialize(self, args, constexprs):
        runtime = [p.name for p in self._params if p.name not in self._constexprs]
        if len(args) != len(runtime):
            raise TypeError(f"{self.__name__}() takes {len(runtime)} arguments "
                            f"({', '.join(runtime)}), {len(args)} given")
        missing = self._constexprs - constexprs.keys()
        unknown = constexprs.keys() - self._constexprs
        if missing or unknown:
            raise TypeError(f"{self.__name__}(): constexprs missing {sorted(missing)}, "
                            f"unknown {sorted(unknown)}")
        params = []
        for name, arg in zip(runtime, args):
            shape = getattr(arg, "shape", None)
            if shape is not None:
                if len(shape) != 1:
                    raise TypeError(f"{name}: tinydsl tensors are 1-D, got shape {tuple(shape)}")
                params.append((name, "tensor", int(shape[0])))
            elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
                params.append((name, "f32", None))
            else:
                raise TypeError(f"{name}: a tensor or a float, not {type(arg).__name__}")
        # A symbol MLIR and PTX accept: axpy_BLOCK128_UNROLL4_n1048576.
        sizes = "_".join(str(n) for n in sorted({p[2] for p in params if p[1] == "tensor"}))
        config = "_".join(f"{k}{constexprs[k]}" for k in sorted(constexprs))
        name = "_".join(part for part in (self.__name__, config, "n" + sizes) if part)
        return name, params

    def compile(self, *args, **constexprs) -> Compiled:
        """Compiles the specialization: one compile unit, the stages above.
        A failing stage raises (TraceError, backend.CompileError), and the
        unit's record says which stage and why."""
        name, params = self._specialize(args, constexprs)
        config = " ".join(f"{k}={constexprs[k]}" for k in sorted(constexprs))
        with jitscope.compile_unit(frame=name, graph=self.__name__, key=name) as unit:
            unit.set("kernel", name)
            unit.set("function", self.__qualname__)
            unit.set("config", config)
            with jitscope.phase("trace", column="trace_us"):
                graph = tracer.trace(self.fn, params, constexprs)
            unit.set("traced_ops", len(graph.ops))
            with jitscope.phase("mlir_gen", column="mlir_gen_us"):
                mlir = mlir_gen.render(graph, name)
            unit.set("mlir_bytes", len(mlir))
            unit.artifact("mlir", mlir, "mlir")
            if not backend_available():
                unit.set("backend", "skipped")
                unit.set("cache", "off")
                return Compiled(name, mlir)
            return self._build(unit, name, mlir)

    def _build(self, unit, name, mlir):
        disk = _cache.DiskCache(_settings["cache_dir"]) if _settings["cache_dir"] else None
        key = _cache.key(_toolchain(), name, mlir)
        entry = None
        if disk is not None:
            with jitscope.phase("cache lookup", column="cache_lookup_us"):
                entry = disk.load(key)
            (unit.cache_hit if entry else unit.cache_miss)("disk_cache", key)
            unit.set("cache_key", key)
        if entry is not None:
            ptx, cubin = entry
            result = "hit"
        else:
            with jitscope.span("tinydsl.backend", kernel=name):
                ptx, cubin = backend.compile(mlir, name)
            result = "miss" if disk is not None else "off"
            if disk is not None:
                with jitscope.phase("cache store", column="cache_store_us"):
                    disk.store(key, ptx, cubin)
            unit.artifact("ptx", ptx, "ptx")
        unit.set("cache", result)
        unit.set("ptx_bytes", len(ptx))
        unit.set("cubin_bytes", len(cubin))
        return Compiled(name, mlir, ptx, cubin, result)


def jit(fn) -> JITFunction:
    """@tinydsl.jit: the function becomes a kernel, compiled by .compile()."""
    return JITFunction(fn)
