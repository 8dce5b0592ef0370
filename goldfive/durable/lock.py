"""A per-run lock in the recording's database: one process continues a run at a time.

A row ``(run_id, pid, host)`` in table ``run_locks`` says which process is running the run.
The durable SQLite sink takes it when the run starts or resumes and drops it when the run
ends. A lock whose process is gone (same host, no such pid) is stale and is taken over.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from dataclasses import dataclass

_CREATE = (
    "CREATE TABLE IF NOT EXISTS run_locks ("
    "run_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, acquired_at_ms INTEGER NOT NULL)"
)


@dataclass(frozen=True)
class LockHolder:
    run_id: str
    pid: int
    host: str
    acquired_at_ms: int

    def alive(self, path: str) -> bool:
        """Whether the holding process still runs. On another host nobody can tell: alive.
        This process holds it only while one of its sinks does (a copied file does not count)."""
        if self.host != socket.gethostname():
            return True
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
        return f"process {self.pid} on {self.host}"


#: (database, run id) pairs this process holds through a live sink.
_HELD: set[tuple[str, str]] = set()


def _key(path: str) -> str:
    return os.path.realpath(path)


def _zombie(pid: int) -> bool:
    """A killed process its parent has not reaped yet still answers kill(pid, 0): on Linux its
    /proc state says Z, and it runs nothing."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False  # no /proc (not Linux): trust kill(pid, 0)
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"Z"


def ensure_table(conn: sqlite3.Connection) -> None:
    conn.execute(_CREATE)


def holder(conn: sqlite3.Connection, run_id: str) -> LockHolder | None:
    """Who holds ``run_id``'s lock, or None."""
    try:
        row = conn.execute("SELECT run_id, pid, host, acquired_at_ms FROM run_locks WHERE run_id = ?", (run_id,)).fetchone()
    except sqlite3.OperationalError:  # no table: nobody ever locked a run here
        return None
    return None if row is None else LockHolder(*row)


def take(conn: sqlite3.Connection, run_id: str, path: str) -> None:
    """This process holds ``run_id`` now (a stale holder's row is replaced)."""
    _HELD.add((_key(path), run_id))
    ensure_table(conn)
    conn.execute(
        "INSERT OR REPLACE INTO run_locks VALUES (?, ?, ?, ?)",
        (run_id, os.getpid(), socket.gethostname(), time.time_ns() // 1_000_000),
    )


def drop(conn: sqlite3.Connection, run_id: str, path: str) -> None:
    """Release ``run_id`` if this process holds it."""
    _HELD.discard((_key(path), run_id))
    try:
        conn.execute("DELETE FROM run_locks WHERE run_id = ? AND pid = ? AND host = ?", (run_id, os.getpid(), socket.gethostname()))
    except sqlite3.OperationalError:
        pass  # no table: nothing was held
