"""After ``resume`` the usage totals go on from the recording's: nothing spent is forgotten."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from goldfive.run.current_run import current
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks.sqlite import SQLitePersistenceSink, replay_from_sqlite
from goldfive.types import Plan, Session, Task, TaskEdge
from goldfive.usage import ModelUsage, report_usage
from goldfive.view import RunState

RUN = "run-usage-resume"
PLAN = Plan([Task("a", "a"), Task("b", "b"), Task("c", "c")], [TaskEdge("a", "b"), TaskEdge("b", "c")], id="p")


class SpendingAgent:
    """Each task makes one model call of 1000 in / 100 out on gpt-4o; ``hold`` blocks after it."""

    def __init__(self, hold: str = "") -> None:
        self.hold = hold
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()
        self.seen_before: list[int] = []

    async def __call__(self, task: Task, session: Session) -> str:
        self.seen_before.append(current().usage.totals.calls)
        await report_usage(ModelUsage("gpt-4o", 1000, 100, source="test"), session=session, task_id=task.id)
        if task.id == self.hold:
            self.entered.set()
            await self.gate.wait()
        return task.id


async def test_a_resumed_run_counts_the_calls_made_before_the_stop(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    agent = SpendingAgent(hold="b")
    channel = ControlChannel()
    runner = Runner(agent=agent, planner=StaticPlanner(PLAN), run_id=RUN, control=channel,
                    sinks=[SQLitePersistenceSink(db, durability="normal")])  # fmt: skip
    task = asyncio.ensure_future(runner.run("spend"))
    await agent.entered.wait()
    crashed = tmp_path / "crashed.sqlite"
    src, dst = sqlite3.connect(db), sqlite3.connect(crashed)
    src.backup(dst)  # what a killed process leaves: b's call was committed before b went on
    src.close()
    dst.close()
    agent.gate.set()
    channel.send_nowait(ControlMessage(ControlKind.RESUME))
    await task
    await runner.close()

    again = SpendingAgent()
    resumed = Runner.resuming(RUN, store=crashed, agent=again, planner=StaticPlanner(PLAN))
    try:
        out = await resumed.run()
    finally:
        await resumed.close()
    assert out.success, out.reason
    assert again.seen_before == [2, 3]  # b runs again knowing a's and its first attempt's calls
    assert resumed.context is not None
    totals = resumed.context.usage.totals
    assert (totals.calls, totals.input_tokens, totals.output_tokens) == (4, 4000, 400)
    assert resumed.context.usage.task_totals("b").calls == 2
    state = RunState.from_events(replay_from_sqlite(crashed, RUN))  # what replay shows
    assert state.usage == totals
    assert state.tasks["b"].usage.calls == 2 and state.usage.cost_usd > 0
