"""SQLite's run lock in a file written before locks had an owner: still read, and the column
is added when a lock is next taken."""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

from goldfive.store.log import SqliteLog


def _old_locks_table(path: Path, pid: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE run_locks (run_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, acquired_at_ms INTEGER NOT NULL)"
        )
        conn.execute("INSERT INTO run_locks VALUES ('held', ?, ?, 1)", (pid, socket.gethostname()))


async def test_an_old_lock_row_of_a_live_process_still_refuses_and_names_it(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _old_locks_table(path, os.getppid())  # a live process that is not this one
    log = SqliteLog(path)
    try:
        held = await log.lock("held", "me")
        assert held is not None and held.owner == "" and held.describe() == f"process {os.getppid()} on {socket.gethostname()}"
        assert await log.lock("free", "me") is None  # the table gained its owner column on the way
        again = SqliteLog(path)
        try:
            other = await again.lock("free", "someone")
            assert other is not None and other.owner == "me"
        finally:
            await again.close()
    finally:
        await log.close()
    with sqlite3.connect(path) as conn:
        assert "owner" in {r[1] for r in conn.execute("PRAGMA table_info(run_locks)")}
