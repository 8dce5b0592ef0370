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
import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from itertools import chain
from operator import itemgetter

from google.protobuf.message import DecodeError

from goldfive.compat import RECORDING_MARK, decode_recorded
from goldfive.store import locks
from goldfive.errors import ReplayError, ResumeRefused, SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.history import (
    CHUNK,
    RunHistory,
    RunRecord,
    check_database,
    connect_read_only,
    oldest_first,
    read_record,
    recorded_run_ids,
)
from goldfive.store.naming import match_run
from goldfive.store.provenance import Writers
from goldfive.store.sqlite import (
    RunInfo,
    Statements,
    add_writer,
    check_table,
    create_table,
    forget_writers,
    has_events_before,
    last_writer,
    list_runs_in,
    next_run_id,
    run_last_sequence,
    run_rows,
    unfinished_runs,
    writers_of,
)

__all__ = ["SYNCHRONOUS", "Row", "SqliteLog", "list_runs", "replay_from_sqlite", "row_of"]

#: PRAGMA synchronous of a writer: NORMAL (WAL: durable at checkpoints, survives a killed
#: process) or FULL (an fsync per commit: survives a power cut too).
SYNCHRONOUS = ("NORMAL", "FULL")
_WRITER_CACHE_KB = 32 * 1024
#: One event as the ``events`` table stores it: (run_id, sequence, event_id, kind,
#: emitted_at_ms, payload), the payload the event's recorded bytes (``recorded_bytes``), held
#: as a bytearray (stored as the same BLOB; see ``row_of``).
Row = tuple[str, int, str, str, int, bytes | bytearray]
_row_key = itemgetter(0, 1)  # (run_id, sequence)
#: Rows sorted by one call in the worker thread. A sort is one C call that holds the GIL from
#: start to end: a hub's group commit of 20,000 rows held it ~12 ms, the hub's event loop (and
#: a control waiting in it) with it; 4,000 rows take ~0.6 ms, and the loop's thread can take
#: the GIL between two slices.
_SORT_SLICE = 4000


def _sorted_in_slices(rows: list[Row]) -> list[Row]:
    """``rows`` sorted by key slice by slice (each slice in order, the whole nearly so), in a
    new list (``rows`` is the caller's, kept as it is to retry)."""
    if len(rows) <= _SORT_SLICE:
        return sorted(rows, key=_row_key)
    out: list[Row] = []
    for i in range(0, len(rows), _SORT_SLICE):
        out.extend(sorted(rows[i : i + _SORT_SLICE], key=_row_key))
    return out


#: Rows freed at a time by ``_free`` (about 0.1 ms), the GIL let go between two slices.
_FREE_SLICE = 1000


def _free(rows: list[Row]) -> None:
    """Empty ``rows`` (the last references to them) from the end, a slice at a time, letting
    the GIL go between two: freeing a group commit's 60,000 rows is ~6 ms of one thread, which
    the event loop's thread would otherwise wait for up to the switch interval (5 ms)."""
    while rows:
        del rows[-_FREE_SLICE:]
        time.sleep(0)  # (releases the GIL: a thread waiting for it takes it now)


# The payload is built as a bytearray because Python's sqlite3 (3.11 at least) binds exact
# int, float, str and bytearray parameters directly, but sends ``bytes`` through its adapter
# lookup first (a tuple built and hashed, two attribute lookups): about 2,000 instructions per
# row more than the bytearray costs to build (callgrind, bench/bench_core_floor.py's SQLite row).
_joined = bytearray().join


def row_of(event: Event) -> Row:
    """``event``'s row, encoded now (the SQLite and PostgreSQL sinks queue it at emit: the
    record is fixed then)."""
    ts = event.emitted_at
    return (
        event.run_id,
        event.sequence,
        event.event_id,
        event.WhichOneof("payload") or "",
        ts.seconds * 1000 + ts.nanos // 1_000_000,
        _joined((event.SerializeToString(), RECORDING_MARK)),  # recorded_bytes(event), without the call
    )


class SqliteLog:
    """The EventLog of ``path`` (a file, WAL mode, or ``":memory:"``), table ``table``. The
    file is opened for writing on the first append or lock (``open`` opens it now)."""

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
        self.path = os.fspath(path)
        self.table = check_table(table)
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
        #: Inside ``reading()``: the one read-only connection the reads of that thread share
        #: (a hub reads from its loop and from worker threads at once).
        self._local = threading.local()

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
            loop.run_in_executor(None, _free, batch)
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
            rows = _sorted_in_slices(rows)
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
            raise SinkError(f"cannot forget run {run_id} in {self.path}: {one_line(exc)}") from exc
        if forgotten:
            self._writers.forget(run_id)
        return forgotten

    async def writers(self, run_id: str) -> list[tuple[int, str]]:
        """Who wrote the run's events: (from_sequence, writer) ranges, in order."""
        conn = connect_read_only(self.path)
        try:
            return writers_of(conn, run_id, self.table)
        except (sqlite3.Error, ValueError) as exc:
            raise ReplayError(f"cannot read the writers of run {run_id!r} in {self.path!r}: {one_line(exc)}") from exc
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

    @property
    def _reader(self) -> sqlite3.Connection | None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        return conn

    @_reader.setter
    def _reader(self, conn: sqlite3.Connection | None) -> None:
        self._local.conn = conn

    # -- reading ------------------------------------------------------------------------
    # The EventLog's reads (async), each over the synchronous read below it: the replay picker
    # and ``resume`` read a file before any event loop runs, through the same code.
    async def events(self, run_id: str, after: int = -1, *, chunk: int = CHUNK) -> AsyncIterator[Event]:
        for ev in self.history(run_id).events(after, chunk=chunk):
            yield ev

    async def runs(self) -> list[RunInfo]:
        return self.list_runs()

    async def resolve(self, ref: str) -> str:
        return self.resolve_now(ref)

    def history(self, run_id: str, *, kept: bool = False) -> RunHistory:
        """One run's reader: its events from a sequence on, read a chunk at a time from the
        file (nothing held between reads), undecodable rows skipped and counted on its
        ``damaged``, a read the file refuses ending it there (``history_error``). Inside
        ``reading()`` it reads through that connection, unless ``kept`` (a reader kept after
        it, as a hub keeps each recorded run's: a connection per read)."""
        return RunHistory(self.path, run_id, self.table, conn=None if kept else self._reader)

    # The hub's reads of its file (goldfive.remote.host): each a seek or a few, through the
    # connection of ``reading()``; sqlite3.OperationalError (no table yet) as SQLite raises it.
    def run_ids(self, prefix: str = "", *, ordered: bool = True) -> list[str]:
        """The ids of the stored runs starting with ``prefix``, oldest first (with ``ordered``,
        else in id order): a seek per run (goldfive.store.history.recorded_run_ids)."""
        with self.reading():
            assert self._reader is not None
            return recorded_run_ids(self._reader, self.table, prefix=prefix, ordered=ordered)

    def oldest_first(self, run_ids: list[str]) -> list[str]:
        """``run_ids`` ordered by their first stored event (a seek each), then by id."""
        with self.reading():
            assert self._reader is not None
            return oldest_first(self._reader, run_ids, self.table)

    def has_run(self, run_id: str) -> bool:
        """Whether the file holds events of ``run_id`` (one seek)."""
        with self.reading():
            assert self._reader is not None
            return next_run_id(self._reader, run_id, table=self.table, inclusive=True) == run_id

    def last_sequence(self, run_id: str) -> int:
        """The run's last stored sequence (one seek), -1 when it has none."""
        with self.reading():
            assert self._reader is not None
            return run_last_sequence(self._reader, run_id, self.table)

    def record(self, run_id: str) -> RunRecord:
        """What the file says of one run without decoding it: its events counted, its last
        sequence (a damaged run's ``error`` says why not)."""
        with self.reading():
            assert self._reader is not None
            return read_record(self._reader, run_id, self.table)

    @contextlib.contextmanager
    def reading(self) -> Iterator[SqliteLog]:
        """The synchronous reads inside share one read-only connection (the replay picker reads
        two events of each of many runs: a connection each made it about 8 times slower).
        ReplayError when the file cannot be opened."""
        if self._reader is not None:
            yield self
            return
        self._reader = connect_read_only(self.path)
        try:
            yield self
        finally:
            conn, self._reader = self._reader, None
            conn.close()

    def list_runs(self) -> list[RunInfo]:
        """``runs`` for synchronous callers: every run, oldest first. ReplayError when the file
        or its table cannot be read."""
        with self.reading():
            assert self._reader is not None
            try:
                return list_runs_in(self._reader, self.table)
            except (sqlite3.Error, ValueError) as exc:  # ValueError: bytes of a damaged page that are not text
                raise ReplayError(f"cannot read table {self.table!r} of {self.path!r}: {one_line(exc)}") from exc

    def resolve_now(self, ref: str) -> str:
        """``resolve`` for synchronous callers: the run ``ref`` names, its full id or a unique
        prefix of 4+ characters (goldfive.store.naming.match_run), found with a seek per run
        starting with ``ref``; every run is listed only to say what the file holds when none
        does. ReplayError names the problem."""
        with self.reading():
            return self._resolve(ref)

    def _resolve(self, ref: str) -> str:
        conn = self._reader
        assert conn is not None
        try:
            hits = recorded_run_ids(conn, self.table, prefix=ref, ordered=False) if ref else []
            if ref in hits or (len(ref) >= 4 and hits):
                return match_run(hits, ref, self.path)  # the run, or "names more than one run"
            ids = recorded_run_ids(conn, self.table)
        except (sqlite3.Error, ValueError) as exc:  # ValueError: a damaged page's bytes that are not text
            raise ReplayError(f"cannot read table {self.table!r} of {self.path!r}: {one_line(exc)}") from exc
        return match_run(ids, ref, self.path)

    def lock_holder(self, run_id: str) -> locks.LockHolder | None:
        """Who holds ``run_id``'s lock in the file (alive or not: ``LockHolder.alive`` says),
        read without taking it; None when nobody. ResumeRefused (one line) when the file or
        its locks cannot be read."""
        try:
            with self.reading():
                assert self._reader is not None
                return locks.holder(self._reader, run_id)
        except ReplayError as exc:
            raise ResumeRefused(str(exc)) from None

    def unfinished_runs(self) -> list[str]:
        """The runs with no terminal event, oldest last event first, a hub's runs left out
        (goldfive.store.sqlite.unfinished_runs). ReplayError when the file cannot be read."""
        with self.reading():
            assert self._reader is not None
            try:
                return unfinished_runs(self._reader, self.table)
            except (sqlite3.Error, ValueError) as exc:
                raise ReplayError(f"{self.path} is not a goldfive recording: {one_line(exc)}") from exc

    async def check(self) -> str | None:
        """SQLite's own ``PRAGMA quick_check`` of the file (goldfive.store.history.check_database)."""
        return await asyncio.to_thread(check_database, self.path)

    def committed_runs(self) -> list[RunInfo]:
        """The runs committed through this log's own connection (works for ``:memory:``)."""
        return list_runs_in(self.open(), self.table)

    def committed_run(self, run_id: str) -> list[Event]:
        """One run committed through this log's own connection, in sequence order."""
        return _replay(self.open(), self.table, run_id)

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
    conn = connect_read_only(path)
    try:
        return list_runs_in(conn, table)
    except (sqlite3.Error, ValueError) as exc:  # ValueError: bytes of a damaged page that are not text
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {one_line(exc)}") from exc
    finally:
        conn.close()


def replay_from_sqlite(path: str | os.PathLike[str], run_id: str, table: str = "events") -> list[Event]:
    """The events of ``run_id`` in sequence order ([] for an unknown run)."""
    check_table(table)
    conn = connect_read_only(path)
    try:
        return _replay(conn, table, run_id)
    except (sqlite3.Error, ValueError) as exc:  # ValueError: a damaged page's bytes that are not text
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {one_line(exc)}") from exc
    finally:
        conn.close()


def one_line(exc: BaseException) -> str:
    """SQLite's message, made one printable line (a damaged page can put any bytes in it)."""
    text = " ".join(str(exc).split())
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= 200 else text[:200] + "..."


def lock_refused(run_id: str, path: str, exc: sqlite3.Error) -> ResumeRefused:
    return ResumeRefused(f"cannot lock run {run_id} in {path}: {one_line(exc)}")
