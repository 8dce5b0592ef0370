"""A recorded ControlAcked carries the ack's time (ControlAck.acked_at): the same one the sender
gets, on every path an ack takes (queued, answered in the sender's call, refused, the ladder's
own interventions, which are acked on the event stream only)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from goldfive import events
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1 import events_pb2
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink
from goldfive.testing import until
from goldfive.types import Goal, Plan, Session, Task
from tests.controls.test_control_direct import EXECUTORS, _Rig


def _recorded_ack(sink: InMemorySink, control_id: str) -> events_pb2.ControlAcked:
    found = [e.control_acked for e in sink.events if events.kind_of(e) == "control_acked" and e.control_acked.ack.control_id == control_id]
    assert len(found) == 1, found
    return found[0]


def _same_time(recorded: events_pb2.ControlAcked, sent: ControlAck, since_ms: int) -> None:
    assert recorded.ack.HasField("acked_at"), "the recorded ack has no acked_at"
    assert recorded.ack.acked_at.ToMilliseconds() == sent.acked_at_ms
    assert since_ms <= sent.acked_at_ms <= time.time_ns() // 1_000_000


@pytest.mark.parametrize("executor", EXECUTORS)
async def test_a_control_answered_in_its_senders_call_is_recorded_with_the_time_the_sender_got(executor: type) -> None:
    sink = InMemorySink()
    since = time.time_ns() // 1_000_000
    async with _Rig(executor, [sink]) as rig:
        ack = await rig.ch.request(ControlMessage(ControlKind.STATUS_QUERY, id="q1"))
        _same_time(_recorded_ack(sink, "q1"), ack, since)


@pytest.mark.parametrize("executor", EXECUTORS)
async def test_a_queued_control_and_a_refused_one_are_recorded_with_the_time_the_sender_got(executor: type) -> None:
    sink = InMemorySink()
    since = time.time_ns() // 1_000_000
    async with _Rig(executor, [sink]) as rig:
        paused = await rig.ch.request(ControlMessage(ControlKind.PAUSE, id="p1"))
        _same_time(_recorded_ack(sink, "p1"), paused, since)
        # A REWIND_TO whose task_id is not text: refused naming the field, recorded all the same.
        bad = await rig.ch.request(ControlMessage(ControlKind.REWIND_TO, id="r1", payload={"task_id": 7}))
        assert bad.result == AckResult.FAILURE
        _same_time(_recorded_ack(sink, "r1"), bad, since)
        resumed = await rig.ch.request(ControlMessage(ControlKind.RESUME, id="u1"))
        _same_time(_recorded_ack(sink, "u1"), resumed, since)


async def test_a_ladder_intervention_acked_on_the_event_stream_only_has_its_time() -> None:
    from goldfive.adapters.callable import CallableAdapter
    from goldfive.run.user_tools import UserTool

    def deploy(service: str) -> dict[str, Any]:
        """Deploy a service (it never works here)."""
        return {"ok": False, "error": "registry timeout"}

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        while True:  # the same failing call until the watchdog pauses the run
            await tools["deploy"](service="api")
            await asyncio.sleep(0)

    sink, ch = InMemorySink(), ControlChannel()
    since = time.time_ns() // 1_000_000
    runner = Runner(agent=CallableAdapter(agent, tools=[UserTool(deploy)]), planner=StaticPlanner(Plan([Task("ship", "ship")])), sinks=[sink], control=ch)
    run = asyncio.ensure_future(runner.run("keep it up"))
    try:
        escalated = await until(
            lambda: [e.control_acked for e in sink.events if events.kind_of(e) == "control_acked" and e.control_acked.kind == "GOLDFIVE_PAUSE_ESCALATE"],
            "the watchdog's pause",
        )
        ack = escalated[0].ack
        assert ack.HasField("acked_at"), "the intervention's recorded ack has no acked_at"
        assert since <= ack.acked_at.ToMilliseconds() <= time.time_ns() // 1_000_000
    finally:
        await ch.send(ControlMessage(ControlKind.CANCEL, payload={"reason": "test over"}))
        await asyncio.wait_for(run, 20)
        await runner.close()


async def test_a_run_on_its_own_clock_times_its_acks_on_that_clock() -> None:
    now = [1_700_000_000_000]
    gate, started = asyncio.Event(), asyncio.Event()

    async def held(task: Task, session: Session) -> str:
        started.set()
        await gate.wait()
        return "ok"

    sink, ch = InMemorySink(), ControlChannel()
    runner = Runner(agent=held, planner=StaticPlanner(Plan([Task("a", "a")])), sinks=[sink], control=ch, clock=lambda: now[0])
    run = asyncio.ensure_future(runner.run([Goal("g1", "clock")]))
    try:
        await started.wait()
        now[0] += 5_000
        ack = await ch.request(ControlMessage(ControlKind.PAUSE, id="p1"))
        assert ack.acked_at_ms == 1_700_000_005_000
        recorded = _recorded_ack(sink, "p1")
        assert recorded.ack.acked_at.ToMilliseconds() == 1_700_000_005_000
        await ch.request(ControlMessage(ControlKind.RESUME))
    finally:
        gate.set()
        await asyncio.wait_for(run, 20)
        ch.close()
        await runner.close()
