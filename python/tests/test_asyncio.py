"""asyncio: spans open across an await, in tasks interleaved on one thread,
are slices on their own task's track; they neither end nor mislabel the
other tasks' spans, nor the thread's own."""

import asyncio

import jitscope
from conftest import load_trace, spans

TASKS = 4
ROUNDS = 5


def async_pairs(trace):
    """(name, id, begin us, end us) of every b/e pair, paired per id in
    stack order, as a viewer nests them."""
    open_by_id, out = {}, []
    for e in sorted((e for e in trace if e.get("ph") in ("b", "e")),
                    key=lambda e: (e["ts"], e["ph"] == "b")):
        stack = open_by_id.setdefault(e["id"], [])
        if e["ph"] == "b":
            stack.append(e)
        else:
            b = stack.pop()
            assert b["name"] == e["name"], (b, e)
            out.append((b["name"], b["id"], b["ts"], e["ts"]))
    assert all(not s for s in open_by_id.values())
    return out


async def worker(i, order):
    async with jitscope.span(f"task{i}"):
        for r in range(ROUNDS):
            async with jitscope.span("round", r=r) as s:
                order.append(i)
                s.arg("task", r * 10)
                await asyncio.sleep(0)  # every other task runs here


def test_interleaved_tasks_each_get_a_track_of_their_own(out):
    path = out("asyncio.json")
    assert jitscope.start(path)
    order = []

    async def main():
        await asyncio.gather(*(worker(i, order) for i in range(TASKS)))

    with jitscope.span("thread_span"):
        asyncio.run(main())
    stats = jitscope.stop()
    # They did interleave: no task ran all its rounds in a row.
    assert order[:TASKS] == list(range(TASKS))
    trace = load_trace(path)
    pairs = async_pairs(trace)
    tasks = {name: (tid, b, e) for name, tid, b, e in pairs if name.startswith("task")}
    assert sorted(tasks) == [f"task{i}" for i in range(TASKS)]
    assert len({tid for tid, _, _ in tasks.values()}) == TASKS  # one track per task
    rounds = [(tid, b, e) for name, tid, b, e in pairs if name == "round"]
    assert len(rounds) == TASKS * ROUNDS
    # Each round's args, on its slice's begin: its keyword arg and arg().
    round_args = [e["args"] for e in trace if e.get("ph") == "b" and e["name"] == "round"]
    assert sorted(a["r"] for a in round_args) == sorted(list(range(ROUNDS)) * TASKS)
    assert all(a["task"] == a["r"] * 10 for a in round_args)
    for tid, b, e in rounds:  # each round inside its own task's slice
        (task,) = [t for t in tasks.values() if t[0] == tid]
        assert task[1] <= b <= e <= task[2]
    assert all(e["cat"] == "jitscope.async" for e in trace if e.get("ph") in ("b", "e"))
    # The thread's own span is whole and nothing ended out of order.
    (thread_span,) = spans(trace, "thread_span")
    assert "incomplete" not in thread_span.get("args", {})
    assert stats.spans_ended_out_of_order == 0
    assert stats.spans_incomplete == 0
    assert stats.events_dropped == 0


def test_a_decorated_coroutine_is_a_slice_per_call(out):
    @jitscope.span()
    async def stage(n):
        await asyncio.sleep(0)
        return n * 2

    path = out("async_decorated.json")
    assert jitscope.start(path)

    async def main():
        return await asyncio.gather(stage(1), stage(2), stage(3))

    assert asyncio.run(main()) == [2, 4, 6]
    assert asyncio.iscoroutinefunction(stage)
    assert stage.__name__ == "stage"
    jitscope.stop()
    names = [name for name, _, _, _ in async_pairs(load_trace(path))]
    qualname = "test_a_decorated_coroutine_is_a_slice_per_call.<locals>.stage"
    assert names.count(qualname) == 3


def test_an_exception_leaves_the_async_span_and_goes_on(out):
    path = out("async_raise.json")
    assert jitscope.start(path)

    async def failing():
        async with jitscope.span("failing"):
            await asyncio.sleep(0)
            raise KeyError("k")

    try:
        asyncio.run(failing())
    except KeyError as e:
        assert e.args == ("k",)
    else:
        raise AssertionError("the exception was swallowed")
    jitscope.stop()
    trace = load_trace(path)
    assert [p[0] for p in async_pairs(trace)] == ["failing"]
    (begin,) = [e for e in trace if e.get("ph") == "b"]
    assert begin["args"] == {"failed": True, "fail_type": "KeyError", "fail_reason": "'k'"}


def test_an_async_span_in_a_compile_unit_carries_its_compile_id(out):
    path = out("async_unit.json")
    assert jitscope.start(path)

    async def compile_kernel():
        async with jitscope.span("codegen", stage="cg"):
            await asyncio.sleep(0)

    with jitscope.compile_unit("kernel") as unit:
        compile_id = unit.compile_id
        asyncio.run(compile_kernel())
    asyncio.run(compile_kernel())  # outside any unit
    jitscope.stop()
    begins = [e for e in load_trace(path) if e.get("ph") == "b"]
    assert [b["args"].get("compile_id") for b in begins] == [compile_id, None], begins
    assert all(b["args"]["stage"] == "cg" for b in begins)


def test_async_with_and_no_session_records_nothing(out):
    async def main():
        async with jitscope.span("nothing") as s:
            assert isinstance(s, jitscope.span)
            await asyncio.sleep(0)

    asyncio.run(main())
    assert not jitscope.active()
