"""Triton in the trace, with no change to the kernels' code:

    import jitscope, jitscope.triton
    jitscope.triton.instrument()          # before any kernel's first launch

    with jitscope.session("trace.json", metrics="units.jsonl"):
        kernel[grid](...)                 # a unit per compile, a phase per stage

What it wraps (Triton's internals, not its API; run on Triton 3.6):
  - `triton.compiler.compile`: each compile is a compile unit, its frame the
    kernel's name, its key the name and the constexprs it specializes on;
  - each backend's `add_stages`: each stage (ttir, ttgir, llir, ptx, cubin;
    amdgcn, hsaco on AMD) is a phase with the column `<stage>_us`;
  - `CompiledKernel._init_handles`: the binary's load, at the kernel's first
    launch, is credited to the unit that compiled it (`unit.loading()`), so
    its GPU slices carry `compiled_by`.
Without a session each costs what a unit and a phase cost untraced.
"""

from __future__ import annotations

import sys

import jitscope

_WRAPPED = "__jitscope_wrapped__"


def _say(text: str) -> None:
    print(f"jitscope: {text}", file=sys.stderr)


def _wrapped(func) -> bool:
    return getattr(func, _WRAPPED, False)


def _mark(func):
    setattr(func, _WRAPPED, True)
    return func


def _unit_name(src) -> str:
    fn = getattr(src, "fn", None)  # an ASTSource: the JIT function
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", None)
    return name or str(getattr(src, "path", None) or "kernel")  # an IR file


def _unit_key(src, name: str) -> str:
    """The kernel and its specialization (constexprs): what the compare gate
    matches across runs; each specialization of a kernel is its next attempt."""
    constants = getattr(src, "constants", None)
    return f"{name}{constants}" if constants else name


def _wrap_add_stages(backend_class) -> bool:
    add_stages = getattr(backend_class, "add_stages", None)
    if add_stages is None:
        return False
    if _wrapped(add_stages):
        return True

    def add_stages_timed(self, stages, options, *args, **kwargs):
        result = add_stages(self, stages, options, *args, **kwargs)
        for ext, run in list(stages.items()):
            def stage(src, metadata, run=run, ext=ext):
                with jitscope.phase(ext, column=f"{ext}_us"):
                    return run(src, metadata)
            stages[ext] = stage
        return result

    backend_class.add_stages = _mark(add_stages_timed)
    return True


def _backend_classes():
    """Every backend compiler class Triton knows, else the NVIDIA one."""
    found = []
    try:
        import triton.backends as backends
        for backend in getattr(backends, "backends", {}).values():
            cls = getattr(backend, "compiler", None)
            if cls is not None:
                found.append(cls)
    except Exception:  # noqa: BLE001  (Triton's layout changed: the fallback below)
        pass
    if not found:
        try:
            from triton.backends.nvidia import compiler as nvidia
            found.append(nvidia.CUDABackend)
        except Exception:  # noqa: BLE001
            pass
    return found


def instrument(*, stages: bool = True, loads: bool = True) -> bool:
    """Wraps Triton's compile, its backends' stages and its binaries' loads
    (module docstring). Safe to call again. False after one `jitscope:`
    line when Triton is missing or its internals are not the expected ones;
    what could be wrapped stays wrapped."""
    try:
        import triton
        import triton.compiler as compiler_pkg
        import triton.compiler.compiler as tc
    except Exception as e:  # noqa: BLE001  (any import failure: no Triton to wrap)
        _say(f"jitscope.triton.instrument(): cannot import Triton ({e}): nothing wrapped")
        return False
    ok = True
    compile_fn = getattr(tc, "compile", None)
    if compile_fn is None:
        _say("jitscope.triton.instrument(): triton.compiler.compiler.compile is missing: "
             "compiles are not units")
        return False
    if not _wrapped(compile_fn):
        def compile_in_unit(src, *args, **kwargs):
            name = _unit_name(src)
            with jitscope.compile_unit(name, key=_unit_key(src, name)) as unit:
                kernel = compile_fn(src, *args, **kwargs)
            try:
                kernel._jitscope_unit = unit  # its binary loads at first launch
            except AttributeError:
                pass
            return kernel
        _mark(compile_in_unit)
        # Where the JIT and users look it up; a launcher made before this
        # keeps the compile it found.
        for module in (tc, compiler_pkg, triton):
            if getattr(module, "compile", None) is compile_fn:
                module.compile = compile_in_unit
    if stages:
        wrapped = [_wrap_add_stages(c) for c in _backend_classes()]  # each one, whatever fails
        if not wrapped or not all(wrapped):
            _say("jitscope.triton.instrument(): a backend without add_stages (or none found): "
                 "its stages are not phases")
            ok = False
    if loads:
        kernel_class = getattr(tc, "CompiledKernel", None)
        init = getattr(kernel_class, "_init_handles", None)
        if init is None:
            _say("jitscope.triton.instrument(): CompiledKernel._init_handles is missing: "
                 "kernels carry no compiled_by")
            ok = False
        elif not _wrapped(init):
            def init_credited(self):
                unit = getattr(self, "_jitscope_unit", None)
                if unit is None or getattr(self, "module", None) is not None:
                    return init(self)
                with unit.loading():
                    return init(self)
            kernel_class._init_handles = _mark(init_credited)
    return ok
