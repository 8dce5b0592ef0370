"""``serve --budget`` for runs that connect from other processes (Runner(hub=...), --ray): a
run with no budget of its own gets the hub's, as a BUDGET control recorded with author "hub
default", and pauses at it; a run that brings its own budget keeps it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from goldfive.budget import Budget
from goldfive.hub.connected import DEFAULT_BUDGET_AUTHOR
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RunHost, start_server
from goldfive.runner import Runner
from goldfive.testing import until
from goldfive.types import Plan, Session, Task, TaskEdge
from goldfive.usage import ModelUsage, report_usage


class Spender:
    """Each task reports 1,000 tokens; the first waits until ``go`` is set."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.ran: list[str] = []

    async def __call__(self, task: Task, session: Session) -> str:
        await self.go.wait()
        self.ran.append(task.id)
        await report_usage(ModelUsage("gpt-4o", 900, 100, source="test"), session=session, task_id=task.id)
        return task.id


def _runner(agent: Spender, address: str, run_id: str, **kw: Any) -> Runner:
    tasks = [Task(f"t{i}", f"task {i}") for i in (1, 2, 3)]
    plan = Plan(tasks=tasks, edges=[TaskEdge("t1", "t2"), TaskEdge("t2", "t3")], id="p1")
    return Runner(agent=agent, planner=StaticPlanner(plan), run_id=run_id, hub=address, **kw)


def _changes(host: RunHost, run_id: str) -> list[tuple[str, str]]:
    run = host.get(run_id)
    if run is None:
        return []
    return [(e.budget_changed.detail, e.budget_changed.author) for e in run.events_after(-1) if e.WhichOneof("payload") == "budget_changed"]


async def test_a_connected_run_without_a_budget_gets_the_hubs_and_pauses_at_it(tmp_path: Path) -> None:
    host = RunHost(tmp_path / "hub.sqlite")
    server = await start_server(host, listen="127.0.0.1:0", default_budget=Budget(tokens=1_500))
    agent = Spender()
    runner = _runner(agent, server.address, "bare-1")
    task = asyncio.create_task(runner.run("spend"))
    try:
        await until(lambda: _changes(host, "bare-1") == [("tokens 1,500", DEFAULT_BUDGET_AUTHOR)], timeout=10)
        agent.go.set()
        run = host.get("bare-1")
        assert run is not None
        await until(lambda: run.state.budget_reached == "budget reached, tokens 2,000 of 1,500", timeout=10)
        assert agent.ran == ["t1", "t2"]  # t3 does not start: the hub's budget holds the run
        assert not task.done()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await runner.close()
        await server.stop(None)


async def test_a_connected_run_with_its_own_budget_keeps_it(tmp_path: Path) -> None:
    host = RunHost(tmp_path / "hub.sqlite")
    server = await start_server(host, listen="127.0.0.1:0", default_budget=Budget(tokens=1_500))
    agent = Spender()
    agent.go.set()
    runner = _runner(agent, server.address, "own-1", budget=Budget(tokens=10_000))
    try:
        outcome = await asyncio.wait_for(runner.run("spend"), 10)
        assert outcome.success, outcome.reason
        await until(lambda: bool(host.get("own-1") and host.get("own-1").state.finished), timeout=10)  # type: ignore[union-attr]
        assert _changes(host, "own-1") == [("tokens 10,000", "")]
        assert agent.ran == ["t1", "t2", "t3"]
    finally:
        await runner.close()
        await server.stop(None)


async def test_the_hub_default_is_not_sent_after_a_persons_budget_went_to_the_run() -> None:
    from goldfive import events as ev_
    from goldfive.hub.connected import RunnerAttachment
    from goldfive.store.registry import RoutedControl
    from goldfive.types import Session

    session = Session(run_id="r1")
    started, step = ev_.run_started(session, goal_summary="g"), ev_.task_started(session, "t1")
    started.sequence, step.sequence = 0, 1

    def connected() -> RunnerAttachment:
        run = RunnerAttachment.new("r1", None)  # type: ignore[arg-type]
        run.default_budget = Budget(tokens=1_000)
        for e in (started, step):
            run.run.fold(e)
        return run

    bare = connected()
    bare._offer_budget([started, step])
    assert bare._budget_task is not None  # no budget of its own: the hub's goes
    bare._budget_task.cancel()
    given = connected()
    given.routed["c1"] = RoutedControl("c1", "BUDGET", "alice")  # ctl start --budget got there first
    given._offer_budget([started, step])
    assert given._budget_task is None
