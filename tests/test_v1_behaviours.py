"""Behaviours goldfive v1's own tests expect of the public API, run against this project."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import goldfive
from goldfive import events
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.protocols import Steerer
from goldfive.runner import Runner
from goldfive.sinks.jsonl import JSONLPersistenceSink, replay_from_jsonl
from goldfive.sinks.memory import InMemorySink
from goldfive.steerer import DefaultSteerer
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus
from tests.runtime_kit import ScriptedAgent, kinds


def _wide_plan(n: int) -> Plan:
    return Plan(tasks=[Task(f"t{i}", f"T{i}") for i in range(n)], edges=[], id="wide")


async def test_parallel_max_concurrency_0_means_no_cap() -> None:
    n = 7  # more than any default a cap could have
    agent = ScriptedAgent(hold=[f"t{i}" for i in range(n)])
    runner = Runner(agent=agent, planner=StaticPlanner(_wide_plan(n)), executor=ParallelDAGExecutor(max_concurrency=0))
    run = asyncio.create_task(runner.run("all at once"))
    started = {await agent.started() for _ in range(n)}  # every task runs before any is released
    assert started == {f"t{i}" for i in range(n)} and len(agent.waiting) == n
    agent.release(*started)
    assert (await asyncio.wait_for(run, 10)).success
    assert ParallelDAGExecutor(max_concurrency=0).max_concurrency is None
    with pytest.raises(ValueError):
        ParallelDAGExecutor(max_concurrency=-1)


async def test_a_positive_max_concurrency_still_caps() -> None:
    agent = ScriptedAgent(hold=["t0", "t1", "t2"])
    runner = Runner(agent=agent, planner=StaticPlanner(_wide_plan(3)), executor=ParallelDAGExecutor(max_concurrency=2))
    run = asyncio.create_task(runner.run("two at a time"))
    first = {await agent.started(), await agent.started()}
    await asyncio.sleep(0)
    assert agent.starts.empty() and len(agent.waiting) == 2  # the third waits for a slot
    agent.release(*first)
    agent.release(await agent.started())
    assert (await asyncio.wait_for(run, 10)).success


async def test_replay_from_jsonl_is_iterable_and_has_a_length(tmp_path: Path) -> None:
    s = Session(run_id="r", clock=lambda: 1_700_000_000_000)
    emitted = [events.run_started(s, goal_summary="g"), events.task_started(s, "a"), events.run_completed(s, "ok")]
    sink = JSONLPersistenceSink(tmp_path / "run.jsonl")
    for ev in emitted:
        await sink.emit(ev)
    await sink.close()
    result = replay_from_jsonl(tmp_path / "run.jsonl")
    assert len(result) == 3 and list(result) == emitted == result.events
    assert result[0] == emitted[0] and result[-1].run_completed.outcome_summary == "ok"
    assert [e.sequence for e in result] == [0, 1, 2]
    assert (result.skipped, result.errors) == (0, [])  # what it returned before still works
    assert not replay_from_jsonl(_empty(tmp_path)) and len(replay_from_jsonl(_empty(tmp_path))) == 0


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    return path


@pytest.mark.parametrize("bad", [42, 4.2, {"goal": "x"}, ["not a goal"], [Goal("g", "ok"), 7]])
async def test_run_with_input_that_is_not_text_or_goals_ends_as_an_aborted_run(bad: Any) -> None:
    sink = InMemorySink()
    runner = Runner(agent=ScriptedAgent(), planner=StaticPlanner(_wide_plan(1)), sinks=[sink])
    outcome = await runner.run(bad)
    assert outcome.success is False
    assert "str or a list of Goal" in outcome.reason and type(bad if not isinstance(bad, list) else bad[-1]).__name__ in outcome.reason
    assert kinds(sink.events) == ["run_started", "run_aborted"]
    assert sink.events[-1].run_aborted.reason == outcome.reason
    await runner.close()


async def test_a_list_of_goals_still_runs() -> None:
    runner = Runner(agent=ScriptedAgent(), planner=StaticPlanner(_wide_plan(1)))
    assert (await runner.run([Goal("g1", "the goal")])).success


class V1StyleSteerer(DefaultSteerer):
    """A steerer written for goldfive v1: it overrides ``transition`` with v1's signature
    (keyword-only session, ``detail``/``cancel_reason``, returns None) and records calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, TaskStatus, str]] = []

    async def transition(  # type: ignore[override]  # v1 returns None
        self, task_id: str, to: TaskStatus, *, detail: str = "", session: Session, cancel_reason: str = ""
    ) -> None:
        self.calls.append((task_id, to, detail))
        await super().transition(task_id, to, session=session, detail=detail, cancel_reason=cancel_reason)


async def test_a_steerer_written_to_v1s_transition_drives_a_run() -> None:
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B"), Task("c", "C")], edges=[TaskEdge("a", "b")], id="p")
    agent = ScriptedAgent()

    async def fail(task: Task, session: Session, tools: dict[str, Any]) -> str:
        raise RuntimeError("no")

    agent.on("c", fail)
    steerer = V1StyleSteerer()
    assert isinstance(steerer, Steerer)
    sink = InMemorySink()
    runner = Runner(agent=agent, planner=StaticPlanner(plan), steerer=steerer, sinks=[sink])
    outcome = await runner.run("three tasks")
    statuses = {t.id: t.status for t in outcome.session.plan.tasks}  # type: ignore[union-attr]
    assert statuses == {"a": TaskStatus.COMPLETED, "b": TaskStatus.COMPLETED, "c": TaskStatus.FAILED}
    assert ("a", TaskStatus.RUNNING, "") in steerer.calls and ("a", TaskStatus.COMPLETED, "done a") in steerer.calls
    assert ("c", TaskStatus.FAILED, "agent raised RuntimeError: no") in steerer.calls
    assert outcome.session.completed_results["a"] == "done a"
    assert [e.task_failed.reason for e in sink.events if events.kind_of(e) == "task_failed"] == ["agent raised RuntimeError: no"]


async def test_a_steerer_with_only_v1s_required_transition_arguments_runs_a_plain_run() -> None:
    """``transition(task_id, to, *, session)``: the runtime passes ``detail`` only when there
    is one (a run whose agent returns nothing and never fails passes none)."""

    class Minimal(DefaultSteerer):
        async def transition(self, task_id: str, to: TaskStatus, *, session: Session) -> bool:  # type: ignore[override]
            return await super().transition(task_id, to, session=session)

    async def silent(task: Task, session: Session) -> str:
        return ""

    runner = Runner(agent=silent, planner=StaticPlanner(_wide_plan(2)), steerer=Minimal())
    assert (await runner.run("quiet")).success


def test_the_six_protocols_are_exported_from_the_package_root() -> None:
    names = ["GoalDeriver", "Planner", "Executor", "Steerer", "AgentAdapter", "EventSink"]
    assert all(name in goldfive.__all__ for name in names)
    assert isinstance(DefaultSteerer(), goldfive.Steerer)
    assert isinstance(InMemorySink(), goldfive.EventSink)
    assert isinstance(StaticPlanner(_wide_plan(1)), goldfive.Planner)
