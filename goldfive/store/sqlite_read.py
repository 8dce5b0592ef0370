"""The reads of a SQLite recording file: ``SqliteReader`` (the read side of a
goldfive.store.sqlite_log.SqliteLog, whose writer connection it never uses) and the functions
that read a file with no log (``list_runs``, ``replay_from_sqlite``).

Every read is over a read-only connection: its own, or inside ``reading()`` the one that the
reads of that thread share."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Self

from google.protobuf.message import DecodeError

from goldfive.compat import decode_recorded
from goldfive.errors import ReplayError, ResumeRefused, printable_line
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store import locks
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
from goldfive.store.sqlite import RunInfo, check_table, list_runs_in, next_run_id, run_last_sequence, run_rows, unfinished_runs

__all__ = ["SqliteReader", "list_runs", "replay_from_sqlite", "replay_in"]


class SqliteReader:
    """The reads of the recording ``path``, table ``table`` (checked: ValueError names a bad
    one). Nothing is opened until a read."""

    def __init__(self, path: str | os.PathLike[str], table: str = "events") -> None:
        self.path = os.fspath(path)
        self.table = check_table(table)
        #: Inside ``reading()``: the one read-only connection the reads of that thread share
        #: (a hub reads from its loop and from worker threads at once).
        self._local = threading.local()

    @property
    def _reader(self) -> sqlite3.Connection | None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        return conn

    @_reader.setter
    def _reader(self, conn: sqlite3.Connection | None) -> None:
        self._local.conn = conn

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
    def reading(self) -> Iterator[Self]:
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
                raise ReplayError(f"cannot read table {self.table!r} of {self.path!r}: {printable_line(exc)}") from exc

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
            raise ReplayError(f"cannot read table {self.table!r} of {self.path!r}: {printable_line(exc)}") from exc
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
                raise ReplayError(f"{self.path} is not a goldfive recording: {printable_line(exc)}") from exc

    async def check(self) -> str | None:
        """SQLite's own ``PRAGMA quick_check`` of the file (goldfive.store.history.check_database)."""
        return await asyncio.to_thread(check_database, self.path)


def replay_in(conn: sqlite3.Connection, table: str, run_id: str) -> list[Event]:
    """The events of ``run_id`` read over ``conn``, in sequence order; ReplayError names a row
    that is not an Event."""
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
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {printable_line(exc)}") from exc
    finally:
        conn.close()


def replay_from_sqlite(path: str | os.PathLike[str], run_id: str, table: str = "events") -> list[Event]:
    """The events of ``run_id`` in sequence order ([] for an unknown run)."""
    check_table(table)
    conn = connect_read_only(path)
    try:
        return replay_in(conn, table, run_id)
    except (sqlite3.Error, ValueError) as exc:  # ValueError: a damaged page's bytes that are not text
        raise ReplayError(f"cannot read table {table!r} of {os.fspath(path)!r}: {printable_line(exc)}") from exc
    finally:
        conn.close()
