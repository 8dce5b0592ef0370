"""The run core against the asyncio floor (issue 27 part 1), every figure a ratio to a floor
measured in the same run.

Run: python bench/bench_core_floor.py [--quick] [--passes 5]

Floors, measured first and again before each section (the smaller is kept; the machine is shared):

- ``create_task + await``: one ``asyncio.create_task`` of a no-op coroutine, awaited, per task;
- ``queue round trip``: an ``asyncio.Queue`` request/response echo through a second task.

Rows (a warm-up, then the median of ``--passes`` passes; whole runs, setup and teardown included):

1. Per task, linear plan of no-op tasks, N = 1,000 / 10,000 / 100,000: no sink (target 2.5x the
   create_task floor), InMemorySink (3x), SQLitePersistenceSink with its default batched commits (4x);
   "flat" means the ratio does not grow with N.
2. Fan-out (ParallelDAGExecutor, 1 -> N-2 -> 1, InMemorySink): per task at N = 10,000 over per task
   at N = 100 (target 1.3x).
3. STATUS_QUERY send -> ack p50 while a task runs, over the queue round trip p50 (target 2.5x).
4. APPROVE -> the agent holding the tool's result p50, over the queue round trip p50 (target 4x).

Beside each per-task row: the time the garbage collector held the process during those passes
(gc.callbacks), per task. Nothing passes or fails: the targets are printed beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_control_plane import ROWS, control_round_trips, fan, linear  # noqa: E402
from bench_runtime import pct, queue_floor  # noqa: E402

from goldfive import events  # noqa: E402
from goldfive.adapters.callable import CallableAdapter  # noqa: E402
from goldfive.control import ControlChannel, ControlKind, ControlMessage  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.run.user_tools import UserTool  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.sinks import InMemorySink  # noqa: E402
from goldfive.types import Goal, Session, Task  # noqa: E402

TARGETS = {"no sink": 2.5, "InMemorySink": 3.0, "SQLite": 4.0, "fan-out": 1.3, "status": 2.5, "approve": 4.0}


async def _nothing() -> None:
    return None


async def create_task_floor_us(n: int = 10_000, passes: int = 5) -> float:
    """Microseconds per ``create_task`` + ``await`` of a no-op coroutine (median of passes)."""

    async def once() -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            await asyncio.create_task(_nothing())
        return (time.perf_counter() - t0) / n * 1e6

    await once()
    return statistics.median([await once() for _ in range(passes)])


async def queue_floor_p50_us(samples: int = 1000, passes: int = 5) -> float:
    await queue_floor(samples // 10)
    return statistics.median([pct(await queue_floor(samples), 50) for _ in range(passes)]) * 1e6


async def approve_round_trips(samples: int) -> list[float]:
    """APPROVE sent -> the agent has the approved tool's result in hand (its ``await`` returned)."""
    held: asyncio.Queue[float] = asyncio.Queue()

    def publish(n: int) -> dict[str, Any]:
        return {"ok": True}

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for i in range(samples):  # distinct arguments: the same call repeated is a looping-tool drift that pauses the run
            await tools["publish"](n=i)
            held.put_nowait(time.perf_counter())
        return "ok"

    ch, sink = ControlChannel(), InMemorySink()
    adapter = CallableAdapter(agent, tools=[UserTool(publish, requires_approval=True)])
    runner = Runner(agent=adapter, planner=StaticPlanner(linear(1)), sinks=[sink], control=ch)
    run = asyncio.create_task(runner.run([Goal("g1", "bench")]))
    lat = []
    sub = sink.subscribe()
    async for ev in sub:
        if isinstance(ev, events.Event) and ev.WhichOneof("payload") == "approval_requested":
            t0 = time.perf_counter()
            ch.send_nowait(ControlMessage(ControlKind.APPROVE, payload={"target_id": ev.approval_requested.target_id}))
            lat.append(await held.get() - t0)
            if len(lat) == samples:
                break
    sub.close()
    await run
    ch.close()
    await runner.close()
    return lat


class GcMeter:
    """Time the garbage collector held this process (gc.callbacks), to split a run's cost."""

    def __init__(self) -> None:
        self.total = 0.0
        self.count = 0
        self._t = 0.0
        gc.callbacks.append(self._cb)

    def _cb(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._t
            self.count += 1


GC = GcMeter()


async def per_task_gc_us(n: int, shape: Any, make: Any, passes: int) -> tuple[float, float]:
    """bench_control_plane's ``per_task_us`` (whole run, a warm-up then the median of passes)
    and, in the same passes, the collector's time per task (its explicit collection before
    each pass left out)."""
    plan = shape(n)

    async def once() -> tuple[float, float]:
        runner = make(plan)
        gc.collect()
        g0 = GC.total
        t0 = time.perf_counter()
        out = await runner.run([Goal("g1", "bench")])
        dt = time.perf_counter() - t0
        g = GC.total - g0
        await runner.close()
        if runner.control is not None:
            runner.control.close()
        assert out.success, out.reason
        return dt / n * 1e6, g / n * 1e6

    await once()  # warm-up
    results = [await once() for _ in range(passes)]
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


def row(name: str, value: str, ratio: float, target: float, note: str = "") -> None:
    mark = "met" if ratio <= target else "MISSED"
    print(f"   {name:<46} {value:>22}  {ratio:6.2f}x   target <= {target}x  {mark:<6}  {note}")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="N = 1,000 and 10,000 only")
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    passes = args.passes
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    t_start = time.perf_counter()
    gc.collect()
    ct = await create_task_floor_us(passes=passes)
    qf = await queue_floor_p50_us(passes=passes)
    print(f"Python {sys.version.split()[0]}; asyncio.eager_task_factory: "
          f"{'available' if hasattr(asyncio, 'eager_task_factory') else 'not available (3.12+)'}")
    print(f"floors: create_task + await {ct:6.2f} us   asyncio.Queue round trip p50 {qf:6.2f} us")

    print(f"1. per task, linear plan, no-op agent (median of {passes} passes after a warm-up), over the create_task floor")
    rows = {name: (shape, make) for name, shape, make in ROWS}
    for name in ("no sink", "InMemorySink", "SQLite"):
        shape, make = rows[name]
        for n in sizes:
            us, gc_us = await per_task_gc_us(n, shape, make, passes if n <= 10_000 else 3)
            ct = min(ct, await create_task_floor_us(passes=3))
            row(f"{name}, N={n:,}", f"{us:8.2f} us/task", us / ct, TARGETS[name], f"collector {gc_us:5.2f} us/task")

    print("2. fan-out, ParallelDAG, InMemorySink: per task at N=10,000 over per task at N=100")
    _, make = rows["fan-out, ParallelDAG, InMemorySink"]
    small, small_gc = await per_task_gc_us(100, fan, make, passes * 4)
    big, big_gc = await per_task_gc_us(10_000, fan, make, passes)
    print(f"   N=100 {small:8.2f} us/task ({small / ct:5.2f}x create_task, collector {small_gc:.2f})   "
          f"N=10,000 {big:8.2f} us/task ({big / ct:5.2f}x, collector {big_gc:.2f})")
    print(f"   without the collector's time: N=10,000 / N=100 = {(big - big_gc) / (small - small_gc):.2f}x")
    row("fan-out N=10,000 / N=100", f"{big:8.2f} / {small:.2f} us", big / small, TARGETS["fan-out"])
    # The same after goldfive serve's collector tuning (gc.freeze() + a young threshold of
    # 20,000), which the library never applies to a host process: what a process-level lever buys.
    from goldfive.remote.gc_tuning import restore, tune_for_serving

    saved = tune_for_serving()
    try:
        small_t, small_tgc = await per_task_gc_us(100, fan, make, passes * 4)
        big_t, big_tgc = await per_task_gc_us(10_000, fan, make, passes)
        lin_t, lin_tgc = await per_task_gc_us(10_000, *rows["no sink"], passes)
    finally:
        restore(saved)
    print(f"   with the collector tuned as goldfive serve tunes it: N=100 {small_t:8.2f} us/task (collector {small_tgc:.2f})   "
          f"N=10,000 {big_t:8.2f} us/task (collector {big_tgc:.2f})")
    row("fan-out N=10,000 / N=100, collector tuned", f"{big_t:8.2f} / {small_t:.2f} us", big_t / small_t, TARGETS["fan-out"])
    row("no sink, N=10,000, collector tuned", f"{lin_t:8.2f} us/task", lin_t / ct, TARGETS["no sink"], f"collector {lin_tgc:5.2f} us/task")

    print("3/4. round trips, p50 over the asyncio.Queue round trip p50 (median of passes)")
    for label, fn, key in (("STATUS_QUERY send -> ack", control_round_trips, "status"),
                           ("APPROVE -> agent holds the tool's result", approve_round_trips, "approve")):
        await fn(100)
        p50s: list[float] = []
        for _ in range(passes):
            p50s.append(pct(await fn(1000), 50) * 1e6)
            qf = min(qf, await queue_floor_p50_us(passes=1))
        p50 = statistics.median(p50s)
        row(label, f"p50 {p50:7.2f} us", p50 / qf, TARGETS[key])
    print(f"   (queue floor p50 used: {qf:.2f} us)")
    print(f"(total {time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    asyncio.run(main())
