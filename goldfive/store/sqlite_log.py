"""SqliteLog: the EventLog of a SQLite recording file, the one writer of its ``events`` table.

``goldfive run`` records into it (``goldfive.sinks.SQLitePersistenceSink``, a RecordingSink over
this log), so does a hub (``goldfive.store.recorder.RunRecorder``); ``replay``, ``resume`` and
the hub read it back.

Writing: ``append`` stores a batch in one transaction (multi-row inserts; with
``writer_thread`` in a worker thread, the rows sorted by key: a hub's group commit of many
runs). A row whose (run_id, sequence) is stored already is not written (the first one stays):
the batch is redone row by row to learn which, and their keys are on ``refused``. A run whose
lock this log holds is different: a stored key there means another process writes the same
run, so none of that batch's rows of the run are stored and the run is *fenced*: nothing more
of it is stored (``fenced_runs`` says why, ``fenced`` counts its events).

Locks: ``lock(run_id, holder)`` takes the run's lock row in the file (goldfive.store.locks:
one writer continues a run at a time), ``unlock`` drops it; ``close`` drops every lock it holds.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Sequence
from itertools import chain

from goldfive.errors import ReplayError, ResumeRefused, SinkError, printable_line
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store import locks
from goldfive.store.history import connect_read_only
from goldfive.store.provenance import Writers
from goldfive.store.sqlite import (
    RunInfo,
    Statements,
    add_writer,
    create_table,
    forget_writers,
    has_events_before,
    last_writer,
    list_runs_in,
    writers_of,
)
from goldfive.store.sqlite_read import SqliteReader, list_runs, replay_from_sqlite, replay_in
from goldfive.store.sqlite_rows import Row, free_in_slices, row_of, sorted_in_slices

__all__ = ["SYNCHRONOUS", "Row", "SqliteLog", "list_runs", "replay_from_sqlite", "row_of"]

#: PRAGMA synchronous of a writer: NORMAL (WAL: durable at checkpoints, survives a killed
#: process) or FULL (an fsync per commit: survives a power cut too).
SYNCHRONOUS = ("NORMAL", "FULL")
_WRITER_CACHE_KB = 32 * 1024


class SqliteLog(SqliteReader):
    """The EventLog of ``path`` (a file, WAL mode, or ``":memory:"``), table ``table``. The
    file is opened for writing on the first append or lock (``open`` opens it now); its reads
    are SqliteReader's (goldfive.store.sqlite_read)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        table: str = "events",
        *,
        synchronous: str = "NORMAL",
        writer_thread: bool = False,
        writer: str = "",
    ) -> None:
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}, got {synchronous!r}")
        super().__init__(path, table)
        self.synchronous = synchronous
        self.writer_thread = writer_thread
        #: Who this log's appends are recorded as written by (``write_as`` names another for a run).
        self._writers = Writers(writer)
        #: The (run_id, sequence) keys the last append found stored already.
        self.refused: list[tuple[str, int]] = []
        #: Runs another process writes too: run id -> why. Nothing more of them is stored.
        self.fenced_runs: dict[str, str] = {}
        #: Events of fenced runs not stored.
        self.fenced = 0
        self._locked: dict[str, str] = {}  # run id -> the holder this log took it for
        self._conn: sqlite3.Connection | None = None
        self._inflight: asyncio.Future[int] | None = None
        self._statements: Statements | None = None

    def __str__(self) -> str:
        return f"SqliteLog({self.path})"

    # -- writing ------------------------------------------------------------------------
    def open(self) -> sqlite3.Connection:
        """The writer's connection, opened (and the table created) the first time; SinkError
        naming the file when it cannot be."""
        if self._conn is not None:
            return self._conn
        try:
            # Explicit transactions; with writer_thread the connection is used by one thread
            # at a time (RecordingSink runs one append at a time).
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=not self.writer_thread)
        except sqlite3.Error as exc:
            raise SinkError(f"cannot open SQLite database {self.path!r}: {exc}") from exc
        try:
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={self.synchronous}")
                if self.writer_thread:
                    # Many runs' rows per commit land on as many B-tree pages: keep them cached.
                    conn.execute(f"PRAGMA cache_size=-{_WRITER_CACHE_KB}")
            create_table(conn, self.table)
        except sqlite3.Error as exc:
            conn.close()
            raise SinkError(f"cannot use SQLite database {self.path!r}: {exc}") from exc
        self._statements = Statements.of(conn, self.table)
        self._conn = conn
        return conn

    async def append(self, events: Sequence[Event]) -> int:
        """Store ``events`` in one transaction; see the module doc. Returns how many were
        stored; SinkError when the write failed (nothing of the batch is stored then)."""
        return await self.append_rows([row_of(e) for e in events])

    async def append_rows(self, rows: Sequence[Row], *, release: bool = False) -> int:
        """``append`` of events encoded already (``row_of``: a SQLite sink encodes each at
        emit, so the record is fixed then and the event need not be copied). ``rows`` itself
        is not changed, except with ``release`` and a writer thread: once they are stored,
        ``rows`` (a list holding the last references to them) is emptied in a worker thread,
        soon after this returns, so they are freed there, not on the caller's event loop (a
        hub's group commit of 60,000 rows took ~6 ms of its loop to free them); a failed write
        leaves it whole."""
        self.open()
        if not self.writer_thread:
            return self._append(list(rows), False)
        # (not copied here: the worker sorts a copy; the caller keeps its own order to retry)
        batch = rows if isinstance(rows, list) else list(rows)
        await self._settle()
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(None, self._append, batch, True)
        self._inflight = fut
        # Cancelling the caller leaves the write to finish: the next append and close wait for it.
        stored = await asyncio.shield(fut)
        if self._inflight is fut:
            self._inflight = None
        if release:  # (a job of its own: the caller goes on now, its confirmations wait for no freeing)
            loop.run_in_executor(None, free_in_slices, batch)
        return stored

    async def _settle(self) -> None:
        """Wait for a write a cancelled caller left running in the worker thread."""
        while (fut := self._inflight) is not None:
            try:
                await asyncio.shield(fut)
            except Exception:  # noqa: S110 - its caller was cancelled; the failure is the write's own
                pass
            if self._inflight is fut:
                self._inflight = None

    def _append(self, rows: list[Row], sort: bool) -> int:
        self.refused = []
        if self.fenced_runs:
            fenced = self.fenced_runs
            kept = [row for row in rows if row[0] not in fenced]
            self.fenced += len(rows) - len(kept)
            rows = kept
        if sort:  # neighbouring keys together: fewer B-tree pages touched
            rows = sorted_in_slices(rows)
        try:
            return self._write(rows)
        except sqlite3.Error as exc:
            raise SinkError(f"writing {len(rows)} events to {self.path} failed: {exc}") from exc

    def _write(self, rows: list[Row]) -> int:
        conn = self.open()
        conn.execute("BEGIN")
        try:
            self._insert_rows(rows)
            noted = self._note_writers(conn, rows)
            conn.execute("COMMIT")
        except sqlite3.IntegrityError:
            self._rollback()
            return self._write_row_by_row(rows)
        except BaseException:
            self._rollback()
            raise
        self._writers.stored(noted)
        return len(rows)

    def _insert_rows(self, rows: list[Row]) -> None:
        conn, st = self.open(), self._statements
        assert st is not None
        n, step, i = len(rows), st.rows_per_insert, 0
        while n - i >= step:
            conn.execute(st.many, tuple(chain.from_iterable(rows[i : i + step])))
            i += step
        if i < n:
            conn.executemany(st.one, rows[i:])

    def _rollback(self) -> None:
        """End a failed write's transaction. SQLite has often rolled it back itself already (a
        full disk, SQLITE_FULL, does): a second ROLLBACK would fail and hide the first error."""
        if self._conn is not None and self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _write_row_by_row(self, rows: list[Row]) -> int:
        """Rare path: redo the batch row by row to learn exactly which keys collide. A
        collision in a run this log holds the lock of fences the run and the batch is redone
        without its rows (none of them is stored beside the other process's)."""
        conn, st = self.open(), self._statements
        assert st is not None
        while True:
            conn.execute("BEGIN")
            stored: list[Row] = []
            refused: list[tuple[str, int]] = []
            try:
                for row in rows:
                    if row[0] in self.fenced_runs:
                        continue
                    try:
                        conn.execute(st.one, row)
                    except sqlite3.IntegrityError:
                        refused.append((row[0], row[1]))
                    else:
                        stored.append(row)
                taken = {run_id: seq for run_id, seq in reversed(refused) if run_id in self._locked}
                if taken:
                    self._rollback()
                    for run_id, seq in taken.items():
                        self.fence(run_id, f"run {run_id}'s recording in {self.path} already holds sequence {seq}: "
                                   "another process is writing this run; this process stops it")  # fmt: skip
                    self.fenced += sum(1 for row in rows if row[0] in taken)
                    continue
                noted = self._note_writers(conn, stored)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
            self._writers.stored(noted)
            self.refused = refused
            return len(stored)

    # -- provenance (goldfive.store.provenance) ------------------------------------------
    @property
    def writer(self) -> str:
        """Who this log records its appends as written by, unless ``write_as`` says."""
        return self._writers.default

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """Record ``run_id``'s events from ``from_sequence`` on as written by ``writer``: the
        name of a credential the caller verified (a hub's runner token), never one a peer sent."""
        self._writers.assign(run_id, writer, from_sequence)

    def _note_writers(self, conn: sqlite3.Connection, rows: list[Row]) -> dict[str, str]:
        """In the append's transaction: the writer ranges ``rows`` add (see Writers.ranges)."""
        table = self.table
        ranges, lasts = self._writers.ranges(
            rows,
            lambda run_id: last_writer(conn, run_id, table),
            lambda run_id, seq: has_events_before(conn, run_id, seq, table),
        )
        for run_id, start, writer in ranges:
            add_writer(conn, run_id, start, writer, table)
        return lasts

    def writer_of(self, run_id: str, sequence: int) -> str:
        """Who an event of ``run_id`` at ``sequence`` is recorded as written by when stored."""
        return self._writers.writer_of(run_id, sequence)

    async def forget_run(self, run_id: str) -> bool:
        """Drop the provenance of ``run_id`` if it stored no event (a runner that left after
        its hello): its writer ranges, and the writer ``write_as`` named (kept in memory until
        the log closes otherwise). False, and nothing dropped, when it has events (the log
        keeps who wrote them), as ``PostgresStore.forget_run``. SinkError when the file
        cannot be written."""
        await self._settle()  # the writer's connection, never under a running write
        try:
            forgotten = forget_writers(self.open(), run_id, self.table)
        except sqlite3.Error as exc:
            raise SinkError(f"cannot forget run {run_id} in {self.path}: {printable_line(exc)}") from exc
        if forgotten:
            self._writers.forget(run_id)
        return forgotten

    async def writers(self, run_id: str) -> list[tuple[int, str]]:
        """Who wrote the run's events: (from_sequence, writer) ranges, in order."""
        conn = connect_read_only(self.path)
        try:
            return writers_of(conn, run_id, self.table)
        except (sqlite3.Error, ValueError) as exc:
            raise ReplayError(f"cannot read the writers of run {run_id!r} in {self.path!r}: {printable_line(exc)}") from exc
        finally:
            conn.close()

    def fence(self, run_id: str, why: str) -> None:
        """Store nothing more of ``run_id``: another process writes it."""
        self.fenced_runs.setdefault(run_id, why)

    # -- locks --------------------------------------------------------------------------
    async def lock(self, run_id: str, holder: str) -> locks.LockHolder | None:
        """Take ``run_id``'s lock for ``holder``: None when it holds it now, else who does."""
        return self.take_lock(run_id, holder)

    async def unlock(self, run_id: str, holder: str) -> None:
        self.drop_lock(run_id, holder)

    def take_lock(self, run_id: str, holder: str = "") -> locks.LockHolder | None:
        """``lock`` for synchronous callers (a resume takes the lock before it reads): checked
        and written in one transaction (goldfive.store.locks.take). sqlite3.Error or SinkError
        when the file cannot be locked."""
        if self._locked.get(run_id) == holder:
            return None
        held = locks.take(self.open(), run_id, self.path, holder)
        if held is None:
            self._locked[run_id] = holder
        return held

    def drop_lock(self, run_id: str, holder: str = "") -> None:
        """Drop ``run_id``'s lock if this log holds it for ``holder``."""
        if self._locked.get(run_id) == holder:
            del self._locked[run_id]
            if self._conn is not None:
                locks.drop(self._conn, run_id, self.path, holder)

    def holds(self, run_id: str) -> bool:
        return run_id in self._locked

    # -- the writer's connection: what it committed, closing it ------------------------
    def committed_runs(self) -> list[RunInfo]:
        """The runs committed through this log's own connection (works for ``:memory:``)."""
        return list_runs_in(self.open(), self.table)

    def committed_run(self, run_id: str) -> list[Event]:
        """One run committed through this log's own connection, in sequence order."""
        return replay_in(self.open(), self.table, run_id)

    async def close(self) -> None:
        await self._settle()  # never close the connection under a running write
        self.close_now()

    def close_now(self) -> None:
        """``close`` from synchronous code (no append may be running)."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        for run_id, holder in self._locked.items():  # closed with the run still going: the next start resumes it
            locks.drop(conn, run_id, self.path, holder)
        self._locked.clear()
        conn.close()



def lock_refused(run_id: str, path: str, exc: sqlite3.Error) -> ResumeRefused:
    return ResumeRefused(f"cannot lock run {run_id} in {path}: {printable_line(exc)}")
