"""The run's ControlLoop and the channel's request(): one reader, one acker, one validator."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from goldfive import conv
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.errors import ChannelClosedError
from goldfive.ladder import InterventionLevel
from goldfive.run import ControlLimits, RuntimeConfig, validate_control
from goldfive.steerer import DefaultSteerer
from goldfive.types import DriftEvent, DriftKind, Session, Task
from tests.runtime_kit import Harness, ReplanningPlanner, ScriptedAgent, executor, linear_plan, static  # noqa: F401

# -- ControlChannel.request -------------------------------------------------------------------


async def test_request_returns_the_ack_of_its_own_message_whatever_the_order_of_acks() -> None:
    ch = ControlChannel()
    a, b = ControlMessage(ControlKind.PAUSE), ControlMessage(ControlKind.RESUME)
    wait_a = asyncio.create_task(ch.request(a))
    wait_b = asyncio.create_task(ch.request(b))
    await asyncio.sleep(0)
    assert [await ch.receive(), await ch.receive()] == [a, b]
    await ch.ack(ControlAck(b.id, AckResult.SUCCESS, "second"))
    await ch.ack(ControlAck(a.id, AckResult.FAILURE, "first"))
    assert (await wait_a).detail == "first" and (await wait_b).detail == "second"
    ch.close()
    assert [x.control_id async for x in ch.acks()] == [b.id, a.id]  # every ack still reaches acks()


async def test_request_refuses_a_second_wait_on_the_same_id_and_a_closed_channel() -> None:
    ch = ControlChannel()
    msg = ControlMessage(ControlKind.PAUSE)
    first = asyncio.create_task(ch.request(msg))
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="already waiting"):
        await ch.request(msg)
    await ch.ack(ControlAck(msg.id, AckResult.SUCCESS))
    assert (await first).result == AckResult.SUCCESS
    ch.close()
    with pytest.raises(ChannelClosedError):
        await ch.request(ControlMessage(ControlKind.RESUME))


async def test_a_request_that_times_out_leaves_the_control_sent() -> None:
    ch = ControlChannel()
    msg = ControlMessage(ControlKind.PAUSE)
    with pytest.raises(TimeoutError):
        await ch.request(msg, timeout=0.01)
    assert await ch.receive(timeout=0) == msg


async def test_refuse_pending_acks_every_unread_message_once() -> None:
    ch = ControlChannel()
    msgs = [ControlMessage(ControlKind.PAUSE), ControlMessage(ControlKind.STEER, payload={"note": "x"})]
    waits = [asyncio.create_task(ch.request(m)) for m in msgs]
    await asyncio.sleep(0)
    ch.close()
    assert await ch.refuse_pending("run not active") == 2
    assert [(await w).result for w in waits] == [AckResult.FAILURE] * 2
    assert len([a async for a in ch.acks()]) == 2


# -- validate_control: one check, one set of limits ------------------------------------------


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({"x": b"bytes"}, "not JSON-serialisable"),
        ({"x": {1, 2}}, "not JSON-serialisable"),
        ({"x": "\ud800"}, "lone surrogate"),
        ({"x": float("nan")}, "not JSON-serialisable"),
        ({"task_id": "t" * 300}, "payload.task_id is 300 characters"),
        ({"blob": "x" * 70_000}, "the limit is 65536 bytes"),
    ],
)
def test_validate_control_names_what_is_wrong(payload: dict[str, Any], words: str) -> None:
    assert words in validate_control(ControlMessage(ControlKind.STATUS_QUERY, payload=payload))


def test_validate_control_refuses_ladder_kinds_only_from_remote_clients() -> None:
    msg = ControlMessage(ControlKind.GOLDFIVE_STEER, payload={"note": "n"})
    assert validate_control(msg) == ""
    assert "intervention ladder only" in validate_control(msg, allow_ladder_kinds=False)


async def test_unencodable_payloads_get_a_failure_ack_and_the_run_goes_on_gap_free(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a", "b"))
    bad = [
        await h.send(ControlKind.STATUS_QUERY, x=b"raw"),
        await h.send(ControlKind.STATUS_QUERY, x={1}),
        await h.send(ControlKind.STEER, note="\ud800"),
    ]
    good = await h.send(ControlKind.STATUS_QUERY)
    h.start()
    out = await h.finish()
    assert out.success
    assert [h.acks[m.id][0].result for m in bad] == [AckResult.FAILURE] * 3
    assert "not JSON-serialisable" in h.acks[bad[0].id][0].detail
    assert "lone surrogate" in h.acks[bad[2].id][0].detail
    assert h.acks[good.id][0].result == AckResult.SUCCESS
    assert [e.sequence for e in h.events] == list(range(len(h.events)))
    received = [e.control_received.control.id for e in h.events if e.WhichOneof("payload") == "control_received"]
    assert received == [m.id for m in [*bad, good]]  # each recorded, the bad ones without their payload


async def test_the_run_config_limits_are_the_ones_the_loop_enforces(executor: Any) -> None:
    config = RuntimeConfig(limits=ControlLimits(max_control_bytes=64))
    h = Harness(ScriptedAgent(), executor, static("a"), config=config)
    big = await h.send(ControlKind.STATUS_QUERY, blob="x" * 100)
    h.start()
    await h.finish()
    ack = h.acks[big.id][0]
    assert ack.result == AckResult.FAILURE and "the limit is 64 bytes" in ack.detail


# -- the ladder's interventions go to the loop, not to the person's channel ---------------------


class _ReinvokingSteerer(DefaultSteerer):
    def ladder_level_for(self, drift: DriftEvent, occurrences: int) -> InterventionLevel:
        if drift.kind == DriftKind.TASK_FAILED_RECOVERABLE:
            return InterventionLevel.CANCEL_REINVOKE
        return super().ladder_level_for(drift, occurrences)


@pytest.mark.parametrize("with_control", [True, False])
async def test_a_ladder_intervention_is_applied_and_audited_without_a_channel_to_carry_it(
    executor: Any, with_control: bool
) -> None:
    agent = ScriptedAgent()

    async def flaky(task: Task, session: Session, tools: dict[str, Any]) -> str:
        await tools["report_task_failed"](reason="flaky upstream", recoverable=True)
        return "gave up"

    agent.on("a", flaky)
    h = Harness(
        agent, executor, ReplanningPlanner(linear_plan("a")), with_control=with_control, extra={"steerer": _ReinvokingSteerer()}
    )
    h.start()
    out = await h.finish()
    assert out.success and len(h.of("plan_revised")) == 1
    acked = [(p.kind, conv.from_pb_control_ack(p.ack).result) for p in h.of("control_acked")]
    assert ("GOLDFIVE_STEER", AckResult.SUCCESS) in acked
    assert all(not ack for ack in h.acks.values())  # nothing was acked to the person's channel


# -- PAUSING until the boundary ---------------------------------------------------------------


async def test_a_pause_sent_mid_task_reads_pausing_until_the_task_ends_then_paused(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    await agent.started()
    await h.control(ControlKind.PAUSE)
    during = await h.control(ControlKind.STATUS_QUERY)
    assert "state=PAUSING" in during.detail
    agent.release("a")
    await h.wait_event("task_completed", lambda p: p.task_id == "a")
    after = await h.control(ControlKind.STATUS_QUERY)
    assert "state=PAUSED" in after.detail and agent.runs == ["a"]
    again = await h.control(ControlKind.PAUSE)
    assert again.detail == "already paused"
    await h.control(ControlKind.RESUME)
    assert (await h.finish()).success
