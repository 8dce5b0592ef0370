"""A progress note's cost in Python calls (issue 27): a busy run reports progress with every
event, and the watchdog reads each. The figure is a difference (the same run emitting two
numbers of notes, cProfile's call count), so the run's set-up cancels out; the machine's load
does not change it."""

from __future__ import annotations

import asyncio
import cProfile
import pstats

import goldfive.run
from goldfive import events
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.types import Goal, Plan, Session, Task

#: Calls per progress note emitted by a running task with no sink: 22 before the watchdog read
#: a note without building a Step for it, 15 after.
BUDGET = 17


async def _calls_for(notes: int) -> int:
    counted: list[int] = []

    async def agent(task: Task, session: Session) -> str:
        ctx = goldfive.run.current()
        for i in range(50):  # warm-up: the task's watch is made at its first note
            await ctx.emit(events.task_progress, task.id, detail=f"warm {i}")
        prof = cProfile.Profile()
        prof.enable()
        for i in range(notes):
            await ctx.emit(events.task_progress, task.id, detail=f"step {i}")
        prof.disable()
        counted.append(int(pstats.Stats(prof).total_calls))  # type: ignore[attr-defined]
        return "ok"

    runner = Runner(agent=agent, planner=StaticPlanner(Plan(tasks=[Task("t1", "report")], edges=[], id="p")))
    assert (await runner.run([Goal("g", "report progress")])).success
    return counted[0]


async def test_a_progress_note_costs_at_most_its_budget_of_calls() -> None:
    small, big = await _calls_for(200), await _calls_for(2200)
    per_note = (big - small) / 2000
    assert per_note <= BUDGET, f"{per_note:.1f} calls per progress note (budget {BUDGET})"


def test_the_same_note_again_is_not_progress_and_new_words_are() -> None:
    from goldfive.watchdog.config import WatchdogConfig
    from goldfive.watchdog.detectors import TaskWatch

    watch = TaskWatch("t1", WatchdogConfig(), 0)
    watch.progress_note(10, "retrying", -1)
    assert watch.last_activity_ms == 10
    watch.progress_note(20, "retrying", -1)  # the same words: not progress
    assert watch.last_activity_ms == 10
    watch.progress_note(30, "retrying", 0.5)  # a higher fraction is
    assert (watch.last_activity_ms, watch.last_fraction) == (30, 0.5)
    watch.progress_note(40, "retrying", 0.2)  # a lower one is not, and the fraction stays
    assert (watch.last_activity_ms, watch.last_fraction) == (30, 0.5)


if __name__ == "__main__":  # prints the figure
    print(asyncio.run(_calls_for(2200)) - asyncio.run(_calls_for(200)))
