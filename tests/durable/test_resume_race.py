"""Two ``goldfive resume`` processes on one run, started at the same moment: exactly one runs
it, the other exits non-zero with one line, and no task is run or recorded twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.resume_race import TASKS, interrupted_run, race

ROUNDS = 5


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return interrupted_run(tmp_path_factory.mktemp("race"))


def test_two_resumes_started_together_run_the_run_once(tmp_path: Path, recorded: tuple[Path, str]) -> None:
    db, run_id = recorded
    for n in range(ROUNDS):
        r = race(tmp_path, db, run_id, racers=2, name=f"r{n}")
        assert r.winners == 1, (n, r.codes, r.stderr)
        loser = r.codes.index(next(c for c in r.codes if c != 0))
        assert r.codes[loser] == 2 and len(r.stderr[loser].strip().splitlines()) == 1, r.stderr[loser]
        # Refused as running, or (on a loaded machine the winner may finish before the other
        # process gets to read the recording) as completed: either way it ran nothing.
        said = r.stderr[loser]
        assert f"run {run_id} is still running in process" in said or f"run {run_id} completed" in said, said
        assert "Traceback" not in said
        # The third task was cut off: it and the five after it run once more, in one process.
        assert r.finished == {t: 1 for t in TASKS[2:]}, (n, r.finished)
        assert r.recorded_completions == {t: 1 for t in TASKS}, (n, r.recorded_completions)
        assert r.sequences_gap_free and r.ended == "run_completed"
