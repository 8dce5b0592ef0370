"""EventLog: what every store of recorded runs does, as one protocol.

A log holds events keyed by (run id, sequence). ``append`` stores a batch and skips an event
whose key is stored already (it returns how many it stored); ``events`` streams one run in
sequence order from after a given sequence; ``runs`` lists what is stored; ``resolve`` turns
an id or a unique prefix of 4+ characters into a run id (the rule ``ctl``, ``replay`` and
``resume`` follow) and raises ReplayError naming the problem otherwise; ``check`` says what
the store finds wrong with itself, if anything.

Three logs implement it: ``SqliteLog`` (a recording file, the default of ``goldfive run`` and
a hub), ``goldfive.store.postgres.PostgresStore`` (several hubs on one database, extra
``[postgres]``) and ``goldfive.store.jsonl.JsonlLog`` (a JSONL recording). The store contract
test (tests/store/test_store_contract.py) runs the same cases against each through this
protocol, so another log only has to pass it. ``goldfive.store.recording_sink.RecordingSink``
records a run into any of them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from goldfive.errors import DuplicateEventError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.naming import match_run
from goldfive.sinks.sqlite import RunInfo, SQLitePersistenceSink, list_runs
from goldfive.store.history import CHUNK, RunHistory, check_database

__all__ = ["EventLog", "RunInfo", "SqliteLog"]


@runtime_checkable
class EventLog(Protocol):
    async def append(self, events: Sequence[Event]) -> int:
        """Store ``events``; one whose (run, sequence) is stored already is skipped. Returns
        how many were stored."""
        ...

    def events(self, run_id: str, after: int = -1, *, chunk: int = CHUNK) -> AsyncIterator[Event]:
        """The run's events with a sequence above ``after``, in order, read ``chunk`` at a time."""
        ...

    async def runs(self) -> list[RunInfo]:
        """Every stored run: its event count, first and last emitted_at, last sequence."""
        ...

    async def resolve(self, ref: str) -> str:
        """The run ``ref`` names: its full id or a unique prefix of 4+ characters."""
        ...

    async def check(self) -> str | None:
        """None when the store finds nothing wrong with itself, else its findings in one line
        (``serve`` refuses a damaged store rather than write into it)."""
        ...

    async def close(self) -> None: ...


class SqliteLog:
    """The EventLog of a SQLite recording file (the ``events`` table ``goldfive run`` and a hub
    write). Writes go through ``SQLitePersistenceSink`` (its batching, its duplicate check,
    its durability); reads through ``RunHistory`` (chunked, damaged rows counted)."""

    def __init__(self, path: str | os.PathLike[str], table: str = "events") -> None:
        self.path = os.fspath(path)
        self.table = table
        self._sink: SQLitePersistenceSink | None = None

    def _writer(self) -> SQLitePersistenceSink:
        if self._sink is None:
            self._sink = SQLitePersistenceSink(self.path, self.table, writer_thread=False)
        return self._sink

    async def append(self, events: Sequence[Event]) -> int:
        sink = self._writer()
        before_dup, before_fenced = sink.duplicates, sink.fenced
        try:
            await sink.emit_many(events)
            await sink.flush()
        except DuplicateEventError:  # the rest of the batch is stored; the duplicates are counted
            pass
        return len(events) - (sink.duplicates - before_dup) - (sink.fenced - before_fenced)

    async def events(self, run_id: str, after: int = -1, *, chunk: int = CHUNK) -> AsyncIterator[Event]:
        for ev in RunHistory(self.path, run_id, self.table).events(after, chunk=chunk):
            yield ev

    async def runs(self) -> list[RunInfo]:
        return list_runs(self.path, self.table)

    async def resolve(self, ref: str) -> str:
        return match_run([r.run_id for r in await self.runs()], ref, self.path)

    async def check(self) -> str | None:
        """SQLite's own ``PRAGMA quick_check`` of the file (goldfive.store.history.check_database)."""
        return await asyncio.to_thread(check_database, self.path)

    async def close(self) -> None:
        if self._sink is not None:
            sink, self._sink = self._sink, None
            await sink.close()
