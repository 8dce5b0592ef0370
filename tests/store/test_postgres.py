"""PostgreSQL store specifics on a real server: schema versions, an unreachable database,
resume locks, and a live run recorded through PostgresSink and read back gap-free."""

from __future__ import annotations

import asyncio
import socket

import psycopg
import pytest

from goldfive import Runner
from goldfive.planners.static import StaticPlanner
from goldfive.store.postgres import SCHEMA_VERSION, PostgresSink, PostgresStore, SchemaTooNew, StoreUnavailable, redact
from goldfive.types import Plan, Task
from tests.pg_server import PgServer


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


async def test_an_unreachable_database_is_one_line_naming_it_without_the_password() -> None:
    dsn = f"postgresql://goldfive:s3cret@127.0.0.1:{_closed_port()}/goldfive"
    with pytest.raises(StoreUnavailable) as info:
        await PostgresStore.open(dsn, timeout=2)
    message = str(info.value)
    assert "\n" not in message and "127.0.0.1" in message and "s3cret" not in message
    assert redact(dsn) in message


async def test_the_schema_is_created_once_even_by_two_hubs_at_once(pg_server: PgServer) -> None:
    a, b = await asyncio.gather(PostgresStore.open(pg_server.dsn), PostgresStore.open(pg_server.dsn))
    try:
        assert await a.schema_version() == SCHEMA_VERSION == await b.schema_version()
        with psycopg.connect(pg_server.dsn) as conn:
            assert conn.execute("SELECT count(*) FROM goldfive_schema").fetchone() == (SCHEMA_VERSION,)
    finally:
        await a.close()
        await b.close()


async def test_a_newer_schema_is_refused_with_one_line(pg_server: PgServer) -> None:
    with psycopg.connect(pg_server.dsn, dbname="postgres") as admin:
        admin.autocommit = True
        admin.execute("DROP DATABASE IF EXISTS future")
        admin.execute("CREATE DATABASE future")
    future = pg_server.dsn.rsplit("/", 1)[0] + "/future"
    with psycopg.connect(future) as conn:
        conn.execute("CREATE TABLE goldfive_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO goldfive_schema VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(SchemaTooNew) as info:
        await PostgresStore.open(future)
    assert "\n" not in str(info.value) and f"version {SCHEMA_VERSION + 1}" in str(info.value) and "upgrade goldfive" in str(info.value)


async def test_a_run_lock_has_one_holder(pg_server: PgServer) -> None:
    store = await PostgresStore.open(pg_server.dsn)
    try:
        assert await store.take_lock("run-l", "hub-a") is None
        holder = await store.take_lock("run-l", "hub-b")
        assert holder is not None and holder.owner == "hub-a"
        await store.drop_lock("run-l", "hub-a")
        assert await store.take_lock("run-l", "hub-b") is None
    finally:
        await store.truncate_for_tests()
        await store.close()


async def test_a_live_run_recorded_to_postgres_reads_back_gap_free(pg_server: PgServer) -> None:
    store = await PostgresStore.open(pg_server.dsn)
    try:
        sink = PostgresSink(store, batch_size=3)
        plan = Plan(tasks=[Task(id=f"t{i}", title=f"task {i}") for i in range(5)])

        async def agent(task, session):  # type: ignore[no-untyped-def]
            return f"did {task.id}"

        runner = Runner(agent=agent, planner=StaticPlanner(plan), sinks=[sink])
        await runner.run("five small tasks")
        run_id = runner.session.run_id  # type: ignore[union-attr]
        got = [ev async for ev in store.events(run_id)]
        assert [e.sequence for e in got] == list(range(len(got))) and len(got) > 10
        assert got[-1].WhichOneof("payload") == "run_completed"
        assert sink.written == len(got) and sink.unwritten == 0 and sink.duplicates == 0
    finally:
        await store.truncate_for_tests()
        await store.close()


async def test_a_write_that_fails_keeps_the_events_for_the_next_flush(pg_server: PgServer) -> None:
    from goldfive import events as E
    from goldfive.errors import SinkError
    from goldfive.types import Session

    store = await PostgresStore.open(pg_server.dsn)
    sink = PostgresSink(store, batch_size=100)
    s = Session(run_id="run-w")
    try:
        await sink.emit(E.run_started(s, goal_summary="g"))
        pg_server.stop()  # the database goes away
        with pytest.raises(SinkError, match="PostgreSQL"):
            await sink.sync()
        assert sink.unwritten == 1 and sink.error
        pg_server.start()  # and comes back: the kept event is written
        for _ in range(50):
            try:
                await sink.sync()
                break
            except SinkError:
                await asyncio.sleep(0.1)
        assert sink.unwritten == 0 and sink.written == 1 and not sink.error
        assert [e.sequence async for e in store.events("run-w")] == [0]
    finally:
        await store.truncate_for_tests()
        await store.close()


async def test_a_postgres_sink_queues_each_events_row_encoded_once_at_emit(pg_server: PgServer) -> None:
    """The sink queues the row its store appends (as the SQLite sink does), not a protobuf copy
    it encodes again at the write: the record is the event as emitted (changed later, the
    record is not), and the Python calls per event (emit, the batches' appends, close) stay
    under a budget that the copy's path exceeded (47.6 calls per event; 37.6 with the rows:
    bench/bench_store.py --append-only)."""
    import cProfile
    import pstats

    from goldfive import events as E
    from goldfive.types import Session

    store = await PostgresStore.open(pg_server.dsn)
    try:
        sink = PostgresSink(store, batch_size=500, max_pending=None)
        ev = E.task_progress(Session(run_id="fixed-at-emit"), "t", detail="as emitted")
        await sink.emit(ev)
        ev.task_progress.detail = "changed after"
        await sink.close()
        [stored] = [e async for e in store.events("fixed-at-emit")]
        assert stored.task_progress.detail == "as emitted"

        async def calls(n: int, tag: str) -> int:
            s = Session(run_id=f"calls-{tag}-{n}")
            evs = [E.task_progress(s, "t", detail=f"step {k}") for k in range(n)]
            sink = PostgresSink(store, batch_size=500, max_pending=None)
            prof = cProfile.Profile()
            prof.enable()
            for e in evs:
                await sink.emit(e)
            await sink.close()
            prof.disable()
            return int(pstats.Stats(prof).total_calls)  # type: ignore[attr-defined]

        await calls(1000, "warm")
        per_event = (await calls(6000, "big") - await calls(1000, "small")) / 5000
        assert per_event <= 40, f"{per_event:.1f} Python calls per event"
    finally:
        await store.close()
