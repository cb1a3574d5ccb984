"""jitscope for Python-driven compilers: the driver's stages, the C++ passes
under them and the compile unit both belong to, in one trace.

    import jitscope

    with jitscope.session("trace.json", metrics="metrics.jsonl"):
        with jitscope.compile_unit(frame="matmul") as unit:
            with jitscope.phase("lower", column="lower_us"):
                ...                       # C++ passes here share the unit
            unit.cache_miss("disk", key)

    @jitscope.span()                      # a span named after __qualname__
    def make_ttir(fn): ...

The module links libjitscope.so: a C++ extension in the same process that
links it too shares the session, the rings and the current compile unit.
docs/python.md has the whole API, its costs and the rules.
"""

from __future__ import annotations

import contextlib as _contextlib
import functools as _functools
import inspect as _inspect
import json as _json
import types as _types

from jitscope import _jitscope, _processes
from jitscope._processes import (  # noqa: F401  (the public API)
    ProcessPoolExecutor,
    worker_environment,
    worker_initializer,
)
from jitscope._jitscope import (  # noqa: F401  (the public API)
    __version__,
    Autotune,
    active,
    begin,
    compile_unit,
    counter,
    cumulative_time_report,
    current_compile_id,
    instant,
    mark_ready,
    note_child_process,
    note_task_received,
    note_task_sent,
    phase,
    reset_compile_state,
    set_model_name,
    snapshot,
    set_thread_name,
    span,
)

__all__ = [
    "Autotune", "active", "begin", "begin_phase", "begin_unit", "compile_times", "compile_unit",
    "counter", "cumulative_time_report", "current_compile_id", "instant", "mark_ready",
    "note_child_process", "note_task_received", "note_task_sent", "phase", "phase_times",
    "ProcessPoolExecutor",
    "recent_compile_records", "reset_compile_state", "session", "SessionStats",
    "set_model_name", "set_thread_name", "snapshot", "span", "start", "stop", "worker_environment",
    "worker_initializer", "worker_trace_path",
]


class SessionStats(_types.SimpleNamespace):
    """What stop() returns: the session's totals (events_written,
    events_dropped, spans_incomplete, threads, compile_records_written, ...)."""


def start(path=None, /, **config) -> bool:
    """Starts a session writing the trace to `path` (.json: Chrome JSON;
    .pftrace: Perfetto). `config` takes Config's fields: metrics=,
    format=, compression=, overflow="drop"|"block", flush_interval_ms=,
    ring_capacity=, process_name=, compile_times=, cupti=, max_trace_bytes=,
    rotate_bytes=, artifacts_dir=, ... Without `path`, the JITSCOPE_*
    variables' config. An unknown name or a wrong type raises TypeError, a
    bad value ValueError (naming the field); a refused start (a session is
    already on, a file that cannot open) returns False after one `jitscope:`
    line on stderr."""
    started = _jitscope.start(path, **config)
    if started:
        _processes.note_started(path, config)
    return started


def worker_trace_path(pid: int, trace_path=None) -> str | None:
    """The file worker `pid` writes beside `trace_path` (default: this
    session's): trace.json -> trace.worker-<pid>.json. None when there is
    no trace path to go by."""
    if trace_path is None:
        started = _processes._started if active() else None
        trace_path = None if started is None else started[0]
        if trace_path is None:
            import os
            trace_path = os.environ.get("JITSCOPE_TRACE") if active() else None
    return None if trace_path is None else _jitscope.worker_trace_path(trace_path, pid)


def stop() -> SessionStats | None:
    """Stops the session: drains every thread's events and closes the files.
    Returns its stats, or None when no session was on."""
    stats = _jitscope.stop()
    return None if stats is None else SessionStats(**stats)


@_contextlib.contextmanager
def session(path=None, /, **config):
    """`with jitscope.session("trace.json"):` a session for the block; the
    SessionStats is the `as` value, filled in when the block ends."""
    stats = SessionStats()
    started = start(path, **config)
    try:
        yield stats
    finally:
        if started:
            result = stop()
            if result is not None:
                stats.__dict__.update(result.__dict__)


def begin_unit(frame=None, **options) -> compile_unit:
    """A compile unit opened now (current on this thread); close it with
    .close() on this thread. For callback-shaped hooks."""
    return compile_unit(frame, **options).open()


def begin_phase(key, **options) -> phase:
    """A phase begun now; end it with .end() on this thread."""
    p = phase(key, **options)
    p.__enter__()
    return p


def compile_times(*, csv=False, aggregate=False) -> str:
    """The compile_times table (per phase key, every duration in seconds, or
    count/total/mean/max with aggregate=True), as text or CSV: the same
    table as C++'s jitscope::compile_times."""
    return _jitscope.compile_times(csv=csv, aggregate=aggregate)


def phase_times() -> list:
    """Every phase key with at least one run, as dicts (key, column, count,
    total_ns, max_ns, outermost_ns, self_ns, exclusive, durations_ns)."""
    return _jitscope.phase_times()


def recent_compile_records() -> list:
    """The last 64 compile units' records, oldest first, as dicts: the
    metrics file's lines (docs/compile-units.md)."""
    return [_json.loads(line) for line in _jitscope.recent_compile_records()]


def _decorate(s, func):
    """span(...)(func): func wrapped in a span named s.name or its
    __qualname__, with s's args: the C wrapper, a span per call (a method
    descriptor, as functions are). An `async def` function gets an async
    wrapper whose span is a slice on the running task's own track
    (`async with`), so awaits inside it do not disturb other tasks' spans."""
    name = s.name if s.name is not None else getattr(func, "__qualname__", repr(func))
    if _inspect.iscoroutinefunction(func):
        args = s.args or {}

        async def traced(*a, **k):
            async with _jitscope.span(name, **args):
                return await func(*a, **k)

        return _functools.update_wrapper(traced, func)
    return _functools.update_wrapper(_jitscope._decorated(func, name, s.args or None), func)


async def _ready(value):
    return value


def _task_track() -> int:
    """The running asyncio task's track id (its address); the thread's
    ident outside a task."""
    import asyncio
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running event loop
        task = None
    if task is None:
        import threading
        return threading.get_ident()
    return id(task)


_jitscope._set_async_hooks(_ready, _task_track)
_jitscope._set_decorator(_decorate)
_processes.note_autostart()
