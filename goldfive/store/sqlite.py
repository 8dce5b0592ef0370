"""The SQL of a SQLite recording's ``events`` table, in one place.

Every statement that reads or writes the events table of a SQLite recording is here (or in the
other modules of ``goldfive.store``): the sink that writes it (``SQLitePersistenceSink``), the
replay picker, ``resume`` and the ``EventLog`` (``goldfive.store.log.SqliteLog``) call these
functions, so the table's layout is known to the store alone (a test scans the package for SQL
on the table anywhere else).

The table: ``(run_id TEXT, sequence INTEGER, event_id TEXT, kind TEXT, emitted_at_ms INTEGER,
payload BLOB)``, keyed by ``(run_id, sequence)``, ``WITHOUT ROWID``; ``payload`` is the event's
recorded bytes (``goldfive.compat.recorded_bytes``). Beside it, ``event_writers`` ``(run_id,
from_sequence, writer)``: who wrote a run's events from which sequence on, filled by the log in
the transaction that stores them (a file written before it has none: its writers are unknown).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "RunInfo",
    "Statements",
    "add_writer",
    "check_table",
    "create_table",
    "event_payload_at",
    "forget_writers",
    "has_events_before",
    "last_writer",
    "list_runs_in",
    "next_run_id",
    "run_count_and_last",
    "run_first_emitted",
    "run_last_sequence",
    "run_ids_with_prefix",
    "run_rows",
    "run_start_and_last",
    "unfinished_runs",
    "writers_of",
]

_TABLE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_ROWS_PER_INSERT = 250


def check_table(table: str) -> str:
    """``table`` when it is a plain SQL name (it is put into statements), else ValueError."""
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


def create_table(conn: sqlite3.Connection, table: str = "events") -> None:
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {check_table(table)} ("
        "run_id TEXT NOT NULL, sequence INTEGER NOT NULL, event_id TEXT NOT NULL,"
        " kind TEXT NOT NULL, emitted_at_ms INTEGER NOT NULL, payload BLOB NOT NULL,"
        " PRIMARY KEY (run_id, sequence)) WITHOUT ROWID"
    )
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_writers(table)} ("
        "run_id TEXT NOT NULL, from_sequence INTEGER NOT NULL, writer TEXT NOT NULL,"
        " PRIMARY KEY (run_id, from_sequence)) WITHOUT ROWID"
    )


def _writers(table: str) -> str:
    """The writers table of events table ``table`` ("event_writers" for "events")."""
    return "event_writers" if table == "events" else f"{check_table(table)}_writers"


def last_writer(conn: sqlite3.Connection, run_id: str, table: str = "events") -> tuple[int, str] | None:
    """The run's latest writer range (from_sequence, writer), or None when it has none."""
    row = conn.execute(
        f"SELECT from_sequence, writer FROM {_writers(table)} WHERE run_id = ? ORDER BY from_sequence DESC LIMIT 1", (run_id,)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def has_events_before(conn: sqlite3.Connection, run_id: str, sequence: int, table: str = "events") -> bool:
    return conn.execute(f"SELECT 1 FROM {check_table(table)} WHERE run_id = ? AND sequence < ? LIMIT 1", (run_id, sequence)).fetchone() is not None


def add_writer(conn: sqlite3.Connection, run_id: str, from_sequence: int, writer: str, table: str = "events") -> None:
    conn.execute(
        f"INSERT INTO {_writers(table)} (run_id, from_sequence, writer) VALUES (?, ?, ?)"
        " ON CONFLICT (run_id, from_sequence) DO UPDATE SET writer = excluded.writer",
        (run_id, from_sequence, writer),
    )


def forget_writers(conn: sqlite3.Connection, run_id: str, table: str = "events") -> bool:
    """Drop the run's writer ranges if it has no stored event, in one transaction (``conn``
    in autocommit mode, none open). False, and nothing dropped, when it has events."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        stored = conn.execute(f"SELECT 1 FROM {check_table(table)} WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is not None
        if not stored:
            conn.execute(f"DELETE FROM {_writers(table)} WHERE run_id = ?", (run_id,))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return not stored


def writers_of(conn: sqlite3.Connection, run_id: str, table: str = "events") -> list[tuple[int, str]]:
    """Who wrote the run's events: (from_sequence, writer) ranges in order; [] for a file
    written before writers were recorded."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_writers(table),)).fetchone()
    if exists is None:
        return []
    rows = conn.execute(f"SELECT from_sequence, writer FROM {_writers(table)} WHERE run_id = ? ORDER BY from_sequence", (run_id,))
    return [(int(r[0]), str(r[1])) for r in rows]


@dataclass(frozen=True, slots=True)
class Statements:
    """The insert statements of a writer: one row, and ``rows_per_insert`` rows at once (one
    sqlite3_step, with the GIL released, inserts them all, where executemany takes and
    releases the GIL once per row)."""

    one: str
    many: str
    rows_per_insert: int

    @classmethod
    def of(cls, conn: sqlite3.Connection, table: str = "events") -> Statements:
        check_table(table)
        limit = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        n = max(1, min(_ROWS_PER_INSERT, limit // 6))
        one = f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?)"
        return cls(one, f"INSERT INTO {table} VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?)"] * n), n)


def list_runs_in(conn: sqlite3.Connection, table: str = "events") -> list[RunInfo]:
    """Every run in ``table``, oldest first (sqlite3.Error as SQLite raises it)."""
    rows = conn.execute(
        f"SELECT run_id, COUNT(*), MIN(emitted_at_ms), MAX(emitted_at_ms), MAX(sequence)"
        f" FROM {check_table(table)} GROUP BY run_id ORDER BY MIN(emitted_at_ms), run_id"
    ).fetchall()
    return [RunInfo(*row) for row in rows]


def run_rows(conn: sqlite3.Connection, run_id: str, table: str = "events") -> Iterator[tuple[int, bytes]]:
    """The run's (sequence, payload) rows in sequence order, as SQLite reads them."""
    yield from conn.execute(f"SELECT sequence, payload FROM {check_table(table)} WHERE run_id = ? ORDER BY sequence", (run_id,))


def event_payload_at(conn: sqlite3.Connection, run_id: str, sequence: int, table: str = "events") -> bytes | None:
    """One stored event's payload, or None when there is no such row."""
    row = conn.execute(
        f"SELECT payload FROM {check_table(table)} WHERE run_id = ? AND sequence = ?", (run_id, sequence)
    ).fetchone()
    return None if row is None else bytes(row[0])


def run_ids_with_prefix(conn: sqlite3.Connection, ref: str, table: str = "events") -> list[str]:
    """The stored run ids that start with ``ref`` (``ref`` itself included)."""
    return [
        row[0]
        for row in conn.execute(
            f"SELECT DISTINCT run_id FROM {check_table(table)} WHERE run_id >= ? AND run_id < ?", (ref, ref + "\uffff")
        )
    ]


def next_run_id(
    conn: sqlite3.Connection, after: str, below: str | None = None, table: str = "events", *, inclusive: bool = False
) -> str | None:
    """The smallest run id greater than ``after`` (or equal, with ``inclusive``) and less than
    ``below`` (if given), or None: one seek on the table's key, however many events the runs
    hold (listing the runs one after another costs one seek each, not a scan of every event)."""
    t = check_table(table)
    op = ">=" if inclusive else ">"
    if below is None:
        row = conn.execute(f"SELECT run_id FROM {t} WHERE run_id {op} ? ORDER BY run_id LIMIT 1", (after,)).fetchone()
    else:
        row = conn.execute(
            f"SELECT run_id FROM {t} WHERE run_id {op} ? AND run_id < ? ORDER BY run_id LIMIT 1", (after, below)
        ).fetchone()
    return None if row is None else str(row[0])


def run_first_emitted(conn: sqlite3.Connection, run_id: str, table: str = "events") -> int | None:
    """The emitted_at_ms of the run's first stored event (one seek), or None."""
    row = conn.execute(
        f"SELECT emitted_at_ms FROM {check_table(table)} WHERE run_id = ? ORDER BY sequence LIMIT 1", (run_id,)
    ).fetchone()
    return None if row is None or not isinstance(row[0], int) else int(row[0])


def run_last_sequence(conn: sqlite3.Connection, run_id: str, table: str = "events") -> int:
    """The run's last stored sequence (one seek), -1 when it has none."""
    (last,) = conn.execute(f"SELECT MAX(sequence) FROM {check_table(table)} WHERE run_id = ?", (run_id,)).fetchone()
    return last if isinstance(last, int) else -1


def run_count_and_last(conn: sqlite3.Connection, run_id: str, table: str = "events") -> tuple[int, int]:
    """How many events the run has stored and its last sequence (-1 when none)."""
    n, last = conn.execute(f"SELECT COUNT(*), MAX(sequence) FROM {check_table(table)} WHERE run_id = ?", (run_id,)).fetchone()
    return int(n), (last if isinstance(last, int) else -1)


def run_start_and_last(conn: sqlite3.Connection, run_id: str, table: str = "events") -> tuple[bytes | None, int | None]:
    """A run's first run_started payload (None if it has none) and its last event's time in
    ms (None if it has no event): what a line naming the run shows."""
    t = check_table(table)
    row = conn.execute(
        f"SELECT (SELECT payload FROM {t} WHERE run_id = ? AND kind = 'run_started' ORDER BY sequence LIMIT 1),"
        f" MAX(emitted_at_ms) FROM {t} WHERE run_id = ?",
        (run_id, run_id),
    ).fetchone()
    if row is None:
        return None, None
    return (None if row[0] is None else bytes(row[0])), (None if row[1] is None else int(row[1]))


def unfinished_runs(conn: sqlite3.Connection, table: str = "events") -> list[str]:
    """The runs with no terminal event (RunCompleted or RunAborted), oldest last event first,
    leaving out a hub's runs (those a ``hub_runs`` table names: another process ran them)."""
    check_table(table)
    hub_tables = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hub_runs'").fetchone()
    not_the_hubs = " WHERE run_id NOT IN (SELECT run_id FROM hub_runs)" if hub_tables else ""
    rows = conn.execute(
        f"SELECT run_id FROM {table}{not_the_hubs} GROUP BY run_id"
        " HAVING SUM(kind IN ('run_completed', 'run_aborted')) = 0 ORDER BY MAX(emitted_at_ms)"
    ).fetchall()
    return [str(r[0]) for r in rows]
