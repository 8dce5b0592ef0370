"""The same store behaviour from SQLite (the default) and PostgreSQL (a real server): events
keyed by run and sequence, runs listed, history streamed in order, duplicates skipped."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from goldfive import events as E
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks.sqlite import RunInfo, SQLitePersistenceSink, list_runs
from goldfive.store.history import RunHistory
from goldfive.store.postgres import PostgresStore
from goldfive.types import Session
from tests.pg_server import PgServer


class Backend(Protocol):
    async def append(self, events: list[Event]) -> None: ...
    async def runs(self) -> list[RunInfo]: ...
    async def history(self, run_id: str, after: int = -1) -> list[Event]: ...
    async def close(self) -> None: ...


class SqliteBackend:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.duplicates = 0

    async def append(self, events: list[Event]) -> None:
        sink = SQLitePersistenceSink(str(self.path))
        for ev in events:
            await sink.emit(ev)
        try:
            await sink.close()
        except Exception:  # DuplicateEventError after storing the rest: counted below
            pass
        self.duplicates += sink.duplicates

    async def runs(self) -> list[RunInfo]:
        return list_runs(self.path)

    async def history(self, run_id: str, after: int = -1) -> list[Event]:
        return list(RunHistory(self.path, run_id).events(after, chunk=7))

    async def close(self) -> None:
        return None


class PgBackend:
    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.duplicates = 0

    async def append(self, events: list[Event]) -> None:
        self.duplicates += len(events) - await self.store.append(events)

    async def runs(self) -> list[RunInfo]:
        return await self.store.list_runs()

    async def history(self, run_id: str, after: int = -1) -> list[Event]:
        return [ev async for ev in self.store.events(run_id, after, chunk=7)]

    async def close(self) -> None:
        await self.store.truncate_for_tests()
        await self.store.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "sqlite":
        b: Any = SqliteBackend(tmp_path / "runs.sqlite")
    else:
        server: PgServer = request.getfixturevalue("pg_server")
        b = PgBackend(await PostgresStore.open(server.dsn))
    try:
        yield b
    finally:
        await b.close()


def _run(run_id: str, n: int, start_ms: int) -> list[Event]:
    clock = iter(range(start_ms, start_ms + 10 * (n + 5), 10))
    s = Session(run_id=run_id, clock=lambda: next(clock))
    out = [E.run_started(s, goal_summary=f"goal of {run_id}")]
    out += [E.task_progress(s, "t1", detail=f"step {i}") for i in range(n - 2)]
    out.append(E.run_completed(s, "done"))
    return out


async def test_runs_are_listed_with_counts_in_start_order(backend: Any) -> None:
    a, b = _run("run-a-" + uuid.uuid4().hex[:6], 5, 1_000), _run("run-b-" + uuid.uuid4().hex[:6], 30, 2_000)
    await backend.append(b)
    await backend.append(a)
    runs = await backend.runs()
    assert [(r.run_id, r.event_count, r.last_sequence) for r in runs] == [(a[0].run_id, 5, 4), (b[0].run_id, 30, 29)]
    assert runs[0].first_emitted_at_ms == 1_000 and runs[1].last_emitted_at_ms == 2_000 + 29 * 10


async def test_history_streams_in_order_after_a_sequence_across_pages(backend: Any) -> None:
    events = _run("run-h", 40, 5_000)
    await backend.append(events[20:])  # stored out of order
    await backend.append(events[:20])
    got = await backend.history("run-h")
    assert [e.sequence for e in got] == list(range(40))
    assert [e.SerializeToString() for e in got] == [e.SerializeToString() for e in events]
    assert [e.sequence for e in await backend.history("run-h", after=33)] == [34, 35, 36, 37, 38, 39]
    assert await backend.history("no-such-run") == []


async def test_a_stored_sequence_is_never_overwritten(backend: Any) -> None:
    events = _run("run-d", 4, 9_000)
    await backend.append(events)
    impostor = Event()
    impostor.CopyFrom(events[1])
    impostor.task_progress.detail = "rewritten"
    await backend.append([impostor])
    assert backend.duplicates == 1
    got = await backend.history("run-d")
    assert len(got) == 4 and got[1].task_progress.detail == "step 0"
