"""Helpers for the jitscope package's tests: fresh output paths, traces
loaded strictly (a cut-off JSON trace repaired only where asked), and
Python child processes with the same package on their path."""

import itertools
import json
import os
import subprocess
import sys
import time

import pytest

_counter = itertools.count()


@pytest.fixture
def out(request):
    """out("trace.json") -> a fresh path in JSPY_TMP (or pytest's tmp)."""
    base = os.environ.get("JSPY_TMP") or str(request.getfixturevalue("tmp_path"))

    def make(name):
        # The start time too: a pid comes back in later runs, and the files
        # the SDK derives from a path (numbered snapshots, workers' traces)
        # would meet an earlier run's.
        stem = f"{request.node.name}.{os.getpid()}.{_RUN}.{next(_counter)}.{name}"
        path = os.path.join(base, stem)
        if os.path.exists(path):
            os.unlink(path)
        return path

    return make


_RUN = time.time_ns() % 10**12


def load_trace(path, allow_cut=False):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if allow_cut:
        text = text.rstrip().rstrip(",")
        if not text.endswith("]"):
            text += "]"
    return json.loads(text)


def spans(trace, name=None):
    return [e for e in trace if e.get("ph") == "X" and (name is None or e["name"] == name)]


def run_python(code, env=None, timeout=120, **kwargs):
    """Runs `code` in a fresh interpreter (this one) with the package's path."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("JITSCOPE_")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-c", code], env=full, timeout=timeout,
                          capture_output=True, text=True, **kwargs)


@pytest.fixture(autouse=True)
def no_session_left():
    """A failing test never leaves its session on for the next one."""
    yield
    import jitscope

    if jitscope.active():
        jitscope.stop()
