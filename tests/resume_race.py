"""Several processes resuming one run at the same moment (tests/durable/test_resume_race.py and the
chaos suite).

``python -m tests.resume_race GO DB RUN``: imports everything ``goldfive resume`` needs, waits
at the start gate ``GO`` (tests/start_gate.py: every racer goes at the same moment), then
runs ``goldfive resume RUN --db DB --headless`` in this process and exits with its code. :func:`agent` is the run's agent: it appends ``task_id pid`` to the file named
by ``GOLDFIVE_TEST_DONE`` for each task it finishes.

:func:`interrupted_run` makes the recording (a real ``goldfive run``, cut after its third task
started, as a kill leaves it); :func:`race` starts the racers on a copy of it and reports.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.start_gate import StartGate, wait_at_gate

ROOT = Path(__file__).resolve().parents[1]


async def agent(task: Any, session: Any) -> str:
    await asyncio.sleep(float(os.environ.get("GOLDFIVE_TEST_TASK_S", "0.02")))
    with open(os.environ["GOLDFIVE_TEST_DONE"], "a", encoding="utf-8") as f:
        f.write(f"{task.id} {os.getpid()}\n")
    return f"{task.id} done"


def main(go: str, db: str, run_id: str) -> int:
    from goldfive.cli import main as cli
    import goldfive.durable.resume  # noqa: F401 - imported before the start line, not after it
    import goldfive.runner  # noqa: F401

    wait_at_gate(go)
    code = cli.main(["resume", run_id, "--db", db, "--headless"], prog_name="goldfive", standalone_mode=False)
    return int(code or 0)  # not standalone: click returns an Exit's code instead of exiting


# -- the test's side ---------------------------------------------------------------------------

TASKS = [f"t{i}" for i in range(8)]


def interrupted_run(tmp: Path) -> tuple[Path, str]:
    """A recording of an 8-task ``goldfive run`` cut off while its third task ran, and its id."""
    plan = {
        "summary": "race",
        "tasks": [{"id": t, "title": t} for t in TASKS],
        "edges": [{"from_task_id": a, "to_task_id": b} for a, b in zip(TASKS, TASKS[1:])],
    }
    (tmp / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    db = tmp / "recorded.sqlite"
    env = {**os.environ, "GOLDFIVE_DATA_DIR": str(tmp / "data"), "GOLDFIVE_TEST_DONE": str(tmp / "first-run.txt")}
    cmd = [sys.executable, "-m", "goldfive.cli", "run", "tests.resume_race:agent", "--goal", "race",
           "--plan", str(tmp / "plan.json"), "--headless", "--db", str(db)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run_id = done.stderr.split("(run ")[1].split(")")[0]
    conn = sqlite3.connect(db)
    with conn:
        (seq,) = conn.execute(
            "SELECT sequence FROM events WHERE run_id = ? AND kind = 'task_started' ORDER BY sequence LIMIT 1 OFFSET 2", (run_id,)
        ).fetchone()
        conn.execute("DELETE FROM events WHERE run_id = ? AND sequence > ?", (run_id, seq))
    conn.close()
    return db, run_id


@dataclass
class Round:
    codes: list[int]
    #: The last line each racer wrote on stderr.
    last_lines: list[str]
    stderr: list[str]
    #: task id -> how many times an agent finished it in this round.
    finished: Counter[str]
    #: task id -> how many TaskCompleted events the recording holds for it.
    recorded_completions: Counter[str]
    sequences_gap_free: bool
    ended: str

    @property
    def winners(self) -> int:
        return sum(1 for c in self.codes if c == 0)


def race(tmp: Path, recorded: Path, run_id: str, racers: int = 2, name: str = "round") -> Round:
    """``racers`` processes resume a copy of ``recorded`` at the same moment; what came of it."""
    db, go, done = tmp / f"{name}.sqlite", tmp / f"{name}.go", tmp / f"{name}.done"
    shutil.copy(recorded, db)
    gate = StartGate(go)
    env = {**os.environ, "GOLDFIVE_DATA_DIR": str(tmp / "data"), "GOLDFIVE_TEST_DONE": str(done), "PYTHONUNBUFFERED": "1"}
    procs, errs = [], []
    for i in range(racers):
        err = open(tmp / f"{name}.{i}.err", "w+", encoding="utf-8")  # a file: a full pipe cannot block a racer
        errs.append(err)
        procs.append(subprocess.Popen([sys.executable, "-m", "tests.resume_race", str(go), str(db), run_id],
                                      cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True))  # fmt: skip
    try:
        gate.release(procs)
        for p in procs:
            assert p.stdout is not None
            p.stdout.read()
            p.wait(120)
    finally:
        gate.close()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    texts = []
    for err in errs:
        err.seek(0)
        texts.append(err.read())
        err.close()
    finished = Counter(line.split()[0] for line in done.read_text().splitlines()) if done.exists() else Counter()
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT sequence, kind, payload FROM events WHERE run_id = ? ORDER BY sequence", (run_id,)).fetchall()
    finally:
        conn.close()
    from goldfive.pb.goldfive.v1 import events_pb2 as pb

    completions: Counter[str] = Counter()
    for _, kind, payload in rows:
        if kind == "task_completed":
            completions[pb.Event.FromString(payload).task_completed.task_id] += 1
    return Round(
        codes=[int(p.returncode) for p in procs],
        last_lines=[(t.strip().splitlines() or [""])[-1] for t in texts],
        stderr=texts,
        finished=finished,
        recorded_completions=completions,
        sequences_gap_free=[r[0] for r in rows] == list(range(len(rows))),
        ended=rows[-1][1] if rows else "",
    )


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
