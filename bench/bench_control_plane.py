"""The control plane's speed (issue "One home per run"): per-task cost, control round trips.

Run: python bench/bench_control_plane.py [--quick]

Every figure is the median of PASSES passes after a warm-up pass, printed next to a floor
measured in the same run, so one burst of load on this shared machine can neither hide nor
fake a result. Nothing here passes or fails: the targets are printed beside the figures.

1. Per task, linear plan of no-op tasks, whole run included (setup, events, teardown), at
   N = 1,000 / 10,000 / 100,000: no sink, InMemorySink, SQLite, JSONL, InMemorySink with a
   ControlChannel bound (how the TUI runs), and the ParallelDAGExecutor on a fan-out plan
   (1 -> N-2 -> 1). Floor: awaiting the same agent N times in a loop.
2. Control send -> ack while a task runs (STATUS_QUERY through ``ControlChannel.request``),
   p50 / p99, against an asyncio.Queue round trip through a second task.
3. APPROVE -> tool result: a UserTool behind an approval; from the APPROVE sent to the tool's
   body running, p50 / p99, against the same queue floor.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from goldfive import events
from goldfive.adapters.callable import CallableAdapter
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.run.user_tools import UserTool
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink, JSONLPersistenceSink, SQLitePersistenceSink
from goldfive.types import Goal, Plan, Session, Task, TaskEdge

from bench_runtime import pct, queue_floor  # the same floor and percentile as bench_runtime

PASSES = 5
TARGETS_US = {"no sink": 12, "InMemorySink": 15, "SQLite": 25, "JSONL": 30, "InMemorySink + channel": 20}


def linear(n: int) -> Plan:
    tasks = [Task(id=f"t{i}", title=f"task {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(f"t{i}", f"t{i + 1}") for i in range(n - 1)], id="p")


def fan(n: int) -> Plan:
    mid = [f"m{i}" for i in range(n - 2)]
    tasks = [Task("src", "src"), *(Task(m, m) for m in mid), Task("sink", "sink")]
    edges = [TaskEdge("src", m) for m in mid] + [TaskEdge(m, "sink") for m in mid]
    return Plan(tasks=tasks, edges=edges, id="f")


async def noop(task: Task, session: Session) -> str:
    return "ok"


def median_of(samples: list[float]) -> float:
    return statistics.median(samples)


# -- 1. per task ------------------------------------------------------------------------------

_tmp = tempfile.TemporaryDirectory(prefix="goldfive-bench-")
Make = Callable[[Plan], Runner]


def _path(ext: str) -> Path:
    return Path(_tmp.name) / f"run-{time.monotonic_ns()}.{ext}"


ROWS: list[tuple[str, Callable[[int], Plan], Make]] = [
    ("no sink", linear, lambda p: Runner(agent=noop, planner=StaticPlanner(p), executor=SequentialExecutor())),
    ("InMemorySink", linear, lambda p: Runner(agent=noop, planner=StaticPlanner(p), sinks=[InMemorySink()])),
    ("SQLite", linear, lambda p: Runner(agent=noop, planner=StaticPlanner(p), sinks=[SQLitePersistenceSink(_path("db"))])),
    ("JSONL", linear, lambda p: Runner(agent=noop, planner=StaticPlanner(p), sinks=[JSONLPersistenceSink(_path("jsonl"))])),
    (
        "InMemorySink + channel",
        linear,
        lambda p: Runner(agent=noop, planner=StaticPlanner(p), sinks=[InMemorySink()], control=ControlChannel()),
    ),
    (
        "fan-out, ParallelDAG, InMemorySink",
        fan,
        lambda p: Runner(agent=noop, planner=StaticPlanner(p), executor=ParallelDAGExecutor(), sinks=[InMemorySink()]),
    ),
    (
        "fan-out, ParallelDAG, + channel",
        fan,
        lambda p: Runner(
            agent=noop, planner=StaticPlanner(p), executor=ParallelDAGExecutor(), sinks=[InMemorySink()], control=ControlChannel()
        ),
    ),
]


async def floor_us(n: int) -> float:
    session, tasks = Session(run_id="floor"), linear(n).tasks

    async def once() -> float:
        t0 = time.perf_counter()
        for t in tasks:
            await noop(t, session)
        return (time.perf_counter() - t0) / n * 1e6

    await once()
    return median_of([await once() for _ in range(PASSES)])


async def per_task_us(n: int, shape: Callable[[int], Plan], make: Make, passes: int) -> float:
    plan = shape(n)

    async def once() -> float:
        runner = make(plan)
        gc.collect()
        t0 = time.perf_counter()
        out = await runner.run([Goal("g1", "bench")])
        dt = time.perf_counter() - t0
        await runner.close()
        if runner.control is not None:
            runner.control.close()
        assert out.success, out.reason
        return dt / n * 1e6

    await once()  # warm-up
    return median_of([await once() for _ in range(passes)])


async def section_per_task(sizes: list[int]) -> None:
    print(f"1. per task, whole run, median of {PASSES} passes after a warm-up (us/task; x = ratio to the floor)")
    floors = {n: await floor_us(n) for n in sizes}
    print("   " + f"{'':<38}" + "".join(f"{f'N={n:,}':>22}" for n in sizes) + "   target")
    print("   " + f"{'floor: await the agent N times':<38}" + "".join(f"{floors[n]:>13.2f}{'':>9}" for n in sizes))
    for name, shape, make in ROWS:
        cells = []
        for n in sizes:
            passes = PASSES if n <= 10_000 else 3
            us = await per_task_us(n, shape, make, passes)
            cells.append(f"{us:>13.2f} {us / floors[n]:>6.0f}x ")
        target = TARGETS_US.get(name) or (TARGETS_US["InMemorySink + channel"] if "channel" in name else TARGETS_US["InMemorySink"])
        print("   " + f"{name:<38}" + "".join(cells) + f"   <= {target}")


# -- 2 and 3. round trips ---------------------------------------------------------------------


async def control_round_trips(samples: int) -> list[float]:
    gate, started = asyncio.Event(), asyncio.Event()

    async def held(task: Task, session: Session) -> str:
        started.set()
        await gate.wait()
        return "ok"

    ch = ControlChannel()
    runner = Runner(agent=held, planner=StaticPlanner(linear(1)), sinks=[InMemorySink()], control=ch)
    run = asyncio.create_task(runner.run([Goal("g1", "bench")]))
    lat = []
    try:
        await started.wait()
        for _ in range(samples):
            t0 = time.perf_counter()
            await ch.request(ControlMessage(ControlKind.STATUS_QUERY))
            lat.append(time.perf_counter() - t0)
        gate.set()
        await run
    finally:
        await _end(run, ch, runner)
    return lat


async def _end(run: asyncio.Task[Any], ch: ControlChannel, runner: Runner) -> None:
    """Leave no task behind, even when a measurement failed: the run (cancelled if it still
    runs), then the runner's late-control responder (``answer_after_end``, which its close
    cancels and awaits) and the channel."""
    if not run.done():
        run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    try:
        await runner.close()  # cancels and awaits the responder, closes the channel
    finally:
        ch.close()  # idempotent: closed even if the runner's close failed


async def approve_round_trips(samples: int) -> list[float]:
    ran: asyncio.Queue[float] = asyncio.Queue()

    def publish(n: int) -> dict[str, Any]:
        ran.put_nowait(time.perf_counter())
        return {"ok": True}

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for i in range(samples):  # distinct arguments: the same call repeated is a looping-tool drift that pauses the run
            await tools["publish"](n=i)
        return "ok"

    ch, sink = ControlChannel(), InMemorySink()
    adapter = CallableAdapter(agent, tools=[UserTool(publish, requires_approval=True)])
    runner = Runner(agent=adapter, planner=StaticPlanner(linear(1)), sinks=[sink], control=ch)
    run = asyncio.create_task(runner.run([Goal("g1", "bench")]))
    lat = []
    sub = sink.subscribe()
    try:
        async for ev in sub:
            if isinstance(ev, events.Event) and ev.WhichOneof("payload") == "approval_requested":
                t0 = time.perf_counter()
                ch.send_nowait(ControlMessage(ControlKind.APPROVE, payload={"target_id": ev.approval_requested.target_id}))
                lat.append(await ran.get() - t0)
                if len(lat) == samples:
                    break
        sub.close()
        await run
    finally:
        sub.close()
        await _end(run, ch, runner)
    return lat


async def section_round_trips(samples: int) -> None:
    rows = [
        ("2. control send -> ack while a task runs", control_round_trips, "p50 <= 15 us, p99 <= 50 us"),
        ("3. APPROVE -> the tool runs", approve_round_trips, "p50 <= 25 us"),
    ]
    for title, fn, target in rows:
        await fn(samples // 10)  # warm-up
        p50s, p99s, f50s, f99s = [], [], [], []
        for _ in range(PASSES):
            lat, floor = await fn(samples), await queue_floor(samples)
            p50s.append(pct(lat, 50))
            p99s.append(pct(lat, 99))
            f50s.append(pct(floor, 50))
            f99s.append(pct(floor, 99))
        p50, p99, f50, f99 = (median_of(x) * 1e6 for x in (p50s, p99s, f50s, f99s))
        print(f"{title} ({samples} per pass, median of {PASSES} passes)")
        print(f"   p50 {p50:7.1f} us  p99 {p99:7.1f} us   floor (asyncio.Queue round trip) p50 {f50:5.1f} us  p99 {f99:5.1f} us"
              f"   -> p50 {p50 / f50:4.1f}x  p99 {p99 / f99:4.1f}x   target {target}")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="N = 1,000 and 10,000 only")
    args = ap.parse_args()
    t0 = time.perf_counter()
    await section_per_task([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    await section_round_trips(1000)
    print(f"(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    asyncio.run(main())
