"""``goldfive runs`` lists the runs recorded on this machine without a hub; ``runs prune
--older-than AGE`` removes old ones, saying how many, after a confirmation (issue 23 item 1 and
its "Missing" list)."""

from __future__ import annotations

import time
from pathlib import Path

from click.testing import CliRunner

from goldfive import events
from goldfive.cli import main
from goldfive.recording import recorded_run_choices
from goldfive.sinks import SQLitePersistenceSink
from goldfive.types import Session

DAY_MS = 86_400_000


async def _record(path: Path, run_id: str, ended_ms_ago: int, how: str = "completed") -> None:
    at = iter(range(time.time_ns() // 1_000_000 - ended_ms_ago - 10, 10**15))
    s = Session(run_id=run_id, clock=lambda: next(at))
    sink = SQLitePersistenceSink(path)
    await sink.emit(events.run_started(s, goal_summary=f"goal of {run_id}"))
    if how == "completed":
        await sink.emit(events.run_completed(s, "done"))
    elif how == "aborted":
        await sink.emit(events.run_aborted(s, "kaboom"))
    await sink.close()


def _invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


async def test_runs_lists_the_recorded_runs_and_prune_removes_old_ones_after_asking(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    await _record(db, "old-completed-1", 40 * DAY_MS)
    await _record(db, "old-aborted-22", 35 * DAY_MS, "aborted")
    await _record(db, "old-interrupted", 31 * DAY_MS, "interrupted")
    await _record(db, "recent-run-333", 2 * DAY_MS)

    listed = _invoke("runs", "--db", str(db))
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert lines[0].split() == ["RUN", "STATE", "EVENTS", "STARTED", "GOAL"]
    assert lines[1].startswith("recent-run-3") and "COMPLETED" in lines[1] and "goal of recent-run-333" in lines[1]
    assert "4 runs in" in lines[-1]

    declined = _invoke("runs", "prune", "--older-than", "30d", "--db", str(db), input="n\n")
    assert declined.exit_code == 0
    assert "3 runs in" in declined.output and "1 ABORTED, 1 COMPLETED, 1 INTERRUPTED" in declined.output
    assert "nothing removed" in declined.output and len(recorded_run_choices(db)) == 4

    removed = _invoke("runs", "prune", "--older-than", "30d", "--db", str(db), input="y\n")
    assert removed.exit_code == 0 and "removed 3 runs" in removed.output, removed.output
    assert [c.run_id for c in recorded_run_choices(db)] == ["recent-run-333"]
    again = _invoke("runs", "prune", "--older-than", "30d", "--db", str(db))
    assert "nothing to remove" in again.output

    bad = _invoke("runs", "prune", "--older-than", "soon", "--db", str(db))
    assert bad.exit_code == 2 and "is not an age" in bad.output


async def test_prune_keeps_a_run_a_live_process_is_writing(tmp_path: Path) -> None:
    import sqlite3

    from goldfive.durable import lock

    db = tmp_path / "runs.sqlite"
    await _record(db, "being-written", 40 * DAY_MS, "interrupted")
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        assert lock.take(conn, "being-written", str(db)) is None  # this (live) process holds it
    finally:
        conn.close()
    out = _invoke("runs", "prune", "--older-than", "30d", "--db", str(db), "--yes")
    assert "nothing to remove" in out.output and len(recorded_run_choices(db)) == 1


async def test_runs_lists_a_run_a_live_process_is_writing_as_running_not_interrupted(tmp_path: Path) -> None:
    """The trial: `goldfive runs` beside a live `goldfive demo` said INTERRUPTED, and `resume`
    then said it is still running in that process."""
    import sqlite3

    from goldfive.durable import lock

    db = tmp_path / "runs.sqlite"
    await _record(db, "being-written", 1000, "interrupted")
    await _record(db, "stopped-dead", 2000, "interrupted")
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        assert lock.take(conn, "being-written", str(db)) is None  # this (live) process holds it
    finally:
        conn.close()
    assert {c.run_id: c.state for c in recorded_run_choices(db)} == {"being-written": "RUNNING", "stopped-dead": "INTERRUPTED"}
    lines = _invoke("runs", "--db", str(db)).output.splitlines()
    assert any(line.startswith("being-writt") and " RUNNING " in line for line in lines), lines
