"""Worker processes: each records into its own trace beside the parent's.

A session asked for a trace file whose head names a session of one of its
ancestor processes writes `<stem>.worker-<pid><ext>` beside it instead (and
its metrics file likewise), and takes that ancestor as its parent: the
parent's `spawn` has an arrow to the worker's first compile unit. So a
worker only has to start a session on its parent's path; the parent lists
it with `note_child_process(pid)`, and `jitscope-merge --children` makes one
timeline. The classes here do both for process pools (docs/python.md).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import itertools
import os

from jitscope import _jitscope

# The last session this package started: (path or None for the JITSCOPE_*
# variables, start()'s config). Workers start theirs from it.
_started = None
_stop_registered = False


def note_started(path, config) -> None:
    global _started
    _started = (None if path is None else os.path.abspath(os.fspath(path)), dict(config))


def note_autostart() -> None:
    """At import: a session the JITSCOPE_TRACE autostart began."""
    if _jitscope.active() and os.environ.get("JITSCOPE_TRACE"):
        note_started(None, {})


def _stop_at_exit() -> None:
    # A forked multiprocessing worker leaves by os._exit(), after
    # multiprocessing's own finalizers and without atexit: both are asked.
    global _stop_registered
    if _stop_registered:
        return
    _stop_registered = True
    atexit.register(_jitscope.stop)
    try:
        from multiprocessing import util
        util.Finalize(None, _jitscope.stop, exitpriority=-100)
    except Exception:  # noqa: BLE001  (an interpreter without multiprocessing)
        pass


class worker_initializer:
    """A picklable initializer that starts a worker's session, then calls
    `initializer(*initargs)`: `ProcessPoolExecutor(initializer=...)`,
    `multiprocessing.Pool(initializer=...)`, or called first thing in a
    `multiprocessing.Process` target. The worker writes its own trace
    beside the session that was on when this object was made (or last
    refreshed); nothing when none was. The parent lists the worker with
    `jitscope.note_child_process(pid)`."""

    def __init__(self, initializer=None, initargs=()):
        self.initializer = initializer
        self.initargs = tuple(initargs)
        self.refresh()

    def refresh(self) -> None:
        """Takes the session that is on now (for workers started later)."""
        self.session = _started if _jitscope.active() else None

    def __call__(self) -> None:
        if self.session is not None and not _jitscope.active():
            path, config = self.session
            # The SDK sees the parent's head in that file and writes this
            # process's own file beside it.
            try:
                _jitscope.start(path, **config)
            except (TypeError, ValueError) as e:  # the worker's work goes on unrecorded
                import sys
                print(f"jitscope: worker {os.getpid()} records nothing: {e}", file=sys.stderr)
        if _jitscope.active():
            _stop_at_exit()
        if self.initializer is not None:
            self.initializer(*self.initargs)


def worker_environment(env=None) -> dict:
    """`env` (default: os.environ) with the JITSCOPE_* variables that make a
    subprocess record its own trace beside this session's: pass it to
    `subprocess.Popen(env=...)`, then `jitscope.note_child_process(p.pid)`.
    The subprocess needs jitscope loaded (`import jitscope`, or a C++
    program linking it)."""
    out = dict(os.environ if env is None else env)
    if _started is not None and _jitscope.active():
        path, config = _started
        if path is not None:
            out["JITSCOPE_TRACE"] = path
            metrics = config.get("metrics") or config.get("metrics_path")
            if metrics:
                out["JITSCOPE_METRICS"] = os.path.abspath(metrics)
            else:
                out.pop("JITSCOPE_METRICS", None)
    return out


# Task keys for note_task_sent: unique in this process (the arrow's id
# mixes in the sender's pid, so a forked child's own count cannot collide).
_task_keys = itertools.count(1)


class _Task:
    """A submitted callable that marks the end of its task's arrow in the
    worker before it runs (picklable: the pool sends it to the worker)."""

    def __init__(self, fn, sender, key):
        self.fn, self.sender, self.key = fn, sender, key

    def __call__(self, *args, **kwargs):
        _jitscope.note_task_received(self.sender, self.key)
        return self.fn(*args, **kwargs)


class ProcessPoolExecutor(concurrent.futures.ProcessPoolExecutor):
    """concurrent.futures.ProcessPoolExecutor whose workers record: each
    runs a session writing its own trace (and metrics) beside this
    process's, listed here when it starts, with an arrow from the span that
    submitted the work that started it to the worker's first compile unit,
    and an arrow per task from the span that submitted it to where the
    worker starts it (note_task_sent / note_task_received). Takes the base
    class's arguments, and `label` for the listing."""

    def __init__(self, max_workers=None, mp_context=None, initializer=None, initargs=(), *,
                 label="worker", **kwargs):
        self._jitscope_init = worker_initializer(initializer, initargs)
        self._jitscope_label = label
        self._jitscope_listed = set()
        super().__init__(max_workers, mp_context, self._jitscope_init, (), **kwargs)

    def submit(self, fn, /, *args, **kwargs):
        # Workers start inside submit(), with the initializer as it is now.
        self._jitscope_init.refresh()
        if _jitscope.active():
            key = next(_task_keys)
            _jitscope.note_task_sent(key)
            fn = _Task(fn, os.getpid(), key)
        future = super().submit(fn, *args, **kwargs)
        if _jitscope.active():
            for pid in list(getattr(self, "_processes", None) or ()):
                if pid not in self._jitscope_listed:
                    self._jitscope_listed.add(pid)
                    _jitscope.note_child_process(pid, None, self._jitscope_label)
        return future
