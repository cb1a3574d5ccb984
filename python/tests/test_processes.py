"""Worker processes: a ProcessPoolExecutor and multiprocessing (fork and
spawn) and subprocess workers each write their own trace beside the
parent's, listed in the parent's, with the spawn arrow from the parent to
the worker's first compile unit; jitscope-merge --children joins them."""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import jitscope
from conftest import load_trace, spans

METHODS = ["fork", "spawn"]


def compile_in_worker(i):
    with jitscope.compile_unit(f"kernel{i}") as unit:
        with jitscope.phase("lower", column="lower_us"):
            with jitscope.span("worker_stage", i=i):
                pass
        unit.set("config", i)
        return os.getpid(), unit.compile_id


def merged(parent_trace):
    """jitscope-merge --children of the parent's trace, loaded."""
    tool = os.environ.get("JSPY_MERGE")
    if not tool:
        pytest.skip("jitscope-merge is not built")
    out = parent_trace + ".merged.json"
    r = subprocess.run([tool, "-q", "-o", out, "--children", parent_trace],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    return load_trace(out)


def children_listed(trace):
    return {e["args"]["pid"]: e["args"] for e in trace if e.get("name") == "jitscope_child"}


def arrows(trace, name="spawn"):
    """Spawn (or task) arrows: id -> [start pid, end pid]."""
    out = {}
    for e in trace:
        if e.get("ph") in ("s", "f") and e.get("name") == name:
            out.setdefault(e["id"], [None, None])[e["ph"] == "f"] = e["pid"]
    return out


def records(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_workers(trace_path, metrics_path, ran, stage_spans_per_pid):
    """The parent lists each worker that ran work at its own file beside the
    parent's; merged, each worker's spans are under its pid, one record per
    unit is in its metrics file, and an arrow joins parent and worker."""
    parent = load_trace(trace_path)
    listed = children_listed(parent)
    for pid in ran:
        assert pid in listed, (pid, listed)
        assert listed[pid]["trace"] == jitscope.worker_trace_path(pid, trace_path)
        assert os.path.exists(listed[pid]["trace"])
    assert not spans(parent, "worker_stage")
    whole = merged(trace_path)
    for pid, n in stage_spans_per_pid.items():
        assert len([e for e in spans(whole, "worker_stage") if e["pid"] == pid]) == n
        assert len(records(jitscope.worker_trace_path(pid, metrics_path))) == n
    assert records(metrics_path) == []  # the parent compiled nothing
    joined = arrows(whole)
    ends = {ends[1] for ends in joined.values() if ends[0] == os.getpid()}
    assert set(ran) <= ends, (ran, joined)


@pytest.mark.parametrize("method", METHODS)
def test_process_pool_workers_write_beside_and_merge_with_arrows(out, method):
    trace, metrics = out("pool.json"), out("pool.jsonl")
    assert jitscope.start(trace, metrics=metrics)
    with jitscope.span("autotune"):
        with jitscope.ProcessPoolExecutor(
                2, mp_context=multiprocessing.get_context(method)) as pool:
            results = list(pool.map(compile_in_worker, range(6)))
    jitscope.stop()
    per_pid = {}
    for pid, compile_id in results:
        assert compile_id, "the worker had no session"
        per_pid[pid] = per_pid.get(pid, 0) + 1
    assert os.getpid() not in per_pid
    check_workers(trace, metrics, list(per_pid), per_pid)
    # The arrows start inside the span that submitted the work.
    parent = load_trace(trace)
    (autotune,) = spans(parent, "autotune")
    for s in spans(parent, "spawn") + spans(parent, "task sent"):
        assert autotune["ts"] <= s["ts"] <= autotune["ts"] + autotune["dur"]
    # One arrow per task, from this process to the worker that ran it, and
    # ending where the worker started it: before that task's unit.
    tasks = arrows(merged(trace), "task")
    assert len(tasks) == 6, tasks
    assert all(start == os.getpid() for start, _ in tasks.values()), tasks
    ends_per_pid = {}
    for _, end in tasks.values():
        ends_per_pid[end] = ends_per_pid.get(end, 0) + 1
    assert ends_per_pid == per_pid


def mp_task(init, i, queue):
    init()
    queue.put(compile_in_worker(i))


@pytest.mark.parametrize("method", METHODS)
def test_multiprocessing_process_with_the_initializer(out, method):
    trace, metrics = out("mp.pftrace"), out("mp.jsonl")
    assert jitscope.start(trace, metrics=metrics)
    ctx = multiprocessing.get_context(method)
    queue = ctx.Queue()
    init = jitscope.worker_initializer()
    procs = [ctx.Process(target=mp_task, args=(init, i, queue)) for i in range(2)]
    for p in procs:
        p.start()
        assert jitscope.note_child_process(p.pid, label="mp")
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    jitscope.stop()
    pids = [pid for pid, _ in results]
    assert sorted(pids) == sorted(p.pid for p in procs)
    for pid in pids:  # each worker's own file, in the parent's form
        with open(jitscope.worker_trace_path(pid, trace), "rb") as f:
            assert f.read(1) == b"\x0a"
    whole = merged(trace)
    for pid in pids:
        assert len([e for e in spans(whole, "worker_stage") if e["pid"] == pid]) == 1
        assert len(records(jitscope.worker_trace_path(pid, metrics))) == 1
    ends = {e[1] for e in arrows(whole).values() if e[0] == os.getpid()}
    assert set(pids) <= ends


SUBPROCESS_WORKER = """
import jitscope, os
assert jitscope.active(), "no session from the inherited variables"
with jitscope.compile_unit("in_subprocess"):
    with jitscope.span("worker_stage"):
        pass
print(os.getpid())
"""


def test_subprocess_worker_from_worker_environment(out):
    trace, metrics = out("sub.json"), out("sub.jsonl")
    assert jitscope.start(trace, metrics=metrics)
    env = jitscope.worker_environment()
    env.update(PYTHONPATH=os.pathsep.join(sys.path), JITSCOPE_CUPTI="off")
    with jitscope.span("launch"):
        p = subprocess.Popen([sys.executable, "-c", SUBPROCESS_WORKER], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert jitscope.note_child_process(p.pid, label="sub")
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 0, stderr
    assert "jitscope:" not in stderr, stderr  # no refusal: the worker went beside
    jitscope.stop()
    assert int(stdout) == p.pid
    check_workers(trace, metrics, [p.pid], {p.pid: 1})


def test_a_worker_never_empties_its_stopped_parents_trace(out):
    # The parent's session has ended (its lock is gone), but the file's head
    # still names it: the worker writes beside it, never over it.
    trace = out("stopped.json")
    assert jitscope.start(trace)
    with jitscope.span("kept"):
        pass
    env = jitscope.worker_environment()
    jitscope.stop()
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    r = subprocess.run([sys.executable, "-c", SUBPROCESS_WORKER], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(spans(load_trace(trace), "kept")) == 1
    assert len(spans(load_trace(jitscope.worker_trace_path(int(r.stdout), trace)),
                     "worker_stage")) == 1


def test_forks_while_threads_record_never_hang(out):
    # Four threads in spans and units while the main thread forks 50 times;
    # each child records and starts its own session: none may hang on a lock
    # a recording thread held at the fork.
    assert jitscope.start(out("forks.json"))
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            with jitscope.compile_unit("busy"):
                with jitscope.phase("p"):
                    with jitscope.span("s", k=1):
                        pass

    threads = [threading.Thread(target=busy) for _ in range(4)]
    for t in threads:
        t.start()
    pids = []
    try:
        for i in range(50):
            child_trace = out(f"forked_{i}.json")
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    with jitscope.span("in_child"):
                        pass
                    with jitscope.compile_unit("child"):
                        pass
                    jitscope.compile_times()
                    if jitscope.start(child_trace):
                        with jitscope.span("child_session"):
                            pass
                        code = 0 if jitscope.stop().events_written >= 1 else 2
                finally:
                    os._exit(code)
            pids.append(pid)
    finally:
        stop.set()
        for t in threads:
            t.join()
    deadline = time.monotonic() + 60
    pending = set(pids)
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                pending.discard(pid)
                assert os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.01)
    for pid in pending:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert not pending, f"{len(pending)} forked children hung"
    jitscope.stop()


def compile_for(seconds):
    with jitscope.compile_unit("kernel") as unit:
        time.sleep(seconds)
        return os.getpid(), unit.compile_id


def test_the_critical_path_follows_a_pools_results(out):
    # The pool's workers hand back (pid, compile_id) with their result; the
    # link unit waits for each. The slow kernel is what the wall waited for:
    # the path ends with it, then link.
    report = os.environ.get("JSPY_REPORT")
    if not report:
        pytest.skip("JSPY_REPORT is not set (the ctest entry sets it)")
    trace = out("critical.json")
    assert jitscope.start(trace)
    with jitscope.compile_unit("prep") as prep:  # before the pool: ends first
        pass
    with jitscope.ProcessPoolExecutor(
            2, mp_context=multiprocessing.get_context("fork")) as pool:
        results = list(pool.map(compile_for, [0.01, 0.01, 0.4, 0.01]))
    with jitscope.compile_unit("link") as link:
        for pid, compile_id in results:
            assert link.waits_for(compile_id, pid=pid)
        assert link.waits_for(prep)  # a compile_unit of this process, open or closed
        assert not link.waits_for(link)  # itself: refused
        with pytest.raises(TypeError):
            link.waits_for(3)
        with pytest.raises(ValueError):
            link.waits_for("3")
        with pytest.raises(ValueError):
            link.waits_for("0/0", pid=-1)
        assert link.waits_for("[7/0]")  # the display form too; no such unit here
    jitscope.stop()
    assert not link.waits_for("0/0")  # closed: nothing recorded
    whole = merged(trace)
    merged_path = trace + ".merged.json"
    r = subprocess.run([report, merged_path, "--format", "json", "--section", "critical_path"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    cp = json.loads(r.stdout)["critical_path"]
    slow_pid, slow_id = results[2]
    *_, before, last = cp["steps"]
    assert (last["pid"], last["compile_id"]) == (os.getpid(), link.compile_id), cp
    assert (before["pid"], before["compile_id"]) == (slow_pid, slow_id), (results, cp["steps"])
    assert before["next"] == "waited_for"
    assert before["on_path_ns"] >= 0.3e9
    assert cp["waits"] == 6 and cp["waits_unmatched"] == 1  # "[7/0]": no such unit
    assert cp["processes"] == 3 and len(whole) > 0
