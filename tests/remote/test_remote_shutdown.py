"""Cancelling `serve` (SIGTERM, Ctrl-C) closes every hosted run; nothing is left pending."""

import asyncio

from goldfive import Plan, Runner, StaticPlanner, Task
from goldfive.remote.server import serve


async def test_cancelled_serve_closes_the_hosted_runner_and_leaves_no_task(tmp_path):
    started = asyncio.Event()

    async def agent(task, session):
        started.set()
        await asyncio.Event().wait()  # runs until cancelled

    def factory(*, sinks, control, run_id):
        plan = Plan(tasks=[Task("t1", "wait")])
        return Runner(agent=agent, planner=StaticPlanner(plan), sinks=sinks, control=control, run_id=run_id)

    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    before = set(asyncio.all_tasks())
    serving = loop.create_task(
        serve("127.0.0.1:0", None, None, None, str(tmp_path / "runs.sqlite"), [(factory, "go")], ready=ready)
    )
    server = await ready
    await asyncio.wait_for(started.wait(), 5)
    (hosted,) = server.host.runs()
    runner = hosted.runner

    serving.cancel()
    try:
        await serving
    except asyncio.CancelledError:
        pass

    assert runner._responder is None, "the runner was not closed"
    leftover = [t for t in asyncio.all_tasks() - before if t is not asyncio.current_task() and not t.done()]
    assert leftover == []
