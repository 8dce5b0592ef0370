"""Runs.SubscribeBatches: history in full batches, live events within a few milliseconds, each
sequence once; ``ctl tail`` and the client use it and fall back to Subscribe on an older server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from goldfive import events
from goldfive.cli import main
from goldfive.pb.goldfive.v1 import events_pb2, service_pb2_grpc
from goldfive.remote import RemoteClient, RunHost, RunsService, start_server
from goldfive.remote.batching import batched
from goldfive.sinks.sqlite import SQLitePersistenceSink
from goldfive.types import Session
from tests.remote_fixtures import Gate, gated_factory


async def _record(db: Path, run_id: str, n: int) -> None:
    """A finished run of ``n`` events recorded in ``db``."""
    clock = iter(range(1_000, 10_000_000_000, 7))
    s = Session(run_id=run_id, clock=lambda: next(clock))
    sink = SQLitePersistenceSink(str(db))
    await sink.emit(events.run_started(s, goal_summary="many events"))
    for i in range(n - 2):
        await sink.emit(events.task_progress(s, "t1", detail=f"step {i}"))
    await sink.emit(events.run_completed(s, "done"))
    await sink.close()


async def _items(source: AsyncIterator[Any]) -> list[Any]:
    return [x async for x in source]


async def test_batches_close_at_their_size_and_live_ones_after_the_linger() -> None:
    async def history() -> AsyncIterator[events_pb2.Event]:
        for i in range(2500):
            yield events_pb2.Event(sequence=i)

    sizes = [len(b) for b in await _items(batched(history(), max_events=1000))]
    assert sizes == [1000, 1000, 500]

    async def trickle() -> AsyncIterator[events_pb2.Event]:
        for i in range(3):
            await asyncio.sleep(0.05)  # far longer than the linger: each goes alone
            yield events_pb2.Event(sequence=i)

    live = await _items(batched(trickle(), linger=0.002))
    assert [[e.sequence for e in b] for b in live] == [[0], [1], [2]]

    big = events_pb2.Event(run_id="x" * 600)
    async def large() -> AsyncIterator[events_pb2.Event]:
        for _ in range(10):
            yield big

    assert max(len(b) for b in await _items(batched(large(), max_bytes=2000))) <= 4


async def test_a_failing_source_raises_in_the_reader_after_what_it_gave() -> None:
    async def broken() -> AsyncIterator[events_pb2.Event]:
        yield events_pb2.Event(sequence=0)
        raise RuntimeError("disk gone")

    got: list[int] = []
    with pytest.raises(RuntimeError, match="disk gone"):
        async for b in batched(broken()):
            got += [e.sequence for e in b]
    assert got == [0]


async def test_subscribe_batches_streams_a_recorded_run_in_full_batches_then_a_live_one(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    await _record(db, "rec1", 2345)
    host = RunHost(db)
    host.load_recorded()
    gate = Gate()
    server = await start_server(host, listen="127.0.0.1:0")
    try:
        async with RemoteClient(server.address) as client:
            batches = await _items(client.subscribe_batches("rec1"))
            assert [len(b) for b in batches] == [1000, 1000, 345]
            assert [e.sequence for b in batches for e in b] == list(range(2345))
            after = await _items(client.subscribe_batches("rec1", 2000))
            assert [e.sequence for b in after for e in b] == list(range(2001, 2345))

            host.start_run(gated_factory(gate, n_tasks=2), "two things", run_id="live1")
            await gate.entered.wait()
            seen: list[Any] = []

            async def follow() -> None:
                async for b in client.follow_batches("live1"):
                    seen.extend(b)

            task = asyncio.create_task(follow())
            gate.open()
            await asyncio.wait_for(task, 20)
            assert [e.sequence for e in seen] == list(range(len(seen)))
            assert seen[-1].WhichOneof("payload") == "run_completed"
            assert len(seen) == host.get("live1").state.events
    finally:
        gate.open()
        await server.stop(None)


class _OldRuns(RunsService):
    """A server from before SubscribeBatches: the generated base answers UNIMPLEMENTED."""

    SubscribeBatches = service_pb2_grpc.RunsServicer.SubscribeBatches  # type: ignore[assignment]


async def test_the_client_falls_back_to_subscribe_on_a_server_without_batches(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    await _record(db, "old1", 50)
    host = RunHost(db)
    host.load_recorded()
    server = grpc.aio.server()
    service_pb2_grpc.add_RunsServicer_to_server(_OldRuns(host), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with RemoteClient(f"127.0.0.1:{port}") as client:
            got = [e.sequence async for e in client.follow("old1")]
            assert got == list(range(50))
            assert client._batches is False  # found out once, then Subscribe directly
            assert [e.sequence async for e in client.follow("old1", 47)] == [48, 49]
    finally:
        await server.stop(None)


def test_ctl_tail_prints_every_event_of_a_recorded_run_once(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    asyncio.run(_record(db, "tail1", 3000))

    async def serve_and_tail() -> tuple[Any, Any]:
        host = RunHost(db)
        host.load_recorded()
        server = await start_server(host, listen="127.0.0.1:0")
        try:
            # ctl runs its own asyncio loop: run it in a thread while this loop serves.
            return server.address, await asyncio.to_thread(
                CliRunner().invoke, main, ["ctl", server.address, "tail", "tail1"], catch_exceptions=False
            )
        finally:
            await server.stop(None)

    _, result = asyncio.run(serve_and_tail())
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 3000
    assert [int(line.split()[0]) for line in lines] == list(range(3000))
    assert "run_completed" in lines[-1]


async def test_a_recorded_run_of_large_events_is_served_in_batches_a_client_can_take(tmp_path: Path) -> None:
    """A recorded run's history went in chunks of 1,000 rows whatever their size: 14 events of
    about 900 KB made one 12 MB message, which the client refused (gRPC's 4 MB limit), so
    ``ctl tail``, the remote TUI and a resume from the hub could not read the run at all. The
    chunks are cut at about BATCH_BYTES now, as live batches are."""
    from goldfive.remote.batching import BATCH_BYTES

    db = tmp_path / "runs.sqlite"
    s = Session(run_id="big1")
    sink = SQLitePersistenceSink(str(db))
    await sink.emit(events.run_started(s, goal_summary="large notes"))
    for i in range(14):
        await sink.emit(events.task_progress(s, "t1", detail=f"{i} " + "x" * 900_000))
    await sink.emit(events.run_completed(s, "done"))
    await sink.close()
    host = RunHost(db)
    host.load_recorded()
    server = await start_server(host, listen="127.0.0.1:0")
    try:
        async with RemoteClient(server.address) as client:
            batches = await _items(client.subscribe_batches("big1"))
    finally:
        await server.stop(None)
    assert [e.sequence for b in batches for e in b] == list(range(16))
    assert all(sum(e.ByteSize() for e in b) <= BATCH_BYTES for b in batches if len(b) > 1)
    assert max(len(b) for b in batches) <= 2  # (about 1 MB each: at most one large note and a small event)


def test_a_chunk_is_cut_by_its_rows_bytes_and_keeps_at_least_one_row() -> None:
    from goldfive.store.history import _cut

    rows = [(i, b"x" * n) for i, n in enumerate([10, 10, 500, 10, 2000, 10])]
    cut = _cut(rows, 100)
    assert [[seq for seq, _ in part] for part in cut] == [[0, 1], [2], [3], [4], [5]]
    assert _cut(rows, 10_000) == [rows]


async def test_a_damaged_row_in_a_batch_is_skipped_and_counted_and_the_rest_is_served(tmp_path: Path) -> None:
    import sqlite3

    from goldfive.store.history import RunHistory

    db = tmp_path / "runs.sqlite"
    await _record(db, "dmg1", 30)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE events SET payload = x'ffffffff' WHERE run_id = 'dmg1' AND sequence = 7")
    other = events.run_started(Session(run_id="elsewhere"), goal_summary="not this run")  # a valid Event of another run
    conn.execute("UPDATE events SET payload = ? WHERE run_id = 'dmg1' AND sequence = 12", (other.SerializeToString(),))
    conn.commit()
    conn.close()
    history = RunHistory(db, "dmg1")
    got = [e.sequence for b in history.batches(chunk=10) for e in b.events]
    assert got == [s for s in range(30) if s not in (7, 12)]
    assert history.damaged == 2
    assert [e.sequence for e in history.events()] == got and history.damaged == 2  # counted once
