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

Every ratio is printed twice: in wall time (``perf_counter``) and in this process's CPU time
(``process_time``, rows and floors alike), which other work on a shared machine inflates less.
``--calls`` adds Python function calls per task and per round trip (cProfile; independent of
the machine's load) and the functions with the most own time.
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


async def create_task_floor_us(n: int = 10_000, passes: int = 5) -> tuple[float, float]:
    """Microseconds per ``create_task`` + ``await`` of a no-op coroutine (median of passes):
    wall and CPU time."""

    async def once() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            await asyncio.create_task(_nothing())
        return (time.perf_counter() - t0) / n * 1e6, (time.process_time() - c0) / n * 1e6

    await once()
    results = [await once() for _ in range(passes)]
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


async def queue_floor_p50_us(samples: int = 1000, passes: int = 5) -> tuple[float, float]:
    """The ``asyncio.Queue`` round trip's p50 (median of passes), wall and CPU time."""
    await queue_floor(samples // 10)
    wall = statistics.median([pct(await queue_floor(samples), 50) for _ in range(passes)]) * 1e6
    cpu = statistics.median([pct(await cpu_clock(queue_floor, samples), 50) for _ in range(passes)]) * 1e6
    return wall, cpu


async def cpu_clock(fn: Any, samples: int) -> list[float]:
    """``fn(samples)`` with its samples timed in this process's CPU time: the round-trip
    functions read ``time.perf_counter``, which is swapped for ``time.process_time`` while
    they run (the whole event loop is this process's; nothing else reads it meanwhile)."""
    wall = time.perf_counter
    time.perf_counter = time.process_time  # type: ignore[assignment]
    try:
        return list(await fn(samples))
    finally:
        time.perf_counter = wall  # type: ignore[assignment]


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


async def per_task_gc_us(n: int, shape: Any, make: Any, passes: int) -> tuple[float, float, float]:
    """bench_control_plane's ``per_task_us`` (whole run, a warm-up then the median of passes)
    and, in the same passes, the collector's time per task (its explicit collection before
    each pass left out) and the CPU time per task."""
    plan = shape(n)

    async def once() -> tuple[float, float, float]:
        runner = make(plan)
        gc.collect()
        g0 = GC.total
        t0, c0 = time.perf_counter(), time.process_time()
        out = await runner.run([Goal("g1", "bench")])
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        g = GC.total - g0
        await runner.close()
        if runner.control is not None:
            runner.control.close()
        assert out.success, out.reason
        return dt / n * 1e6, g / n * 1e6, dc / n * 1e6

    await once()  # warm-up
    results = [await once() for _ in range(passes)]
    return tuple(statistics.median(r[i] for r in results) for i in range(3))  # type: ignore[return-value]


def row(name: str, value: str, ratio: float, target: float, note: str = "", cpu: float | None = None) -> None:
    mark = "met" if ratio <= target else "MISSED"
    cpu_s = f"CPU {cpu:6.2f}x" if cpu is not None else " " * 11
    print(f"   {name:<46} {value:>22}  {ratio:6.2f}x  {cpu_s}  target <= {target}x  {mark:<6}  {note}")


async def calls_and_profile(label: str, per: int, fn: Any, top: int) -> None:
    """Python function calls per unit of ``await fn()`` under cProfile, and the ``top``
    functions by own time."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    await fn()
    prof.disable()
    st = pstats.Stats(prof)
    print(f"   {label}: {st.total_calls / per:7.1f} Python calls each")  # type: ignore[attr-defined]
    if top:
        rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:top]  # type: ignore[attr-defined]
        for (file, line, name), (_, calls, own, _cum, _) in rows:
            print(f"      {own / per * 1e6:6.2f} us own  {calls / per:5.1f} calls  {Path(file).name}:{line} {name}")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="N = 1,000 and 10,000 only")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--calls", action="store_true", help="Python calls per task / round trip, with the top functions")
    ap.add_argument("--top", type=int, default=0, help="with --calls: the N functions with the most own time")
    ap.add_argument("--only-calls", action="store_true", help="--calls alone, no timings")
    args = ap.parse_args()
    passes = args.passes
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    if args.only_calls:
        await calls_section({name: (shape, make) for name, shape, make in ROWS}, args.top)
        return
    t_start = time.perf_counter()
    gc.collect()
    ct, ct_cpu = await create_task_floor_us(passes=passes)
    qf, qf_cpu = await queue_floor_p50_us(passes=passes)
    print(f"load average at the start: {open('/proc/loadavg').read().split()[:3]}" if Path('/proc/loadavg').exists() else "")
    print(f"Python {sys.version.split()[0]}; asyncio.eager_task_factory: "
          f"{'available' if hasattr(asyncio, 'eager_task_factory') else 'not available (3.12+)'}")
    print(f"floors: create_task + await {ct:6.2f} us (CPU {ct_cpu:5.2f})   asyncio.Queue round trip p50 {qf:6.2f} us (CPU {qf_cpu:5.2f})")

    print(f"1. per task, linear plan, no-op agent (median of {passes} passes after a warm-up), over the create_task floor")
    rows = {name: (shape, make) for name, shape, make in ROWS}
    for name in ("no sink", "InMemorySink", "SQLite"):
        shape, make = rows[name]
        for n in sizes:
            us, gc_us, cpu_us = await per_task_gc_us(n, shape, make, passes if n <= 10_000 else 3)
            ct2, ct2_cpu = await create_task_floor_us(passes=3)
            ct, ct_cpu = min(ct, ct2), min(ct_cpu, ct2_cpu)
            row(f"{name}, N={n:,}", f"{us:8.2f} us/task", us / ct, TARGETS[name], f"collector {gc_us:5.2f} us/task",
                cpu=cpu_us / ct_cpu)

    print("2. fan-out, ParallelDAG, InMemorySink: per task at N=10,000 over per task at N=100")
    _, make = rows["fan-out, ParallelDAG, InMemorySink"]
    small, small_gc, small_cpu = await per_task_gc_us(100, fan, make, passes * 4)
    big, big_gc, big_cpu = await per_task_gc_us(10_000, fan, make, passes)
    print(f"   N=100 {small:8.2f} us/task ({small / ct:5.2f}x create_task, collector {small_gc:.2f})   "
          f"N=10,000 {big:8.2f} us/task ({big / ct:5.2f}x, collector {big_gc:.2f})")
    print(f"   without the collector's time: N=10,000 / N=100 = {(big - big_gc) / (small - small_gc):.2f}x")
    row("fan-out N=10,000 / N=100", f"{big:8.2f} / {small:.2f} us", big / small, TARGETS["fan-out"], cpu=big_cpu / small_cpu)
    # The same after goldfive serve's collector tuning (gc.freeze() + a young threshold of
    # 20,000), which the library never applies to a host process: what a process-level lever buys.
    from goldfive.remote.gc_tuning import restore, tune_for_serving

    saved = tune_for_serving()
    try:
        small_t, small_tgc, small_tcpu = await per_task_gc_us(100, fan, make, passes * 4)
        big_t, big_tgc, big_tcpu = await per_task_gc_us(10_000, fan, make, passes)
        lin_t, lin_tgc, lin_tcpu = await per_task_gc_us(10_000, *rows["no sink"], passes)
    finally:
        restore(saved)
    print(f"   with the collector tuned as goldfive serve tunes it: N=100 {small_t:8.2f} us/task (collector {small_tgc:.2f})   "
          f"N=10,000 {big_t:8.2f} us/task (collector {big_tgc:.2f})")
    row("fan-out N=10,000 / N=100, collector tuned", f"{big_t:8.2f} / {small_t:.2f} us", big_t / small_t, TARGETS["fan-out"],
        cpu=big_tcpu / small_tcpu)
    row("no sink, N=10,000, collector tuned", f"{lin_t:8.2f} us/task", lin_t / ct, TARGETS["no sink"], f"collector {lin_tgc:5.2f} us/task",
        cpu=lin_tcpu / ct_cpu)

    print("3/4. round trips, p50 over the asyncio.Queue round trip p50 (median of passes)")
    for label, fn, key in (("STATUS_QUERY send -> ack", control_round_trips, "status"),
                           ("APPROVE -> agent holds the tool's result", approve_round_trips, "approve")):
        await fn(100)
        p50s: list[float] = []
        cpu50s: list[float] = []
        for _ in range(passes):
            p50s.append(pct(await fn(1000), 50) * 1e6)
            cpu50s.append(pct(await cpu_clock(fn, 1000), 50) * 1e6)
            qf2, qf2_cpu = await queue_floor_p50_us(passes=1)
            qf, qf_cpu = min(qf, qf2), min(qf_cpu, qf2_cpu)
        p50 = statistics.median(p50s)
        row(label, f"p50 {p50:7.2f} us", p50 / qf, TARGETS[key], f"CPU p50 {statistics.median(cpu50s):6.2f} us",
            cpu=statistics.median(cpu50s) / qf_cpu)
    print(f"   (queue floor p50 used: {qf:.2f} us, CPU {qf_cpu:.2f} us)")
    if args.calls:
        await calls_section(rows, args.top)
    print(f"(total {time.perf_counter() - t_start:.0f} s)")


async def calls_section(rows: dict[str, Any], top: int) -> None:
    print("calls (cProfile; the load on the machine does not change them)")
    n = 10_000

    def run_rows(name: str, shape: Any) -> Any:
        plan = shape(n)  # built outside the profile

        async def go() -> None:
            runner = rows[name][1](plan)
            out = await runner.run([Goal("g1", "bench")])
            await runner.close()
            assert out.success, out.reason
        return go

    for name in ("no sink", "InMemorySink"):
        await calls_and_profile(f"{name}, N={n:,}, per task", n, run_rows(name, rows[name][0]), top)
    await calls_and_profile(f"fan-out, N={n:,}, per task", n, run_rows("fan-out, ParallelDAG, InMemorySink", fan), top)

    async def status() -> None:
        await control_round_trips(1000)

    async def approve() -> None:
        await approve_round_trips(1000)

    await calls_and_profile("STATUS_QUERY round trip (1,000, run set-up included)", 1000, status, top)
    await calls_and_profile("APPROVE round trip (1,000, run set-up included)", 1000, approve, top)


if __name__ == "__main__":
    asyncio.run(main())
