"""Compile units and phases from Python: records, failures, handles, the
C++ twin's record, and a C++ extension nested between Python spans."""

import json
import os
import subprocess
import sys
import threading
import time

import jitscope
import pytest
from conftest import load_trace, spans


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def twin_calls():
    """What record_twin.cpp does, from Python."""
    with jitscope.compile_unit("twin", graph="g", key="twin_key") as unit:
        with jitscope.phase("lower", column="lower_us"):
            pass
        with jitscope.phase("codegen", compile_event=True):
            pass
        unit.cache_hit("L1", "a")
        unit.cache_miss("disk", "b")
        unit.cache_lookup("ptx", {"source": "s1", "options": "-O3", "n": 4}, False)
        unit.set("n", 3)
        unit.set("ratio", 0.5)
        unit.set("flag", True)
        unit.set("arch", "sm_90")
        unit.increment("kernels", 2)
        unit.fail("ValueError", "bad shape")


TIMES = {"start_time_us", "end_time_us", "duration_us", "lower_us"}


def without_times(record):
    r = {k: v for k, v in record.items() if k not in TIMES}
    r["compile_events"] = [{k: v for k, v in e.items() if k not in ("start_time_us", "duration_us")}
                           for e in r.get("compile_events", [])]
    return r


def test_record_equals_the_cpp_one_field_by_field(out):
    py_metrics, cpp_metrics = out("py.jsonl"), out("cpp.jsonl")
    jitscope.reset_compile_state()
    assert jitscope.start(out("py.json"), metrics=py_metrics)
    twin_calls()
    jitscope.stop()
    subprocess.run([os.environ["JSPY_RECORD_TWIN"], out("cpp.json"), cpp_metrics], check=True,
                   env={k: v for k, v in os.environ.items() if not k.startswith("JITSCOPE_")})
    (py,) = [r for r in records(py_metrics) if not r["is_runtime"]]
    (cpp,) = [r for r in records(cpp_metrics) if not r["is_runtime"]]
    assert list(py) == list(cpp)  # same fields, same order
    assert without_times(py) == without_times(cpp)
    assert py["fail_type"] == "ValueError" and py["fail_reason"] == "bad shape"
    assert py["flag"] is True and py["n"] == 3 and py["ratio"] == 0.5


def test_exception_fails_unit_and_phase_and_propagates(out):
    path, metrics = out("fail.json"), out("fail.jsonl")
    assert jitscope.start(path, metrics=metrics)
    with pytest.raises(RuntimeError, match="ptxas died"):
        with jitscope.compile_unit("k"):
            with jitscope.phase("ptxas", column="ptxas_us"):
                raise RuntimeError("ptxas died")
    jitscope.stop()
    (r,) = [r for r in records(metrics) if not r["is_runtime"]]
    assert (r["fail_type"], r["fail_reason"]) == ("RuntimeError", "ptxas died")
    (p,) = spans(load_trace(path), "ptxas")
    assert p["args"]["failed"] is True and p["args"]["fail_type"] == "RuntimeError"


def test_recompile_of_a_frame_is_the_next_attempt(out):
    jitscope.reset_compile_state()
    assert jitscope.start(out("recompile.json"))
    ids = []
    for _ in range(3):
        with jitscope.compile_unit("same_frame") as u:
            ids.append(u.compile_id)
    with jitscope.compile_unit("other") as u:
        ids.append(u.compile_id)
    jitscope.stop()
    assert ids == ["0/0", "0/1", "0/2", "1/0"]


def test_units_and_phases_by_handle(out):
    metrics = out("handles.jsonl")
    assert jitscope.start(out("handles.json"), metrics=metrics)
    unit = jitscope.begin_unit("hooked")
    assert jitscope.current_compile_id() == unit.compile_id
    p = jitscope.begin_phase("stage", column="stage_us")
    p.end()
    p.end()
    unit.close()
    unit.close()  # twice: nothing
    unit.set("after_close", 1)  # ignored: closed
    assert jitscope.current_compile_id() is None
    jitscope.stop()
    (r,) = [r for r in records(metrics) if not r["is_runtime"]]
    assert r["frame"] == "hooked" and "stage_us" in r and "after_close" not in r


def test_unit_closed_on_another_thread_is_refused(out, capfd):
    metrics = out("thread.jsonl")
    assert jitscope.start(out("thread.json"), metrics=metrics)
    unit = jitscope.begin_unit("owned")
    t = threading.Thread(target=unit.close)
    t.start()
    t.join()
    assert unit.is_open
    unit.close()
    jitscope.stop()
    assert "jitscope:" in capfd.readouterr().err
    assert [r["frame"] for r in records(metrics) if not r["is_runtime"]] == ["owned"]


def test_unit_dropped_on_another_thread_stays_open_on_its_own(out):
    # The object's last reference goes on another thread while its unit is
    # open: the unit stays open (and current) where it began, its memory kept
    # even as new objects of its size are made.
    assert jitscope.start(out("dropped.json"))
    box, seen = [], {}
    opened, dropped = threading.Event(), threading.Event()

    def owner():
        box.append(jitscope.begin_unit("kept_open"))
        seen["before"] = jitscope.current_compile_id()
        opened.set()
        assert dropped.wait(30)
        others = [jitscope.compile_unit(frame=f"other{i}") for i in range(64)]
        seen["after"] = jitscope.current_compile_id()
        with others[0]:
            seen["nested"] = jitscope.current_compile_id()
        seen["back"] = jitscope.current_compile_id()

    t = threading.Thread(target=owner)
    t.start()
    assert opened.wait(30)
    # Only the list holds it (getrefcount's own argument is the other):
    # clearing it runs the object's dealloc here, on this thread. Counted
    # outside the assert, whose rewriting by pytest holds its operands.
    refs = sys.getrefcount(box[0])
    assert refs == 2
    box.clear()  # the last reference, dropped here
    dropped.set()
    t.join()
    jitscope.stop()
    assert seen["before"] is not None
    assert seen["after"] == seen["back"] == seen["before"], seen
    assert seen["nested"] not in (None, seen["before"]), seen


def test_phase_ended_on_another_thread_is_refused(out, capfd):
    path, metrics = out("phase_thread.json"), out("phase_thread.jsonl")
    assert jitscope.start(path, metrics=metrics)
    with jitscope.compile_unit("owned"):
        p = jitscope.begin_phase("stage", column="stage_us")
        t = threading.Thread(target=p.end)
        t.start()
        t.join()
        assert p.is_open
        p.end()
        assert not p.is_open
    jitscope.stop()
    assert "ended on another thread" in capfd.readouterr().err
    (r,) = [r for r in records(metrics) if not r["is_runtime"]]
    assert r["stage_us"] >= 0
    ends = spans(load_trace(path), "stage")
    assert len(ends) == 1 and "jitscope_ended_with_unit" not in ends[0].get("args", {})


def test_phase_dropped_on_another_thread_stays_open_on_its_own(out):
    # As the unit's twin above: the phase object's last reference goes on
    # another thread while the phase is open; the phase stays open where it
    # began (its memory kept while new phase objects are made and used)
    # and ends with its unit.
    path, metrics = out("phase_dropped.json"), out("phase_dropped.jsonl")
    assert jitscope.start(path, metrics=metrics)
    box = []
    opened, dropped = threading.Event(), threading.Event()

    def owner():
        with jitscope.compile_unit("kept"):
            box.append(jitscope.begin_phase("held", column="held_us"))
            opened.set()
            assert dropped.wait(30)
            others = [jitscope.phase("other") for _ in range(64)]
            for o in others:
                with o:
                    pass
            time.sleep(0.05)

    t = threading.Thread(target=owner)
    t.start()
    assert opened.wait(30)
    refs = sys.getrefcount(box[0])  # outside the assert: see the unit's twin
    assert refs == 2
    box.clear()  # the last reference, dropped here
    dropped.set()
    t.join()
    jitscope.stop()
    (r,) = [r for r in records(metrics) if not r["is_runtime"]]
    assert r["held_us"] >= 40_000, r
    trace = load_trace(path)
    (held,) = spans(trace, "held")
    assert held["args"].get("jitscope_ended_with_unit") is True, held
    assert len(spans(trace, "other")) == 64


def test_cpp_extension_nests_between_python_spans_with_one_compile_id(out):
    import nest_ext

    path = out("nest.json")
    assert jitscope.start(path)
    seen = {}
    with jitscope.compile_unit("kernel") as unit:
        with jitscope.span("ttgir"):
            def back_in_python():
                with jitscope.span("py_inner"):
                    seen["python"] = jitscope.current_compile_id()

            seen["cpp"] = nest_ext.run_pass("ConvertTritonGPUToLLVM", back_in_python)
        cid = unit.compile_id
    jitscope.stop()
    assert seen == {"cpp": cid, "python": cid}
    trace = load_trace(path)
    (outer,) = spans(trace, "ttgir")
    (cpp,) = spans(trace, "ConvertTritonGPUToLLVM")
    (inner,) = spans(trace, "py_inner")
    assert outer["tid"] == cpp["tid"] == inner["tid"]
    # ttgir contains the C++ pass, which contains the Python callback.
    assert outer["ts"] <= cpp["ts"] and cpp["ts"] + cpp["dur"] <= outer["ts"] + outer["dur"]
    assert cpp["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= cpp["ts"] + cpp["dur"]
    for e in (outer, cpp, inner):
        assert e["args"]["compile_id"] == cid, e


def test_compile_times_table_is_the_cpp_table():
    jitscope.reset_compile_state()
    with jitscope.phase("parse", column="parse_us"):
        pass
    text = jitscope.compile_times()
    assert "parse" in text.splitlines()[-1]
    csv = jitscope.compile_times(csv=True, aggregate=True)
    assert csv.splitlines()[0].startswith("phase,")
    (p,) = [p for p in jitscope.phase_times() if p["key"] == "parse"]
    assert p["count"] == 1 and p["column"] == "parse_us" and len(p["durations_ns"]) == 1


def test_recent_compile_records_are_dicts():
    jitscope.reset_compile_state()
    with jitscope.compile_unit("recent", key="k") as u:
        u.set("x", 1)
    (r,) = jitscope.recent_compile_records()[-1:]
    assert r["unit_key"] == "k" and r["x"] == 1


def test_unit_and_phase_arguments_by_every_call_path(out):
    """compile_unit and phase parse their calls on a fast path (str or None
    values, a bool is_forward, a plain phase key) and leave the rest to the
    full parser: both give the same units, and wrong calls raise TypeError."""
    metrics = out("args.jsonl")
    jitscope.reset_compile_state()
    assert jitscope.start(out("args.json"), metrics=metrics)
    with jitscope.compile_unit("pos", graph="g", key="k1", is_forward=False,
                               recompile_reason="shape"):
        with jitscope.phase("plain"):
            pass
    with jitscope.compile_unit(frame="kw", graph=None, key=None):
        with jitscope.phase("opts", column="opts_us"):
            pass
    with jitscope.compile_unit(frame="truthy", is_forward=0):  # not a bool: the full parser
        pass
    with jitscope.compile_unit(None, recompile_reason=None):
        pass
    for bad in (lambda: jitscope.compile_unit(3), lambda: jitscope.compile_unit(frame=b"x"),
                lambda: jitscope.compile_unit("a", frame="b"),
                lambda: jitscope.compile_unit(nope=1), lambda: jitscope.compile_unit("a", "b"),
                lambda: jitscope.phase(), lambda: jitscope.phase(1),
                lambda: jitscope.phase("p", nope=1)):
        with pytest.raises(TypeError):
            bad()
    jitscope.stop()
    units = {r.get("frame", ""): r for r in records(metrics) if not r["is_runtime"]}
    assert set(units) == {"pos", "kw", "truthy", ""}
    assert units["pos"]["unit_key"] == "k1" and units["pos"]["is_forward"] is False
    assert units["pos"]["recompile_reason"] == "shape"
    assert units["pos"]["name"].endswith("__g_0")
    assert units["kw"]["unit_key"] == "kw" and units["kw"]["is_forward"] is True
    assert "opts_us" in units["kw"]
    assert units["truthy"]["is_forward"] is False
