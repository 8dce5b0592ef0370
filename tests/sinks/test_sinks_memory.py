"""InMemorySink: recording, live subscriptions, overflow accounting, close semantics."""

from __future__ import annotations

import asyncio

import pytest

from goldfive import events
from goldfive.errors import SinkError
from goldfive.sinks import InMemorySink, Missed
from goldfive.types import Session


def _session(run_id: str = "r1") -> Session:
    return Session(run_id=run_id, clock=lambda: 1_700_000_000_000)


async def _emit_n(sink: InMemorySink, session: Session, n: int) -> None:
    for i in range(n):
        await sink.emit(events.task_progress(session, "t1", detail=f"step {i}"))


def _seqs(items: list) -> list:
    return [x if isinstance(x, Missed) else x.sequence for x in items]


async def _drain(sub) -> list:
    return [item async for item in sub]


async def test_events_holds_every_event_in_emit_order() -> None:
    sink, s = InMemorySink(), _session()
    await sink.emit(events.run_started(s, goal_summary="g"))
    await _emit_n(sink, s, 3)
    assert [e.WhichOneof("payload") for e in sink.events] == ["run_started"] + ["task_progress"] * 3
    assert [e.sequence for e in sink.events] == [0, 1, 2, 3]


async def test_subscribe_yields_history_then_live_with_no_gap_or_duplicate_at_the_seam() -> None:
    sink, s = InMemorySink(), _session()
    await _emit_n(sink, s, 5)
    sub = sink.subscribe()
    await _emit_n(sink, s, 5)
    await sink.close()
    assert _seqs(await _drain(sub)) == list(range(10))


async def test_subscribe_after_sequence_yields_only_later_history_and_live() -> None:
    sink, s = InMemorySink(), _session()
    await _emit_n(sink, s, 6)
    sub = sink.subscribe(after_sequence=3)
    await _emit_n(sink, s, 2)
    await sink.close()
    assert _seqs(await _drain(sub)) == [4, 5, 6, 7]


async def test_subscribe_ahead_of_history_skips_live_events_already_seen() -> None:
    # A reconnecting client that already holds up to 4 while the sink has only reached 2.
    sink, s = InMemorySink(), _session()
    await _emit_n(sink, s, 3)
    sub = sink.subscribe(after_sequence=4)
    await _emit_n(sink, s, 4)
    await sink.close()
    assert _seqs(await _drain(sub)) == [5, 6]


async def test_waiting_subscriber_is_woken_by_emit() -> None:
    sink, s = InMemorySink(), _session()
    sub = sink.subscribe()
    pending = asyncio.ensure_future(sub.__anext__())
    await asyncio.sleep(0)
    assert not pending.done()
    await sink.emit(events.task_started(s, "t1"))
    got = await asyncio.wait_for(pending, 1)
    assert got.task_started.task_id == "t1"


async def test_never_reading_subscriber_is_bounded_and_emit_does_not_block() -> None:
    sink, s = InMemorySink(), _session()
    sub = sink.subscribe(maxsize=100)
    evs = [events.task_progress(s, "t1") for _ in range(50_000)]
    for ev in evs:  # would hang here if emit awaited the subscriber
        await sink.emit(ev)
    assert sub.pending <= 101
    assert len(sink.events) == 50_000
    await sink.close()
    items = await _drain(sub)
    assert _seqs(items) == list(range(100)) + [Missed(count=49_900, first_sequence=100, last_sequence=49_999)]


async def test_overflowed_subscriber_gets_missed_at_the_gap_then_new_events() -> None:
    sink, s = InMemorySink(), _session()
    sub = sink.subscribe(maxsize=2)
    await _emit_n(sink, s, 5)  # buffered 0, 1; dropped 2, 3, 4
    assert (await sub.__anext__()).sequence == 0
    await _emit_n(sink, s, 1)  # room again: the gap is marked, then 5 is queued
    await sink.close()
    items = await _drain(sub)
    assert _seqs(items) == [1, Missed(3, 2, 4), 5]
    missed = items[1]
    assert [e.sequence for e in sink.events_after(missed.first_sequence - 1)][: missed.count] == [2, 3, 4]


async def test_slow_subscriber_does_not_make_a_fast_one_miss_events() -> None:
    sink, s = InMemorySink(), _session()
    slow = sink.subscribe(maxsize=1)
    fast = sink.subscribe(maxsize=100)
    await _emit_n(sink, s, 10)
    await sink.close()
    assert _seqs(await _drain(fast)) == list(range(10))
    assert _seqs(await _drain(slow)) == [0, Missed(9, 1, 9)]


async def test_close_ends_subscriptions_after_everything_buffered_is_yielded() -> None:
    sink, s = InMemorySink(), _session()
    sub = sink.subscribe()
    waiting = asyncio.ensure_future(_drain(sub))
    await asyncio.sleep(0)
    await _emit_n(sink, s, 3)
    await sink.close()
    assert _seqs(await asyncio.wait_for(waiting, 1)) == [0, 1, 2]


async def test_subscription_close_unsubscribes_and_ends_a_waiting_iterator() -> None:
    sink, s = InMemorySink(), _session()
    sub = sink.subscribe()
    waiting = asyncio.ensure_future(_drain(sub))
    await asyncio.sleep(0)
    assert sink.subscriber_count == 1
    await sub.aclose()
    assert sink.subscriber_count == 0
    assert await asyncio.wait_for(waiting, 1) == []
    await _emit_n(sink, s, 3)  # costs the departed subscriber nothing
    assert sub.pending == 0


async def test_subscription_as_context_manager_unsubscribes_on_exit() -> None:
    sink, s = InMemorySink(), _session()
    await _emit_n(sink, s, 2)
    async with sink.subscribe() as sub:
        assert (await sub.__anext__()).sequence == 0
    assert sink.subscriber_count == 0


async def test_cancelled_read_leaves_subscription_usable() -> None:
    sink, s = InMemorySink(), _session()
    sub = sink.subscribe()
    pending = asyncio.ensure_future(sub.__anext__())
    await asyncio.sleep(0)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await _emit_n(sink, s, 1)
    assert (await asyncio.wait_for(sub.__anext__(), 1)).sequence == 0


async def test_subscribe_after_close_yields_history_then_ends() -> None:
    sink, s = InMemorySink(), _session()
    await _emit_n(sink, s, 2)
    await sink.close()
    assert _seqs(await _drain(sink.subscribe())) == [0, 1]


async def test_emit_after_close_raises_sink_error() -> None:
    sink = InMemorySink()
    await sink.close()
    await sink.close()  # idempotent
    with pytest.raises(SinkError, match="closed"):
        await sink.emit(events.task_started(_session(), "t1"))


async def test_events_after_uses_sequence_order_and_handles_interleaved_runs() -> None:
    sink, a, b = InMemorySink(), _session("a"), _session("b")
    await _emit_n(sink, a, 4)
    assert [e.sequence for e in sink.events_after(1)] == [2, 3]
    assert [e.sequence for e in sink.events_after(-1)] == [0, 1, 2, 3]
    await _emit_n(sink, b, 3)  # sequences restart: no longer sorted
    assert [(e.run_id, e.sequence) for e in sink.events_after(1)] == [("a", 2), ("a", 3), ("b", 2)]
    assert [(e.run_id, e.sequence) for e in await _history(sink, 2)] == [("a", 3)]


async def _history(sink: InMemorySink, after: int) -> list:
    sub = sink.subscribe(after_sequence=after)
    await sink.close()
    return await _drain(sub)


def test_subscribe_rejects_non_positive_maxsize() -> None:
    with pytest.raises(ValueError, match="maxsize"):
        InMemorySink().subscribe(maxsize=0)


async def test_emit_many_keeps_order_for_history_and_live_subscribers_and_refuses_after_close() -> None:
    sink = InMemorySink()
    s = _session()
    evs = [events.task_progress(s, "t", detail=str(i)) for i in range(6)]
    await sink.emit_many(evs[:2])
    sub = sink.subscribe(after_sequence=0)
    await sink.emit_many(evs[2:])
    await sink.close()
    got = [item async for item in sub]
    assert _seqs(got) == [1, 2, 3, 4, 5]
    assert sink.events == evs and sink.events_after(3) == evs[4:]
    with pytest.raises(SinkError):
        await sink.emit_many(evs[:1])


async def test_a_trimmed_prefix_is_said_missed_to_readers_still_reading_it_and_live_events_follow() -> None:
    sink = InMemorySink()
    s = _session()
    await _emit_n(sink, s, 10)  # 0..9
    early = sink.subscribe()
    assert (await early.__anext__()).sequence == 0
    assert sink.trim_through(5) == 6 and [e.sequence for e in sink.events] == [6, 7, 8, 9]
    late = sink.subscribe(after_sequence=2)  # asks for trimmed events: told first
    fresh = sink.subscribe(after_sequence=7)
    await _emit_n(sink, s, 2)  # 10, 11
    await sink.close()
    assert _seqs(await _drain(early)) == [Missed(5, 1, 5), 6, 7, 8, 9, 10, 11]
    assert _seqs(await _drain(late)) == [Missed(3, 3, 5), 6, 7, 8, 9, 10, 11]
    assert _seqs(await _drain(fresh)) == [8, 9, 10, 11]
    assert _seqs(sink.events_after(7)) == [8, 9, 10, 11]
