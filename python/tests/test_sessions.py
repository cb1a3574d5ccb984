"""Sessions from Python: config errors, the context manager, autostart from
JITSCOPE_TRACE, interpreter exit with live threads, SIGKILL, both formats,
and a flusher that never needs the GIL."""

import json
import os
import signal
import subprocess
import sys
import time

import jitscope
import pytest
from conftest import load_trace, run_python, spans


def test_bad_config_raises_naming_the_field(out):
    with pytest.raises(TypeError, match="did you mean 'metrics'"):
        jitscope.start(out("t.json"), metric="m.jsonl")
    with pytest.raises(ValueError, match="overflow"):
        jitscope.start(out("t.json"), overflow="sometimes")
    with pytest.raises(TypeError, match="ring_capacity"):
        jitscope.start(out("t.json"), ring_capacity="big")
    with pytest.raises(ValueError, match="ring"):
        jitscope.start(out("t.json"), ring_capacity=3)  # below the minimum: validate()
    assert not jitscope.active()


def test_none_keeps_a_fields_default(out):
    # A driver passing its own optional settings through: None is "not set".
    path = out("none.json")
    assert jitscope.start(path, metrics=None, process_name=None, ring_capacity=None,
                          overflow=None, compile_times=None)
    with jitscope.span("with_defaults"):
        pass
    stats = jitscope.stop()
    assert stats.events_written >= 1
    assert not os.path.exists(out("none.metrics"))
    with pytest.raises(TypeError, match="did you mean 'metrics'"):
        jitscope.start(out("t.json"), metric=None)  # an unknown name stays an error
    assert not jitscope.active()


def test_refused_start_returns_false(out, capfd):
    assert not jitscope.start("/nonexistent-dir/t.json")
    assert "jitscope:" in capfd.readouterr().err
    assert not jitscope.active()


def test_session_context_manager(out):
    path = out("ctx.json")
    with jitscope.session(path, process_name="driver") as stats:
        assert jitscope.active()
        with jitscope.span("inside"):
            pass
    assert not jitscope.active()
    assert stats.events_written >= 1 and stats.output_path == path
    trace = load_trace(path)
    assert spans(trace, "inside")
    assert any(e.get("name") == "process_name" and e["args"]["name"] == "driver" for e in trace)


def test_pathlike_and_second_start(out):
    import pathlib

    path = pathlib.Path(out("pathlike.json"))
    assert jitscope.start(path)
    assert not jitscope.start(out("second.json"))  # one session at a time
    jitscope.stop()
    assert path.exists()


def test_autostart_from_jitscope_trace(out):
    path = out("auto.json")
    r = run_python("import jitscope\nwith jitscope.span('auto_span'):\n    pass\n",
                   env={"JITSCOPE_TRACE": path})
    assert r.returncode == 0, r.stderr
    assert spans(load_trace(path), "auto_span")


EXIT_WITH_LIVE_THREADS = """
import os, sys, threading, jitscope
def spin():
    while True:
        with jitscope.span("daemon_work"):
            pass
def exit_from_thread():
    with jitscope.span("thread_exit"):
        sys.exit(0)  # ends this thread only
threading.Thread(target=spin, daemon=True).start()
t = threading.Thread(target=exit_from_thread)
t.start(); t.join()
with jitscope.span("main_done"):
    pass
"""


def test_exit_with_live_threads_leaves_a_whole_trace(out):
    path = out("exit.json")
    r = run_python(EXIT_WITH_LIVE_THREADS, env={"JITSCOPE_TRACE": path})
    assert r.returncode == 0, r.stderr
    trace = load_trace(path)  # strict: the file was closed properly
    assert spans(trace, "main_done") and spans(trace, "thread_exit")
    assert any(e.get("name") == "jitscope_stats" for e in trace)


def test_sigkill_leaves_a_loadable_trace(out):
    path = out("killed.json")
    code = ("import jitscope, time, sys\n"
            f"jitscope.start({path!r}, flush_interval_ms=5)\n"
            "for i in range(200):\n"
            "    with jitscope.span('before_kill'):\n"
            "        pass\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JITSCOPE_")}
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.3)  # several flush intervals
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    assert len(spans(load_trace(path, allow_cut=True), "before_kill")) == 200


@pytest.mark.parametrize("name", ["both.json", "both.pftrace"])
def test_both_formats_hold_the_same_spans(out, name):
    path = out(name)
    assert jitscope.start(path)
    with jitscope.compile_unit("fmt"):
        for _ in range(10):
            with jitscope.span("fmt_span", k=1):
                pass
    stats = jitscope.stop()
    assert stats.events_written >= 11
    report = os.environ.get("JSPY_REPORT")
    if name.endswith(".json"):
        assert len(spans(load_trace(path), "fmt_span")) == 10
    else:
        with open(path, "rb") as f:
            assert f.read(1) == b"\x0a"  # a TracePacket field 1, as Perfetto writes
    if report:
        r = subprocess.run([report, path, "--format", "json"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "fmt_span" in r.stdout


def test_cache_lookups_from_python_explain_their_misses(out):
    report = os.environ.get("JSPY_REPORT")
    if not report:
        pytest.skip("JSPY_REPORT is not set (the ctest entry sets it)")
    path = out("caches.json")
    assert jitscope.start(path)
    ids = []
    for i, opt in enumerate(["-O2", "-O3"]):
        with jitscope.compile_unit(f"k{i}") as unit:
            # Values of any type go as their str().
            unit.cache_lookup("ptx", {"source": "s", "options": opt, "warps": 4}, False)
            ids.append(unit.compile_id)
    with jitscope.compile_unit("k2") as unit:
        unit.cache_lookup("ptx", {"source": "s", "options": "-O3", "warps": 4}, True)
        with pytest.raises(TypeError):
            unit.cache_lookup("ptx", {1: "x"}, True)
        with pytest.raises(TypeError):
            unit.cache_lookup("ptx", "source=s", True)
    jitscope.stop()
    r = subprocess.run([report, path, "--format", "json", "--section", "caches"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    [layer] = json.loads(r.stdout)["caches"]
    assert (layer["layer"], layer["lookups"], layer["hits"], layer["misses"]) == ("ptx", 3, 1, 2)
    reasons = {x["reason"]: x for x in layer["reasons"]}
    assert set(reasons) == {"new layer", "options"}
    assert reasons["new layer"]["first_unit"] == ids[0]
    assert reasons["options"]["first_unit"] == ids[1]
    assert reasons["options"]["first_changes"] == [{"part": "options", "was": "-O2", "now": "-O3"}]


def test_flusher_needs_no_gil(out):
    # A Python thread spinning in pure Python holds the GIL nearly always;
    # the trace still grows meanwhile.
    path = out("gil.json")
    assert jitscope.start(path, flush_interval_ms=5)
    with jitscope.span("before_spin"):
        pass
    sizes = []
    deadline = time.monotonic() + 1.5
    n = 0
    while time.monotonic() < deadline:  # pure Python, never releasing the GIL on purpose
        n += 1
        if n % 200_000 == 0:
            sizes.append(os.path.getsize(path))
            with jitscope.span("during_spin"):
                pass
    jitscope.stop()
    assert len(sizes) >= 3
    assert sizes[-1] > sizes[0], sizes  # written while the spinning thread ran


def merged_alone(trace_path):
    """One trace through jitscope-merge, as JSON: the .pftrace form read by the tools."""
    tool = os.environ.get("JSPY_MERGE")
    if not tool:
        pytest.skip("jitscope-merge is not built")
    merged = trace_path + ".json"
    r = subprocess.run([tool, "-q", "-o", merged, trace_path], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    return load_trace(merged)


@pytest.mark.parametrize("ext", [".json", ".pftrace"])
def test_flight_recorder_snapshot_from_python(out, capfd, ext):
    path = out("flight" + ext)
    assert jitscope.start(path, flight_recorder_bytes=64 * 1024, snapshot_min_interval_ms=0,
                          overflow="block", cupti="off")
    for i in range(5000 if ext == ".json" else 15000):  # a window's worth of each form and more
        with jitscope.span(f"w{i}"):
            pass
    snap = out("flight_snap" + ext)
    assert jitscope.snapshot(snap)
    stats = jitscope.stop()  # writes a snapshot still asked for
    assert stats.snapshots_written == 1
    assert not os.path.exists(path)  # a flight recorder writes no trace file
    if ext == ".pftrace":
        trace = merged_alone(snap)  # through jitscope-merge, as JSON
        last = 14999
    else:
        trace = load_trace(snap)
        last = 4999
    names = [int(s["name"][1:]) for s in spans(trace) if s["name"].startswith("w")]
    assert names[-1] == last and names[0] > 0
    assert names == list(range(names[0], last + 1))
    assert not jitscope.snapshot()  # no session: refused, said once
    assert "snapshot" in capfd.readouterr().err


def test_mark_ready_makes_a_later_compile_an_alarm(out, capfd):
    assert jitscope.start(out("ready.json"), flight_recorder_bytes=64 * 1024, cupti="off",
                          snapshot_min_interval_ms=0)
    with jitscope.compile_unit(frame="warm"):
        pass
    jitscope.mark_ready()
    with jitscope.phase("serve_request"):
        with jitscope.compile_unit(frame="late"):
            pass
        with jitscope.span(f"request {7}"):  # a plain span, its name made at run time
            with jitscope.compile_unit(frame="later"):
                pass
    stats = jitscope.stop()
    err = capfd.readouterr().err
    assert "compile while serving: unit [" in err and "(frame late)" in err
    assert "(frame late) opened after mark_ready() in serve_request" in err
    assert "(frame later) opened after mark_ready() in request 7" in err
    assert "(frame warm)" not in err
    assert stats.snapshots_written in (1, 2)  # two requests in one flusher cycle are one file


def test_a_cache_miss_storm_from_python_is_said_once(out, capfd):
    assert jitscope.start(out("storm.json"), cupti="off", snapshot_miss_storm=3,
                          snapshot_miss_storm_window_ms=60_000)
    for i in range(5):  # one storm at the third miss; the two after are not a new one
        with jitscope.compile_unit(frame=f"shape{i}") as unit:
            unit.cache_miss("kernels", f"key{i}")
    jitscope.stop()
    err = capfd.readouterr().err
    assert err.count("jitscope: cache-miss storm: 3 cache misses in ") == 1, err
    assert "(key 'key2'), in unit [" in err and "(frame shape2)" in err
