"""Controls through a busy hub (issue 27 part 2): a control is not held up by the hub's
writes of events, and the records it leaves are still written."""

from __future__ import annotations

import asyncio
import sqlite3
import time

from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.runner import Runner
from goldfive.store.registry import RoutedControl, SqliteRegistry
from goldfive.testing import until
from goldfive.types import Plan, Task
from tests.remote_fixtures import Gate


def _routed_rows(path: str) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT run_id, control_id, author FROM hub_routed ORDER BY control_id").fetchall()
    finally:
        conn.close()


def _lock(path: str) -> sqlite3.Connection:
    """Another connection holding the file's write lock (what a long group commit does)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


async def test_routed_controls_are_written_behind_without_waiting_for_the_files_write_lock(tmp_path):
    path = str(tmp_path / "hub.sqlite")
    registry = SqliteRegistry(path)
    locker = _lock(path)
    try:
        t0 = time.perf_counter()
        await registry.routed("r1", RoutedControl("c1", "APPROVE", "alice", "call-1", 5))
        await registry.routed("r2", RoutedControl("c2", "PAUSE", "bob"))
        took = time.perf_counter() - t0
        assert took < 0.5, f"routed() waited {took:.2f} s for the write lock"
        # Not written yet, but the hub reading its records sees it (a run reconnecting now).
        assert await registry.routed_controls("r1") == {"c1": RoutedControl("c1", "APPROVE", "alice", "call-1", 5)}
        assert _routed_rows(path) == []
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert registry.flush_routed(10)
    assert _routed_rows(path) == [("r1", "c1", "alice"), ("r2", "c2", "bob")]
    await registry.routed("r1", RoutedControl("c3", "RESUME", "carol"))
    registry.close()  # writes what is left before closing
    assert ("r1", "c3", "carol") in _routed_rows(path)


async def test_a_forgotten_run_keeps_no_routed_control_that_was_still_waiting(tmp_path):
    path = str(tmp_path / "hub.sqlite")
    registry = SqliteRegistry(path)
    locker = _lock(path)
    await registry.routed("gone", RoutedControl("c1", "PAUSE", "alice"))
    await registry.routed("kept", RoutedControl("c2", "PAUSE", "alice"))
    locker.execute("ROLLBACK")
    locker.close()
    await registry.forget("gone")
    registry.close()
    assert _routed_rows(path) == [("kept", "c2", "alice")]


async def test_a_control_is_acked_while_the_hubs_database_is_write_locked(tmp_path):
    """A group commit of many runs' events holds the file's write lock for a while: the
    control's record (who sent it) used to be written on the event loop first, which held
    the control and the whole hub until the lock was free."""
    db = tmp_path / "hub.sqlite"
    host = RunHost(db)
    server = await start_server(host, listen="127.0.0.1:0")
    gate = Gate()
    plan = Plan(tasks=[Task("t1", "held")], edges=[], id="p1")
    runner = Runner(agent=gate.agent, planner=StaticPlanner(plan), run_id="busy-1", hub=server.address)
    task = asyncio.create_task(runner.run("one thing"))
    locker = None
    try:
        await asyncio.wait_for(gate.entered.wait(), 10)
        await until(lambda: bool(host.runs()) and getattr(host.runs()[0], "conn", None) is not None)
        async with RemoteClient(server.address) as client:
            locker = _lock(str(db))
            t0 = time.perf_counter()
            ack = await asyncio.wait_for(client.send_control("busy-1", ControlMessage(ControlKind.STATUS_QUERY)), 5)
            took = time.perf_counter() - t0
            assert ack.result is AckResult.SUCCESS, ack
            assert took < 2.0, f"the control took {took:.2f} s while the database was locked"
            locker.execute("ROLLBACK")
            locker.close()
            locker = None
            gate.open()
            assert (await asyncio.wait_for(task, 10)).success
            await runner.close()
    finally:
        if locker is not None:
            locker.execute("ROLLBACK")
            locker.close()
        gate.open()
        await server.stop(None)
    assert [row[0] for row in _routed_rows(str(db))] == ["busy-1"]  # recorded once the lock was free
