"""Spans from Python: counts from many threads, names, args, handles,
exceptions, thread names."""

import threading

import jitscope
import pytest
from conftest import load_trace, spans


def test_eight_threads_exact_counts(out):
    # Every span made is written or counted as dropped: none lost silently.
    path = out("threads.json")
    assert jitscope.start(path, ring_capacity=1024, flush_interval_ms=5)
    per_thread, threads = 10_000, 8

    def work():
        for i in range(per_thread):
            with jitscope.span("w", i=i):
                pass

    ts = [threading.Thread(target=work, name=f"compile-{n}") for n in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stats = jitscope.stop()
    trace = load_trace(path)
    written = len(spans(trace, "w"))
    assert written + stats.events_dropped == per_thread * threads
    assert written > 0
    names = {e["args"]["name"] for e in trace if e.get("name") == "thread_name"}
    assert {f"compile-{n}" for n in range(threads)} <= names


def test_block_policy_writes_every_span(out):
    path = out("block.json")
    assert jitscope.start(path, overflow="block", ring_capacity=256)
    for i in range(20_000):
        with jitscope.span("b"):
            pass
    stats = jitscope.stop()
    assert stats.events_dropped == 0
    assert len(spans(load_trace(path), "b")) == 20_000


class Pipeline:
    @jitscope.span()
    def lower(self, x):
        return x * 2

    @jitscope.span("codegen", cat="backend", level=3)
    def codegen(self):
        return "ptx"


@jitscope.span()
def make_ttir():
    return 1


def test_decorator_names_and_args(out):
    path = out("decorators.json")
    assert jitscope.start(path)
    p = Pipeline()
    assert p.lower(21) == 42
    assert p.codegen() == "ptx"
    assert make_ttir() == 1
    jitscope.stop()
    trace = load_trace(path)
    assert len(spans(trace, "Pipeline.lower")) == 1
    assert len(spans(trace, "make_ttir")) == 1
    (cg,) = spans(trace, "codegen")
    assert cg["args"] == {"category": "backend", "level": 3}
    assert Pipeline.lower.__name__ == "lower" and Pipeline.lower.__wrapped__


def test_args_of_every_type(out):
    path = out("args.json")
    assert jitscope.start(path)
    with jitscope.span("typed", i=-3, big=2**64 - 1, huge=2**70, f=0.25, b=False, s="ü",
                       other=[1, 2]) as s:
        s.arg("late", 7)
    jitscope.stop()
    (e,) = spans(load_trace(path), "typed")
    assert e["args"] == {"i": -3, "big": 2**64 - 1, "huge": str(2**70), "f": 0.25, "b": False,
                         "s": "ü", "other": "[1, 2]", "late": 7}


def test_handles_end_once(out):
    path = out("handles.json")
    assert jitscope.start(path)
    h = jitscope.begin("stage", n=1)
    assert h.recording
    h.end()
    h.end()  # a second end does nothing
    assert not h.recording
    jitscope.stop()
    (e,) = spans(load_trace(path), "stage")
    assert e["args"] == {"n": 1}


def test_exception_marks_the_span_and_propagates(out):
    path = out("exception.json")
    assert jitscope.start(path)

    class ShapeError(ValueError):
        pass

    with pytest.raises(ShapeError, match="8 != 16") as info:
        with jitscope.span("lower"):
            raise ShapeError("8 != 16")
    assert type(info.value) is ShapeError

    @jitscope.span()
    def failing():
        raise KeyError("k")

    with pytest.raises(KeyError):
        failing()
    jitscope.stop()
    trace = load_trace(path)
    (e,) = spans(trace, "lower")
    assert e["args"] == {"failed": True, "fail_type":
                         "test_exception_marks_the_span_and_propagates.<locals>.ShapeError",
                         "fail_reason": "8 != 16"}
    (f,) = spans(trace, "test_exception_marks_the_span_and_propagates.<locals>.failing")
    assert f["args"]["fail_type"] == "KeyError"


def test_no_session_records_nothing_and_raises_nothing():
    assert not jitscope.active()
    with jitscope.span("x", k=1) as s:
        s.arg("a", 1)
        assert not s.recording
    jitscope.begin("y").end()
    jitscope.instant("i", k=2)
    jitscope.counter("c", 1)
    assert jitscope.stop() is None


def test_wrong_calls_raise_type_error():
    with pytest.raises(TypeError):
        jitscope.span(3)
    with pytest.raises(TypeError):
        jitscope.span("a", "b")
    with pytest.raises(TypeError):
        jitscope.counter("c", "not a number")
    with pytest.raises(TypeError):
        jitscope.span("x")(1)  # decorates callables only


def test_end_on_another_thread_is_refused(out, capfd):
    path = out("other_thread.json")
    assert jitscope.start(path)
    h = jitscope.begin("owned")
    t = threading.Thread(target=h.end)
    t.start()
    t.join()
    assert h.recording  # still open: the owner's end counts
    h.end()
    jitscope.stop()
    assert "ended on another thread" in capfd.readouterr().err
    (e,) = spans(load_trace(path), "owned")
    assert "incomplete" not in e.get("args", {})


def test_instant_and_counter(out):
    path = out("instant.json")
    assert jitscope.start(path)
    jitscope.instant("cache_flush", entries=12, why="oom")
    jitscope.counter("queue_depth", 3)
    jitscope.stop()
    trace = load_trace(path)
    (i,) = [e for e in trace if e.get("name") == "cache_flush"]
    assert i["args"] == {"entries": 12, "why": "oom"}
    assert [e["args"] for e in trace if e.get("ph") == "C" and e["name"] == "queue_depth"]
