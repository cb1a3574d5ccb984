"""__enter__ and __exit__ of span, compile_unit and phase: bound without a method
object per lookup (python/src/inline_methods.hpp), and still every way
Python reaches them: the `with` statement, the class (contextlib.ExitStack),
a bound method kept past its block, wrong calls."""

import contextlib
import gc
import json
import sys
import sysconfig

import jitscope
import pytest
from conftest import load_trace, spans


def makers():
    return [
        ("span", lambda: jitscope.span("s")),
        ("compile_unit", lambda: jitscope.compile_unit(frame="k")),
        ("phase", lambda: jitscope.phase("p")),
    ]


@pytest.mark.parametrize("kind,make", makers())
def test_a_with_block_gives_back_every_reference(kind, make, out):
    assert jitscope.start(out(f"{kind}_refs.json"))
    obj = make()
    before = sys.getrefcount(obj)
    for _ in range(100):
        with obj:
            pass
    after = sys.getrefcount(obj)
    jitscope.stop()
    assert after == before, (kind, before, after)


@pytest.mark.parametrize("kind,make", makers())
def test_a_bound_method_is_reused_and_holds_its_object(kind, make):
    obj = make()
    enter = obj.__enter__
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        assert obj.__enter__ is enter  # the one inside the object
    assert obj.__exit__ is not enter
    assert enter.__self__ is obj
    assert enter.__name__ == "__enter__" and "__enter__" in repr(enter)
    assert type(obj).__exit__.__name__ == "__exit__"
    assert type(obj).__enter__.__doc__
    # The bound method keeps its object alive after every other reference
    # goes (made anew on every lookup would do too: no identity assumed).
    exit_ = obj.__exit__
    del obj, enter
    gc.collect()
    junk = [make() for _ in range(64)]  # would reuse a freed object's memory
    assert type(exit_.__self__).__name__ == kind
    assert exit_.__self__ not in junk
    assert exit_(None, None, None) is False


def test_a_kept_exit_ends_the_unit_after_the_object_is_dropped(out):
    path = out("kept_exit.json")
    assert jitscope.start(path)
    unit = jitscope.compile_unit(frame="kept")
    enter, exit_ = unit.__enter__, unit.__exit__
    del unit
    opened = enter()
    assert opened.is_open
    del opened, enter
    exit_(None, None, None)
    assert not exit_.__self__.is_open
    del exit_
    jitscope.stop()
    (unit_slice,) = [s for s in spans(load_trace(path)) if s.get("cat") == "compile_unit"]
    assert unit_slice["args"]["frame"] == "kept"


def test_exit_stack_calls_them_through_the_class(out):
    path, metrics = out("exit_stack.json"), out("exit_stack.jsonl")
    assert jitscope.start(path, metrics=metrics)
    with pytest.raises(ValueError):
        with contextlib.ExitStack() as stack:
            unit = stack.enter_context(jitscope.compile_unit(frame="stacked"))
            stack.enter_context(jitscope.phase("inner", column="inner_us"))
            assert unit.is_open
            raise ValueError("bad shape")
    assert not unit.is_open
    jitscope.stop()
    with open(metrics, encoding="utf-8") as f:
        (r,) = [json.loads(x) for x in f if x.strip() and not json.loads(x)["is_runtime"]]
    assert r["fail_type"] == "ValueError" and r["fail_reason"] == "bad shape", r
    assert "inner_us" in r
    (inner,) = spans(load_trace(path), "inner")
    assert inner["args"]["failed"] is True


@pytest.mark.parametrize("kind,make", makers())
def test_wrong_calls_raise_type_error(kind, make):
    obj = make()
    cls = type(obj)
    with pytest.raises(TypeError, match="takes no arguments"):
        obj.__enter__(1)
    with pytest.raises(TypeError, match="no keyword arguments"):
        obj.__exit__(None, None, tb=None)
    with pytest.raises(TypeError, match="doesn't apply"):
        cls.__enter__(object())
    with pytest.raises(TypeError, match="needs an argument"):
        cls.__exit__()
    other = jitscope.phase("q") if kind != "phase" else jitscope.compile_unit()
    with pytest.raises(TypeError, match="doesn't apply"):
        cls.__enter__(other)
    assert cls.__enter__(obj) is obj  # the class form, as ExitStack calls it
    assert cls.__exit__(obj, None, None, None) is False


def test_nested_and_reentered_objects_stay_balanced(out):
    path = out("nested.json")
    assert jitscope.start(path)
    unit = jitscope.compile_unit(frame="outer")
    phase = jitscope.phase("step")
    for _ in range(3):
        with unit:
            with phase:
                with phase:  # begun again while open: ends once, as before
                    pass
    jitscope.stop()
    trace = load_trace(path)
    assert len([s for s in spans(trace) if s.get("cat") == "compile_unit"]) == 3
    assert len(spans(trace, "step")) >= 3
