"""A plan's status counts (``goldfive.plan_tally``): kept by the status writes, the same counts in
the same order as counting the plan, so a brief's text is the same as when it counted; and a
brief no longer reads every task's status."""

from __future__ import annotations

import copy
import pickle
import random
from collections import Counter
from typing import Any

import pytest

from goldfive.adapters import task_prompt
from goldfive.adapters.task_prompt import brief_prompt
from goldfive.planners.static import StaticPlanner
from goldfive.plan_tally import status_counts
from goldfive.runner import Runner
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus, set_task_status

STATUSES = list(TaskStatus)


def counted(plan: Plan) -> list[tuple[TaskStatus, int]]:
    """What the brief said before the tally: a count over the plan."""
    return list(Counter(t.status for t in plan.tasks).items())


def random_plan(rng: random.Random, n: int) -> Plan:
    tasks = [Task(f"t{i}", f"Task {i}", status=rng.choice(STATUSES)) for i in range(n)]
    edges = [TaskEdge(f"t{i}", f"t{j}") for j in range(1, n) for i in rng.sample(range(j), min(j, rng.randint(0, 2)))]
    return Plan(tasks=tasks, edges=edges, id=f"p{n}")


def test_the_counts_follow_every_status_write_in_the_order_a_count_of_the_plan_gives() -> None:
    rng = random.Random(27)
    for round_ in range(60):
        plan = random_plan(rng, rng.randint(1, 40))
        assert status_counts(plan) == counted(plan)
        stamped = plan.for_run(f"run{round_}")  # shares the tasks: shares the tally
        for _ in range(rng.randint(0, 300)):
            task = rng.choice(plan.tasks)
            what = rng.random()
            if what < 0.05:
                set_task_status(copy.copy(task), rng.choice(STATUSES))  # a copy is not in the plan
            elif what < 0.08:
                set_task_status(pickle.loads(pickle.dumps(task)), rng.choice(STATUSES))
            else:
                set_task_status(task, rng.choice(STATUSES))
            if rng.random() < 0.3:
                assert status_counts(rng.choice([plan, stamped])) == counted(plan)
        assert status_counts(plan) == counted(plan)


def test_a_task_in_two_plans_is_counted_in_both() -> None:
    rng = random.Random(5)
    shared = [Task(f"s{i}", "shared") for i in range(5)]
    one = Plan(tasks=[Task("a", "a"), *shared], id="one")
    two = Plan(tasks=[*shared, Task("b", "b", status=TaskStatus.RUNNING)], id="two")
    for _ in range(200):
        set_task_status(rng.choice([*one.tasks, *two.tasks]), rng.choice(STATUSES))
        plan = rng.choice([one, two])
        assert status_counts(plan) == counted(plan)


def _brief_session(rng: random.Random) -> Session:
    return Session("r", goals=[Goal("g1", "ship it")], plan=random_plan(rng, rng.randint(13, 60)))


def test_a_brief_says_word_for_word_what_it_said_when_it_counted_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(4)
    for _ in range(40):
        session = _brief_session(rng)
        plan = session.plan
        assert plan is not None
        for _ in range(rng.randint(1, 80)):
            task = rng.choice(plan.tasks)
            set_task_status(task, rng.choice(STATUSES))
            if task.status is TaskStatus.COMPLETED:
                session.completed_results[task.id] = f"result of {task.id}"
            now = rng.choice(plan.tasks)
            new = brief_prompt(session, now)
            with monkeypatch.context() as m:
                m.setattr(task_prompt, "status_counts", counted)
                old = brief_prompt(session, now)
            assert new == old
            assert f"{len(plan.tasks)} tasks: " in new


class _CountingTask(Task):
    """A task counting how often its status is read."""

    reads = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "status":
            _CountingTask.reads += 1
        return super().__getattribute__(name)


@pytest.mark.parametrize("n", [100, 3_000])
def test_a_brief_reads_a_few_statuses_whatever_the_plans_size(n: int) -> None:
    tasks = [_CountingTask(f"t{i}", f"Task {i}") for i in range(n)]
    plan = Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="p")
    session = Session("r", goals=[Goal("g1", "ship it")], plan=plan)
    brief_prompt(session, tasks[0])  # the tally is built here, once
    _CountingTask.reads = 0
    briefs = 50
    for i in range(briefs):  # the first tasks of a linear run, one brief each
        set_task_status(tasks[i], TaskStatus.RUNNING)
        brief = brief_prompt(session, tasks[i])
        set_task_status(tasks[i], TaskStatus.COMPLETED)
    assert f"{n} tasks: {briefs - 1} COMPLETED, 1 RUNNING, {n - briefs} PENDING" in brief
    # Counting the plan read all n statuses per brief; the tally reads a few (its heaps' tops).
    assert _CountingTask.reads / briefs < 20


async def test_the_counts_follow_a_run_through_the_steerers_state_machine() -> None:
    tasks = [Task(f"t{i}", f"Task {i}") for i in range(30)]
    plan = Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="p")
    seen: list[bool] = []

    async def agent(task: Task, session: Session) -> str:
        assert session.plan is not None
        seen.append(status_counts(session.plan) == counted(session.plan))
        return "ok"

    runner = Runner(agent=agent, planner=StaticPlanner(plan))
    out = await runner.run([Goal("g1", "count")])
    await runner.close()
    assert out.success, out.reason
    assert out.session.plan is not None
    assert len(seen) == 30 and all(seen)
    assert status_counts(out.session.plan) == [(TaskStatus.COMPLETED, 30)]
