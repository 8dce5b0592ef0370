"""How many event loop iterations a control takes to reach a running batch (issue 27): the
executor awaits one future that a queued control sets directly, so a control sent while a task
runs is handled, and its ack out, in the very next iteration (two before: the ready future's
callback, then the executor's own wake-up)."""

from __future__ import annotations

import asyncio

from goldfive.control import AckResult, ControlChannel, ControlKind, ControlMessage
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink
from goldfive.testing import until
from goldfive.types import Goal, Plan, Session, Task

import pytest


@pytest.mark.parametrize("executor", [SequentialExecutor, ParallelDAGExecutor])
async def test_a_status_query_sent_while_a_task_runs_is_acked_within_one_loop_iteration(executor: type) -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def held(task: Task, session: Session) -> str:
        started.set()
        await gate.wait()
        return "ok"

    ch, sink = ControlChannel(), InMemorySink()
    plan = Plan(tasks=[Task("a", "a")], id="p")
    runner = Runner(agent=held, planner=StaticPlanner(plan), executor=executor(), sinks=[sink], control=ch)
    run = asyncio.ensure_future(runner.run([Goal("g1", "hops")]))
    try:
        await started.wait()
        for _ in range(3):  # the executor is waiting on its batch now
            await asyncio.sleep(0)
        acked = asyncio.ensure_future(ch.request(ControlMessage(ControlKind.STATUS_QUERY, id="q1")))
        await asyncio.sleep(0)  # the request is sent
        await asyncio.sleep(0)  # one iteration: the executor handled it and acked
        assert [e.control_acked.ack.control_id for e in sink.events if e.WhichOneof("payload") == "control_acked"] == ["q1"]
        assert (await acked).result == AckResult.SUCCESS
        gate.set()
        out = await run
        assert out.success
    finally:
        gate.set()
        await until(lambda: run.done())
        ch.close()
        await runner.close()
