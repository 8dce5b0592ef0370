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

ROOT = Path(__file__).resolve().parents[2]


def test_resume_of_an_unknown_run_or_a_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["resume", "abcd", "--db", str(tmp_path / "none.sqlite"), "--headless"])
    assert missing.exit_code == 2 and missing.output.strip().count("\n") == 0 and "no recording at" in missing.output


def test_resume_continues_a_goldfive_run_that_was_killed(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    env_dir = tmp_path / "data"
    cmd = [sys.executable, "-m", "goldfive.cli", "run", "examples.hello_agent:agent", "--goal", "write a haiku",
           "--plan", "examples/hello_plan.json", "--headless", "--db", str(db), "--budget", "tokens=50000,usd=2"]  # fmt: skip
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
    bad = CliRunner().invoke(main, ["resume", run_id[:8], "--db", str(crashed), "--headless", "--budget", "tokens=lots"])
    assert bad.exit_code == 2 and "--budget: budget tokens=lots: not a number" in bad.output and bad.output.count("\n") == 1
    # --budget changes the recorded budget as the run resumes (the limits it names; usd stays).
    result = CliRunner().invoke(main, ["resume", run_id[:8], "--db", str(crashed), "--headless", "--budget", "tokens=100k"])
    assert result.exit_code == 0, result.output
    assert "run_resumed" in result.output and "running again" in result.output
    assert result.output.count("task_completed") == 2  # the rest of the run, not its start again
    from goldfive.settings import os_user
    from goldfive.sinks.sqlite import replay_from_sqlite

    changed = [e.budget_changed for e in replay_from_sqlite(crashed, run_id) if e.WhichOneof("payload") == "budget_changed"]
    assert [(c.detail, c.author) for c in changed] == [("tokens 50,000, usd $2.00", ""), ("tokens 100,000, usd $2.00", os_user())]
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


def damaged_copies(db: Path, tmp: Path, n: int, seed: int) -> list[Path]:
    """``n`` copies of ``db``, each with one page damaged the ways a torn write or a bad disk
    does: a b-tree page header overwritten, or a run of bytes inside a page."""
    import random

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    data = db.read_bytes()
    pages = len(data) // page_size
    rng = random.Random(seed)
    out = []
    for k in range(n):
        spoilt = bytearray(data)
        page = 1 + k % (pages - 1)  # every page but the header's, in turn
        if k % 2 == 0:
            spoilt[page * page_size : page * page_size + 8] = b"\x0d" + b"\xff" * 7
        else:
            at = page * page_size + rng.randrange(8, page_size - 512)
            spoilt[at : at + rng.choice([16, 64, 512])] = bytes([rng.randrange(256)]) * 512
        path = tmp / f"damaged{k}.sqlite"
        path.write_bytes(bytes(spoilt))
        for side in ("-wal", "-shm"):
            Path(str(path) + side).unlink(missing_ok=True)
        out.append(path)
    return out


def test_resume_of_a_damaged_recording_is_one_line_and_a_non_zero_exit(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from goldfive.store import check_database
    from tests.resume_race import interrupted_run

    db, run_id = interrupted_run(tmp_path)
    monkeypatch.setenv("GOLDFIVE_TEST_DONE", str(tmp_path / "done.txt"))
    refused = 0
    for path in damaged_copies(db, tmp_path, 12, seed=20261130):
        damaged = check_database(path) is not None
        result = CliRunner().invoke(main, ["resume", run_id, "--db", str(path), "--headless"])
        assert "Traceback" not in result.output and not isinstance(result.exception, Exception), (path.name, result.output)
        if result.exit_code != 0:
            refused += 1
            assert len(result.output.strip().splitlines()) == 1, (path.name, result.output)
            assert result.output.startswith("goldfive resume: "), result.output
        else:
            assert not damaged, (path.name, result.output)  # SQLite finds nothing wrong: it resumes
    assert refused >= 6  # header damage is always found


def test_resume_with_two_interrupted_runs_lists_each_with_its_goal_and_age(tmp_path: Path) -> None:
    import asyncio

    from goldfive.planners.static import StaticPlanner
    from goldfive.runner import Runner
    from goldfive.sinks.sqlite import SQLitePersistenceSink
    from goldfive.types import Plan, Task

    db = tmp_path / "runs.sqlite"

    async def ok(task: Task, session: object) -> str:
        return "ok"

    async def two() -> None:
        for goal in ("write a haiku", "summarise the\x1b[31m report"):
            launch = {"command": "run", "agent": "examples.hello_agent:agent"} if goal == "write a haiku" else None
            runner = Runner(agent=ok, planner=StaticPlanner(Plan([Task("a", "a")])), sinks=[SQLitePersistenceSink(db, durability="normal")], launch=launch)
            await runner.run(goal)
            await runner.close()

    asyncio.run(two())
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM events WHERE kind = 'run_completed'")
        ids = [r[0] for r in conn.execute("SELECT run_id FROM events GROUP BY run_id ORDER BY MIN(emitted_at_ms)")]
    conn.close()
    out = CliRunner().invoke(main, ["resume", "--db", str(db), "--headless"])
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert "2 interrupted runs" in lines[0] and "name one" in lines[0]
    assert ids[1][:12] in lines[1] and '"summarise the report"' in lines[1] and "ago" in lines[1]  # the latest first
    assert ids[0][:12] in lines[2] and '"write a haiku"' in lines[2] and "ago" in lines[2]
    # the trial: a demo's run was listed among those to name, then refused; now the list says so
    assert "(not by 'goldfive run': resume it from your program)" in lines[1]
    assert "not by" not in lines[2]  # started by goldfive run: resumable
    assert "\x1b" not in out.output
