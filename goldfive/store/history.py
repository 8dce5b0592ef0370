"""RunHistory: one recorded run's events read from SQLite by sequence range, in chunks.

Nothing is held between reads, so serving a run costs one chunk of memory per reader however
long its history is. A row whose payload does not decode to the Event its (run_id, sequence)
key names is skipped and counted on ``damaged`` (each sequence once, however often it is read).
A read the database itself refuses (a corrupted page) ends the readable history there and says
so on ``history_error``; the events before it are still served.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Collection, Generator
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError

from goldfive.compat import decode_recorded, varint
from goldfive.errors import ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.pb.goldfive.v1.service_pb2 import EventBatch
from goldfive.store.sqlite import next_run_id, run_count_and_last, run_first_emitted

__all__ = ["SUMMARY_KINDS", "RunHistory", "RunRecord", "check_database", "oldest_first", "read_record", "recorded_run_ids", "recorded_runs"]

log = logging.getLogger("goldfive.store")

CHUNK = 1000
#: The event kinds that shape a run's summary and snapshot (phase, task statuses, plan, goal,
#: pending approvals and questions, pause, usage and budget). Progress, agent steps and drift
#: reports, the bulk of a long run, do not.
SUMMARY_KINDS: frozenset[str] = frozenset(
    {
        "run_started", "goal_derived", "run_completed", "run_aborted", "plan_submitted", "plan_revised",
        "task_started", "task_completed", "task_failed", "task_cancelled", "task_blocked", "task_transitioned",
        "approval_requested", "approval_granted", "approval_rejected", "control_received", "control_acked",
        "approval_reminded", "approval_escalated", "approval_reviewed",
        "question_asked", "question_answered",
        "steer_queued", "steer_queue_changed", "guidance_added", "guidance_removed",
        "usage_recorded", "budget_changed", "budget_warning", "budget_reached",
        "run_resumed", "recording_failed",
    }
)  # fmt: skip


def connect_read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    p = Path(path)
    if not p.is_file():
        raise ReplayError(f"no SQLite recording at {os.fspath(path)!r}")
    try:
        conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ReplayError(f"cannot open SQLite recording {os.fspath(path)!r}: {exc}") from exc
    # A damaged page can hold bytes that are not UTF-8 in a text column: read them replaced
    # (a run id that no longer matches is then a run of its own), never a UnicodeDecodeError.
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    return conn


def check_database(path: str | os.PathLike[str]) -> str | None:
    """None when SQLite's ``PRAGMA quick_check`` finds nothing wrong (or there is no file
    yet), else its findings in one line."""
    if not Path(path).is_file():
        return None
    try:
        conn = connect_read_only(path)
        try:
            rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)")]
        finally:
            conn.close()
    except (sqlite3.Error, ReplayError) as exc:
        return str(exc)
    if rows == ["ok"]:
        return None
    return "; ".join(rows) or "the check returned nothing"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What the database says about one run without decoding it (``error``: why not all)."""

    run_id: str
    event_count: int
    last_sequence: int
    error: str = ""


def recorded_runs(conn: sqlite3.Connection, table: str = "events") -> list[RunRecord]:
    """Every run in ``table``. On a damaged file each run is asked for on its own, so one
    unreadable run does not hide the others."""
    try:
        rows = conn.execute(
            f"SELECT run_id, COUNT(*), MAX(sequence) FROM {table} GROUP BY run_id ORDER BY MIN(emitted_at_ms), run_id"
        ).fetchall()
        return [RunRecord(r, n, last if isinstance(last, int) else -1) for r, n, last in rows]
    except sqlite3.OperationalError:
        raise  # no such table: not damage
    except sqlite3.DatabaseError as exc:
        log.warning("listing runs in one pass failed (%s); reading them one by one", exc)
    out: list[RunRecord] = []
    after = ""
    while True:
        try:
            row = conn.execute(f"SELECT run_id FROM {table} WHERE run_id > ? ORDER BY run_id LIMIT 1", (after,)).fetchone()
        except sqlite3.DatabaseError as exc:
            log.error("run ids after %r are unreadable: %s", after, exc)
            return out
        if row is None:
            return out
        after = row[0]
        try:
            n, last = conn.execute(f"SELECT COUNT(*), MAX(sequence) FROM {table} WHERE run_id = ?", (after,)).fetchone()
            out.append(RunRecord(after, n, last if isinstance(last, int) else -1))
        except sqlite3.DatabaseError as exc:
            out.append(RunRecord(after, 0, -1, f"part of its history is unreadable: {exc}"))


def recorded_run_ids(conn: sqlite3.Connection, table: str = "events", *, prefix: str = "", ordered: bool = True) -> list[str]:
    """The ids of the runs in ``table`` (those starting with ``prefix``), oldest first (by
    their first event; with ``ordered=False`` in id order), read a seek per run: no event is
    decoded and no run's rows are scanned, so a store of millions of events lists its runs in
    milliseconds. On a damaged file the ids read before the damage are returned (and the damage
    logged)."""
    below = prefix + "\uffff" if prefix else None
    ids: list[str] = []
    after = prefix
    while True:
        try:
            rid = next_run_id(conn, after, below, table, inclusive=not ids)
        except sqlite3.OperationalError:
            raise  # no such table: not damage
        except sqlite3.DatabaseError as exc:
            log.error("run ids after %r are unreadable: %s", after, exc)
            break
        if rid is None:
            break
        ids.append(rid)
        after = rid
    return oldest_first(conn, ids, table) if ordered else ids


def oldest_first(conn: sqlite3.Connection, run_ids: list[str], table: str = "events") -> list[str]:
    """``run_ids`` ordered by their first stored event (a seek each), then by id."""
    firsts: dict[str, int] = {}
    for rid in run_ids:
        try:
            firsts[rid] = run_first_emitted(conn, rid, table) or 0
        except sqlite3.DatabaseError:
            firsts[rid] = 0
    return sorted(run_ids, key=lambda r: (firsts[r], r))


def read_record(conn: sqlite3.Connection, run_id: str, table: str = "events") -> RunRecord:
    """What the database says about one run (its events counted, nothing decoded)."""
    try:
        n, last = run_count_and_last(conn, run_id, table)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as exc:
        return RunRecord(run_id, 0, -1, f"part of its history is unreadable: {exc}")
    return RunRecord(run_id, n, last)


class RunHistory:
    """The stored events of ``run_id`` in the SQLite file ``path``, read on demand."""

    def __init__(self, path: str | os.PathLike[str], run_id: str, table: str = "events", *, conn: sqlite3.Connection | None = None) -> None:
        self.path = os.fspath(path)
        self.run_id = run_id
        self.table = table
        #: A read-only connection to read through (its owner closes it), else one is opened
        #: for each read and closed after it.
        self.conn = conn
        self.history_error = ""
        self._bad: set[int] = set()

    @property
    def damaged(self) -> int:
        """Rows skipped as undecodable, so far."""
        return len(self._bad)

    def events(self, after: int = -1, *, kinds: Collection[str] | None = None, chunk: int = CHUNK) -> Generator[Event, None, None]:
        """Events with sequence > ``after`` (of the ``kinds`` given, else all), in sequence
        order, read ``chunk`` rows at a time. Closing the iterator releases the connection."""
        rows = self._rows(after, kinds, chunk)
        try:
            for block in rows:
                for sequence, payload in block:
                    ev = self._decode(sequence, payload)
                    if ev is not None:
                        yield ev
        finally:
            rows.close()

    def batches(self, after: int = -1, *, chunk: int = CHUNK, max_bytes: int | None = None) -> Generator[EventBatch, None, None]:
        """:meth:`events` a chunk at a time, as ``EventBatch`` messages (none empty): each
        chunk's payloads are decoded in one parse of their concatenation (what an EventBatch
        is on the wire), and checked against their rows; a chunk with a bad row is decoded row
        by row, the bad one skipped and counted as :meth:`events` does. With ``max_bytes`` a
        chunk is cut where its rows' payloads pass that many bytes (at least one row a
        batch): a thousand large events are more than a gRPC message may carry."""
        rows = self._rows(after, None, chunk)
        try:
            for whole in rows:
                for block in _cut(whole, max_bytes) if max_bytes is not None else (whole,):
                    batch = self._bulk(block)
                    if batch is None:
                        batch = EventBatch(events=[ev for s, p in block if (ev := self._decode(s, p)) is not None])
                    if batch.events:
                        yield batch
        finally:
            rows.close()

    def _bulk(self, block: list[tuple[int, bytes]]) -> EventBatch | None:
        try:
            batch = EventBatch.FromString(b"".join([b"\x0a" + varint(len(p)) + p for _, p in block]))
        except DecodeError:
            return None
        rid = self.run_id
        if len(batch.events) != len(block):
            return None
        for ev, (sequence, _) in zip(batch.events, block):
            if ev.sequence != sequence or ev.run_id != rid or not ev.recording_schema:
                return None  # not this row's event, or recorded before the v1 numbering
            ev.ClearField("recording_schema")
        return batch

    def _rows(
        self, after: int, kinds: Collection[str] | None, chunk: int
    ) -> Generator[list[tuple[int, bytes]], None, None]:
        """The run's (sequence, payload) rows after ``after``, ``chunk`` at a time; a row that
        is not (int, bytes) is counted as damaged; a refused read ends the history there."""
        try:
            conn = self.conn if self.conn is not None else connect_read_only(self.path)
        except ReplayError as exc:
            self._unreadable(after, str(exc))
            return
        where = "run_id = ? AND sequence > ?"
        extra: tuple[str, ...] = ()
        if kinds is not None:
            where += f" AND kind IN ({', '.join('?' * len(kinds))})"
            extra = tuple(kinds)
        query = f"SELECT sequence, payload FROM {self.table} WHERE {where} ORDER BY sequence LIMIT ?"
        last = after
        try:
            while True:
                try:
                    rows = conn.execute(query, (self.run_id, last, *extra, chunk)).fetchall()
                except sqlite3.DatabaseError as exc:
                    if chunk > 1:
                        chunk = 1  # damaged pages ahead: read row by row up to them
                        continue
                    self._unreadable(last, str(exc))
                    return
                good = []
                for sequence, payload in rows:
                    if not isinstance(sequence, int) or not isinstance(payload, bytes):
                        self._bad.add(-len(self._bad) - 1)  # a damaged row: counted, never guessed
                        continue
                    last = sequence
                    good.append((sequence, payload))
                if good:
                    yield good
                if len(rows) < chunk:
                    return
        finally:
            if conn is not self.conn:
                conn.close()

    def event_ids(self) -> list[str]:
        """The stored event ids of this run (read from their column, nothing decoded)."""
        try:
            conn = connect_read_only(self.path)
        except ReplayError:
            return []
        try:
            return [r[0] for r in conn.execute(f"SELECT event_id FROM {self.table} WHERE run_id = ?", (self.run_id,))]
        except sqlite3.DatabaseError as exc:
            self._unreadable(-1, str(exc))
            return []
        finally:
            conn.close()

    def _decode(self, sequence: int, payload: bytes) -> Event | None:
        try:
            ev = decode_recorded(payload)
        except DecodeError as exc:
            problem = f"payload is not an Event ({exc})"
        else:
            if ev.sequence == sequence and ev.run_id == self.run_id:
                return ev
            problem = f"payload is event {ev.run_id!r}/{ev.sequence}, not this row's"
        if sequence not in self._bad:
            self._bad.add(sequence)
            log.warning("run %s sequence %d skipped: %s", self.run_id, sequence, problem)
        return None

    def _unreadable(self, after: int, why: str) -> None:
        if not self.history_error:
            log.error("run %s: history after sequence %d is unreadable: %s", self.run_id, after, why)
        self.history_error = f"history after sequence {after} is unreadable: {why}"


def _cut(block: list[tuple[int, bytes]], max_bytes: int) -> list[list[tuple[int, bytes]]]:
    """``block`` in runs of rows whose payloads come to about ``max_bytes`` at most, each
    at least one row (a row's payload is its event, encoded)."""
    out: list[list[tuple[int, bytes]]] = []
    start, size = 0, 0
    for i, (_, payload) in enumerate(block):
        n = len(payload) + 6  # (the event's tag and length in the batch)
        if i > start and size + n > max_bytes:
            out.append(block[start:i])
            start, size = i, 0
        size += n
    out.append(block[start:])
    return out
