"""ControlChannel guarantees (docs/protocol.md#the-controlchannel, docs/protocol.md#acks)."""

from __future__ import annotations

import asyncio

import pytest

from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.errors import ChannelClosedError, GoldfiveError


async def _collect_acks(ch: ControlChannel) -> list[ControlAck]:
    return [a async for a in ch.acks()]


async def test_messages_are_received_in_send_order() -> None:
    ch = ControlChannel()
    sent = [ControlMessage(kind) for kind in ControlKind]
    for m in sent:
        await ch.send(m)
    got = [await ch.receive() for _ in sent]
    assert [m.id for m in got] == [m.id for m in sent]
    assert [m.kind for m in got] == list(ControlKind)


async def test_every_message_gets_its_ack_through_acks() -> None:
    ch = ControlChannel()
    sent = [ControlMessage(ControlKind.PAUSE), ControlMessage(ControlKind.RESUME), ControlMessage("STEER")]

    async def runner() -> None:
        results = iter([AckResult.SUCCESS, AckResult.FAILURE, AckResult.UNSUPPORTED])
        while (msg := await ch.receive()) is not None:
            await ch.ack(ControlAck(msg.id, next(results), detail=f"for {msg.kind}"))

    runner_task = asyncio.create_task(runner())
    collector = asyncio.create_task(_collect_acks(ch))
    for m in sent:
        await ch.send(m)
    ch.close()
    acks = await asyncio.wait_for(collector, 2)
    await asyncio.wait_for(runner_task, 2)
    assert [a.control_id for a in acks] == [m.id for m in sent]
    assert [a.result for a in acks] == [AckResult.SUCCESS, AckResult.FAILURE, AckResult.UNSUPPORTED]
    assert acks[2].detail == "for STEER"


async def test_close_is_idempotent() -> None:
    ch = ControlChannel()
    await ch.send(ControlMessage(ControlKind.PAUSE))
    ch.close()
    ch.close()
    assert ch.closed
    assert (await ch.receive()) is not None
    assert await ch.receive() is None
    ch.close()
    assert await ch.receive() is None


async def test_close_wakes_a_receive_that_is_already_blocked() -> None:
    ch = ControlChannel()
    blocked = asyncio.create_task(ch.receive())
    await asyncio.sleep(0)  # let it block on the empty inbox
    assert not blocked.done()
    ch.close()
    assert await asyncio.wait_for(blocked, 1) is None


async def test_close_wakes_every_blocked_receiver() -> None:
    ch = ControlChannel()
    receivers = [asyncio.create_task(ch.receive()) for _ in range(3)]
    await asyncio.sleep(0)
    ch.close()
    assert await asyncio.wait_for(asyncio.gather(*receivers), 1) == [None, None, None]


async def test_messages_queued_before_close_are_received_first_then_none() -> None:
    ch = ControlChannel()
    a, b = ControlMessage(ControlKind.STEER), ControlMessage(ControlKind.CANCEL)
    await ch.send(a)
    await ch.send(b)
    ch.close()
    assert (await ch.receive()) is a
    assert (await ch.receive()) is b
    assert await ch.receive() is None
    assert await ch.receive() is None


async def test_pending_counts_messages_not_yet_received_before_and_after_close() -> None:
    ch = ControlChannel()
    assert ch.pending() == 0
    await ch.send(ControlMessage(ControlKind.PAUSE))
    await ch.send(ControlMessage(ControlKind.RESUME))
    assert ch.pending() == 2
    ch.close()
    assert ch.pending() == 2
    await ch.receive()
    assert ch.pending() == 1
    await ch.receive()
    assert ch.pending() == 0
    assert await ch.receive() is None
    assert ch.pending() == 0


async def test_pending_is_zero_after_closing_an_empty_channel() -> None:
    ch = ControlChannel()
    ch.close()
    assert ch.pending() == 0
    assert await ch.receive() is None
    assert ch.pending() == 0


async def test_acks_yields_every_ack_published_before_close_then_ends() -> None:
    ch = ControlChannel()
    msgs = [ControlMessage(ControlKind.PAUSE) for _ in range(3)]
    for m in msgs:
        await ch.send(m)
    for _ in msgs:
        got = await ch.receive()
        assert got is not None
        await ch.ack(ControlAck(got.id, AckResult.SUCCESS))
    ch.close()
    acks = await asyncio.wait_for(_collect_acks(ch), 1)
    assert [a.control_id for a in acks] == [m.id for m in msgs]


async def test_acks_does_not_end_while_a_received_message_is_unacked() -> None:
    ch = ControlChannel()
    await ch.send(ControlMessage(ControlKind.STEER, id="m1"))
    msg = await ch.receive()
    assert msg is not None
    collector = asyncio.create_task(_collect_acks(ch))
    ch.close()
    assert await ch.receive() is None  # inbox drained
    for _ in range(5):
        await asyncio.sleep(0)
    assert not collector.done(), "acks() ended before the received message was acked"
    await ch.ack(ControlAck("m1", AckResult.SUCCESS))
    acks = await asyncio.wait_for(collector, 1)
    assert [a.control_id for a in acks] == ["m1"]


async def test_acks_does_not_end_while_queued_messages_are_not_yet_received() -> None:
    ch = ControlChannel()
    await ch.send(ControlMessage(ControlKind.PAUSE, id="q1"))
    ch.close()
    collector = asyncio.create_task(_collect_acks(ch))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not collector.done(), "acks() ended while a message was still queued"
    msg = await ch.receive()
    assert msg is not None and msg.id == "q1"
    await ch.ack(ControlAck(msg.id, AckResult.FAILURE, detail="run not active"))
    assert await ch.receive() is None
    acks = await asyncio.wait_for(collector, 1)
    assert [(a.control_id, a.result) for a in acks] == [("q1", AckResult.FAILURE)]


async def test_acks_ends_for_every_iterator_after_close() -> None:
    ch = ControlChannel()
    first = asyncio.create_task(_collect_acks(ch))
    second = asyncio.create_task(_collect_acks(ch))
    await asyncio.sleep(0)
    ch.close()
    assert await asyncio.wait_for(asyncio.gather(first, second), 1) == [[], []]


async def test_receive_with_timeout_returns_none_when_nothing_arrives() -> None:
    ch = ControlChannel()
    assert await ch.receive(timeout=0.05) is None
    assert await ch.receive(timeout=0) is None
    assert not ch.closed
    # The channel still works after a timeout: nothing was consumed or broken.
    m = ControlMessage(ControlKind.PAUSE)
    await ch.send(m)
    assert await ch.receive(timeout=0) is m


async def test_receive_with_timeout_returns_a_message_sent_while_waiting() -> None:
    ch = ControlChannel()
    waiting = asyncio.create_task(ch.receive(timeout=5))
    await asyncio.sleep(0)
    m = ControlMessage(ControlKind.RESUME)
    await ch.send(m)
    assert await asyncio.wait_for(waiting, 1) is m


async def test_cancelled_receive_consumes_nothing() -> None:
    ch = ControlChannel()
    waiting = asyncio.create_task(ch.receive())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    m = ControlMessage(ControlKind.PAUSE)
    await ch.send(m)
    assert await ch.receive(timeout=0) is m


async def test_send_after_close_raises_channel_closed_error_naming_kind_and_id() -> None:
    ch = ControlChannel()
    ch.close()
    with pytest.raises(ChannelClosedError) as info:
        await ch.send(ControlMessage(ControlKind.STEER, id="abc123"))
    assert isinstance(info.value, GoldfiveError)
    text = str(info.value)
    assert "STEER" in text and "abc123" in text and "closed" in text
    with pytest.raises(ChannelClosedError, match="CHECKPOINT"):
        ch.send_nowait(ControlMessage("checkpoint", id="x"))


async def test_issued_at_is_stamped_when_zero_and_kept_when_set() -> None:
    ch = ControlChannel()
    unset = ControlMessage(ControlKind.PAUSE)
    preset = ControlMessage(ControlKind.PAUSE, issued_at_ms=1_234)
    await ch.send(unset)
    await ch.send(preset)
    assert unset.issued_at_ms > 1_600_000_000_000  # wall-clock milliseconds
    assert preset.issued_at_ms == 1_234
    assert (await ch.receive()).issued_at_ms == unset.issued_at_ms  # type: ignore[union-attr]


async def test_acked_at_is_stamped_when_zero_and_kept_when_set() -> None:
    ch = ControlChannel()
    unset = ControlAck("a", AckResult.SUCCESS)
    preset = ControlAck("b", AckResult.SUCCESS, acked_at_ms=5_678)
    await ch.ack(unset)
    await ch.ack(preset)
    assert unset.acked_at_ms > 1_600_000_000_000
    assert preset.acked_at_ms == 5_678


async def test_unknown_kind_is_delivered_as_a_string() -> None:
    ch = ControlChannel()
    await ch.send(ControlMessage("CHECKPOINT", payload={"label": "v2"}))
    got = await ch.receive()
    assert got is not None
    assert got.kind == "CHECKPOINT"
    assert not isinstance(got.kind, ControlKind)
    assert got.payload == {"label": "v2"}
    await ch.ack(ControlAck(got.id, AckResult.UNSUPPORTED))
    ch.close()
    acks = await asyncio.wait_for(_collect_acks(ch), 1)
    assert [a.result for a in acks] == [AckResult.UNSUPPORTED]


def test_a_lowercase_known_kind_normalises_to_the_enum() -> None:
    msg = ControlMessage("pause")
    assert msg.kind is ControlKind.PAUSE
    assert ControlMessage(kind="inject_message").kind is ControlKind.INJECT_MESSAGE


def test_message_defaults_give_unique_ids_and_an_empty_payload() -> None:
    a, b = ControlMessage(ControlKind.PAUSE), ControlMessage(ControlKind.PAUSE)
    assert a.id != b.id and len(a.id) == 32
    assert a.payload == {} and a.payload is not b.payload
    assert ControlMessage(ControlKind.PAUSE, payload=None).payload == {}  # type: ignore[arg-type]
