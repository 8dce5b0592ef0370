"""SQLitePersistenceSink: every run in one table keyed by (run_id, sequence), and its replay.

``emit`` only appends a row to an in-memory batch. The batch is committed in one transaction
when it reaches ``batch_size`` rows, when the ``flush_interval`` timer armed by its first row
fires, on :meth:`flush` and on :meth:`close`. Writes are synchronous on the caller's thread:
measured, a 1000-row commit takes a few milliseconds, cheaper than a thread hop per batch.

Duplicates: a row whose (run_id, sequence) is already stored is not written (the first one
stays). Each is counted on ``duplicates``, logged as a warning naming run_id and sequence,
described on ``errors``, and the flush that found them raises :class:`DuplicateEventError`
after storing the rest of the batch. A timer flush has no caller, so its error is raised by
the next ``emit``/``flush``/``close``. Other write failures are handled the same way as
:class:`SinkError` (the batch is kept and retried by the next flush).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError

from goldfive.errors import DuplicateEventError, ReplayError, SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["RunInfo", "SQLitePersistenceSink", "list_runs", "replay_from_sqlite"]

log = logging.getLogger("goldfive.sinks")
_TABLE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_Row = tuple[str, int, str, str, int, bytes]


def _check_table(table: str) -> str:
    if not isinstance(table, str) or not _TABLE_RE.match(table):
        raise ValueError(f"invalid SQLite table name {table!r}: must match {_TABLE_RE.pattern}")
    return table


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One recorded run: how many events, their emitted_at range and the last sequence."""

    run_id: str
    event_count: int
    first_emitted_at_ms: int
    last_emitted_at_ms: int
    last_sequence: int


class SQLitePersistenceSink:
    """Persists events to ``path`` (a file, WAL mode) or ``":memory:"`` in table ``table``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        table: str = "events",
        *,
        flush_interval: float = 0.05,
        batch_size: int = 1000,
    ) -> None:
        self.table = _check_table(table)
        self.path = os.fspath(path)
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.duplicates = 0
        self.errors: list[str] = []
        self.written = 0
        self._batch: list[_Row] = []
        self._timer: asyncio.TimerHandle | None = None
        self._failure: SinkError | None = None
        self._closed = False
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None)  # explicit transactions
        except sqlite3.Error as exc:
            raise SinkError(f"cannot open SQLite database {self.path!r}: {exc}") from exc
        try:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints, safe in WAL
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {table} ("
                "run_id TEXT NOT NULL, sequence INTEGER NOT NULL, event_id TEXT NOT NULL,"
                " kind TEXT NOT NULL, emitted_at_ms INTEGER NOT NULL, payload BLOB NOT NULL,"
                " PRIMARY KEY (run_id, sequence)) WITHOUT ROWID"
            )
        except sqlite3.Error as exc:
            self._conn.close()
            raise SinkError(f"cannot use SQLite database {self.path!r}: {exc}") from exc
        self._insert = f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?)"

    async def emit(self, event: Event) -> None:
        if self._closed:
            raise SinkError(f"SQLitePersistenceSink({self.path}) is closed")
        self._raise_failure()
        ts = event.emitted_at
        self._batch.append(
            (
                event.run_id,
                event.sequence,
                event.event_id,
                event.WhichOneof("payload") or "",
                ts.seconds * 1000 + ts.nanos // 1_000_000,
                event.SerializeToString(),
            )
        )
        if len(self._batch) >= self.batch_size:
            self._flush_batch()
            self._raise_failure()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_interval, self._on_timer)

    async def flush(self) -> None:
        """Commit the pending batch now."""
        self._flush_batch()
        self._raise_failure()

    async def close(self) -> None:
        """Commit the pending batch and close the database. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._flush_batch()
        finally:
            self._conn.close()
        self._raise_failure()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pending(self) -> int:
        return len(self._batch)

    def list_runs(self) -> list[RunInfo]:
        """The runs in this sink's own database (committed rows; works for ``:memory:``)."""
        return _list_runs(self._conn, self.table)

    def replay(self, run_id: str) -> list[Event]:
        """One run from this sink's own database, in sequence order (committed rows)."""
        return _replay(self._conn, self.table, run_id)

    # -- internals --------------------------------------------------------------------------

    def _on_timer(self) -> None:
        self._timer = None
        self._flush_batch()  # a failure is recorded and raised from the next call

    def _flush_batch(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        try:
            duplicates = self._write(batch)
        except sqlite3.Error as exc:
            self._batch[:0] = batch  # keep for the next flush: persistence never drops
            self._fail(SinkError(f"writing {len(batch)} events to {self.path} failed: {exc}"))
            return
        self.written += len(batch) - len(duplicates)
        if duplicates:
            self.duplicates += len(duplicates)
            for run_id, seq in duplicates:
                log.warning("SQLitePersistenceSink: duplicate event run_id=%s sequence=%d not stored", run_id, seq)
            keys = ", ".join(f"({run_id!r}, {seq})" for run_id, seq in duplicates)
            self._fail(DuplicateEventError(f"{self.path}:{self.table} already holds (run_id, sequence) {keys}"))

    def _write(self, batch: list[_Row]) -> list[tuple[str, int]]:
        """Commit ``batch``; return the (run_id, sequence) keys refused as duplicates."""
        conn = self._conn
        conn.execute("BEGIN")
        try:
            conn.executemany(self._insert, batch)
        except sqlite3.IntegrityError:
            # Rare path: redo the batch row by row to learn exactly which keys collide.
            conn.execute("ROLLBACK")
            conn.execute("BEGIN")
            duplicates: list[tuple[str, int]] = []
            try:
                for row in batch:
                    try:
                        conn.execute(self._insert, row)
                    except sqlite3.IntegrityError:
                        duplicates.append((row[0], row[1]))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return duplicates
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return []

    def _fail(self, error: SinkError) -> None:
        if not isinstance(error, DuplicateEventError):
            log.error("SQLitePersistenceSink: %s", error)
        self.errors.append(str(error))
        if self._failure is None:  # the first failure is the one raised
            self._failure = error

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure


# -- reading ------------------------------------------------------------------------------


def _open_for_read(path: str | os.PathLike[str]) -> sqlite3.Connection:
    p = Path(path)
    if not p.is_file():
        raise ReplayError(f"no SQLite recording at {os.fspath(path)!r}")
    try:
        return sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ReplayError(f"cannot open SQLite recording {os.fspath(path)!r}: {exc}") from exc


def _list_runs(conn: sqlite3.Connection, table: str) -> list[RunInfo]:
    rows = conn.execute(
        f"SELECT run_id, COUNT(*), MIN(emitted_at_ms), MAX(emitted_at_ms), MAX(sequence)"
        f" FROM {_check_table(table)} GROUP BY run_id ORDER BY MIN(emitted_at_ms), run_id"
    ).fetchall()
    return [RunInfo(*row) for row in rows]


def _replay(conn: sqlite3.Connection, table: str, run_id: str) -> list[Event]:
    rows = conn.execute(
        f"SELECT sequence, payload FROM {_check_table(table)} WHERE run_id = ? ORDER BY sequence", (run_id,)
    )
    events: list[Event] = []
    for sequence, payload in rows:
        try:
            events.append(Event.FromString(payload))
        except DecodeError as exc:
            raise ReplayError(f"run {run_id!r} sequence {sequence}: payload is not an Event: {exc}") from exc
    return events


def list_runs(path: str | os.PathLike[str], table: str = "events") -> list[RunInfo]:
    """Every run recorded in ``path``, oldest first. Missing file or table -> ReplayError."""
    _check_table(table)
    conn = _open_for_read(path)
    try:
        return _list_runs(conn, table)
    except sqlite3.Error as exc:
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {exc}") from exc
    finally:
        conn.close()


def replay_from_sqlite(path: str | os.PathLike[str], run_id: str, table: str = "events") -> list[Event]:
    """The events of ``run_id`` in sequence order ([] for an unknown run)."""
    _check_table(table)
    conn = _open_for_read(path)
    try:
        return _replay(conn, table, run_id)
    except sqlite3.Error as exc:
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {exc}") from exc
    finally:
        conn.close()
