"""SQLitePersistenceSink: every run in one table keyed by (run_id, sequence), and its replay.

The sink is a :class:`~goldfive.store.recording_sink.RecordingSink` over a
:class:`~goldfive.store.sqlite_log.SqliteLog`, which owns the file: ``emit`` only queues the
event's row (``row_of``: encoded then, so later mutation of the message cannot change the
record, and serialized once); the queue is committed in one transaction when it reaches ``batch_size`` events, when
the ``flush_interval`` timer armed by its first event fires, on :meth:`flush`, on ``sync`` (a
durable run) and on :meth:`close`. Writes are synchronous on the caller's thread (a 1000-row
commit takes a few milliseconds, cheaper than a thread hop per batch) unless ``writer_thread``.

Duplicates: a row whose (run_id, sequence) is already stored is not written (the first one
stays). Each is counted on ``duplicates`` and described on ``errors``; the first batch that
has any is logged as one warning (runs and sequences), and the total once more at close,
never a line per event; and the flush that found them raises :class:`DuplicateEventError`
after storing the rest of the batch. A durable run whose lock the log holds is different:
a duplicate there means another process writes the same run, so none of that batch's rows of
the run are stored, the run is *fenced* (its events still queued and its later ones are
dropped and counted on ``fenced``) and every ``sync`` raises :class:`RecordingConflictError` naming it, which stops
the run. A timer flush has no caller, so its error is raised by
the next ``emit``/``flush``/``close``. Other write failures are raised the same way as
:class:`SinkError`; the batch is kept and retried by the next flush, up to ``max_pending``
events (then the oldest are dropped and counted on ``dropped``).
"""

from __future__ import annotations

import logging
import os
import sqlite3

from goldfive.store import locks as lock
from goldfive.errors import DuplicateEventError, RecordingConflictError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.recording_sink import MAX_PENDING, RecordingSink
from goldfive.store.sqlite import RunInfo
from goldfive.store.sqlite_log import Row, SqliteLog, list_runs, lock_refused, replay_from_sqlite, row_of

__all__ = ["DURABILITY", "RunInfo", "SQLitePersistenceSink", "list_runs", "replay_from_sqlite"]

DURABILITY = ("batched", "normal", "full")

log = logging.getLogger("goldfive.sinks")
#: How many refused (run_id, sequence) keys an error names; the rest are counted.
_KEYS_NAMED = 5


#: The kinds whose events take or drop a durable run's lock (``_track_lock``).
_LOCK_KINDS = frozenset({"run_started", "run_resumed", "run_completed", "run_aborted"})


class SQLitePersistenceSink(RecordingSink[Row]):
    """Persists events to ``path`` (a file, WAL mode) or ``":memory:"`` in table ``table``."""

    log: SqliteLog

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
        writer: str = "",
    ) -> None:
        if durability not in DURABILITY:
            raise ValueError(f"durability must be one of {', '.join(DURABILITY)}, got {durability!r}")
        #: ``writer``: who the file records this sink's events as written by (``event_writers``).
        #: "batched": rows are committed by size or timer. "normal": a run's state changes are
        #: committed before the run goes on (WAL, synchronous=NORMAL: survives a killed
        #: process, not a power cut), and the run holds a lock row while it runs. "full": the
        #: same with synchronous=FULL (an fsync per commit: survives a power cut too).
        self.durability = durability
        sqlite_log = SqliteLog(
            path, table, synchronous="FULL" if durability == "full" else "NORMAL", writer_thread=writer_thread, writer=writer
        )
        super().__init__(sqlite_log, batch_size=batch_size, flush_interval=flush_interval, max_pending=max_pending)
        sqlite_log.open()  # an unusable file is refused now, naming it (SinkError)
        self.path = sqlite_log.path
        self.table = sqlite_log.table
        self.writer_thread = writer_thread
        self._ended: set[str] = set()
        self._duplicates_summed = False
        self._logged_fences: set[str] = set()

    def __str__(self) -> str:
        return f"SQLitePersistenceSink({self.path})"

    @property
    def _conn(self) -> sqlite3.Connection:
        """The file's writer connection (tests and benches that reach into the file)."""
        return self.log.open()

    @property
    def fenced(self) -> int:
        """Events of fenced runs (another process writes them) not written."""
        return self.log.fenced

    @property
    def durability(self) -> str:
        """"batched", "normal" or "full" (see the constructor); settable before a run starts."""
        return self._durability

    @durability.setter
    def durability(self, value: str) -> None:
        self._durability = value
        # a durable sink screens each event: run locks taken and dropped, fenced runs left out
        self._screen = None if value == "batched" else self._durable_screen

    def _durable_screen(self, event: Event) -> bool:
        # (on every event's path: the lock is looked at only for the kinds that move it)
        if event.WhichOneof("payload") in _LOCK_KINDS:
            self._track_lock(event)
        fenced = self.log.fenced_runs
        if fenced and event.run_id in fenced:  # (no run id read and hashed while none is)
            self.log.fenced += 1
            return False
        return True

    #: The event's row, encoded now: the record cannot change, and no copy is needed.
    _queued = staticmethod(row_of)

    async def _append(self, batch: list[Row]) -> int:
        # ``batch`` is the sink's own (RecordingSink._write): once stored, a writer thread
        # frees its rows (``release``), the event loop does not. (_appended reads no row.)
        return await self.log.append_rows(batch, release=True)

    async def close(self) -> None:
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
            self.log.drop_lock(run_id)
        self._ended.clear()
        fenced = self.log.fenced_runs
        if fenced:
            self._drop_queued(fenced)
            raise RecordingConflictError("; ".join(fenced.values()), frozenset(fenced))

    def hold_run(self, run_id: str) -> None:
        """Take ``run_id``'s resume lock now, before its recording is read for a resume: the
        check and the write are one transaction, so of two processes resuming the run at once
        one gets it and the other is refused (RunLocked, naming the holder)."""
        try:
            held = self.log.take_lock(run_id)
        except sqlite3.Error as exc:
            raise lock_refused(run_id, self.path, exc) from None
        if held is not None:
            raise lock.RunLocked(f"run {run_id} is still running in {held.describe()}")

    def release_run(self, run_id: str) -> None:
        """Drop ``run_id``'s lock if this sink holds it (a resume refused after ``hold_run``)."""
        self.log.drop_lock(run_id)

    def _track_lock(self, event: Event) -> None:
        kind = event.WhichOneof("payload")
        if kind in ("run_started", "run_resumed") and not self.log.holds(event.run_id):
            try:
                held = self.log.take_lock(event.run_id)
            except sqlite3.Error as exc:  # the write that follows fails the same way, and says so
                log.warning("cannot lock run %s in %s: %s", event.run_id, self.path, exc)
                return
            if held is not None:
                self._fence(event.run_id, f"run {event.run_id} is being run by {held.describe()} (it holds its lock in {self.path}); this process stops it")
        elif kind in ("run_completed", "run_aborted"):
            self._ended.add(event.run_id)  # dropped once the terminal event is committed

    def _fence(self, run_id: str, why: str) -> None:
        if run_id not in self.log.fenced_runs:
            log.error("%s: %s", self, why)
            self._logged_fences.add(run_id)
            self.log.fence(run_id, why)
            self._drop_queued(self.log.fenced_runs)

    def _drop_queued(self, runs: dict[str, str]) -> None:
        """Leave the queued rows of fenced ``runs`` unwritten, counted on ``fenced``."""
        kept = [row for row in self._pending if row[0] not in runs]
        self.log.fenced += len(self._pending) - len(kept)
        self._pending = kept

    def _appended(self, batch: list[Row], stored: int) -> None:
        refused = self.log.refused
        for run_id, why in self.log.fenced_runs.items():
            if run_id not in self._logged_fences:
                self._logged_fences.add(run_id)
                log.error("%s: %s", self, why)
        if not refused:
            return
        first = not self.duplicates
        self.duplicates += len(refused)
        if first:  # one line, never one per event: later ones are summed up at close
            log.warning("SQLitePersistenceSink: %s", _duplicates_text(self.path, refused))
        keys = ", ".join(f"({run_id!r}, {seq})" for run_id, seq in refused[:_KEYS_NAMED])
        more = f" and {len(refused) - _KEYS_NAMED} more" if len(refused) > _KEYS_NAMED else ""
        self._fail(DuplicateEventError(f"{self.path}:{self.table} already holds (run_id, sequence) {keys}{more}"), quiet=True)

    def _release(self) -> None:
        """Close an unused sink from synchronous code (a resume refused before it ran)."""
        self._closed = True
        self.log.close_now()

    def list_runs(self) -> list[RunInfo]:
        """The runs in this sink's own database (committed rows; works for ``:memory:``)."""
        return self.log.committed_runs()

    def replay(self, run_id: str) -> list[Event]:
        """One run from this sink's own database, in sequence order (committed rows)."""
        return self.log.committed_run(run_id)


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
