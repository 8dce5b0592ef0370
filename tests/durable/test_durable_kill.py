"""kill -9 at any moment, then resume: a 30-task run killed 20+ times ends with every task done
once (or once more, for a task a kill cut off), a gap-free history with one RunResumed per
kill, and every control acked SUCCESS before a kill still in effect after it."""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from goldfive.durable.recover import recover
from goldfive.sinks.sqlite import replay_from_sqlite
from goldfive.types import TaskStatus
from tests.durable_worker import APPROVAL_TASKS, RUN, TASKS

ROOT = Path(__file__).resolve().parents[2]
SEED = 20261130
MIN_KILLS = 20
MAX_CYCLES = 80


class Worker:
    def __init__(self, db: Path, out: Path) -> None:
        env = {**os.environ, "GOLDFIVE_KILL9_TASK_S": "0.2", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.durable_worker", str(db), str(out)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, timeout: float) -> str | None:
        """The next line, "" on timeout, None at the end of output."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return ""
        if line is not None:
            self.seen.append(line)
        return line

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


def test_a_run_killed_twenty_times_finishes_with_every_task_done_and_every_ack_kept(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    db, out = tmp_path / "runs.sqlite", tmp_path / "side_effects.txt"
    kills, killed_at, acked = 0, Counter[str](), []
    finished = False
    deadline = time.monotonic() + 240
    for _ in range(MAX_CYCLES):
        assert time.monotonic() < deadline, f"not finished after {kills} kills (seed {SEED})"
        w = Worker(db, out)
        tasks_seen, trigger = 0, rng.choice(["task", "task", "approval", "steer", "random"])
        wait_after = rng.uniform(0.0, 0.15)
        kill_at: float | None = None
        while True:
            line = w.next_line(timeout=0.02)
            if line is None:  # ended by itself
                finished = True
                break
            if line.startswith("task "):
                tasks_seen += 1
                if kill_at is None and trigger in ("task", "random"):
                    kill_at = time.monotonic() + (wait_after if trigger == "task" else rng.uniform(0.05, 0.4))
                elif kill_at is None:  # approval / steer: give the moment a chance, then kill anyway
                    kill_at = time.monotonic() + 0.5
            elif tasks_seen and line.startswith("approval ") and (trigger == "approval" or not killed_at["approval"]):
                kill_at, why = time.monotonic(), "approval"
                killed_at[why] += 1
            elif tasks_seen and line.startswith("acked STEER") and (trigger == "steer" or not killed_at["steer"]):
                kill_at = time.monotonic()
                killed_at["steer"] += 1
            if line.startswith("acked "):
                acked.append(line.split())
            if kill_at is not None and time.monotonic() >= kill_at and kills < MIN_KILLS + 10:
                w.kill()
                kills += 1
                while (rest := w.next_line(timeout=0.5)) is not None:  # what was printed before the kill
                    if rest.startswith("acked "):
                        acked.append(rest.split())
                break
        if finished:
            assert w.proc.wait(10) == 0, "\n".join(w.seen[-20:])
            break
    assert finished, f"the run did not finish within {MAX_CYCLES} starts (seed {SEED})"
    assert kills >= MIN_KILLS, f"only {kills} kills before the run finished (seed {SEED})"

    evs = replay_from_sqlite(db, RUN)
    assert [e.sequence for e in evs] == list(range(len(evs))), "the history has a gap"
    resumed = [e.run_resumed for e in evs if e.WhichOneof("payload") == "run_resumed"]
    assert len(resumed) == kills, f"{len(resumed)} RunResumed for {kills} kills"
    assert [r.resume_count for r in resumed] == list(range(1, kills + 1))
    assert sum(1 for r in resumed if r.interrupted_task_ids) >= 5, "too few kills landed mid-task"
    assert any(r.pending_approval_ids for r in resumed), "no kill landed with an approval pending"
    assert killed_at["steer"] >= 1, "no kill landed right after a steer was acked"

    final = recover(RUN, evs)
    assert final.ended == "run_completed" and final.plan is not None
    assert all(t.status is TaskStatus.COMPLETED for t in final.plan.tasks)

    done = Counter(line.split()[0] for line in out.read_text().splitlines())
    cut_off = Counter(t for r in resumed for t in r.interrupted_task_ids)
    for task in TASKS:
        assert 1 <= done[task] <= 1 + cut_off[task], (task, done[task], cut_off[task])

    acks = {e.control_acked.ack.control_id: e.control_acked for e in evs if e.WhichOneof("payload") == "control_acked"}
    parked = {e.message_parked.control_id for e in evs if e.WhichOneof("payload") == "message_parked"}
    granted = {e.approval_granted.target_id for e in evs if e.WhichOneof("payload") == "approval_granted"}
    requested = {e.approval_requested.target_id: e.approval_requested.task_id for e in evs if e.WhichOneof("payload") == "approval_requested"}
    successes = [(kind, cid) for _, kind, cid, result in acked if result == "SUCCESS"]
    assert successes, "no control was acked"
    for kind, cid in successes:
        assert cid in acks and acks[cid].ack.result == 1, f"{kind} {cid} was acked SUCCESS but is not in the history"
        if kind in ("INJECT_MESSAGE", "STEER"):
            assert cid in parked, f"{kind} {cid} was acked SUCCESS but its message never reached the run"
    assert {requested[t] for t in granted} <= APPROVAL_TASKS
