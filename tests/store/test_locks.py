"""SQLite's run lock in a file written before locks had an owner or a start time: still read,
and the columns are added when a lock is next taken; a lock whose pid now belongs to a process
started at another time than its holder is stale."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from pathlib import Path

from goldfive.store import locks
from goldfive.store.locks import process_started
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
        assert {"owner", "started"} <= {r[1] for r in conn.execute("PRAGMA table_info(run_locks)")}


def _started_at_another_time(pid: int) -> int:
    started = process_started(pid)
    assert started > 0, "this test needs /proc (Linux)"
    return started + 1


async def test_a_lock_whose_pid_now_belongs_to_a_process_started_later_is_taken(tmp_path: Path) -> None:
    """The holder died and its pid went to another process (a dead hub's locks stayed until
    that process exited): the row's start time is not the live process's, so it is stale."""
    path = tmp_path / "hub.sqlite"
    log = SqliteLog(path)
    try:
        assert await log.lock("mine", "me") is None  # the table, as this goldfive writes it
        live = os.getppid()  # a live process that is not this one
        with sqlite3.connect(path) as conn:
            conn.executemany(
                "INSERT INTO run_locks (run_id, pid, host, acquired_at_ms, owner, started) VALUES (?, ?, ?, 1, 'dead hub', ?)",
                [("reused", live, socket.gethostname(), _started_at_another_time(live)), ("held", live, socket.gethostname(), process_started(live))],
            )
        held = await log.lock("held", "me")  # the same process as the row's: alive, refused
        assert held is not None and held.owner == "dead hub" and held.started == process_started(live)
        assert await log.lock("reused", "me") is None
        taken = log.lock_holder("reused")
        assert taken is not None and (taken.pid, taken.owner, taken.started) == (os.getpid(), "me", process_started(os.getpid()))
    finally:
        await log.close()


def test_many_locks_taken_at_once_take_those_whose_pid_was_reused(tmp_path: Path) -> None:
    path = str(tmp_path / "hub.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        locks.ensure_table(conn)
        live = os.getppid()
        conn.executemany(
            "INSERT INTO run_locks (run_id, pid, host, acquired_at_ms, owner, started) VALUES (?, ?, ?, 1, 'dead hub', ?)",
            [("reused", live, socket.gethostname(), _started_at_another_time(live)), ("held", live, socket.gethostname(), process_started(live))],
        )
        refused = locks.take_many(conn, ["reused", "held", "free"], path, "hub placing runs")
        assert list(refused) == ["held"]
        for run_id in ("reused", "free"):
            got = locks.holder(conn, run_id)
            assert got is not None and (got.pid, got.owner, got.started) == (os.getpid(), "hub placing runs", process_started(os.getpid()))
    finally:
        locks.drop_many(conn, ["reused", "free"], path, "hub placing runs")
        conn.close()


def test_a_lock_file_whose_pid_was_reused_is_taken_and_an_old_one_decides_by_pid(tmp_path: Path) -> None:
    """A JSONL recording's lock files carry the start time too; one written before has none."""
    path = str(tmp_path / "runs.jsonl")
    live = os.getppid()
    os.makedirs(f"{path}.locks")
    with open(f"{path}.locks/reused.lock", "w", encoding="utf-8") as f:
        json.dump({"pid": live, "host": socket.gethostname(), "acquired_at_ms": 1, "owner": "x", "started": _started_at_another_time(live)}, f)
    with open(f"{path}.locks/old.lock", "w", encoding="utf-8") as f:
        json.dump({"pid": live, "host": socket.gethostname(), "acquired_at_ms": 1, "owner": "x"}, f)
    try:
        assert locks.take_file(path, "reused", "me") is None
        mine = locks.holder_file(path, "reused")
        assert mine is not None and mine.started == process_started(os.getpid())
        old = locks.take_file(path, "old", "me")
        assert old is not None and (old.pid, old.started) == (live, 0)
    finally:
        locks.drop_file(path, "reused", "me")
