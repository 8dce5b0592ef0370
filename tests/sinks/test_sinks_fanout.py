"""Fan-out isolates a failing sink, reports it, and lets cancellation through."""

from __future__ import annotations

import asyncio
import logging

import pytest

from goldfive import events
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.protocols import EventSink
from goldfive.sinks import SINK_FAILURES, FanOut, InMemorySink, SinkFailures, close_all, emit
from goldfive.types import Session


class BrokenSink:
    def __init__(self) -> None:
        self.closed = False

    async def emit(self, event: Event) -> None:
        raise RuntimeError("disk on fire")

    async def close(self) -> None:
        self.closed = True
        raise OSError("cannot close")


class CancellingSink:
    async def emit(self, event: Event) -> None:
        raise asyncio.CancelledError

    async def close(self) -> None:
        raise asyncio.CancelledError


def _event(seq_skip: int = 0) -> Event:
    s = Session(run_id="r1")
    for _ in range(seq_skip):
        s.next_sequence()
    return events.task_started(s, "t1")


async def test_failing_sink_is_isolated_logged_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    before, after = InMemorySink(), InMemorySink()
    fan = FanOut([before, BrokenSink(), after])
    assert isinstance(fan, EventSink)
    with caplog.at_level(logging.ERROR, logger="goldfive.sinks"):
        await fan.emit(_event(seq_skip=7))
        await fan.emit(_event(seq_skip=8))
    assert len(before.events) == 2 and len(after.events) == 2
    assert fan.failures == {"BrokenSink": 2}
    assert isinstance(fan.last_error, RuntimeError)
    messages = [r.getMessage() for r in caplog.records if r.name == "goldfive.sinks"]
    assert "BrokenSink" in messages[0] and "task_started" in messages[0] and "sequence 7" in messages[0]
    assert "disk on fire" in messages[0]


async def test_close_all_closes_every_sink_even_after_one_fails() -> None:
    broken, memory = BrokenSink(), InMemorySink()
    counter = SinkFailures()
    await close_all([broken, memory], counter)
    assert broken.closed and memory.closed
    assert counter.failures == {"BrokenSink": 1} and counter.total == 1
    assert isinstance(counter.last_error, OSError)


async def test_module_emit_counts_on_the_module_counter_by_default() -> None:
    SINK_FAILURES.reset()
    memory = InMemorySink()
    await emit([BrokenSink(), memory], _event())
    assert SINK_FAILURES.failures == {"BrokenSink": 1}
    assert len(memory.events) == 1
    SINK_FAILURES.reset()


async def test_cancellation_propagates_and_is_not_counted() -> None:
    memory = InMemorySink()
    fan = FanOut([CancellingSink(), memory])
    with pytest.raises(asyncio.CancelledError):
        await fan.emit(_event())
    with pytest.raises(asyncio.CancelledError):
        await fan.close()
    assert fan.failures == {} and memory.events == []


async def test_sink_closed_early_keeps_failing_visibly_while_others_continue() -> None:
    early, late = InMemorySink(), InMemorySink()
    fan = FanOut([early, late])
    await early.close()
    await fan.emit(_event())
    assert fan.failures == {"InMemorySink": 1} and len(late.events) == 1
