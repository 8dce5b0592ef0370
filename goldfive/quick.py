"""The shortest constructions: ``wrap(agent)`` and ``quickstart(agent, goals)``."""

from __future__ import annotations

from typing import Any, Iterable

from goldfive.control import ControlChannel
from goldfive.executors.sequential import SequentialExecutor
from goldfive.goals import LiteralGoalDeriver
from goldfive.planners.static import PassthroughPlanner, StaticPlanner
from goldfive.runner import Runner
from goldfive.types import Goal, Plan, Task, TaskEdge


def wrap(
    agent: Any,
    *,
    planner: Any = None,
    sinks: Iterable[Any] | None = None,
    control: ControlChannel | None = None,
    **kw: Any,
) -> Runner:
    """A Runner around ``agent`` (an AgentAdapter or an async callable): the input text is the
    goal list (one goal per line), one task per goal unless a planner is given."""
    return Runner(
        agent=agent,
        planner=planner or PassthroughPlanner(),
        executor=SequentialExecutor(),
        goal_deriver=LiteralGoalDeriver(),
        sinks=sinks,
        control=control,
        **kw,
    )


def quickstart(agent: Any, goals: Iterable[str | Goal], *, control: ControlChannel | None = None) -> Runner:
    """A Runner with a one-task-per-goal static plan and an InMemorySink (``runner.sinks[0]``).
    Run it with ``await runner.run(runner.goals)``."""
    from goldfive.sinks.memory import InMemorySink

    goal_list = [g if isinstance(g, Goal) else Goal(id=f"g{i + 1}", summary=str(g)) for i, g in enumerate(goals)]
    tasks = [Task(id=f"t{i + 1}", title=g.summary, description=g.summary) for i, g in enumerate(goal_list)]
    edges = [TaskEdge(tasks[i].id, tasks[i + 1].id) for i in range(len(tasks) - 1)]
    plan = Plan(tasks=tasks, edges=edges, goal_ids=[g.id for g in goal_list], summary="one task per goal")
    runner = Runner(agent=agent, planner=StaticPlanner(plan), sinks=[InMemorySink()], control=control)
    runner.goals = goal_list  # type: ignore[attr-defined]
    return runner
