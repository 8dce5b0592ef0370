"""SQLitePersistenceSink: every run in one table keyed by (run_id, sequence), and its replay.

``emit`` only appends a row to an in-memory batch. The batch is committed in one transaction
when it reaches ``batch_size`` rows, when the ``flush_interval`` timer armed by its first row
fires, on :meth:`flush` and on :meth:`close`. Writes are synchronous on the caller's thread:
measured, a 1000-row commit takes a few milliseconds, cheaper than a thread hop per batch.

Duplicates: a row whose (run_id, sequence) is already stored is not written (the first one
stays). Each is counted on ``duplicates`` and described on ``errors``; the first batch that
has any is logged as one warning (runs and sequences), and the total once more at close,
never a line per event; and the flush that found them raises :class:`DuplicateEventError`
after storing the rest of the batch. A durable run this sink holds the lock of is different:
a duplicate there means another process writes the same run, so none of that batch's rows of
the run are stored, the run is *fenced* (its later events are dropped and counted on
``fenced``) and every ``sync`` raises :class:`RecordingConflictError` naming it, which stops
the run. A timer flush has no caller, so its error is raised by
the next ``emit``/``flush``/``close``. Other write failures are raised the same way as
:class:`SinkError`; the batch is kept and retried by the next flush, up to ``max_pending``
events (then the oldest are dropped and counted on ``dropped``; see ``_batching``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter

from google.protobuf.message import DecodeError

from goldfive.compat import decode_recorded, recorded_bytes
from goldfive.durable import lock
from goldfive.durable.store import ResumeRefused
from goldfive.errors import DuplicateEventError, RecordingConflictError, ReplayError, SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks._batching import MAX_PENDING, BatchingSink
from goldfive.store.sqlite import RunInfo, Statements, check_table, create_table, list_runs_in, run_rows

__all__ = ["DURABILITY", "RunInfo", "SQLitePersistenceSink", "list_runs", "replay_from_sqlite"]

DURABILITY = ("batched", "normal", "full")

log = logging.getLogger("goldfive.sinks")
_Row = tuple[str, int, str, str, int, bytes]
_WRITER_CACHE_KB = 32 * 1024
#: How many refused (run_id, sequence) keys an error names; the rest are counted.
_KEYS_NAMED = 5

_row_key = itemgetter(0, 1)  # (run_id, sequence)


class SQLitePersistenceSink(BatchingSink[_Row]):
    """Persists events to ``path`` (a file, WAL mode) or ``":memory:"`` in table ``table``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        table: str = "events",
        *,
        flush_interval: float = 0.05,
        batch_size: int = 1000,
        durability: str = "batched",
        max_pending: int = MAX_PENDING,
        writer_thread: bool = False,
    ) -> None:
        if durability not in DURABILITY:
            raise ValueError(f"durability must be one of {', '.join(DURABILITY)}, got {durability!r}")
        #: "batched": rows are committed by size or timer. "normal": a run's state changes are
        #: committed before the run goes on (WAL, synchronous=NORMAL: survives a killed
        #: process, not a power cut), and the run holds a lock row while it runs. "full": the
        #: same with synchronous=FULL (an fsync per commit: survives a power cut too).
        self.durability = durability
        self._locked: set[str] = set()
        self._ended: set[str] = set()
        #: Durable runs another process writes too: run id -> why. Nothing more of them is written.
        self._fenced: dict[str, str] = {}
        #: Events of fenced runs not written.
        self.fenced = 0
        self.table = check_table(table)
        super().__init__(flush_interval=flush_interval, batch_size=batch_size, max_pending=max_pending)
        self.path = os.fspath(path)
        self.duplicates = 0
        self._duplicates_summed = False
        #: ``flush`` writes in a worker thread (a hub's group commit: many runs' rows at once,
        #: which would hold the event loop for tens of milliseconds), the rows sorted by key.
        self.writer_thread = writer_thread
        self._inflight: asyncio.Future[None] | None = None
        try:
            # Explicit transactions; with writer_thread the connection is used by one thread
            # at a time (the loop or the worker, never both: BatchingSink._writing).
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=not writer_thread)
        except sqlite3.Error as exc:
            raise SinkError(f"cannot open SQLite database {self.path!r}: {exc}") from exc
        try:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
                sync = "FULL" if durability == "full" else "NORMAL"  # NORMAL: durable at checkpoints, safe in WAL
                self._conn.execute(f"PRAGMA synchronous={sync}")
                if writer_thread:
                    # Many runs' rows per commit land on as many B-tree pages: keep them cached.
                    self._conn.execute(f"PRAGMA cache_size=-{_WRITER_CACHE_KB}")
            create_table(self._conn, table)
        except sqlite3.Error as exc:
            self._conn.close()
            raise SinkError(f"cannot use SQLite database {self.path!r}: {exc}") from exc
        statements = Statements.of(self._conn, table)
        self._insert, self._insert_many, self._rows_per_insert = statements.one, statements.many, statements.rows_per_insert

    def __str__(self) -> str:
        return f"SQLitePersistenceSink({self.path})"

    async def emit(self, event: Event) -> None:
        ts = event.emitted_at
        if self.durability != "batched":
            self._track_lock(event)
            if event.run_id in self._fenced:
                self.fenced += 1
                return
        self._add(
            (
                event.run_id,
                event.sequence,
                event.event_id,
                event.WhichOneof("payload") or "",
                ts.seconds * 1000 + ts.nanos // 1_000_000,
                recorded_bytes(event),
            )
        )

    async def emit_many(self, events: Sequence[Event]) -> None:
        """``emit`` for each of ``events``, in order, queued in one step (a hub's batch)."""
        if self.durability != "batched":
            for event in events:
                self._track_lock(event)
            if self._fenced:
                kept = [e for e in events if e.run_id not in self._fenced]
                self.fenced += len(events) - len(kept)
                events = kept
        rows: list[_Row] = []
        add = rows.append
        for event in events:
            ts = event.emitted_at
            add(
                (
                    event.run_id,
                    event.sequence,
                    event.event_id,
                    event.WhichOneof("payload") or "",
                    ts.seconds * 1000 + ts.nanos // 1_000_000,
                    recorded_bytes(event),
                )
            )
        self._add_many(rows)

    async def flush(self) -> None:
        """Write everything pending now (in a worker thread with ``writer_thread``; a write
        already running there is waited for first, and what came meanwhile goes next)."""
        if not self.writer_thread:
            await super().flush()
            return
        await self._settle()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending and not self._closed:
            batch, self._pending = self._pending, []
            self._writing = True
            self._inflight = asyncio.get_running_loop().run_in_executor(None, self._write_sorted, batch)
            self._inflight.add_done_callback(self._written)
            await asyncio.shield(self._inflight)  # cancelling the caller leaves the write to finish
        self._raise_failure()

    def _write_sorted(self, batch: list[_Row]) -> None:
        batch.sort(key=_row_key)  # neighbouring keys together: fewer B-tree pages touched
        self._write_batch(batch)

    def _written(self, fut: asyncio.Future[None]) -> None:
        if self._inflight is not fut:
            return  # settled already (by _settle or this callback): once per write
        self._writing = False
        self._inflight = None
        if not fut.cancelled() and fut.exception() is not None:  # a bug, not a storage failure (those are recorded)
            self._fail(SinkError(f"writing to {self.path} failed: {fut.exception()!r}"))

    async def _settle(self) -> None:
        """Wait for the worker's write in flight, if any, and account for it here: awaiting a
        future that is already done does not yield to the loop, so its done-callback may not
        have run yet, and looping on ``_inflight`` alone spun forever with the loop held."""
        while (fut := self._inflight) is not None:
            await asyncio.shield(fut)
            self._written(fut)

    async def close(self) -> None:
        await self._settle()  # never close the connection under a running write
        try:
            await super().close()
        finally:
            if self.duplicates > 1 and not self._duplicates_summed:
                self._duplicates_summed = True
                log.warning("SQLitePersistenceSink: %d duplicate events in all were not stored in %s", self.duplicates, self.path)

    async def sync(self) -> None:
        """Commit what is batched now, when this sink is durable (a run's state change).
        Raises RecordingConflictError while a run it records is fenced (another process
        writes it), SinkError when the commit failed."""
        if self.durability != "batched":
            await self.flush()
        for run_id in self._ended:
            lock.drop(self._conn, run_id, self.path)
            self._locked.discard(run_id)
        self._ended.clear()
        if self._fenced:
            raise RecordingConflictError("; ".join(self._fenced.values()), frozenset(self._fenced))

    def _fence(self, run_id: str, why: str) -> None:
        """Write nothing more of ``run_id``: another process writes it."""
        if run_id not in self._fenced:
            log.error("%s: %s", self, why)
            self._fenced[run_id] = why
            self._pending = [row for row in self._pending if row[0] != run_id]

    def hold_run(self, run_id: str) -> None:
        """Take ``run_id``'s resume lock now, before its recording is read for a resume: the
        check and the write are one transaction, so of two processes resuming the run at once
        one gets it and the other is refused (RunLocked, naming the holder)."""
        if run_id in self._locked:
            return
        try:
            held = lock.take(self._conn, run_id, self.path)
        except sqlite3.Error as exc:
            raise ResumeRefused(f"cannot lock run {run_id} in {self.path}: {_one_line(exc)}") from None
        if held is not None:
            raise lock.RunLocked(f"run {run_id} is still running in {held.describe()}")
        self._locked.add(run_id)

    def release_run(self, run_id: str) -> None:
        """Drop ``run_id``'s lock if this sink holds it (a resume refused after ``hold_run``)."""
        if run_id in self._locked:
            self._locked.discard(run_id)
            lock.drop(self._conn, run_id, self.path)

    def _track_lock(self, event: Event) -> None:
        kind = event.WhichOneof("payload")
        if kind in ("run_started", "run_resumed") and event.run_id not in self._locked:
            try:
                held = lock.take(self._conn, event.run_id, self.path)
            except sqlite3.Error as exc:  # the write that follows fails the same way, and says so
                log.warning("cannot lock run %s in %s: %s", event.run_id, self.path, exc)
                return
            if held is not None:
                self._fence(event.run_id, f"run {event.run_id} is being run by {held.describe()} (it holds its lock in {self.path}); this process stops it")
                return
            self._locked.add(event.run_id)
        elif kind in ("run_completed", "run_aborted"):
            self._ended.add(event.run_id)  # dropped once the terminal event is committed

    def list_runs(self) -> list[RunInfo]:
        """The runs in this sink's own database (committed rows; works for ``:memory:``)."""
        return _list_runs(self._conn, self.table)

    def replay(self, run_id: str) -> list[Event]:
        """One run from this sink's own database, in sequence order (committed rows)."""
        return _replay(self._conn, self.table, run_id)

    # -- internals --------------------------------------------------------------------------

    def _release(self) -> None:
        for run_id in self._locked:  # closed with the run still going: the next start resumes it
            lock.drop(self._conn, run_id, self.path)
        self._conn.close()

    def _write_batch(self, batch: list[_Row]) -> None:
        if self._fenced:
            kept = [row for row in batch if row[0] not in self._fenced]
            self.fenced += len(batch) - len(kept)
            batch = kept
        try:
            stored, duplicates = self._write(batch)
        except sqlite3.Error as exc:
            self._write_failed(batch, SinkError(f"writing {len(batch)} events to {self.path} failed: {exc}"))
            return
        self._write_succeeded()
        self.written += stored
        if duplicates:
            first = not self.duplicates
            self.duplicates += len(duplicates)
            if first:  # one line, never one per event: later ones are summed up at close
                log.warning("SQLitePersistenceSink: %s", _duplicates_text(self.path, duplicates))
            keys = ", ".join(f"({run_id!r}, {seq})" for run_id, seq in duplicates[:_KEYS_NAMED])
            more = f" and {len(duplicates) - _KEYS_NAMED} more" if len(duplicates) > _KEYS_NAMED else ""
            self._fail(DuplicateEventError(f"{self.path}:{self.table} already holds (run_id, sequence) {keys}{more}"), quiet=True)

    def _insert_rows(self, batch: list[_Row]) -> None:
        conn, n, step = self._conn, len(batch), self._rows_per_insert
        i = 0
        while n - i >= step:
            conn.execute(self._insert_many, tuple(chain.from_iterable(batch[i : i + step])))
            i += step
        if i < n:
            conn.executemany(self._insert, batch[i:])

    def _write(self, batch: list[_Row]) -> tuple[int, list[tuple[str, int]]]:
        """Commit ``batch``; return how many rows were stored and the (run_id, sequence) keys
        refused as duplicates."""
        conn = self._conn
        conn.execute("BEGIN")
        try:
            self._insert_rows(batch)
            conn.execute("COMMIT")
        except sqlite3.IntegrityError:
            self._rollback()
            return self._write_row_by_row(batch)
        except BaseException:
            self._rollback()
            raise
        return len(batch), []

    def _rollback(self) -> None:
        """End a failed write's transaction. SQLite has often rolled it back itself already (a
        full disk, SQLITE_FULL, does): a second ROLLBACK would fail and hide the first error."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _write_row_by_row(self, batch: list[_Row]) -> tuple[int, list[tuple[str, int]]]:
        """Rare path: redo the batch row by row to learn exactly which keys collide. A
        collision in a durable run this sink holds fences the run and the batch is redone
        without its rows (none of them is stored beside the other process's)."""
        conn = self._conn
        while True:
            conn.execute("BEGIN")
            stored = 0
            duplicates: list[tuple[str, int]] = []
            try:
                for row in batch:
                    if row[0] in self._fenced:
                        continue
                    try:
                        conn.execute(self._insert, row)
                    except sqlite3.IntegrityError:
                        duplicates.append((row[0], row[1]))
                    else:
                        stored += 1
                taken = {run_id: seq for run_id, seq in reversed(duplicates) if run_id in self._locked}
                if taken:
                    self._rollback()
                    for run_id, seq in taken.items():
                        self._fence(run_id, f"run {run_id}'s recording in {self.path} already holds sequence {seq}: "
                                    "another process is writing this run; this process stops it")  # fmt: skip
                    dropped = sum(1 for row in batch if row[0] in taken)
                    self.fenced += dropped
                    continue
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
            return stored, duplicates


# -- reading ------------------------------------------------------------------------------


def _open_for_read(path: str | os.PathLike[str]) -> sqlite3.Connection:
    from goldfive.store.history import connect_read_only  # one read-only opener, damage-tolerant text

    return connect_read_only(path)


def _list_runs(conn: sqlite3.Connection, table: str) -> list[RunInfo]:
    return list_runs_in(conn, table)


def _replay(conn: sqlite3.Connection, table: str, run_id: str) -> list[Event]:
    events: list[Event] = []
    for sequence, payload in run_rows(conn, run_id, table):
        try:
            events.append(decode_recorded(payload))
        except DecodeError as exc:
            raise ReplayError(f"run {run_id!r} sequence {sequence}: payload is not an Event: {exc}") from exc
    return events


def list_runs(path: str | os.PathLike[str], table: str = "events") -> list[RunInfo]:
    """Every run recorded in ``path``, oldest first. Missing file or table -> ReplayError."""
    check_table(table)
    conn = _open_for_read(path)
    try:
        return _list_runs(conn, table)
    except (sqlite3.Error, ValueError) as exc:  # ValueError: bytes of a damaged page that are not text
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {_one_line(exc)}") from exc
    finally:
        conn.close()


def replay_from_sqlite(path: str | os.PathLike[str], run_id: str, table: str = "events") -> list[Event]:
    """The events of ``run_id`` in sequence order ([] for an unknown run)."""
    check_table(table)
    conn = _open_for_read(path)
    try:
        return _replay(conn, table, run_id)
    except (sqlite3.Error, ValueError) as exc:  # ValueError: a damaged page's bytes that are not text
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {_one_line(exc)}") from exc
    finally:
        conn.close()


def _duplicates_text(path: str, duplicates: list[tuple[str, int]]) -> str:
    """One sentence for a batch's refused duplicates: per run, how many and which sequences."""
    runs: dict[str, list[int]] = {}
    for run_id, seq in duplicates:
        runs.setdefault(run_id, []).append(seq)
    parts = [f"run_id={run_id} sequence={seqs[0]}" + (f"..{max(seqs)} ({len(seqs)} events)" if len(seqs) > 1 else "") for run_id, seqs in runs.items()]
    return (
        f"{len(duplicates)} duplicate event{'s' if len(duplicates) != 1 else ''} not stored in {path} ({'; '.join(parts)}): "
        "another writer stored them first; further duplicates are counted, not logged"
    )


def _one_line(exc: BaseException) -> str:
    """SQLite's message, made one printable line (a damaged page can put any bytes in it)."""
    text = " ".join(str(exc).split())
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= 200 else text[:200] + "..."
