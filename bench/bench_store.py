"""The PostgreSQL store against SQLite: ``python bench/bench_store.py``.

Starts a throwaway PostgreSQL server (tests/pg_server.py: Debian's binaries, loopback, a
temporary directory) and measures, a warm-up then the median of ``--passes`` passes:
- append rate: 50,000 events written in batches of 500 (SQLite sink vs PostgresStore, and
  through a PostgresSink: emit, then close), and the PostgresSink's Python calls per event;
- per-task cost of a real run (Runner, 200 tasks, a trivial agent) with no sink (the
  baseline), recording to SQLite, and recording to PostgreSQL.
Both servers run with their defaults for durability except that the test server has
fsync off (like SQLite's "batched" mode, the figures are CPU and protocol cost, not disk).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goldfive import Runner  # noqa: E402
from goldfive import events as E  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.sinks.sqlite import SQLitePersistenceSink  # noqa: E402
from goldfive.store.postgres import PostgresSink, PostgresStore  # noqa: E402
from goldfive.types import Plan, Session, Task  # noqa: E402
from tests.pg_server import start_postgres  # noqa: E402

EVENTS, TASKS = 50_000, 200


def _events(run_id: str) -> list:  # type: ignore[type-arg]
    s = Session(run_id=run_id)
    return [E.run_started(s, goal_summary="bench")] + [E.task_progress(s, "t", detail=f"step {i}") for i in range(EVENTS - 1)]


async def append_sqlite(tmp: Path, i: int) -> float:
    evs = _events(f"a-sqlite-{i}")
    sink = SQLitePersistenceSink(str(tmp / f"append-{i}.sqlite"), batch_size=500)
    t = time.perf_counter()
    for ev in evs:
        await sink.emit(ev)
    await sink.close()
    return time.perf_counter() - t


async def append_pg(store: PostgresStore, i: int) -> float:
    evs = _events(f"a-pg-{i}")
    t = time.perf_counter()
    for k in range(0, len(evs), 500):
        await store.append(evs[k : k + 500])
    return time.perf_counter() - t


async def sink_pg(store: PostgresStore, i: int) -> float:
    """The same events through a PostgresSink (emit, batches of 500, close): the append path a
    hub on PostgreSQL takes, with the sink's own per-event work."""
    evs = _events(f"s-pg-{i}")
    sink = PostgresSink(store, batch_size=500, max_pending=None)
    t = time.perf_counter()
    for ev in evs:
        await sink.emit(ev)
    await sink.close()
    return time.perf_counter() - t


async def sink_calls(store: PostgresStore) -> float:
    """Python calls per event emitted into a PostgresSink (cProfile; the difference of two
    sizes, so set-up and close cancel out); the load does not change it."""
    import cProfile
    import pstats

    async def calls(n: int, tag: str) -> int:
        s = Session(run_id=f"c-pg-{tag}-{n}")
        evs = [E.task_progress(s, "t", detail=f"step {k}") for k in range(n)]
        sink = PostgresSink(store, batch_size=500, max_pending=None)
        prof = cProfile.Profile()
        prof.enable()
        for ev in evs:
            await sink.emit(ev)
        await sink.close()
        prof.disable()
        return int(pstats.Stats(prof).total_calls)  # type: ignore[attr-defined]

    await calls(1000, "warm")
    return (await calls(6000, "big") - await calls(1000, "small")) / 5000


async def run_tasks(sink: object | None) -> float:
    plan = Plan(tasks=[Task(id=f"t{i}", title=f"task {i}") for i in range(TASKS)])

    async def agent(task, session):  # type: ignore[no-untyped-def]
        return "ok"

    runner = Runner(agent=agent, planner=StaticPlanner(plan), sinks=[sink] if sink is not None else [])
    t = time.perf_counter()
    await runner.run("bench")
    if sink is not None:
        await sink.close()  # type: ignore[attr-defined]
    return time.perf_counter() - t


def median_of(passes: int, fn) -> float:  # type: ignore[no-untyped-def]
    asyncio.run(fn(-1))  # warm-up
    return statistics.median(asyncio.run(fn(i)) for i in range(passes))


def measure(server: object, passes: int, only_append: bool = False) -> None:
    """Print the append rates and per-task costs against ``server`` (a tests.pg_server.PgServer)."""
    dsn = server.dsn  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)

        async def pg_append(i: int) -> float:
            store = await PostgresStore.open(dsn)
            try:
                return await append_pg(store, i)
            finally:
                await store.close()

        async def pg_run(i: int) -> float:
            store = await PostgresStore.open(dsn)
            try:
                return await run_tasks(PostgresSink(store))
            finally:
                await store.close()

        async def pg_sink(i: int) -> float:
            store = await PostgresStore.open(dsn)
            try:
                return await sink_pg(store, i)
            finally:
                await store.close()

        async def pg_sink_calls(i: int) -> float:
            store = await PostgresStore.open(dsn)
            try:
                return await sink_calls(store)
            finally:
                await store.close()

        sq = median_of(passes, lambda i: append_sqlite(tmp, i))
        pg = median_of(passes, pg_append)
        pgs = median_of(passes, pg_sink)
        print(f"append {EVENTS:,} events in batches of 500, median of {passes} after a warm-up")
        print(f"  SQLite (baseline)   {EVENTS / sq:>10,.0f} events/s")
        print(f"  PostgreSQL          {EVENTS / pg:>10,.0f} events/s   x{sq / pg:.2f} of SQLite's rate")
        print(f"  PostgresSink        {EVENTS / pgs:>10,.0f} events/s   x{sq / pgs:.2f} of SQLite's rate"
              f"   {asyncio.run(pg_sink_calls(0)):.1f} Python calls per event")  # fmt: skip
        if only_append:
            return
        bare = median_of(passes, lambda i: run_tasks(None))
        sql = median_of(passes, lambda i: run_tasks(SQLitePersistenceSink(str(tmp / f"run-{i}.sqlite"), durability="normal")))
        pgr = median_of(passes, pg_run)
        us = lambda s: s / TASKS * 1e6  # noqa: E731
        print(f"a run of {TASKS} tasks, per task")
        print(f"  no sink (baseline)  {us(bare):8.0f} µs")
        print(f"  SQLite (normal)     {us(sql):8.0f} µs   +{us(sql) - us(bare):.0f} µs  x{sql / bare:.2f}")
        print(f"  PostgreSQL          {us(pgr):8.0f} µs   +{us(pgr) - us(bare):.0f} µs  x{pgr / bare:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--append-only", action="store_true", help="only the append rates (no run of tasks)")
    args = ap.parse_args()
    server = start_postgres()
    try:
        measure(server, args.passes, args.append_only)
    finally:
        server.destroy()


if __name__ == "__main__":
    main()
