"""Message sizes on the way to a hub: a backlog of large events (tool arguments and results
near the hub's event size limit) reaches the hub whole, on a run's own ``Connect`` stream
(also when resent after a reconnect) and on a shared stream, where an event larger than a
frame's bound still goes, alone."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from goldfive import events
from goldfive.control import ControlChannel
from goldfive.errors import ServeConfigError, SinkError
from goldfive.hub.limits import MAX_EVENT_BYTES
from goldfive.hub.quota import RunnerLimits
from goldfive.link import HubLink
from goldfive.link.mux import HubMux
from goldfive.link.wire import LARGEST_EVENT_BYTES, MAX_FRAME_BYTES
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote import RunHost, start_server
from goldfive.types import Session
from tests.hub.conftest import free_port, until

#: gRPC's default bound on a message a server receives (the hub keeps it unless told).
GRPC_DEFAULT_MAX = 4 << 20


def _stored(server: Any, run_id: str) -> list[int]:
    with sqlite3.connect(server.host.db_path) as conn:
        return [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))]


def _large(session: Session, step: int) -> Event:
    """A progress event just under the hub's event size limit (a tool's long result)."""
    event = events.task_progress(session, "t1", detail=f"{step} ")
    event.task_progress.detail += "x" * (MAX_EVENT_BYTES - 256 - event.ByteSize())
    assert MAX_EVENT_BYTES - 300 < event.ByteSize() <= MAX_EVENT_BYTES
    return event


class _Sizes:
    """The size of every message a link writes on its calls (the link's own ``_open``, spied)."""

    def __init__(self, link: HubLink) -> None:
        self.largest = 0
        self.event_messages = 0
        opened = link._open

        def spied_open() -> Any:
            stub = opened()
            connect = stub.Connect

            def spied_connect(**kw: Any) -> Any:
                call = connect(**kw)
                write = call.write

                async def spied_write(msg: Any) -> None:
                    if isinstance(msg, bytes):  # events go as the link holds them, serialized
                        assert service_pb2.RunnerMessage.FromString(msg).WhichOneof("body") == "events"
                        self.event_messages += 1
                        self.largest = max(self.largest, len(msg))
                    elif msg.WhichOneof("body") == "events":
                        self.event_messages += 1
                        self.largest = max(self.largest, msg.ByteSize())
                    await write(msg)

                call.write = spied_write
                return call

            stub.Connect = spied_connect
            return stub

        link._open = spied_open  # type: ignore[method-assign]


@pytest.fixture
async def hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    yield server
    await server.stop(None)


async def test_a_backlog_of_large_events_on_a_runs_own_stream_reaches_the_hub_in_messages_it_takes(hub: Any) -> None:
    # Before: the link sent up to 500 events in one message; twelve events of nearly 1 MiB made
    # a 12 MiB message, which the hub's gRPC refused (RESOURCE_EXHAUSTED) on every reconnect.
    session, link = Session(run_id="own-large"), HubLink(hub.address, ControlChannel(), close_timeout=20)
    sizes = _Sizes(link)
    await link.emit(events.run_started(session, goal_summary="large results"))
    for step in range(12):
        await link.emit(_large(session, step))
    await link.emit(events.run_completed(session, outcome_summary="ok"))
    await link.close()  # raised SinkError: "RESOURCE_EXHAUSTED: ... larger than max"
    assert _stored(hub, "own-large") == list(range(14))
    assert link.sessions == 1 and not link.errors
    assert sizes.largest <= MAX_EVENT_BYTES + 64  # a large event goes alone
    assert sizes.event_messages >= 12


async def test_small_events_on_a_runs_own_stream_still_go_many_to_a_message(hub: Any) -> None:
    session, link = Session(run_id="own-small"), HubLink(hub.address, ControlChannel(), close_timeout=20)
    sizes = _Sizes(link)
    await link.emit(events.run_started(session, goal_summary="small"))
    for step in range(1500):  # held before the welcome: one backlog of about 1.5 MB
        await link.emit(events.task_progress(session, "t1", detail=f"{step} " + "y" * 900))
    await link.close()
    assert _stored(hub, "own-small") == list(range(1501))
    assert sizes.largest <= MAX_FRAME_BYTES + 2048  # the bound, overshot by one event at most
    assert sizes.event_messages <= 1501 * 1000 // MAX_FRAME_BYTES + 3  # full messages, not one per event


async def test_large_events_held_while_the_hub_was_away_are_resent_in_messages_it_takes(tmp_path: Path) -> None:
    port = free_port()
    addr = f"127.0.0.1:{port}"
    db = tmp_path / "hub.sqlite"
    first = await start_server(RunHost(db), listen=addr)
    session = Session(run_id="resent-large")
    link = HubLink(addr, ControlChannel(), close_timeout=20, max_backoff=0.2)
    second = None
    try:
        await link.emit(events.run_started(session, goal_summary="large results"))

        async def confirmed() -> bool:
            return link.confirmed == 0

        await until(confirmed, what="the first hub confirmed the start")
        await first.stop(None)
        for step in range(8):  # held while the hub is away, resent in one go when it is back
            await link.emit(_large(session, step))
        await link.emit(events.run_completed(session, outcome_summary="ok"))
        await asyncio.sleep(0.2)
        host = RunHost(db)
        host.load_recorded()  # as serve does: what the first hub stored and confirmed
        second = await start_server(host, listen=addr)
        await link.close()
        assert _stored(second, "resent-large") == list(range(10))
        assert not any("RESOURCE_EXHAUSTED" in e for e in link.errors), link.errors
    finally:
        if second is not None:
            await second.stop(None)


async def test_on_a_shared_stream_an_event_larger_than_a_frame_goes_alone_between_small_ones(tmp_path: Path) -> None:
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    mux = HubMux(server.address)
    sessions = [Session(run_id=f"shared-large-{i}") for i in range(3)]
    links = [HubLink(server.address, ControlChannel(), mux=mux, close_timeout=20) for _ in sessions]
    try:
        for session, link in zip(sessions, links):
            await link.emit(events.run_started(session, goal_summary="large results"))
        for step in range(4):
            for session, link in zip(sessions, links):
                await link.emit(events.task_progress(session, "t1", detail=f"{step} " + "z" * 30_000))
                await link.emit(_large(session, step))
        for link in links:
            await link.close()
        for session in sessions:
            assert _stored(server, session.run_id) == list(range(9))
        assert mux.streams == 1
        assert MAX_EVENT_BYTES < mux.largest_frame <= MAX_FRAME_BYTES + MAX_EVENT_BYTES + 4096
    finally:
        await mux.close()
        await server.stop(None)


def _oversized(session: Session) -> Event:
    """An event no message to a hub can carry (a 5 MiB tool result)."""
    return events.task_progress(session, "t1", detail="big " + "o" * (5 << 20))


async def test_an_event_larger_than_any_message_stops_the_link_naming_it_instead_of_resending_it_forever(tmp_path: Path) -> None:
    # Before: gRPC refused the message (RESOURCE_EXHAUSTED), the link took that for a busy hub
    # and resent the same message on every reconnect until close gave up.
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    session = Session(run_id="own-oversized")
    link = HubLink(server.address, ControlChannel(), close_timeout=20)
    try:
        await link.emit(events.run_started(session, goal_summary="a huge result"))
        await link.emit(events.task_progress(session, "t1", detail="before"))
        await link.emit(_oversized(session))
        await link.emit(events.task_progress(session, "t1", detail="after"))

        async def stopped() -> bool:
            return bool(link.stopped)

        await until(stopped, what="the link stops at the oversized event")
        assert "event 2 is" in link.stopped and "bytes" in link.stopped
        assert link.refused.is_set() and link.sessions == 1 and not link.errors
        assert link.confirmed == 1  # it stops once what came before is stored
        with pytest.raises(SinkError, match=r"2 events .* \(sequences 2\.\.3\): event 2 is"):
            await link.close()
        assert _stored(server, "own-oversized") == [0, 1]
    finally:
        await server.stop(None)


async def test_on_a_shared_stream_an_event_larger_than_any_message_stops_only_its_own_run(tmp_path: Path) -> None:
    # Before: the frame carrying it was refused, which broke the process's one stream and every
    # run's lane on it, again on every reconnect (the neighbour here reconnected twice).
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    mux = HubMux(server.address)
    big, other = Session(run_id="shared-oversized"), Session(run_id="shared-neighbour")
    big_link = HubLink(server.address, ControlChannel(), mux=mux, close_timeout=20)
    other_link = HubLink(server.address, ControlChannel(), mux=mux, close_timeout=20)
    try:
        await big_link.emit(events.run_started(big, goal_summary="a huge result"))
        await other_link.emit(events.run_started(other, goal_summary="small steps"))
        await big_link.emit(_oversized(big))
        for step in range(20):
            await other_link.emit(events.task_progress(other, "t1", detail=f"step {step}"))
            await asyncio.sleep(0.005)
        await other_link.emit(events.run_completed(other, outcome_summary="ok"))
        await other_link.close()  # raised SinkError: its lane broke with the shared stream
        assert _stored(server, "shared-neighbour") == list(range(22)) and other_link.sessions == 1

        async def stopped() -> bool:
            return bool(big_link.stopped)

        await until(stopped, what="the oversized run's link stops")
        assert "event 1 is" in big_link.stopped and mux.streams == 1
        assert big_link.confirmed == 0 and _stored(server, "shared-oversized") == [0]
    finally:
        try:
            await big_link.close()
        except Exception:  # noqa: BLE001  (its SinkError is asserted in the own-stream test)
            pass
        await mux.close()
        await server.stop(None)


def test_a_hub_refuses_an_event_limit_no_message_can_carry() -> None:
    with pytest.raises(ServeConfigError, match="event-bytes must be at most"):
        RunnerLimits.parse(f"event-bytes={GRPC_DEFAULT_MAX}")  # before: taken, and no such event ever arrived
    assert RunnerLimits.parse(f"event-bytes={LARGEST_EVENT_BYTES}").event_bytes == LARGEST_EVENT_BYTES
    with pytest.raises(ServeConfigError, match="event-bytes must be at most"):
        RunnerLimits.parse(f"event-bytes={LARGEST_EVENT_BYTES + 1}")


def test_limits_made_in_code_are_checked_as_the_command_lines_are() -> None:
    """``start_server(runner_limits=RunnerLimits(...))`` took any number: an event limit no
    message can carry, or zero events a second (a hub that never reads a runner)."""
    with pytest.raises(ValueError, match="event_bytes must be at most"):
        RunnerLimits(event_bytes=LARGEST_EVENT_BYTES + 1)
    for bad in ({"events": 0}, {"runs": -1}, {"lanes": 2.5}, {"event_bytes": True}):
        with pytest.raises(ValueError, match="must be a positive whole number"):
            RunnerLimits(**bad)  # type: ignore[arg-type]
    assert RunnerLimits(events=50).events == 50
