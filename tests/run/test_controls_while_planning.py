"""Controls are handled while the goals are derived, the plan made or a replan runs."""

from __future__ import annotations

import asyncio
from typing import Any

from goldfive.control import AckResult, ControlKind
from goldfive.types import DriftEvent, Goal, Plan
from tests.runtime_kit import Harness, ReplanningPlanner, ScriptedAgent, executor, linear_plan  # noqa: F401


class SlowPlanner(ReplanningPlanner):
    """generate (and refine, when ``slow_refine``) wait until ``release()``; records cancels."""

    def __init__(self, plan: Plan, *, slow_refine: bool = False) -> None:
        super().__init__(plan)
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.cancelled = False
        self.slow_refine = slow_refine

    def release(self) -> None:
        self.gate.set()

    async def _hold(self) -> None:
        self.entered.set()
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise

    async def generate(self, *, goals: list[Goal], available_agents: list[str], context: dict[str, Any] | None = None) -> Plan:
        await self._hold()
        return await super().generate(goals=goals, available_agents=available_agents, context=context)

    async def refine(self, *, plan: Plan, drift: DriftEvent, goals: list[Goal]) -> Plan | None:
        if self.slow_refine:
            self.gate.clear()
            await self._hold()
        return await super().refine(plan=plan, drift=drift, goals=goals)


async def test_a_pause_sent_while_planning_is_acked_at_once_and_holds_the_first_task(executor: Any) -> None:
    agent, planner = ScriptedAgent(), SlowPlanner(linear_plan("a"))
    h = Harness(agent, executor, planner)
    h.start()
    await planner.entered.wait()
    ack = await h.control(ControlKind.PAUSE)
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, "pausing: planning finishes, then no task starts")
    status = await h.control(ControlKind.STATUS_QUERY)
    assert "busy=planning" in status.detail
    planner.release()
    await h.wait_event("plan_submitted")
    await h.control(ControlKind.STATUS_QUERY)  # handled at the paused boundary
    assert agent.runs == [] and "task_started" not in h.kinds()
    await h.control(ControlKind.RESUME)
    assert (await h.finish()).success and agent.runs == ["a"]


async def test_a_cancel_sent_while_planning_interrupts_the_planner_and_aborts(executor: Any) -> None:
    planner = SlowPlanner(linear_plan("a"))
    h = Harness(ScriptedAgent(), executor, planner)
    h.start()
    await planner.entered.wait()
    ack = await h.control(ControlKind.CANCEL, reason="wrong goal")
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS and planner.cancelled
    assert not out.success and out.reason == "wrong goal"
    assert h.kinds()[-1] == "run_aborted" and "plan_submitted" not in h.kinds()


async def test_a_steer_sent_while_planning_is_acked_at_once_and_applied_to_the_new_plan(executor: Any) -> None:
    agent, planner = ScriptedAgent(), SlowPlanner(linear_plan("a"))
    h = Harness(agent, executor, planner)
    h.start()
    await planner.entered.wait()
    ack = await h.control(ControlKind.STEER, note="smaller")
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, "steer accepted: applied to the plan once planning ends")
    planner.release()
    out = await h.finish()
    kinds = h.kinds()
    assert out.success and kinds.index("plan_submitted") < kinds.index("plan_revised") < kinds.index("task_started")
    assert agent.runs == ["r1_1"]  # only the revised plan ran


async def test_a_cancel_sent_while_a_steer_replans_interrupts_the_replan(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    planner = SlowPlanner(linear_plan("a", "b"), slow_refine=True)
    planner.release()  # generate passes; refine will hold
    h = Harness(agent, executor, planner)
    h.start()
    await agent.started()
    planner.entered.clear()
    await h.send(ControlKind.STEER, note="other way")
    await planner.entered.wait()  # the replan is running
    ack = await h.control(ControlKind.CANCEL)
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS and planner.cancelled
    assert not out.success and h.kinds()[-1] == "run_aborted"
