"""``goldfive resume RUN``: one line for what it refuses; a run started by ``goldfive run``
continues headless from its recording."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from goldfive.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_resume_of_an_unknown_run_or_a_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["resume", "abcd", "--db", str(tmp_path / "none.sqlite"), "--headless"])
    assert missing.exit_code == 2 and missing.output.strip().count("\n") == 0 and "no recording at" in missing.output


def test_resume_continues_a_goldfive_run_that_was_killed(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    env_dir = tmp_path / "data"
    cmd = [sys.executable, "-m", "goldfive.cli", "run", "examples.hello_agent:agent", "--goal", "write a haiku",
           "--plan", "examples/hello_plan.json", "--headless", "--db", str(db)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60, env={"GOLDFIVE_DATA_DIR": str(env_dir), "PATH": ""})
    assert done.returncode == 0, done.stderr
    run_id = done.stderr.split("(run ")[1].split(")")[0]
    # What a kill in the middle leaves: the history up to the second task's start.
    crashed = tmp_path / "crashed.sqlite"
    shutil.copy(db, crashed)
    conn = sqlite3.connect(crashed)
    with conn:
        seq = conn.execute(
            "SELECT sequence FROM events WHERE run_id = ? AND kind = 'task_started' ORDER BY sequence LIMIT 1 OFFSET 1", (run_id,)
        ).fetchone()[0]
        conn.execute("DELETE FROM events WHERE run_id = ? AND sequence > ?", (run_id, seq))
    conn.close()
    result = CliRunner().invoke(main, ["resume", run_id[:8], "--db", str(crashed), "--headless"])
    assert result.exit_code == 0, result.output
    assert "run_resumed" in result.output and "running again" in result.output
    assert result.output.count("task_completed") == 2  # the rest of the run, not its start again
    again = CliRunner().invoke(main, ["resume", run_id, "--db", str(crashed), "--headless"])
    assert again.exit_code == 2 and f"run {run_id} completed" in again.output


def test_resume_without_a_run_takes_the_one_interrupted_run_or_says_why_not(tmp_path: Path) -> None:
    import asyncio

    from goldfive.planners.static import StaticPlanner
    from goldfive.runner import Runner
    from goldfive.sinks.sqlite import SQLitePersistenceSink
    from goldfive.types import Plan, Task

    db = tmp_path / "runs.sqlite"

    async def ok(task: Task, session: object) -> str:
        return "ok"

    async def finished() -> None:
        runner = Runner(agent=ok, planner=StaticPlanner(Plan([Task("a", "a")])), sinks=[SQLitePersistenceSink(db, durability="normal")])
        await runner.run("done")
        await runner.close()

    asyncio.run(finished())
    none = CliRunner().invoke(main, ["resume", "--db", str(db), "--headless"])
    assert none.exit_code == 2 and "no interrupted run" in none.output
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM events WHERE kind = 'run_completed'")
    conn.close()
    one = CliRunner().invoke(main, ["resume", "--db", str(db), "--headless"])
    assert one.exit_code == 2 and "was not started by 'goldfive run'" in one.output  # found it; a library run
