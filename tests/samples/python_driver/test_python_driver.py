"""samples/python_driver end to end: the Triton-shaped Python DSL over
mlir_gpu's compiler, run as a user runs it, its traces merged by
jitscope-merge --children and read back.

JSPY_DRIVER: driver.py; JSPY_BACKEND_DIR: the folder of the C++ extension
(empty when it is not built: the tests that need it skip); JSPY_MERGE:
jitscope-merge. PYTHONPATH holds the jitscope package."""

import glob
import json
import os
import subprocess
import sys

import pytest

DRIVER = os.environ["JSPY_DRIVER"]
BACKEND_DIR = os.environ.get("JSPY_BACKEND_DIR", "")
MERGE = os.environ.get("JSPY_MERGE", "")
KERNELS = ("axpy", "fma3", "normalize")
CONFIGS = 6  # kernels.axpy_tuned


def has_backend():
    return bool(BACKEND_DIR) and bool(glob.glob(os.path.join(BACKEND_DIR, "_tinydsl_backend*.so")))


needs_backend = pytest.mark.skipif(not has_backend(), reason="_tinydsl_backend is not built "
                                   "(needs LLVM 16, MLIR 16 and nvJitLink)")


def run_driver(tmp, trace, *args, backend=True):
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    path = [p for p in path if os.path.abspath(p) != os.path.abspath(BACKEND_DIR or "/nonexistent")]
    if backend:
        path.append(BACKEND_DIR)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JITSCOPE_")}
    env["PYTHONPATH"] = os.pathsep.join(path)
    p = subprocess.run([sys.executable, DRIVER, "--trace", str(tmp / trace), "--metrics",
                        str(tmp / "metrics.jsonl"), "--cache-dir", str(tmp / "cache"), *args],
                       cwd=tmp, env=env, capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    return p


def merged(tmp, trace):
    if not MERGE:
        pytest.skip("jitscope-merge is not built")
    out = tmp / (trace + ".merged.json")
    subprocess.run([MERGE, "--children", "-q", str(tmp / trace), "-o", str(out)], check=True,
                   timeout=120)
    with open(out) as f:
        return json.load(f)


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def slices(events, pid=None, **where):
    return [e for e in events if e.get("ph") == "X" and (pid is None or e["pid"] == pid)
            and all(e.get(k) == v for k, v in where.items())]


def inside(inner, outer):
    return (inner["pid"] == outer["pid"] and inner["tid"] == outer["tid"]
            and outer["ts"] <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 0.01)


def cid(e):
    return (e.get("args") or {}).get("compile_id")


@needs_backend
def test_one_timeline_from_the_python_stages_down_to_each_pass(tmp_path):
    p = run_driver(tmp_path, "t.json", "--inject-error", "--jobs", "2")
    assert "kernel broken failed: TraceError" in p.stderr
    assert "autotune picked Config(" in p.stdout

    # One record per unit in this process: three built, one failed in `trace`.
    mine = {r["function"]: r for r in records(tmp_path / "metrics.jsonl")}
    assert sorted(mine) == sorted(KERNELS + ("broken",))
    assert mine["broken"]["fail_type"] == "TraceError"
    assert "indices and data do not mix" in mine["broken"]["fail_reason"]
    for k in KERNELS:
        r = mine[k]
        assert "fail_type" not in r and r["cache"] == "miss", r
        for column in ("trace_us", "mlir_gen_us", "mlir_parse_us", "mlir_lower_us",
                       "llvm_opt_us", "nvptx_codegen_us", "nvjitlink_us"):
            assert column in r, (k, column)  # Python's and C++'s phases, one record
        assert r["cubin_bytes"] > 0 and r["caches"]["disk_cache"]["misses"] == 1

    events = merged(tmp_path, "t.json")
    parent = next(e["pid"] for e in events if e.get("name") == "thread_name"
                  and e["args"]["name"] == "driver")
    for k in KERNELS:
        unit = next(u for u in slices(events, parent, cat="compile_unit")
                    if u["args"]["frame"] == mine[k]["frame"])
        c = cid(unit)
        # The Python stages, then the C++ phases inside the Python backend
        # span, then the passes inside those: one thread, one compile id.
        py_phase = [e for e in slices(events, parent, name="trace") if inside(e, unit)]
        backend = [e for e in slices(events, parent, name="tinydsl.backend") if inside(e, unit)]
        assert len(py_phase) == 1 and cid(py_phase[0]) == c
        assert len(backend) == 1, k
        for phase, is_pass in (("mlir_lower", lambda a: "pass" in a),
                               ("llvm_opt", lambda a: "ir" in a)):
            cpp = [e for e in slices(events, parent, name=phase, cat="phase")
                   if inside(e, backend[0])]
            assert len(cpp) == 1 and cid(cpp[0]) == c, (k, phase)
            passes = [e for e in slices(events, parent) if is_pass(e.get("args") or {})
                      and inside(e, cpp[0])]
            assert passes and all(cid(e) == c for e in passes), (k, phase)

    # The autotuner's workers: each listed, merged under its own pid, one
    # record per config in their metrics files, an arrow from this process
    # to each worker that compiled (one spawned after its sibling took every
    # task opens no unit, so its arrow has no end).
    children = [e["args"]["pid"] for e in events if e.get("name") == "jitscope_child"]
    assert children
    worker_records = []
    compiled = 0  # workers that took a task: the spawn arrow ends at a worker's first unit
    for pid in children:
        # One lowering per config the worker missed in the disk cache: a
        # config equal to a kernel the driver built is a hit, and a worker
        # that started after its sibling took every task has none.
        theirs = records(str(tmp_path / "metrics.worker-{}.jsonl".format(pid)))
        worker_records += theirs
        compiled += 1 if theirs else 0
        lowered = slices(events, pid, name="mlir_lower", cat="phase")
        missed = sorted(r["compile_id"] for r in theirs if r["cache"] == "miss")
        assert sorted(cid(e) for e in lowered) == missed, pid
    assert len(worker_records) == CONFIGS
    assert {r["config"] for r in worker_records} == {
        f"BLOCK={b} UNROLL={u}" for b in (128, 256) for u in (1, 2, 4)}
    assert compiled >= 1
    for name, count in (("spawn", compiled), ("task", CONFIGS)):  # a task per config
        starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("name") == name
                  and e["pid"] == parent}
        ends = [e for e in events if e.get("ph") == "f" and e.get("name") == name
                and e["pid"] in children]
        assert len(ends) == count and all(e["id"] in starts for e in ends), name


@needs_backend
def test_a_second_run_hits_the_disk_cache_and_compiles_nothing(tmp_path):
    run_driver(tmp_path, "first.json", "--jobs", "1")
    run_driver(tmp_path, "second.pftrace", "--jobs", "1")  # the Perfetto form, merged to JSON
    second = records(tmp_path / "metrics.jsonl")[-len(KERNELS):]
    assert [r["cache"] for r in second] == ["hit"] * len(KERNELS)
    assert all(r["caches"]["disk_cache"]["hits"] == 1 for r in second)
    events = merged(tmp_path, "second.pftrace")
    assert slices(events, cat="compile_unit")
    assert not slices(events, name="tinydsl.backend") and not slices(events, name="mlir_lower")


def test_without_the_backend_the_python_stages_still_run(tmp_path):
    p = run_driver(tmp_path, "t.json", "--jobs", "1", backend=False)
    assert "skipping MLIR parse and lowering, LLVM O3, NVPTX codegen and nvJitLink" in p.stderr
    assert p.stderr.count("python_driver: the C++ backend") == 1 + 1  # this process, one worker
    mine = records(tmp_path / "metrics.jsonl")
    assert sorted(r["function"] for r in mine) == sorted(KERNELS)
    for r in mine:
        assert r["backend"] == "skipped" and "trace_us" in r and "mlir_gen_us" in r
        assert "mlir_lower_us" not in r
