"""Planners that need no model: passthrough (one task per goal) and static (a fixed plan)."""

from __future__ import annotations

import copy
from typing import Any

from goldfive.types import DriftEvent, Goal, Plan, Task, TaskEdge


class PassthroughPlanner:
    """One task per goal, in order, each depending on the previous. Cannot replan."""

    can_replan = False

    async def generate(
        self, *, goals: list[Goal], available_agents: list[str], context: dict[str, Any] | None = None
    ) -> Plan | None:
        if not goals:
            return None
        tasks = [Task(id=f"t{i + 1}", title=g.summary, description=g.summary) for i, g in enumerate(goals)]
        edges = [TaskEdge(tasks[i].id, tasks[i + 1].id) for i in range(len(tasks) - 1)]
        return Plan(tasks=tasks, edges=edges, goal_ids=[g.id for g in goals], summary="one task per goal")

    async def refine(self, *, plan: Plan, drift: DriftEvent, goals: list[Goal]) -> Plan | None:
        return None


class StaticPlanner:
    """Always the plan it was given (a fresh copy per run). Cannot replan."""

    can_replan = False

    def __init__(self, plan: Plan) -> None:
        plan.validate()
        self._plan = plan

    @property
    def fixed_plan(self) -> Plan:
        """The plan every run gets (a resumed run is checked against it)."""
        return self._plan

    async def generate(
        self, *, goals: list[Goal], available_agents: list[str], context: dict[str, Any] | None = None
    ) -> Plan | None:
        return self._plan.fresh_copy(goal_ids=list(self._plan.goal_ids) or [g.id for g in goals])

    async def refine(self, *, plan: Plan, drift: DriftEvent, goals: list[Goal]) -> Plan | None:
        return None


