"""RecordingSink: a run's events recorded into any EventLog, batched, committed on ``sync``.

Every writer of recorded events is this sink over a log: ``goldfive run``'s SQLite recording
(``goldfive.sinks.SQLitePersistenceSink`` is this sink over a ``SqliteLog``), a hub's recorder
(``goldfive.store.recorder.RunRecorder``), a hub on PostgreSQL (``PostgresSink``, its
``FleetRecorder``) and a JSONL recording (``goldfive.sinks.JSONLPersistenceSink``, this sink over
a ``JsonlLog``).

``emit`` queues the event fixed as it is then (later mutation cannot change the record): the
SQLite, PostgreSQL and JSONL sinks queue what their log appends, the event's row or line,
encoded once at emit; a sink over another log queues a copy of the event. The queue is
appended to the log in one ``append`` when it reaches ``batch_size``, when the
``flush_interval`` timer armed by its first event fires, on ``flush``, ``sync`` (a durable run's
state change: the run waits until its events are committed) and ``close``. What the log
commits is its own business and durable when ``append`` returns: ``SqliteLog`` commits a
transaction, ``JsonlLog`` writes (and fsyncs, unless ``synchronous="NORMAL"``), the PostgreSQL store commits. One append runs at a
time, in emit order; what is emitted while one runs (a log writing in a worker thread) waits
for the next. An append to a log that does not suspend (SqliteLog without a writer thread)
happens inside the ``emit``/``sync`` that triggers it, without yielding to the loop. What a
cancelled ``flush`` leaves is the log's to say (SqliteLog finishes the write it started, and
closes only after it); ``close`` waits for a timer's append before closing the log. An event whose
(run, sequence) the log holds already is skipped by the log and counted on ``duplicates``.

A failed append keeps the batch for the next one (up to ``max_pending`` events, None: no bound;
past it the oldest are dropped and counted on ``dropped``), says why on ``write_error`` (logged
when writing starts and stops failing, not per batch), lists it on ``errors`` and raises
:class:`SinkError` from the next ``emit``/``flush``/``sync``/``close`` (a timer's failure from
the next call), so a durable run pauses on it rather than going on unrecorded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, cast

from goldfive.aio import detached_timer
from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.log import EventLog

__all__ = ["MAX_PENDING", "RecordingSink"]

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    #: What the sink queues per event: a copy of it, unless a sink over a particular log
    #: queues its own encoding (``_queued``, ``_append``).
    Q = TypeVar("Q", default=Event)
else:
    from typing import TypeVar

    Q = TypeVar("Q")

log = logging.getLogger("goldfive.store")

#: Unwritten events a sink holds while its log fails (about 100 MB of typical events).
MAX_PENDING = 100_000
_KEEP_ERRORS = 100


class RecordingSink(Generic[Q]):
    """An EventSink that records into ``log`` (see the module doc)."""

    def __init__(
        self,
        log: EventLog,
        *,
        batch_size: int = 1000,
        flush_interval: float = 0.05,
        max_pending: int | None = MAX_PENDING,
    ) -> None:
        if max_pending is not None and max_pending < batch_size:
            raise ValueError(f"max_pending ({max_pending}) must be at least batch_size ({batch_size})")
        self.log = log
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.max_pending = max_pending
        self.written = 0
        self.duplicates = 0
        #: Unwritten events dropped because ``max_pending`` was reached.
        self.dropped = 0
        #: Why the last append failed; "" once one succeeds again.
        self.write_error = ""
        #: The most recent failures (at most 100).
        self.errors: list[str] = []
        self._pending: list[Q] = []
        self._timer: asyncio.TimerHandle | None = None
        self._writes: set[asyncio.Task[None]] = set()
        self._failure: SinkError | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    def __str__(self) -> str:
        return f"{type(self).__name__}({getattr(self.log, 'path', type(self.log).__name__)})"

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def unwritten(self) -> int:
        return len(self._pending)

    @property
    def closed(self) -> bool:
        return self._closed

    async def emit(self, event: Event) -> None:
        # (on every event's path: one coroutine, no helper awaited unless a batch is full)
        if self._closed:
            raise SinkError(f"{self} is closed")
        screen = self._screen
        if screen is not None and not screen(event):
            return
        pending = self._pending
        pending.append(self._queued(event))
        if len(pending) >= self.batch_size:  # (max_pending >= batch_size: past it only here)
            if self.max_pending is not None and len(pending) > self.max_pending:
                self._bound()
            if not self._lock.locked():
                # (an append in flight takes what is queued next; emit does not wait for it)
                await self.flush()
                return
        if self._timer is None:
            self._timer = detached_timer(self.flush_interval, self._on_timer)
        if self._failure is not None:
            self._raise_failure()

    async def emit_many(self, events: Sequence[Event]) -> None:
        """``emit`` for each of ``events``, in order, queued in one step (a hub's batch)."""
        if self._closed:
            raise SinkError(f"{self} is closed")
        screen = self._screen
        if screen is not None:
            events = [e for e in events if screen(e)]
        if not events:
            return
        pending = self._pending
        pending.extend(map(self._queued, events))
        self._bound()
        if len(pending) >= self.batch_size and not self._lock.locked():
            await self.flush()
            return
        if self._timer is None:
            self._timer = detached_timer(self.flush_interval, self._on_timer)
        self._raise_failure()

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
        """Append what is queued and close the log. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.flush()
        finally:
            while self._writes:  # a timer's append: never close the log under it
                await asyncio.gather(*self._writes, return_exceptions=True)
            await self._close_log()

    async def _close_log(self) -> None:
        await self.log.close()

    # -- for sinks over a particular log ------------------------------------------------
    #: Called with each emitted event before it is queued; False leaves it out (the SQLite
    #: sink's run locks and fencing). None: every event is queued.
    _screen: Callable[[Event], bool] | None = None

    def _queued(self, event: Event) -> Q:
        """What is queued for ``event``: a copy (later mutation cannot change the record).
        A sink that queues something else (its log's encoding of the event, fixed now)
        overrides this and ``_append``."""
        copy = Event()
        copy.CopyFrom(event)
        return copy  # type: ignore[return-value]  # (Q is Event unless overridden; no cast() call per event)

    async def _append(self, batch: list[Q]) -> int:
        """One append of ``batch`` to the log (a sink can pass the log more than the events)."""
        return await self.log.append(cast(list[Event], batch))

    def _appended(self, batch: list[Q], stored: int) -> None:
        """An append stored ``stored`` of ``batch``; the rest were stored already."""
        self.duplicates += len(batch) - stored

    def _fail(self, error: SinkError, *, quiet: bool = False) -> None:
        """Record a failure: logged (unless ``quiet``), listed, and the first one raised from
        the next call."""
        if not quiet:
            log.error("%s: %s", self, error)
        self.errors.append(str(error))
        del self.errors[:-_KEEP_ERRORS]
        if self._failure is None:
            self._failure = error

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    # -- internals ----------------------------------------------------------------------
    def _bound(self) -> None:
        if self.max_pending is None:
            return
        excess = len(self._pending) - self.max_pending
        if excess > 0:
            if not self.dropped:
                log.error("%s: %d events wait to be written; dropping the oldest beyond that", self, self.max_pending)
            del self._pending[:excess]
            self.dropped += excess

    def _on_timer(self) -> None:
        # The flush timer is the sink's, not the run's that emitted: armed detached (an empty
        # context), so a cancelled one, which asyncio keeps until its time, holds no run.
        self._timer = None
        task = asyncio.get_running_loop().create_task(self._write())  # a failure is raised from the next call
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self) -> None:
        async with self._lock:  # one append at a time, in emit order
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            try:
                stored = await self._append(batch)
            except Exception as exc:  # the log's own failure (SinkError, sqlite3, psycopg, OSError)
                self._pending[:0] = batch
                self._bound()
                first = not self.write_error
                error = exc if isinstance(exc, SinkError) else SinkError(f"recording {len(batch)} events failed: {exc}")
                self.write_error = str(error)
                self._fail(error, quiet=not first)
                if self._timer is None and not self._closed:  # retried even if nothing new is emitted
                    self._timer = detached_timer(max(self.flush_interval, 1.0), self._on_timer)
                return
            if self.write_error:
                log.warning("%s: writing works again (%d unwritten events dropped meanwhile)", self, self.dropped)
                self.write_error = ""
            self.written += stored
            self._appended(batch, stored)
