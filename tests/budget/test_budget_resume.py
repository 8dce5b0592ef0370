"""A budget survives ``resume``: the recorded limits hold, a run the budget paused comes back
paused (RESUME still refused), and what was spent before the stop still counts."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from goldfive import Budget
from goldfive.control import AckResult, AppliedAs, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.sinks.sqlite import SQLitePersistenceSink, replay_from_sqlite
from goldfive.types import Plan, Session, Task, TaskEdge, TaskStatus
from goldfive.usage import ModelUsage, report_usage
from goldfive.view import RunState
from goldfive.view.attention import attention

RUN = "run-budget-resume"
PLAN = Plan([Task("a", "a"), Task("b", "b"), Task("c", "c")], [TaskEdge("a", "b"), TaskEdge("b", "c")], id="p")


class Spender:
    def __init__(self) -> None:
        self.ran: list[str] = []

    async def __call__(self, task: Task, session: Session) -> str:
        self.ran.append(task.id)
        await report_usage(ModelUsage("gpt-4o", 900, 100, source="test"), session=session, task_id=task.id)
        return task.id


async def _until(sink: InMemorySink, kind: str) -> None:
    for _ in range(500):
        if any(e.WhichOneof("payload") == kind for e in sink.events):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {kind}")


def _done_in(db: Path, task_id: str) -> bool:
    """``task_id`` is recorded completed in ``db`` (what a process killed now would leave)."""
    state = RunState.from_events(replay_from_sqlite(db, RUN))
    task = state.tasks.get(task_id)
    return task is not None and task.status is TaskStatus.COMPLETED


async def _ack(channel: ControlChannel, msg: ControlMessage) -> ControlAck:
    return await channel.request(msg, timeout=5)


async def test_a_resumed_run_keeps_its_budget_and_the_pause_it_caused(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    watch = InMemorySink()
    channel = ControlChannel()
    runner = Runner(agent=Spender(), planner=StaticPlanner(PLAN), run_id=RUN, control=channel, budget=Budget(tokens=1_500),
                    sinks=[SQLitePersistenceSink(db, durability="normal"), watch])  # fmt: skip
    task = asyncio.ensure_future(runner.run("spend"))
    await _until(watch, "budget_reached")
    for _ in range(500):  # b finishes and the run pauses at the boundary; c does not start
        if runner.context is not None and runner.context.paused and _done_in(db, "b"):
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("task b was not recorded completed with the run paused by its budget")
    crashed = tmp_path / "crashed.sqlite"
    src, dst = sqlite3.connect(db), sqlite3.connect(crashed)
    src.backup(dst)  # what a killed process leaves
    src.close()
    dst.close()
    channel.send_nowait(ControlMessage(ControlKind.CANCEL, payload={"reason": "the test stops it"}))
    await task
    await runner.close()

    again = Spender()
    channel2 = ControlChannel()
    resumed = Runner.resuming(RUN, store=crashed, agent=again, planner=StaticPlanner(PLAN), control=channel2)
    run2 = asyncio.ensure_future(resumed.run())
    try:
        for _ in range(200):
            if resumed.context is not None and resumed.context.paused and resumed.context.budget.reached is not None:
                break
            await asyncio.sleep(0.01)
        assert resumed.context is not None and resumed.context.budget.budget == Budget(tokens=1_500)
        refused = await _ack(channel2, ControlMessage(ControlKind.RESUME))
        assert refused.result == AckResult.FAILURE and "budget reached, tokens 2,000 of 1,500" in refused.detail
        assert again.ran == []  # nothing ran past the budget
        state = RunState.from_events(replay_from_sqlite(crashed, RUN))
        need = attention(state)
        assert need is not None and need.reason == "budget reached, tokens 2,000 of 1,500"
        raised = await _ack(channel2, ControlMessage(ControlKind.BUDGET, payload={"tokens": 10_000, "resume": True}))
        assert raised.applied_as == AppliedAs.BUDGET_SET_RESUMED, raised.detail
        out = await asyncio.wait_for(run2, 10)
    finally:
        channel2.close()
        await resumed.close()
    assert out.success, out.reason
    assert again.ran == ["c"]
    final = RunState.from_events(replay_from_sqlite(crashed, RUN))
    assert final.budget == {"tokens": 10_000.0} and final.usage.tokens == 3_000


async def test_a_budget_given_to_the_resume_replaces_the_recorded_one(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    channel = ControlChannel()
    watch = InMemorySink()
    runner = Runner(agent=Spender(), planner=StaticPlanner(PLAN), run_id=RUN, control=channel, budget=Budget(tokens=1_500),
                    sinks=[SQLitePersistenceSink(db, durability="normal"), watch])  # fmt: skip
    task = asyncio.ensure_future(runner.run("spend"))
    await _until(watch, "budget_reached")
    runner.suspend()  # the process stops, the run does not end
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await runner.close()

    resumed = Runner.resuming(RUN, store=db, agent=Spender(), planner=StaticPlanner(PLAN), budget=Budget(tokens=5_000))
    try:
        out = await asyncio.wait_for(resumed.run(), 10)
    finally:
        await resumed.close()
    assert out.success, out.reason  # paused by the old budget, the new one allows it: it goes on
    changed = [e.budget_changed.detail for e in replay_from_sqlite(db, RUN) if e.WhichOneof("payload") == "budget_changed"]
    assert changed == ["tokens 1,500", "tokens 5,000"]
