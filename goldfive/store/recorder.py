"""RunRecorder: a hosted run's SQLite sink, with its health readable and its failures contained.

A server must keep serving a run whose recording fails (disk full, a damaged file): the sink
already keeps what it could not write (up to its bound, then drops the oldest and counts them)
and logs when writing starts and stops failing, so the error it would raise on the next emit is
absorbed here instead of reaching the runner as a traceback per batch. Only ``sync`` (a durable
run's commit of a state change) raises it: the run pauses on a failed commit. What is wrong stays
visible: ``write_error``, ``unwritten`` and ``dropped`` feed the run's summary.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from goldfive.errors import ResumeRefused, SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.recording_sink import MAX_PENDING
from goldfive.sinks.sqlite import SQLitePersistenceSink

__all__ = ["HUB_WRITER", "HubRecorder", "RunRecorder"]

#: Who a hub's recorder records events as written by unless told (``write_as``): the hub
#: itself (the runs it hosts).
HUB_WRITER = "hub"


class HubRecorder(Protocol):
    """What a server's runs record through, one recording shared by the runs it serves:
    ``RunRecorder`` (a hub alone, SQLite) or ``goldfive.hub.fleet.FleetRecorder`` (a fleet of
    hubs, PostgreSQL). An EventSink that never raises a storage failure from ``emit``; its
    health is readable (a run's summary, the hub's warning)."""

    @property
    def write_error(self) -> str:
        """Why writing fails now, "" while it works."""
        ...

    @property
    def unwritten(self) -> int: ...

    @property
    def dropped(self) -> int: ...

    async def emit(self, event: Event) -> None: ...

    async def emit_many(self, events: Sequence[Event]) -> None: ...

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """The run's events from ``from_sequence`` on are recorded as ``writer``'s."""
        ...

    async def forget_run(self, run_id: str) -> bool:
        """Drop what the log holds of a run that stored no event (its provenance, the writer
        ``write_as`` named): its runner left after its hello. False when it has events."""
        ...

    async def sync(self) -> None: ...

    async def commit(self) -> bool:
        """Write what is held: True when nothing is left unwritten."""
        ...

    async def close(self) -> None: ...


class RunRecorder:
    """An EventSink writing to ``path`` that never raises a storage failure to its caller."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_pending: int = MAX_PENDING,
        batch_size: int = 1000,
        durability: str = "normal",
        flush_interval: float = 0.05,
        writer_thread: bool = False,
        writer: str = HUB_WRITER,
    ) -> None:
        self.sink: SQLitePersistenceSink | None = None
        self.path = os.fspath(path)
        self.open_error = ""
        try:
            self.sink = SQLitePersistenceSink(
                path,
                max_pending=max_pending,
                batch_size=batch_size,
                durability=durability,
                flush_interval=flush_interval,
                writer_thread=writer_thread,
                writer=writer,
            )
        except SinkError as exc:
            self.open_error = str(exc)
        self._lost = 0  # emitted while the database could not even be opened

    @property
    def write_error(self) -> str:
        if self.sink is None:
            return self.open_error
        return self.sink.write_error

    @property
    def unwritten(self) -> int:
        return self.sink.pending if self.sink is not None else 0

    @property
    def dropped(self) -> int:
        return self.sink.dropped + self._lost if self.sink is not None else self._lost

    async def emit(self, event: Event) -> None:
        if self.sink is None:
            self._lost += 1
            return
        try:
            await self.sink.emit(event)
        except SinkError:
            pass  # recorded on the sink (write_error, errors, dropped) and logged there

    async def emit_many(self, events: Sequence[Event]) -> None:
        """``emit`` for each of ``events``, in order, in one step."""
        if self.sink is None:
            self._lost += len(events)
            return
        try:
            await self.sink.emit_many(events)
        except SinkError:
            pass  # as in emit

    @property
    def durability(self) -> str:
        return self.sink.durability if self.sink is not None else "batched"

    @durability.setter
    def durability(self, value: str) -> None:
        if self.sink is not None:
            self.sink.durability = value

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """The run's events from ``from_sequence`` on are recorded as ``writer``'s (the log's
        provenance; see goldfive.store.log.EventLog.write_as)."""
        if self.sink is not None:
            self.sink.log.write_as(run_id, writer, from_sequence)

    async def forget_run(self, run_id: str) -> bool:
        """The log's ``forget_run`` (SqliteLog.forget_run); SinkError when it cannot be done."""
        if self.sink is None:
            return True  # nothing was ever stored or named in a file that never opened
        return await self.sink.log.forget_run(run_id)

    def hold_run(self, run_id: str) -> None:
        """Take ``run_id``'s resume lock (see SQLitePersistenceSink.hold_run); a database that
        could not be opened cannot be locked: ResumeRefused, saying why."""
        if self.sink is None:
            raise ResumeRefused(f"cannot lock run {run_id}: {self.open_error}")
        self.sink.hold_run(run_id)

    def release_run(self, run_id: str) -> None:
        if self.sink is not None:
            self.sink.release_run(run_id)

    async def sync(self) -> None:
        """Commit a run's state change now (a durable run). A failure is raised (SinkError,
        once per commit, not per event): the run pauses on it until writing works again."""
        if self.sink is None:
            raise SinkError(f"cannot record to {self.path}: {self.open_error}")
        await self.sink.sync()

    async def commit(self) -> bool:
        """Write what is held now; True when everything emitted so far is stored (a hub
        confirms to its runners only then). A failure is recorded, not raised."""
        if self.sink is None:
            return False
        try:
            await self.sink.flush()
        except SinkError:
            return False  # logged by the sink; nothing is confirmed, the runners keep their events
        if self.sink.writer_thread:
            # Rows emitted while the worker wrote are newer than what this commit took: they
            # are the next commit's; everything emitted before this call is stored.
            return not self.write_error
        return self.unwritten == 0 and not self.write_error

    async def close(self) -> None:
        if self.sink is None:
            return
        try:
            await self.sink.close()
        except SinkError:
            pass  # as in emit; the events still pending are counted on unwritten
