"""A run with no sink builds no TaskStarted / TaskCompleted nobody would read (issue 27): what
those events are for still happens. Its sequences are drawn as with a sink, the watchdog still
times its tasks, and a sink sees every task's two events, gap-free."""

from __future__ import annotations

import asyncio

from goldfive import events
from goldfive.planners.static import StaticPlanner
from goldfive.run.config import RuntimeConfig
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink
from goldfive.steerer import DefaultSteerer, DriftOutcome
from goldfive.types import DriftEvent, DriftKind, Goal, Plan, Session, Task, TaskEdge
from goldfive.watchdog import WatchdogConfig


def _linear(n: int) -> Plan:
    return Plan([Task(f"t{i}", f"task {i}") for i in range(n)], [TaskEdge(f"t{i}", f"t{i + 1}") for i in range(n - 1)])


async def _noop(task: Task, session: Session) -> str:
    return "ok"


async def test_a_run_without_sinks_draws_the_same_sequences_as_one_with_a_sink() -> None:
    plan = _linear(5)
    sink = InMemorySink()
    seen = await Runner(agent=_noop, planner=StaticPlanner(plan), sinks=[sink]).run([Goal("g", "g")])
    quiet = await Runner(agent=_noop, planner=StaticPlanner(plan)).run([Goal("g", "g")])
    assert seen.success and quiet.success
    assert [e.sequence for e in sink.events] == list(range(len(sink.events)))
    kinds = [events.kind_of(e) for e in sink.events]
    assert kinds.count("task_started") == kinds.count("task_completed") == 5
    assert quiet.session.last_sequence == seen.session.last_sequence == sink.events[-1].sequence
    assert quiet.session.completed_results == {f"t{i}": "ok" for i in range(5)}


async def test_the_watchdog_times_a_task_of_a_run_without_sinks() -> None:
    release, timed_out = asyncio.Event(), asyncio.Event()
    drifts: list[DriftEvent] = []

    class Watching(DefaultSteerer):
        async def handle_drift(self, session: Session, drift: DriftEvent, *, emit: bool = True, live: bool = False) -> DriftOutcome:
            drifts.append(drift)
            timed_out.set()
            return await super().handle_drift(session, drift, emit=emit, live=live)

    async def slow(task: Task, session: Session) -> str:
        await release.wait()
        return "late"

    config = RuntimeConfig(watchdog=WatchdogConfig(timeout_factor=2))
    plan = Plan([Task("slow", "Slow", predicted_duration_ms=50)])
    runner = Runner(agent=slow, planner=StaticPlanner(plan), steerer=Watching(), config=config)
    run = asyncio.ensure_future(runner.run([Goal("g", "g")]))
    await asyncio.wait_for(timed_out.wait(), 20)
    release.set()
    assert (await asyncio.wait_for(run, 20)).success
    await runner.close()
    assert [(d.kind, d.task_id) for d in drifts][:1] == [(DriftKind.TASK_TIMEOUT, "slow")]


async def test_a_validated_plans_copy_keeps_its_topological_order_with_its_own_tasks() -> None:
    plan = Plan(
        [Task("d", "D"), Task("b", "B"), Task("a", "A"), Task("c", "C")],
        [TaskEdge("a", "b"), TaskEdge("a", "c"), TaskEdge("b", "d"), TaskEdge("c", "d")],
    )
    unvalidated = [t.id for t in plan.topological_order()]
    copy = plan.validate().fresh_copy()
    order = copy.topological_order()
    assert [t.id for t in order] == unvalidated == ["a", "b", "c", "d"]
    assert all(t is copy.task(t.id) for t in order) and all(t is not plan.task(t.id) for t in order)
