"""jitscope.Autotune from Python: a tuning session's trials with typed
configs, steps, a compile unit as a trial's compile, results, a failure and
the winner, as the C++ API writes them; and jitscope-report's autotune
section on that trace, its sums checked against the trace's own instants."""

import json
import os
import subprocess
import threading
import time

import jitscope
import pytest
from conftest import load_trace


def instants(trace, name):
    return [e["args"] for e in trace if e.get("ph") in ("i", "I") and e["name"] == name]


def tune_session():
    """Three configs of "gemm": two compiled here, one as a compile unit on
    another thread; trial 1 wins, trial 2 fails. Returns the trials and the
    unit's compile id."""
    with jitscope.Autotune("gemm") as tune:
        trials = [tune.trial(block=b, fast_math=b > 64, dtype="bf16", ratio=0.5)
                  for b in (64, 128, 256)]
        for t in trials[:2]:
            with t.compile():
                time.sleep(0.002)
        holder = {}

        def build():
            with jitscope.compile_unit("gemm_256") as unit:
                time.sleep(0.003)
            holder["unit"] = unit

        worker = threading.Thread(target=build)
        worker.start()
        worker.join()
        trials[2].compiled_by(holder["unit"])
        for i, t in enumerate(trials):
            step = t.benchmark()
            time.sleep(0.001)
            step.end()
            step.end()  # idempotent
            t.result(10.0 - i)
        trials[2].failed("wrong result")
        tune.winner(trials[1])
        assert tune.trials == 3 and tune.id > 0
    return trials, holder["unit"].compile_id


def test_a_session_is_written_as_the_cpp_api_writes_it(out):
    path = out("autotune.json")
    assert jitscope.start(path)
    trials, unit_id = tune_session()
    jitscope.stop()
    assert [t.index for t in trials] == [0, 1, 2]
    trace = load_trace(path)
    (start,) = instants(trace, "autotune_start")
    assert start["kernel"] == "gemm"
    made = instants(trace, "autotune_trial")
    assert [a["trial"] for a in made] == [0, 1, 2]
    assert made[0]["config"] == "block=64, fast_math=false, dtype=bf16, ratio=0.5"
    assert made[1]["block"] == 128 and made[1]["fast_math"] is True and made[1]["dtype"] == "bf16"
    steps = instants(trace, "autotune_step")
    assert sorted((a["trial"], a["step"]) for a in steps) == [
        (0, "benchmark"), (0, "compile"), (1, "benchmark"), (1, "compile"), (2, "benchmark")]
    assert all(a["ns"] >= 1_000_000 for a in steps)  # each slept at least 1 ms
    (by,) = instants(trace, "autotune_compiled_by")
    assert by["trial"] == 2 and by["compile_id"] == unit_id
    assert [a["value"] for a in instants(trace, "autotune_result")] == [10.0, 9.0, 8.0]
    assert instants(trace, "autotune_failed") == [{"tune": start["tune"], "trial": 2,
                                                   "reason": "wrong result"}]
    assert [a["trial"] for a in instants(trace, "autotune_winner")] == [1]
    assert instants(trace, "autotune_end")[0]["trials"] == 3


def test_a_session_writes_its_metrics_record(out):
    path, metrics = out("autotune_record.json"), out("autotune_record.jsonl")
    assert jitscope.start(path, metrics=metrics)
    with jitscope.compile_unit("tuning") as outer:
        trials, unit_id = tune_session()
    jitscope.stop()
    trace = load_trace(path)
    with open(metrics) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    (record,) = [r for r in lines if r.get("record") == "autotune"]
    steps = instants(trace, "autotune_step")
    compile_ns = sum(a["ns"] for a in steps if a["step"] == "compile")  # the unit's is its own
    bench_ns = sum(a["ns"] for a in steps if a["step"] == "benchmark")
    won = sum(a["ns"] for a in steps if a["trial"] == 1)
    assert record["compile_id"] is None and record["unit"] == outer.compile_id
    assert record["kernel"] == "gemm" and record["trials"] == 3 and record["failed"] == 1
    assert record["winner"] == 1
    assert record["winner_config"] == "block=128, fast_math=true, dtype=bf16, ratio=0.5"
    assert record["compile_steps_ns"] == compile_ns and record["benchmark_ns"] == bench_ns
    assert record["not_won_steps_ns"] == compile_ns + bench_ns - won
    rows = record["trial_rows"]
    assert [r["trial"] for r in rows] == [0, 1, 2]
    assert rows[2]["units"] == [unit_id] and rows[2]["failed"] == "wrong result"
    assert [r["result"] for r in rows] == [10.0, 9.0, 8.0]


def test_the_report_sums_what_the_trace_holds(out):
    report = os.environ.get("JSPY_REPORT")
    if not report:
        pytest.skip("JSPY_REPORT is not set (the ctest entry sets it)")
    path = out("autotune_report.json")
    assert jitscope.start(path)
    tune_session()
    jitscope.stop()
    trace = load_trace(path)
    rep = json.loads(subprocess.run([report, path, "-f", "json", "-s", "autotune,units"],
                                    check=True, capture_output=True, text=True).stdout)
    (session,) = rep["autotune"]
    (unit,) = rep["units"]
    steps = instants(trace, "autotune_step")
    compile_ns = sum(a["ns"] for a in steps if a["step"] == "compile") + unit["wall_ns"]
    bench_ns = sum(a["ns"] for a in steps if a["step"] == "benchmark")
    won = sum(a["ns"] for a in steps if a["trial"] == 1)
    assert session["kernel"] == "gemm" and session["trials"] == 3 and session["winner"] == 1
    assert session["compile_ns"] == compile_ns
    assert session["benchmark_ns"] == bench_ns
    assert session["not_won_ns"] == compile_ns + bench_ns - won
    assert session["trial_rows"][2]["failed"] == "wrong result"
    assert session["trial_rows"][2]["units"] == [unit["compile_id"]]


def test_without_a_session_every_call_is_harmless():
    assert not jitscope.active()
    with jitscope.Autotune("idle") as tune:
        t = tune.trial(x=1)
        with t.compile():
            pass
        t.result(1)
        t.failed("no")
        t.compiled_by("3/0")
        tune.winner(t)
        assert tune.id == 0 and tune.trials == 1
    tune.end()  # ended twice: nothing
    with pytest.raises(ValueError):
        tune.trial(x=2)
    with pytest.raises(TypeError):
        tune.trial(1)
    with pytest.raises(ValueError):
        t.compiled_by("not an id")
    with pytest.raises(TypeError):
        tune.winner("trial 0")
