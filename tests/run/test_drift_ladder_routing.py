"""Drifts goldfive detects (tool errors, failures) reach the intervention ladder: a replanning
planner refines on WARNING and above at the next task boundary; a fixed plan only records them."""

from goldfive import DefaultSteerer, DriftKind
from goldfive.adapters.callable import CallableAdapter
from goldfive.run.user_tools import UserTool

from goldfive.conv import drift_kind_from_pb
from tests.runtime_kit import Harness, ReplanningPlanner, executor, linear_plan, static  # noqa: F401


def _agent_whose_tool_raises():
    def flaky() -> str:
        raise RuntimeError("disk full")

    async def agent(task, session, tools):
        if task.id == "a":
            out = await tools["flaky"]()
            assert out["ok"] is False  # the error reaches the agent as a value
        return f"done {task.id}"

    return CallableAdapter(agent, tools=[UserTool(flaky)])


async def test_a_tool_error_replans_at_the_next_boundary(executor):
    planner = ReplanningPlanner(linear_plan("a", "b"))
    h = Harness(agent=_agent_whose_tool_raises(), executor=executor, planner=planner)
    h.start()
    outcome = await h.finish()
    assert outcome.success, outcome.reason
    (revised,) = h.of("plan_revised")
    assert drift_kind_from_pb(revised.plan.revision_kind) == DriftKind.TOOL_ERROR
    assert revised.plan.revision_index == 1
    assert [c["drift"].kind for c in planner.refine_calls] == [DriftKind.TOOL_ERROR]
    kinds = h.kinds()
    # the drift is recorded mid-task; the revision lands only after task a ended
    assert kinds.index("drift_detected") < kinds.index("task_completed") < kinds.index("plan_revised")


async def test_with_a_fixed_plan_a_tool_error_is_only_recorded(executor):
    h = Harness(agent=_agent_whose_tool_raises(), executor=executor, planner=static("a", "b"))
    h.start()
    outcome = await h.finish()
    assert outcome.success, outcome.reason
    assert h.of("plan_revised") == []
    drift_kinds = [d.kind for d in h.of("drift_detected")]
    assert len(drift_kinds) == 1  # TOOL_ERROR only: no REFINE_VALIDATION_FAILED noise


async def test_automatic_refines_are_capped(executor):
    async def failing_agent(task, session):
        raise RuntimeError("always fails")

    planner = ReplanningPlanner(linear_plan("a"))
    steerer = DefaultSteerer(max_auto_refines=3)
    h = Harness(agent=failing_agent, executor=executor, planner=planner, extra={"steerer": steerer})
    h.start()
    outcome = await h.finish()
    assert not outcome.success
    assert len(planner.refine_calls) == 3
    assert len(h.of("plan_revised")) == 3
