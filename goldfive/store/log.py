"""EventLog: what every store of recorded runs does, as one protocol.

A log holds events keyed by (run id, sequence). ``append`` stores a batch and skips an event
whose key is stored already (it returns how many it stored); ``events`` streams one run in
sequence order from after a given sequence; ``runs`` lists what is stored; ``resolve`` turns
an id or a unique prefix of 4+ characters into a run id (the rule ``ctl``, ``replay`` and
``resume`` follow) and raises ReplayError naming the problem otherwise; ``check`` says what
the store finds wrong with itself, if anything; ``lock`` takes a run for one writer (who holds
it is a ``goldfive.store.locks.LockHolder`` in every log); ``writers`` says who wrote a run's
events (provenance, recorded by the log itself when it stores them: ``write_as``).

Three logs implement it: ``SqliteLog`` (a recording file, the default of ``goldfive run`` and
a hub), ``goldfive.store.postgres.PostgresStore`` (several hubs on one database, extra
``[postgres]``) and ``goldfive.store.jsonl.JsonlLog`` (a JSONL recording). The store contract
test (tests/store/test_store_contract.py) runs the same cases against each through this
protocol, so another log only has to pass it. ``goldfive.store.recording_sink.RecordingSink``
records a run into any of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.history import CHUNK
from goldfive.store.locks import LockHolder
from goldfive.store.sqlite import RunInfo
from goldfive.store.sqlite_log import SqliteLog

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

    async def lock(self, run_id: str, holder: str) -> LockHolder | None:
        """Take ``run_id``'s lock for ``holder`` (a writer's name): None when ``holder`` holds
        it now (taken, or already), else who does (nothing written). Two takers at once: one
        gets it. A run is written by the holder of its lock (a resume, a fleet's takeover)."""
        ...

    async def unlock(self, run_id: str, holder: str) -> None:
        """Drop ``run_id``'s lock if ``holder`` holds it."""
        ...

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """Record ``run_id``'s events from ``from_sequence`` on as written by ``writer`` (the
        log's own ``writer`` otherwise): the log stores it with the events, in the same commit
        (goldfive.store.provenance). The name is the caller's, who verified it (a hub names
        the credential a runner connected with); nothing in an event can set it."""
        ...

    async def writers(self, run_id: str) -> list[tuple[int, str]]:
        """Who wrote the run's events: (from_sequence, writer) ranges in sequence order ([]
        for a run recorded before writers were)."""
        ...

    async def close(self) -> None:
        """Release what the log holds (its locks among it)."""
        ...
