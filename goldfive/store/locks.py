"""Run locks: one writer continues a run at a time. ``LockHolder`` says who holds one, for
every log (``EventLog.lock``); this module is SQLite's lock, a row in the recording itself.

A row ``(run_id, pid, host, acquired_at_ms, owner, started)`` in table ``run_locks`` says which
process (and, when it has a name, which writer: ``owner``) is running the run. The durable
SQLite sink takes it when the run starts or resumes and drops it when the run ends. A lock whose
process is gone (same host, no such pid) is stale and is taken over. ``started`` is when the
holding process started (Linux: field 22 of ``/proc/<pid>/stat``, clock ticks since boot): a
pid that now belongs to a process started at another time (the holder died and its pid was
reused, or the machine rebooted) is gone too. Where there is no ``/proc`` (macOS, Windows)
``started`` is 0 and the pid alone decides, as before: a reused pid keeps a dead holder's lock
until that process exits. A file written before locks had an owner or a start time gets the
columns when a lock is next taken (old rows: owner "", started 0: the pid alone decides).

Taking it is one write transaction (``BEGIN IMMEDIATE``): the holder is read and the row is
written only when it is free or its holder is gone, by a conditional insert or an update of
exactly the row that was read. Two processes resuming one run at once serialise on that
transaction, so the second one reads the first one's row and is refused: checking in one
transaction and writing in another let both pass.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from urllib.parse import quote
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from goldfive.errors import ResumeRefused, printable_line

try:  # the lock files' guard is an advisory lock (POSIX)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LockHolder", "RunLocked", "RunRecording", "drop", "drop_file", "drop_many", "holder", "holder_file", "process_started", "take",
    "take_file", "take_many",
]  # fmt: skip

_CREATE = (
    "CREATE TABLE IF NOT EXISTS run_locks ("
    "run_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, acquired_at_ms INTEGER NOT NULL,"
    " owner TEXT NOT NULL DEFAULT '', started INTEGER NOT NULL DEFAULT 0)"
)


class RunLocked(ResumeRefused):
    """Another live process holds the run's lock: it is running the run now."""


@runtime_checkable
class RunRecording(Protocol):
    """A sink recording runs durably to the SQLite file ``path`` that holds their locks: what
    ``Runner.continue_from`` needs of the sink that will record the resumed run."""

    path: str

    async def sync(self) -> None: ...

    def hold_run(self, run_id: str) -> None:
        """Take ``run_id``'s lock for this process now; RunLocked (one line) when a live
        process holds it, ResumeRefused when the database cannot be locked."""

    def release_run(self, run_id: str) -> None:
        """Drop ``run_id``'s lock if this sink holds it (a resume refused after the lock)."""


@dataclass(frozen=True)
class LockHolder:
    """Who holds a run's lock: a process (``pid`` on ``host``) and, when the writer has a name
    (a hub's id, a runner's), ``owner``. The same record for every log."""

    run_id: str
    pid: int
    host: str
    acquired_at_ms: int
    owner: str = ""
    #: When the holding process started (``process_started``), 0 when not known.
    started: int = 0

    def alive(self, path: str) -> bool:
        """Whether the holding process still runs. On another host nobody can tell: alive.
        This process holds it only while one of its sinks does (a copied file does not count).
        A pid now held by a process that started at another time than the holder is not it."""
        if self.host != socket.gethostname():
            return True
        if self.started and self.started != process_started(self.pid):
            return False  # the holder is gone; its pid is another process's now (or nobody's)
        if self.pid == os.getpid():
            return (_key(path), self.run_id) in _HELD
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # exists, owned by someone else
            return True
        return not _zombie(self.pid)

    def describe(self) -> str:
        where = f"process {self.pid} on {self.host}"
        return f"{self.owner} ({where})" if self.owner else where


#: (database, run id) pairs this process holds through a live sink.
_HELD: set[tuple[str, str]] = set()


def _key(path: str) -> str:
    return os.path.realpath(path)


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` from the third (state) on, or None (no such process,
    or no /proc: not Linux). The second field, the command, is in parentheses and may hold
    spaces and parentheses itself: the fields after it start after the last ')'."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def process_started(pid: int) -> int:
    """When process ``pid`` started, in clock ticks since boot (field 22 of /proc/<pid>/stat),
    or 0 when it cannot be told (no such process, or not Linux)."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20:
        return 0
    try:
        return int(fields[19])  # field 22; fields[0] is field 3
    except ValueError:
        return 0


def _zombie(pid: int) -> bool:
    """A killed process its parent has not reaped yet still answers kill(pid, 0): on Linux its
    /proc state says Z, and it runs nothing."""
    fields = _stat_fields(pid)
    if fields is None:
        return False  # no /proc (not Linux): trust kill(pid, 0)
    return bool(fields) and fields[0] == b"Z"


def ensure_table(conn: sqlite3.Connection) -> None:
    conn.execute(_CREATE)
    columns = _columns(conn)
    if "owner" not in columns:  # written by a goldfive whose locks had no owner
        conn.execute("ALTER TABLE run_locks ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
    if "started" not in columns:  # nor the holder's start time: its rows read 0 (the pid alone decides)
        conn.execute("ALTER TABLE run_locks ADD COLUMN started INTEGER NOT NULL DEFAULT 0")


def _me(owner: str) -> tuple[int, str, int, str, int]:
    """This process as a lock row's (pid, host, acquired_at_ms, owner, started)."""
    return (os.getpid(), socket.gethostname(), time.time_ns() // 1_000_000, owner, _my_start())


_MY_START: list[int] = []


def _my_start() -> int:
    if not _MY_START:
        _MY_START.append(process_started(os.getpid()))
    return _MY_START[0]


def _columns(conn: sqlite3.Connection) -> set[str]:
    return {str(r[1]) for r in conn.execute("PRAGMA table_info(run_locks)")}


def _row(conn: sqlite3.Connection, run_id: str) -> LockHolder | None:
    columns = _columns(conn)  # read-only readers see an old file's table as it is
    owner = "owner" if "owner" in columns else "''"
    started = "started" if "started" in columns else "0"
    row = conn.execute(
        f"SELECT run_id, pid, host, acquired_at_ms, {owner}, {started} FROM run_locks WHERE run_id = ?", (run_id,)
    ).fetchone()
    return None if row is None else _holder(row)


def _holder(row: tuple[object, ...]) -> LockHolder:
    rid, pid, host, at, who, started = row
    if not (isinstance(pid, int) and isinstance(host, str) and isinstance(at, int) and isinstance(who, str) and isinstance(started, int)):
        # A damaged row names nobody who can be asked: treat it as a live holder elsewhere,
        # which refuses the resume (one line) rather than guessing the run is free.
        return LockHolder(str(rid), -1, f"(unreadable lock row: {pid!r}, {host!r})", 0)
    return LockHolder(str(rid), pid, host, at, who, started)


def holder(conn: sqlite3.Connection, run_id: str) -> LockHolder | None:
    """Who holds ``run_id``'s lock, or None. A recording that cannot be read here raises
    ResumeRefused (one line)."""
    try:
        return _row(conn, run_id)
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # nobody ever locked a run here
            return None
        raise ResumeRefused(f"the recording's locks cannot be read: {printable_line(exc)}") from None
    except (sqlite3.DatabaseError, ValueError) as exc:  # ValueError: a damaged page's bytes that are not text
        raise ResumeRefused(f"the recording's locks cannot be read: {printable_line(exc)}") from None


def take(conn: sqlite3.Connection, run_id: str, path: str, owner: str = "") -> LockHolder | None:
    """Take ``run_id``'s lock for this process (as ``owner``), checked and written in one
    transaction. None when it holds it now; else the live holder (nothing written): another
    process, or another owner in this one. ``conn`` must be in autocommit mode with no
    transaction open; sqlite3.Error propagates."""
    me = _me(owner)
    conn.execute("BEGIN IMMEDIATE")  # the write lock first: no one else checks in between
    try:
        ensure_table(conn)
        current = _row(conn, run_id)
        if current is not None and current.alive(path):
            conn.execute("ROLLBACK")
            return current
        if current is None:
            cur = conn.execute(
                "INSERT INTO run_locks (pid, host, acquired_at_ms, owner, started, run_id) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id) DO NOTHING",
                (*me, run_id),
            )
        else:  # stale: replace exactly the row read above
            cur = conn.execute(
                "UPDATE run_locks SET pid = ?, host = ?, acquired_at_ms = ?, owner = ?, started = ?"
                " WHERE run_id = ? AND pid IS ? AND host IS ? AND acquired_at_ms IS ?",
                (*me, run_id, current.pid, current.host, current.acquired_at_ms),
            )
        if cur.rowcount != 1:  # cannot happen under the write lock; never take it blind
            conn.execute("ROLLBACK")
            return _row(conn, run_id) or LockHolder(run_id, -1, "(another writer)", 0)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    _HELD.add((_key(path), run_id))
    return None


def take_many(conn: sqlite3.Connection, run_ids: Sequence[str], path: str, owner: str = "") -> dict[str, LockHolder]:
    """``take`` for many runs at once, in one write transaction (a burst of placements costs
    one commit, not one each): each run's lock is taken for this process (as ``owner``)
    when it is free, stale, or this process's as ``owner`` already. Returns the runs it was
    not taken for, each with its live holder (nothing written for those). ``conn`` must be
    in autocommit mode with no transaction open; sqlite3.Error propagates."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        refused = take_many_in(conn, run_ids, path, owner)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    held(path, [r for r in run_ids if r not in refused])
    return refused


def take_many_in(conn: sqlite3.Connection, run_ids: Sequence[str], path: str, owner: str = "") -> dict[str, LockHolder]:
    """``take_many``'s writes, inside a write transaction the caller opened (``BEGIN
    IMMEDIATE``: nobody else checks in between) and commits; once it has, ``held(path,
    taken)`` says this process holds them. Returns the runs held by someone else alive."""
    ensure_table(conn)
    pid, host, now, _, started = me = _me(owner)
    current: dict[str, LockHolder] = {}
    wanted = list(dict.fromkeys(run_ids))
    for i in range(0, len(wanted), 500):  # SQLite's limit on parameters is 999 on old builds
        chunk = wanted[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT run_id, pid, host, acquired_at_ms, owner, started FROM run_locks WHERE run_id IN ({marks})", chunk
        ):
            held_by = _holder(row)  # a damaged row: a holder nobody can ask, never taken blind
            current[held_by.run_id] = held_by
    refused: dict[str, LockHolder] = {}
    fresh: list[tuple[int, str, int, str, int, str]] = []
    for run_id in wanted:
        found = current.get(run_id)
        if found is None:
            fresh.append((*me, run_id))
        elif (found.pid, found.host, found.owner) == (pid, host, owner) and found.started in (0, started):
            continue  # this process's already, as ``owner``
        elif found.alive(path):
            refused[run_id] = found
        else:  # stale: replace exactly the row read above
            conn.execute(
                "UPDATE run_locks SET pid = ?, host = ?, acquired_at_ms = ?, owner = ?, started = ?"
                " WHERE run_id = ? AND pid IS ? AND host IS ? AND acquired_at_ms IS ?",
                (pid, host, now, owner, started, run_id, found.pid, found.host, found.acquired_at_ms),
            )
    if fresh:
        conn.executemany(
            "INSERT INTO run_locks (pid, host, acquired_at_ms, owner, started, run_id) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id) DO NOTHING",
            fresh,
        )
    return refused


def held(path: str, run_ids: Sequence[str]) -> None:
    """This process holds ``run_ids``' locks in ``path`` now (a transaction that took them
    committed): ``LockHolder.alive`` says so to this process's other takers."""
    key = _key(path)
    _HELD.update((key, run_id) for run_id in run_ids)


def drop_many(conn: sqlite3.Connection, run_ids: Sequence[str], path: str, owner: str = "") -> None:
    """``drop`` for many runs, in one transaction."""
    key = _key(path)
    _HELD.difference_update((key, run_id) for run_id in run_ids)
    me = (os.getpid(), socket.gethostname(), owner)
    try:
        with conn:
            conn.execute("BEGIN")
            conn.executemany(
                "DELETE FROM run_locks WHERE run_id = ? AND pid = ? AND host = ? AND owner = ?", [(r, *me) for r in run_ids]
            )
    except sqlite3.Error:
        pass  # as ``drop``: the rows are stale once this process exits


def drop(conn: sqlite3.Connection, run_id: str, path: str, owner: str = "") -> None:
    """Release ``run_id`` if this process holds it (as ``owner``)."""
    _HELD.discard((_key(path), run_id))
    try:
        conn.execute(
            "DELETE FROM run_locks WHERE run_id = ? AND pid = ? AND host = ? AND owner = ?",
            (run_id, os.getpid(), socket.gethostname(), owner),
        )
    except sqlite3.Error:
        pass  # no table (nothing was held), or a database that fails: the row is stale once we exit


# -- a lock file per run, for a log that is a plain file (JsonlLog) -------------------------


def _lock_file(path: str, run_id: str) -> str:
    return os.path.join(f"{path}.locks", quote(run_id, safe="") + ".lock")


def _read_file(name: str, run_id: str) -> LockHolder | None:
    try:
        with open(name, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    try:
        d = json.loads(raw)
        pid, host, at, owner = d["pid"], d["host"], d["acquired_at_ms"], d["owner"]
        started = d.get("started", 0)  # a file written before start times were: the pid alone decides
        if not (isinstance(pid, int) and isinstance(host, str) and isinstance(at, int) and isinstance(owner, str) and isinstance(started, int)):
            raise TypeError
    except (ValueError, KeyError, TypeError, AttributeError):
        # as a damaged row: a holder nobody can ask, so the run is not taken blind
        return LockHolder(run_id, -1, f"(unreadable lock file {name})", 0)
    return LockHolder(run_id, pid, host, at, owner, started)


class _Guard:
    """An exclusive flock on the locks folder's guard file: one taker at a time, so a stale
    lock is replaced by exactly one of two processes taking it over at once."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._fd = -1

    def __enter__(self) -> None:
        os.makedirs(self.folder, exist_ok=True)
        self._fd = os.open(os.path.join(self.folder, ".guard"), os.O_CREAT | os.O_RDWR, 0o644)
        if fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing releases the flock


def take_file(path: str, run_id: str, owner: str = "") -> LockHolder | None:
    """``take`` for the plain file ``path``: the lock is the file ``<path>.locks/<run>.lock``
    (JSON: pid, host, acquired_at_ms, owner), written under the folder's guard. OSError when
    the folder cannot be written."""
    name = _lock_file(path, run_id)
    with _Guard(os.path.dirname(name)):
        current = _read_file(name, run_id)
        mine = current is not None and (current.pid, current.host, current.owner) == (os.getpid(), socket.gethostname(), owner) and current.started in (0, _my_start())
        if current is not None and current.alive(path) and not mine:
            return current  # (this process's own holder taking it again while it holds it: its)
        pid, host, at, _, started = _me(owner)
        me = {"pid": pid, "host": host, "acquired_at_ms": at, "owner": owner, "started": started}
        tmp = f"{name}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(me, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, name)
        _HELD.add((_key(path), run_id))  # under the guard: another thread's taker sees it alive
    return None


def holder_file(path: str, run_id: str) -> LockHolder | None:
    """Who holds ``run_id``'s lock file next to ``path``, or None."""
    return _read_file(_lock_file(path, run_id), run_id)


def drop_file(path: str, run_id: str, owner: str = "") -> None:
    """Release ``run_id``'s lock file if this process holds it (as ``owner``)."""
    _HELD.discard((_key(path), run_id))
    name = _lock_file(path, run_id)
    try:
        with _Guard(os.path.dirname(name)):
            current = _read_file(name, run_id)
            if current is not None and (current.pid, current.host, current.owner) == (os.getpid(), socket.gethostname(), owner):
                os.unlink(name)
    except OSError:
        pass  # a folder that fails: the file is stale once this process exits
