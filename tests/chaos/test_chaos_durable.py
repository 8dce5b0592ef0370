"""Several processes on one durable thing at the same moment, and a disk that fills mid-run.

- Concurrent resumes: 2 to 4 real ``goldfive resume`` processes on one interrupted run,
  released together (tests/start_gate.py): exactly one runs it, every other exits 2 with one
  line, no task is run or recorded twice, the recording is gap-free and ends completed.
- Concurrent rule edits: 2 to 6 processes removing saved machine rules and adding their own,
  interleaved: no removed rule comes back, no added rule is lost, no id is given twice.
- Disk full at a seeded moment (SQLite's page limit on the recording's connection, both
  executors): no agent starts after the failed commit, the run waits paused, and once space
  is freed a RESUME finishes it with nothing lost.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.conftest import Chaos
from tests.chaos.tally import TALLY
from tests.resume_race import TASKS, interrupted_run, race
from tests.rules_race import race as rules_race

pytestmark = pytest.mark.chaos

NODE = "tests/chaos/test_chaos_durable.py"


def test_concurrent_resumes_of_one_run_run_it_once(tmp_path: Path, chaos: Chaos) -> None:
    started = time.monotonic()
    db, run_id = interrupted_run(tmp_path)
    failures = []
    for n in range(chaos.n(3, 30)):
        racers = chaos.rng.randint(2, 4)
        r = race(tmp_path, db, run_id, racers=racers, name=f"r{n}")
        losers = [i for i, c in enumerate(r.codes) if c != 0]
        twice = sum(k - 1 for k in r.finished.values() if k > 1) + sum(k - 1 for k in r.recorded_completions.values() if k > 1)
        bad_lines = [i for i in losers if r.codes[i] != 2 or len(r.stderr[i].strip().splitlines()) != 1 or "Traceback" in r.stderr[i]]
        TALLY.add(resume_rounds=1, resume_racers=racers, resume_winner_not_one=int(r.winners != 1), resume_ran_twice=twice,
                  resume_loser_bad_exit=len(bad_lines))  # fmt: skip
        whole = r.recorded_completions == {t: 1 for t in TASKS} and r.sequences_gap_free and r.ended == "run_completed"
        if r.winners != 1 or twice or bad_lines or not whole:
            failures.append(f"round {n} ({racers} racers): exits {r.codes}, finished {dict(r.finished)}, "
                            f"recorded {dict(r.recorded_completions)}, last lines {r.last_lines}")  # fmt: skip
    TALLY.time("concurrent resumes", started)
    assert not failures, "\n".join(failures) + "\n" + chaos.why(NODE)


def test_concurrent_rule_edits_keep_every_edit(tmp_path: Path, chaos: Chaos) -> None:
    started = time.monotonic()
    failures = []
    for n in range(chaos.n(2, 20)):
        workers, initial, adds = chaos.rng.randint(2, 6), chaos.rng.randint(20, 120), chaos.rng.randint(5, 30)
        r = rules_race(tmp_path, workers=workers, initial=initial, adds=adds, seed=chaos.rng.randrange(1 << 30), name=f"rules{n}")
        TALLY.add(rules_rounds=1, rules_processes=workers, rules_removed=len(r.removed), rules_added=len(r.added),
                  rules_came_back=len(r.came_back), rules_lost=len(r.lost), rules_reused=len(r.reused))  # fmt: skip
        if any(r.codes) or r.came_back or r.lost or r.reused or len(r.removed) != initial or len(r.added) != workers * adds:
            failures.append(f"round {n} ({workers} processes, {initial} saved, {adds} adds each): came back "
                            f"{sorted(r.came_back)[:5]}, lost {sorted(r.lost)[:5]}, reused {sorted(r.reused)[:5]}, "
                            f"removed {len(r.removed)}/{initial}, exits {r.codes} {r.stderr[:1]}")  # fmt: skip
    TALLY.time("concurrent rule edits", started)
    assert not failures, "\n".join(failures) + "\n" + chaos.why(NODE)


async def _fill_at_random(tmp_path: Path, name: str, executor: Any, fill_at: str, ids: list[str]) -> list[str]:
    """One run whose disk fills while ``fill_at`` runs; returns what is wrong, if anything."""
    from goldfive.control import AckResult, ControlChannel, ControlKind, ControlMessage
    from goldfive.planners.static import StaticPlanner
    from goldfive.runner import Runner
    from goldfive.sinks.memory import InMemorySink
    from goldfive.sinks.sqlite import SQLitePersistenceSink, replay_from_sqlite
    from goldfive.types import Plan, Session, Task, TaskEdge
    from tests.recording_full import BIG, fill, free, recorders

    wrong: list[str] = []
    started: list[str] = []
    db = tmp_path / f"{name}.sqlite"

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        started.append(task.id)
        if task.id == fill_at:
            fill(recorders(session)[0])
            await tools["report_task_progress"](detail=BIG)
        return f"{task.id} done"

    plan = Plan([Task(i, i) for i in ids], [TaskEdge(a, b) for a, b in zip(ids, ids[1:])], id="p")
    recorder, watcher, channel = SQLitePersistenceSink(db, durability="normal"), InMemorySink(), ControlChannel()
    runner = Runner(agent=agent, planner=StaticPlanner(plan), executor=executor, run_id=name, sinks=[recorder, watcher], control=channel)
    run = asyncio.ensure_future(runner.run("fill"))
    async for ev in watcher.subscribe():  # ends when the run closes its sinks
        if getattr(ev, "WhichOneof", None) and ev.WhichOneof("payload") == "recording_failed":
            break
    else:
        await run
        await runner.close()
        return [f"the run ended without pausing on its failed commit ({(await run).reason!r}); agents ran {started}"]
    stop = ids.index(fill_at) + 1
    if started != ids[:stop]:
        wrong.append(f"agents started after the failed commit: {started[stop:]}")
    refused = await channel.request(ControlMessage(ControlKind.RESUME))
    if refused.result != AckResult.FAILURE:
        wrong.append(f"RESUME while still full was {refused.result}: {refused.detail}")
    free(recorder)
    resumed = await channel.request(ControlMessage(ControlKind.RESUME))
    out = await run
    await runner.close()
    if resumed.result != AckResult.SUCCESS or not out.success:
        wrong.append(f"after space was freed: RESUME {resumed.result} {resumed.detail!r}, run {out.reason!r}")
    stored = replay_from_sqlite(db, name)
    if [e.sequence for e in stored] != list(range(len(watcher.events))):
        wrong.append(f"recording not whole: {len(stored)} stored of {len(watcher.events)} emitted")
    done = Counter(e.task_completed.task_id for e in stored if e.WhichOneof("payload") == "task_completed")
    if done != {i: 1 for i in ids}:
        wrong.append(f"completions recorded {dict(done)}")
    return wrong


async def test_a_disk_that_fills_at_a_random_task_pauses_the_run_and_loses_nothing(tmp_path: Path, chaos: Chaos) -> None:
    from tests.runtime_kit import EXECUTORS

    started = time.monotonic()
    failures = []
    for n in range(chaos.n(6, 60)):
        ids = [f"t{i}" for i in range(chaos.rng.randint(2, 12))]
        fill_at = chaos.rng.choice(ids[:-1])  # a later task must be there to not start
        which = chaos.rng.choice(sorted(EXECUTORS))
        wrong = await _fill_at_random(tmp_path, f"full{n}", EXECUTORS[which](), fill_at, ids)
        TALLY.add(disk_full_runs=1, disk_full_bad=int(bool(wrong)))
        if wrong:
            failures.append(f"run {n} ({which}, {len(ids)} tasks, full at {fill_at}): {'; '.join(wrong)}")
    TALLY.time("disk full", started)
    assert not failures, "\n".join(failures) + "\n" + chaos.why(NODE)
