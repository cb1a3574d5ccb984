"""A unit's work on other threads (unit.attach()) and its binary loaded
after it closed (unit.loading()); the GPU half of loading() is in
gpu_loading.py, which needs a GPU."""

import json
import threading

import jitscope
from conftest import load_trace, spans


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip() and '"record"' not in line]


def test_a_worker_thread_attached_to_the_unit_charges_its_record(out):
    metrics = out("attach.jsonl")
    path = out("attach.json")
    jitscope.reset_compile_state()
    assert jitscope.start(path, metrics=metrics)
    seen = {}

    def worker(unit):
        seen["before"] = jitscope.current_compile_id()
        with unit.attach():
            seen["inside"] = jitscope.current_compile_id()
            with jitscope.span("codegen_on_worker"):
                with jitscope.phase("ptxas", column="ptxas_us"):
                    pass
        seen["after"] = jitscope.current_compile_id()

    with jitscope.compile_unit("pooled") as unit:
        cid = unit.compile_id
        t = threading.Thread(target=worker, args=(unit,))
        t.start()
        t.join()
    jitscope.stop()
    assert seen == {"before": None, "inside": cid, "after": None}
    (s,) = spans(load_trace(path), "codegen_on_worker")
    assert s["args"]["compile_id"] == cid
    (r,) = records(metrics)
    assert r["compile_id"] == cid and "ptxas_us" in r, r


def test_attach_to_a_closed_unit_says_so_and_attaches_nothing(out, capfd):
    assert jitscope.start(out("closed_attach.json"))
    with jitscope.compile_unit("done") as unit:
        pass
    with unit.attach():
        assert jitscope.current_compile_id() is None
    jitscope.stop()
    err = capfd.readouterr().err
    assert err.count("jitscope: unit.attach(): the unit is not open") == 1, err


def test_the_compile_id_outlives_the_unit_and_a_reopen_is_a_new_unit(out):
    jitscope.reset_compile_state()
    assert jitscope.start(out("reopen.json"))
    unit = jitscope.compile_unit("again")
    assert unit.compile_id is None  # never opened
    with unit:
        first = unit.compile_id
    assert not unit.is_open and unit.compile_id == first == "0/0"
    unit.set("ignored", 1)  # closed: nothing, no line
    with unit:
        assert unit.compile_id == "0/1"  # the frame's next attempt
    jitscope.stop()


def test_a_scope_entered_again_on_its_thread_ends_at_the_outer_exit(out, capfd):
    assert jitscope.start(out("nested_attach.json"))
    seen = []
    with jitscope.compile_unit("shared") as unit:
        cid = unit.compile_id
        scope = unit.attach()

        def other_thread():
            with scope:  # entered elsewhere while entered: ignored there
                seen.append(("other inside", jitscope.current_compile_id()))
            seen.append(("other after", jitscope.current_compile_id()))

        def worker():
            with scope:
                with scope:  # nested on its thread: counted
                    pass
                seen.append(("after inner", jitscope.current_compile_id()))
                t = threading.Thread(target=other_thread)
                t.start()
                t.join()
                seen.append(("after other", jitscope.current_compile_id()))
            seen.append(("after outer", jitscope.current_compile_id()))

        w = threading.Thread(target=worker)
        w.start()
        w.join()
    jitscope.stop()
    assert seen == [("after inner", cid), ("other inside", None), ("other after", None),
                    ("after other", cid), ("after outer", None)], seen
    err = capfd.readouterr().err
    assert err.count("unit.attach() entered on another thread while entered") == 1, err


def test_an_attach_made_while_open_and_entered_after_the_close_attaches_nothing(out):
    path = out("late_attach.json")
    assert jitscope.start(path)
    with jitscope.compile_unit("early") as unit:
        scope = unit.attach()
    with scope:  # the unit is looked at here, not when the scope was made
        assert jitscope.current_compile_id() is None
        with jitscope.span("after_close"):
            pass
    jitscope.stop()
    (s,) = spans(load_trace(path), "after_close")
    assert "compile_id" not in s.get("args", {}), s


def test_loading_scopes_nest_and_are_safe_without_a_session(out):
    never = jitscope.compile_unit("never_opened")
    with never.loading():  # never opened: does nothing
        pass
    assert jitscope.start(out("loading.json"))
    with jitscope.compile_unit("built") as unit:
        pass
    scope = unit.loading()
    with scope:
        with scope:
            pass
        with unit.loading():
            pass
    jitscope.stop()
    with unit.loading():  # after the session: nothing to credit, nothing breaks
        pass
