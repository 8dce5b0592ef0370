"""SqliteLog.forget_run: a run that stored no event (its runner left after its hello) leaves
nothing behind in the log, neither its writer ranges nor the writer ``write_as`` named (kept
in memory until the log closed before); a run with events keeps who wrote them. The same
rule as PostgresStore.forget_run (tests/store/test_postgres_registry.py)."""

from __future__ import annotations

from pathlib import Path

from goldfive import events as E
from goldfive.store.log import SqliteLog
from goldfive.types import Session


async def test_who_wrote_a_run_is_forgotten_only_for_a_run_with_no_events(tmp_path: Path) -> None:
    log = SqliteLog(tmp_path / "hub.sqlite", writer="hub")
    try:
        log.write_as("kept", "alice")
        await log.append([E.run_started(Session(run_id="kept"), goal_summary="g")])
        assert not await log.forget_run("kept")  # it stored events: who wrote them is kept
        assert await log.writers("kept") == [(0, "alice")]
        assert log.writer_of("kept", 1) == "alice"

        log.write_as("empty", "bob")  # a runner that said hello and left
        assert log.writer_of("empty", 0) == "bob"
        assert await log.forget_run("empty")
        assert log.writer_of("empty", 0) == "hub"  # bob's name is no longer held
        await log.append([E.run_started(Session(run_id="empty"), goal_summary="g")])  # the same id, later
        assert await log.writers("empty") == [(0, "hub")]
        assert await log.forget_run("never-seen")  # nothing to drop: forgotten all the same
    finally:
        await log.close()


async def test_forgetting_waits_for_a_write_running_in_the_worker_thread(tmp_path: Path) -> None:
    """A hub's log writes in a worker thread: the forget uses the same connection after it."""
    log = SqliteLog(tmp_path / "hub.sqlite", writer="hub", writer_thread=True)
    try:
        log.write_as("r", "carol")
        s = Session(run_id="r")
        await log.append([E.run_started(s, goal_summary="g"), *[E.task_progress(s, "t", detail=str(i)) for i in range(500)]])
        assert not await log.forget_run("r")
        assert await log.writers("r") == [(0, "carol")]
    finally:
        await log.close()
