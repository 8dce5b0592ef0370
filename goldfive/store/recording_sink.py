"""RecordingSink: a run's events recorded into any EventLog, batched, committed on ``sync``.

``emit`` queues the event (a copy: later mutation cannot change the record). The queue is
appended to the log in one ``append`` when it reaches ``batch_size``, when the
``flush_interval`` timer armed by its first event fires, on ``flush``, ``sync`` (a durable run's
state change: the run waits until its events are committed) and ``close``. What the log
commits is its own business and durable when ``append`` returns: ``SqliteLog`` commits a
transaction, ``JsonlLog`` writes and fsyncs, the PostgreSQL store commits. An event whose
(run, sequence) the log holds already is skipped by the log and counted on ``duplicates``.

A failed append keeps the batch for the next one (up to ``max_pending`` events; past that the
oldest are dropped and counted on ``dropped``), says why on ``write_error`` and raises
:class:`SinkError` from ``flush``/``sync``/``close`` (a timer's failure from the next ``emit``),
so a durable run pauses on it rather than going on unrecorded.
"""

from __future__ import annotations

import asyncio
import logging

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks._batching import MAX_PENDING
from goldfive.store.log import EventLog

__all__ = ["RecordingSink"]

log = logging.getLogger("goldfive.store")


class RecordingSink:
    """An EventSink that records into ``log`` (see the module doc)."""

    def __init__(
        self, log: EventLog, *, batch_size: int = 1000, flush_interval: float = 0.05, max_pending: int = MAX_PENDING
    ) -> None:
        if max_pending < batch_size:
            raise ValueError(f"max_pending ({max_pending}) must be at least batch_size ({batch_size})")
        self.log = log
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.max_pending = max_pending
        self.written = 0
        self.duplicates = 0
        self.dropped = 0
        self.write_error = ""
        self._pending: list[Event] = []
        self._timer: asyncio.TimerHandle | None = None
        self._timer_task: asyncio.Task[None] | None = None
        self._failure: SinkError | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    def __str__(self) -> str:
        return f"RecordingSink({getattr(self.log, 'path', type(self.log).__name__)})"

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def emit(self, event: Event) -> None:
        if self._closed:
            raise SinkError(f"{self} is closed")
        copy = Event()
        copy.CopyFrom(event)
        self._pending.append(copy)
        self._raise_failure()
        if len(self._pending) >= self.batch_size:
            await self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_interval, self._on_timer)

    async def flush(self) -> None:
        """Append everything queued now; SinkError when the log refused it (kept for the next)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self._write()
        self._raise_failure()

    async def sync(self) -> None:
        """A durable run's state change: its events committed before it goes on."""
        await self.flush()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self.flush()
        finally:
            if self._timer_task is not None:
                await asyncio.gather(self._timer_task, return_exceptions=True)
            await self.log.close()

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_task = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        async with self._lock:  # one append at a time, in emit order
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            try:
                stored = await self.log.append(batch)
            except Exception as exc:  # the log's own failure (SinkError, sqlite3, psycopg, OSError)
                self._pending[:0] = batch
                excess = len(self._pending) - self.max_pending
                if excess > 0:
                    del self._pending[:excess]
                    self.dropped += excess
                first = not self.write_error
                self.write_error = f"recording {len(batch)} events failed: {exc}"
                if first:
                    log.error("%s: %s", self, self.write_error)
                if self._failure is None:
                    self._failure = SinkError(self.write_error)
                return
            if self.write_error:
                log.warning("%s: recording works again", self)
                self.write_error = ""
            self.written += stored
            self.duplicates += len(batch) - stored

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
