"""The runner holds unconfirmed events as bytes and builds its messages from them
(goldfive.link.raw): what reaches the hub is exactly the events, on a shared stream and on a
run's own stream, the bytes are what protobuf writes, and the held events are out of the
garbage collector's sight."""

from __future__ import annotations

import gc
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest

from goldfive import events
from goldfive.control import ControlChannel
from goldfive.link import EventBuffer, HubLink
from goldfive.link.mux import HubMux
from goldfive.link.raw import entry, events_message, events_part, lane_prefix
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote import RunHost, start_server
from goldfive.types import Goal, Plan, Session, Task, TaskEdge


def _varied(session: Session) -> list[Event]:
    """Events of many kinds and sizes (around each varint length's bound), non-ASCII text."""
    plan = Plan([Task(f"t{i}", f"täsk {i} ✓", "d" * (i * 40)) for i in range(30)], [TaskEdge("t0", "t1")], id="p")
    out = [
        events.run_started(session, goal_summary="raw ✓ bytes"),
        events.goal_derived(session, [Goal("g1", "ünïcode goal")]),
        events.plan_submitted(session, plan),
    ]
    for n in (0, 1, 90, 100, 126, 127, 128, 2000, 2046, 2047, 2048, 16_383, 16_384, 70_000):
        out.append(events.task_progress(session, "t1", detail="é" * (n // 2) + "x" * (n % 2)))
    out.append(events.run_completed(session, outcome_summary="ok"))
    return out


def _stored(server: Any, run_id: str) -> list[Event]:
    """The run's events as the hub stored them, less what the hub's log adds (the recording's
    schema, on the first)."""
    with sqlite3.connect(server.host.db_path) as conn:
        rows = conn.execute("SELECT payload FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))
        out = [Event.FromString(p) for (p,) in rows]
    for ev in out:
        ev.ClearField("recording_schema")
    return out


@pytest.fixture
async def hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    yield server
    await server.stop(None)


def test_a_message_built_from_held_bytes_is_byte_for_byte_what_protobuf_writes() -> None:
    evs = _varied(Session(run_id="bytes"))
    for batch in ([evs[0]], evs[:3], evs[3:9], evs, [evs[-2]]):
        held = [entry(ev.SerializeToString()) for ev in batch]
        message = service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=batch))
        assert events_message(held) == message.SerializeToString()
        for lane in (0, 1, 127, 128, 300, 1 << 40):
            frame = service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=lane, message=message)])
            assert events_part(lane_prefix(lane), held) == frame.SerializeToString()


async def test_events_sent_from_bytes_on_a_shared_stream_are_stored_exactly_as_emitted(hub: Any) -> None:
    mux = HubMux(hub.address)
    sessions = [Session(run_id=f"raw-shared-{i}") for i in range(3)]
    links = [HubLink(hub.address, ControlChannel(), mux=mux, close_timeout=20) for _ in sessions]
    emitted = {s.run_id: _varied(s) for s in sessions}
    try:
        for step in range(len(emitted[sessions[0].run_id])):  # interleaved: frames carry several lanes' parts
            for session, link in zip(sessions, links):
                await link.emit(emitted[session.run_id][step])
        for link in links:
            await link.close()
        for session in sessions:
            assert _stored(hub, session.run_id) == emitted[session.run_id]
        assert mux.streams == 1
    finally:
        await mux.close()


async def test_events_sent_from_bytes_on_a_runs_own_stream_are_stored_exactly_as_emitted(hub: Any) -> None:
    session = Session(run_id="raw-own")
    link = HubLink(hub.address, ControlChannel(), close_timeout=20)
    emitted = _varied(session)
    for ev in emitted:
        await link.emit(ev)
    await link.close()
    assert _stored(hub, "raw-own") == emitted and link.sessions == 1


def test_an_event_is_held_as_it_was_emitted_not_as_it_is_changed_later() -> None:
    # Before, the buffer held the message object itself: a sink's caller that reused or changed
    # it after emit changed what the hub got (and a resend sent the change).
    buf = EventBuffer()
    ev = events.task_progress(Session(run_id="held"), "t1", detail="as emitted")
    buf.append(ev)
    ev.task_progress.detail = "changed later"
    assert [e.task_progress.detail for e in buf.after(-1, 10)] == ["as emitted"]


def test_held_events_are_not_tracked_by_the_garbage_collector() -> None:
    session = Session(run_id="untracked")
    buf = EventBuffer(max_memory=100_000)
    gc.collect()
    before = len(gc.get_objects())
    for step in range(5000):
        buf.append(events.task_progress(session, "t1", detail=f"step {step}"))
    grown = len(gc.get_objects()) - before
    assert len(buf) == 5000 and grown < 100, f"{grown} more tracked objects for 5000 held events"  # before: about 5000


def test_gapped_sequences_spilled_and_in_memory_are_handed_back_and_forgotten_by_sequence(tmp_path: Path) -> None:
    session = Session(run_id="gapped")
    evs = [events.task_progress(session, "t1", detail=f"step {i}") for i in range(12)]
    kept = [evs[i] for i in (0, 1, 2, 4, 5, 8, 9, 11)]  # a gap in what spills, and in memory
    buf = EventBuffer(max_memory=3, spill_dir=tmp_path)
    for ev in kept:
        buf.append(ev)
    assert buf.spill_path is not None and buf.first_sequence == 0 and buf.last_sequence == 11
    assert buf.after(-1, 100) == kept
    assert [e.sequence for e in buf.after(3, 3)] == [4, 5, 8] and [e.sequence for e in buf.after(8, 100)] == [9, 11]
    # The spill file holds length-prefixed serialized events, as it did.
    data, spilled = buf.spill_path.read_bytes(), []
    while data:
        (n,) = struct.unpack(">I", data[:4])
        spilled.append(Event.FromString(data[4 : 4 + n]))
        data = data[4 + n :]
    assert spilled == kept[:5]
    buf.forget_through(9)
    assert len(buf) == 1 and buf.first_sequence == 11 and [e.sequence for e in buf.after(-1, 100)] == [11]
    buf.forget_through(11)
    assert len(buf) == 0 and buf.spill_path is None and buf.last_sequence == 11
