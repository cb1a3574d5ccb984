"""jitscope.triton.instrument() on a stand-in with Triton 3.6's layout
(helpers/fake_triton): a unit per compile, a phase per stage, the binary's
first load under the unit's loading(), errors marked, and one line when
Triton or a piece of it is missing. Each case runs in a fresh interpreter:
instrument() wraps process-wide. On a GPU, gpu_loading.py checks what
loading() credits; the same wrappers ran on real Triton 3.6 (docs/python.md)."""

import json
import os
import textwrap

from conftest import load_trace, run_python, spans

FAKE = os.path.join(os.path.dirname(__file__), "helpers", "fake_triton")


def run(code, out_json, metrics, extra_env=None, fake=True):
    path = os.environ.get("PYTHONPATH", "")
    env = {"PYTHONPATH": os.pathsep.join(p for p in (FAKE if fake else "", path) if p)}
    env.update(extra_env or {})
    prelude = textwrap.dedent(f"""
        import types, jitscope, jitscope.triton
        trace, metrics = {out_json!r}, {metrics!r}
        def src(name, **constants):
            return types.SimpleNamespace(fn=types.SimpleNamespace(__name__=name),
                                         constants=constants)
    """)
    return run_python(prelude + textwrap.dedent(code), env=env)


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_each_compile_is_a_unit_with_a_phase_per_stage_and_its_load_credited(out):
    trace, metrics = out("triton.json"), out("triton.jsonl")
    r = run("""
        assert jitscope.triton.instrument()
        assert jitscope.triton.instrument()  # again: nothing wrapped twice
        import triton
        from triton.compiler import compiler as tc
        jitscope.start(trace, metrics=metrics)
        a = triton.compile(src("add_kernel", BLOCK=128))
        b = tc.compile(src("mul_kernel"))
        assert tc.LOADS == []  # nothing loaded yet: Triton loads at first launch
        a[(1,)]()
        a[(1,)]()              # loaded once
        b[(1,)]()
        print(a._jitscope_unit.compile_id, b._jitscope_unit.compile_id, tc.LOADS)
        jitscope.stop()
    """, trace, metrics)
    assert r.returncode == 0, r.stderr
    ids = r.stdout.split()[:2]
    assert "('add_kernel', 'add_kernel.ttir.ttgir.llir.ptx.cubin')" in r.stdout, r.stdout
    assert r.stdout.count("add_kernel.ttir") == 1, r.stdout
    units = [u for u in records(metrics) if not u["is_runtime"] and "record" not in u]
    assert [(u["frame"], u["compile_id"], u["unit_key"]) for u in units] == [
        ("add_kernel", ids[0], "add_kernel{'BLOCK': 128}"), ("mul_kernel", ids[1], "mul_kernel")]
    for u in units:
        assert {"ttir_us", "ttgir_us", "llir_us", "ptx_us", "cubin_us"} <= set(u), u
    events = load_trace(trace)
    stage_spans = [s for s in spans(events) if s["name"] in ("ttir", "ttgir", "llir", "ptx", "cubin")]
    assert len(stage_spans) == 10, stage_spans
    assert {s["args"]["compile_id"] for s in stage_spans} == set(ids)


def test_a_failed_compile_is_a_failed_unit_and_the_error_goes_on(out):
    trace, metrics = out("fail.json"), out("fail.jsonl")
    r = run("""
        jitscope.triton.instrument()
        import triton
        jitscope.start(trace, metrics=metrics)
        try:
            triton.compile(src("bad_kernel"))
        except RuntimeError as e:
            print("raised:", e)
        jitscope.stop()
    """, trace, metrics, {"FAKE_TRITON_FAIL": "bad_kernel"})
    assert r.returncode == 0, r.stderr
    assert "raised: ptxas died" in r.stdout
    (u,) = [u for u in records(metrics) if not u["is_runtime"]]
    assert (u["frame"], u["fail_type"], u["fail_reason"]) == ("bad_kernel", "RuntimeError",
                                                             "ptxas died")


def test_without_triton_or_a_piece_of_it_one_line_says_what_is_not_wrapped(out):
    r = run("print(jitscope.triton.instrument())", out("none.json"), out("none.jsonl"),
            fake=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    assert r.stderr.count("jitscope: jitscope.triton.instrument(): cannot import Triton") == 1, \
        r.stderr
    metrics = out("partial.jsonl")
    r = run("""
        from triton.compiler import compiler as tc
        del tc.CompiledKernel._init_handles
        print(jitscope.triton.instrument())
        import triton
        jitscope.start(trace, metrics=metrics)
        triton.compile(src("still_a_unit"))
        jitscope.stop()
    """, out("partial.json"), metrics)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    assert "CompiledKernel._init_handles is missing" in r.stderr, r.stderr
    (u,) = [u for u in records(metrics) if not u["is_runtime"]]
    assert u["frame"] == "still_a_unit" and "ptx_us" in u, u  # the rest stays wrapped
