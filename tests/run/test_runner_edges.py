"""Edges of the Runner's contract: it runs once; approvals on a closed channel do not hang;
nothing is written into an ended run without a word."""

import asyncio
import logging

import pytest

import goldfive
from goldfive import ControlChannel, GoldfiveError, InMemorySink, Plan, Runner, StaticPlanner, Task
from goldfive import events


def _plan() -> Plan:
    return Plan(tasks=[Task("t1", "one")])


async def test_a_runner_runs_once_and_says_so_the_second_time():
    async def agent(task, session):
        return "ok"

    runner = Runner(agent=agent, planner=StaticPlanner(_plan()), sinks=[InMemorySink()])
    assert (await runner.run("go")).success
    with pytest.raises(GoldfiveError, match="already ran"):
        await runner.run("again")
    await runner.close()


async def test_an_approval_asked_on_a_closed_channel_is_unavailable_at_once():
    channel = ControlChannel()
    decisions = []

    async def agent(task, session, tools):
        channel.close()  # the UI went away
        decisions.append(await tools["report_awaiting_approval"](prompt="ship it?", timeout_ms=60_000))
        return "done"

    sink = InMemorySink()
    runner = Runner(agent=agent, planner=StaticPlanner(_plan()), sinks=[sink], control=channel)
    outcome = await asyncio.wait_for(runner.run("go"), 5)
    await runner.close()
    assert outcome.success
    assert decisions[0]["decision"] == "unavailable"
    assert not [e for e in sink.events if e.WhichOneof("payload") == "approval_requested"]


async def test_an_event_after_the_terminal_event_is_refused_with_a_warning(caplog):
    async def agent(task, session):
        return "ok"

    sink = InMemorySink()
    runner = Runner(agent=agent, planner=StaticPlanner(_plan()), sinks=[sink])
    await runner.run("go")
    n = len(sink.events)
    ctx = runner.context
    assert ctx is not None
    with caplog.at_level(logging.WARNING, logger="goldfive.run"):
        assert await ctx.emit(events.task_progress, "t1", detail="late") is None
    assert len(sink.events) == n and sink.events[-1].WhichOneof("payload") == "run_completed"
    assert "already ended" in caplog.text
    await runner.close()


async def test_cancelling_run_from_outside_cancels_the_running_task_on_the_stream():
    started = asyncio.Event()

    async def agent(task, session):
        started.set()
        await asyncio.Event().wait()

    sink = InMemorySink()
    runner = Runner(agent=agent, planner=StaticPlanner(Plan(tasks=[Task("t1", "one"), Task("t2", "two")])), sinks=[sink])
    run = asyncio.create_task(runner.run("go"))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    kinds = [e.WhichOneof("payload") for e in sink.events]
    cancelled = [e.task_cancelled.task_id for e in sink.events if e.WhichOneof("payload") == "task_cancelled"]
    assert cancelled == ["t1", "t2"]
    assert kinds[-1] == "run_aborted" and sink.events[-1].run_aborted.reason == "run cancelled"
    await runner.close()


async def test_paused_when_the_channel_closes_the_run_resumes_and_says_so():
    from tests.runtime_kit import Harness, ScriptedAgent, static
    from goldfive import ControlKind, SequentialExecutor

    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent=agent, executor=SequentialExecutor(), planner=static("a", "b"))
    h.start()
    await agent.started()
    await h.control(ControlKind.PAUSE)
    agent.release("a")
    await h.wait_event("task_completed")
    h.channel.close()
    outcome = await h.finish()
    assert outcome.success
    details = [d.detail for d in h.of("drift_detected")]
    assert "control channel closed while paused; resuming" in details


async def test_tools_built_for_a_turn_are_dropped_when_it_ends():
    async def agent(task, session, tools):
        await tools["report_task_progress"](detail="x")
        return "ok"

    plan = Plan(tasks=[Task(f"t{i}", "t") for i in range(20)])
    runner = Runner(agent=agent, planner=StaticPlanner(plan))
    assert (await runner.run("go")).success
    assert runner.context is not None and runner.context._tools == {}
    await runner.close()


async def test_a_control_sent_after_close_is_refused_and_the_acks_stream_ends() -> None:
    from goldfive.errors import ChannelClosedError

    channel = goldfive.ControlChannel()
    runner = goldfive.Runner(agent=_ok, planner=goldfive.StaticPlanner(_one()), control=channel)
    assert (await runner.run("go")).success
    queued = goldfive.ControlMessage(goldfive.ControlKind.PAUSE)
    waiting = asyncio.ensure_future(channel.request(queued))
    await runner.close()
    ack = await asyncio.wait_for(waiting, 2)
    assert ack.result == goldfive.AckResult.FAILURE and ack.detail.startswith("run not active")
    with pytest.raises(ChannelClosedError):
        await channel.send(goldfive.ControlMessage(goldfive.ControlKind.RESUME))
    acks = await asyncio.wait_for(_collect(channel), 2)  # ends: every received control was acked
    assert [a.control_id for a in acks] == [queued.id]


async def _collect(channel: goldfive.ControlChannel) -> list[goldfive.ControlAck]:
    return [a async for a in channel.acks()]


async def _ok(task: goldfive.Task, session: goldfive.Session) -> str:
    return "ok"


def _one() -> goldfive.Plan:
    return goldfive.Plan(tasks=[goldfive.Task("a", "A")])
