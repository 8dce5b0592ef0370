"""Durable runs: what committing every state change costs, how fast a run resumes, how big a
recording is.

Run: python bench/bench_durable.py [--quick]

1. Per task, linear plan of no-op tasks, whole run, at N = 1,000 / 10,000 (and 30,000 without
   --quick): InMemorySink (the baseline), the batched SQLite sink, and the durable SQLite store
   (durability="normal": each state change committed before the run goes on; and "full",
   an fsync per commit). Median of PASSES passes after a warm-up; ratios to InMemorySink.
2. Resume: a 10,000-task run recorded with 5,000 tasks done, resumed in a fresh process: from
   the process start to the first new task started (the same process start without resuming,
   importing goldfive and opening the file, is the baseline).
3. Recording size per task (bytes of the SQLite file, WAL checkpointed, per task).

Targets (issue "Durable runs"): durable per task at most 40 us at N=10,000, flat in N; resume
to the first new task at most 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink, SQLitePersistenceSink
from goldfive.types import Goal, Plan, Session, Task, TaskEdge

PASSES = 5
TMP = Path(tempfile.mkdtemp(prefix="goldfive-bench-durable-"))


def linear(n: int) -> Plan:
    tasks = [Task(id=f"t{i}", title=f"task {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(f"t{i}", f"t{i + 1}") for i in range(n - 1)], id="p")


async def noop(task: Task, session: Session) -> str:
    return "ok"


def sink_for(kind: str) -> Any:
    if kind == "InMemorySink":
        return InMemorySink()
    path = TMP / f"{kind}-{time.monotonic_ns()}.sqlite"
    return SQLitePersistenceSink(path, durability={"SQLite batched": "batched", "durable normal": "normal", "durable full": "full"}[kind])


async def per_task_us(kind: str, n: int, passes: int) -> float:
    plan = linear(n)

    async def once() -> float:
        runner = Runner(agent=noop, planner=StaticPlanner(plan), sinks=[sink_for(kind)])
        gc.collect()
        t0 = time.perf_counter()
        out = await runner.run([Goal("g", "bench")])
        dt = time.perf_counter() - t0
        await runner.close()
        assert out.success
        return dt / n * 1e6

    await once()
    return statistics.median([await once() for _ in range(passes)])


async def section_per_task(sizes: list[int]) -> None:
    kinds = ["InMemorySink", "SQLite batched", "durable normal", "durable full"]
    print(f"1. per task, whole run, median of {PASSES} passes after a warm-up (us/task, x InMemorySink)")
    print("   " + f"{'':<18}" + "".join(f"{f'N={n:,}':>20}" for n in sizes))
    base: dict[int, float] = {}
    for kind in kinds:
        cells = []
        for n in sizes:
            passes = PASSES if n <= 10_000 else 3
            if kind == "durable full" and n > 10_000:
                cells.append(f"{'(skipped)':>20}")
                continue
            us = await per_task_us(kind, n, passes)
            base.setdefault(n, us)
            cells.append(f"{us:>11.1f} {us / base[n]:>6.2f}x ")
        print("   " + f"{kind:<18}" + "".join(cells))
    print("   target: durable normal <= 40 us/task at N=10,000, flat in N")


RESUME_CHILD = r"""
import asyncio, sys, time
t0 = float(sys.argv[3])
from goldfive.runner import Runner
from goldfive.planners.static import StaticPlanner
from goldfive.types import Plan, Task, TaskEdge
n = 10_000
plan = Plan([Task(f"t{i}", f"task {i}") for i in range(n)], [TaskEdge(f"t{i}", f"t{i+1}") for i in range(n - 1)], id="p")
first = []
async def agent(task, session):
    if not first:
        first.append(time.time())
    return "ok"
async def main():
    if sys.argv[2] == "baseline":
        import sqlite3
        sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM events").fetchone()
        print(time.time() - t0)
        return
    runner = Runner.resuming("resume-bench", store=sys.argv[1], agent=agent, planner=StaticPlanner(plan))
    task = asyncio.ensure_future(runner.run())
    while not first:
        await asyncio.sleep(0)
    print(first[0] - t0)
    task.cancel()
asyncio.run(main())
"""


async def build_half_done(path: Path, n: int = 10_000, done: int = 5_000) -> None:
    plan = linear(n)
    stop = asyncio.Event()

    async def agent(task: Task, session: Session) -> str:
        if task.id == f"t{done}":
            stop.set()
            await asyncio.Event().wait()  # held: the run is cut here
        return "ok"

    runner = Runner(agent=agent, planner=StaticPlanner(plan), run_id="resume-bench", sinks=[SQLitePersistenceSink(path, durability="normal")])
    task = asyncio.ensure_future(runner.run("bench"))
    await stop.wait()
    copy = path.with_suffix(".cut.sqlite")
    live = sqlite3.connect(path)
    out = sqlite3.connect(copy)
    live.backup(out)  # what a kill leaves: the committed rows
    live.close()
    out.execute("DELETE FROM run_locks")  # its holder (this process, standing in for the killed one) is gone
    out.commit()
    out.close()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await runner.close()
    os.replace(copy, path)


def child_seconds(path: Path, mode: str) -> float:
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", RESUME_CHILD, str(path), mode, repr(t0)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


async def section_resume() -> None:
    print("2. resume a 10,000-task run with 5,000 done: process start -> first new task started")
    results, bases = [], []
    for i in range(3):
        path = TMP / f"half-{i}.sqlite"
        await build_half_done(path)
        bases.append(child_seconds(path, "baseline"))
        results.append(child_seconds(path, "resume"))
    r, b = statistics.median(results), statistics.median(bases)
    print(f"   resume {r * 1000:7.0f} ms   baseline (start Python, import, open the file) {b * 1000:5.0f} ms   -> {r / b:4.1f}x   target <= 1000 ms")


async def section_size() -> None:
    path = TMP / "size.sqlite"
    n = 10_000
    runner = Runner(agent=noop, planner=StaticPlanner(linear(n)), sinks=[SQLitePersistenceSink(path, durability="normal")])
    await runner.run("size")
    await runner.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    print(f"3. recording size: {path.stat().st_size / n:,.0f} bytes per task ({n:,} no-op tasks, {path.stat().st_size / 1e6:.1f} MB)")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    await section_per_task([1_000, 10_000] if args.quick else [1_000, 10_000, 30_000])
    await section_resume()
    await section_size()
    print(f"(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    asyncio.run(main())
