"""Hub.ConnectShared: many runs of one process on one stream, a lane each (HubMux). Every lane
keeps what a run's own Connect stream guarantees: confirmed only once stored, a bad batch
refused whole with nothing stored (and only that lane ended), takeover, controls and acks,
and a hub restart that ends gap-free with no duplicate."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest

from goldfive import events
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.link import HubLink
from goldfive.link.mux import HubMux
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.remote.auth import RUNNER_METHODS
from goldfive.types import Session
from goldfive.hub.connected import runner_of
from tests.hub.drive import CallDriver, run_events
from tests.hub.conftest import free_port, until


class _Lane(CallDriver):
    """One lane of a HubMux, driven by the test the way HubLink drives it."""

    def __init__(self, mux: HubMux) -> None:
        self.call: Any = mux.Connect()


@pytest.fixture
async def hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", interrupt_after=60)
    yield server
    await server.stop(None)


@pytest.fixture
async def mux(hub):  # type: ignore[no-untyped-def]
    m = HubMux(hub.address)
    yield m
    await m.close()


def _stored(server: Any, run_id: str) -> list[int]:
    with sqlite3.connect(server.host.db_path) as conn:
        return [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))]


async def _answer(channel: ControlChannel) -> None:
    while (msg := await channel.receive()) is not None:
        await channel.ack(ControlAck(msg.id, AckResult.SUCCESS, f"seen {msg.kind.name}"))


async def test_the_runs_of_a_process_share_one_stream_and_each_is_stored_whole(hub, mux):
    links = [(Session(run_id=f"shared-{i}"), HubLink(hub.address, ControlChannel(), mux=mux, close_timeout=10)) for i in range(8)]
    for session, link in links:
        await link.emit(events.run_started(session, goal_summary="shared"))
    for step in range(30):
        for session, link in links:
            await link.emit(events.task_progress(session, "t1", detail=f"step {step}"))
        await asyncio.sleep(0)
    for session, link in links:
        await link.emit(events.run_completed(session, outcome_summary="ok"))
    for _, link in links:
        await link.close()  # raises when anything was not confirmed
    assert mux.streams == 1
    assert mux.frames < sum(link.sessions for _, link in links) + 32 * 8  # parts of many runs per frame
    for session, _ in links:
        assert _stored(hub, session.run_id) == list(range(32))
        (run,) = [r for r in hub.host.runs() if r.run_id == session.run_id]
        assert run.state.finished == "COMPLETED" and run.origin == "connected"


async def test_events_on_a_lane_are_confirmed_once_stored_and_a_new_lane_resumes_after_them(hub, mux):
    lane = _Lane(mux)
    assert (await lane.hello("by-lane")).welcome.stored_through == -1
    await lane.send(run_events("by-lane", 5))
    confirmed = await lane.read_until("confirmed_sequence")
    assert confirmed.confirmed_sequence == 4 and _stored(hub, "by-lane") == [0, 1, 2, 3, 4]
    lane.call.cancel()
    again = _Lane(mux)
    assert (await again.hello("by-lane", resume_after=2)).welcome.stored_through == 4
    await again.send(run_events("by-lane", 3, start=4)[1:])  # 5, 6
    assert (await again.read_until("confirmed_sequence")).confirmed_sequence == 6
    assert _stored(hub, "by-lane") == list(range(7))


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (lambda: run_events("mine", 3, start=1), "backwards"),
        (lambda: run_events("mine", 2, start=5), "gap"),
        (lambda: [*run_events("mine", 1, start=3), *run_events("theirs", 1, start=4)], "theirs"),
    ],
)
async def test_a_bad_batch_refuses_its_lane_whole_and_the_other_lanes_go_on(hub, mux, bad, why):
    mine, other = _Lane(mux), _Lane(mux)
    await mine.hello("mine")
    await other.hello("other")
    await mine.send(run_events("mine", 3))
    assert (await mine.read_until("confirmed_sequence")).confirmed_sequence == 2
    await mine.send(bad())
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await mine.read_until("never")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and why in err.value.details()
    with pytest.raises(asyncio.InvalidStateError):
        await mine.send(run_events("mine", 1, start=3))  # the lane is over, as a refused call is
    await other.send(run_events("other", 4))
    assert (await other.read_until("confirmed_sequence")).confirmed_sequence == 3
    assert _stored(hub, "mine") == [0, 1, 2]  # nothing of the bad batch
    assert _stored(hub, "theirs") == []
    assert _stored(hub, "other") == [0, 1, 2, 3]
    assert mux.streams == 1


async def test_a_lane_must_start_with_a_sensible_hello(hub, mux):
    lane = _Lane(mux)
    await lane.send(run_events("x", 1))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await lane.read()
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "RunnerHello" in err.value.details()
    lane = _Lane(mux)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await lane.hello("x" * 1000)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "at most 128" in err.value.details()
    assert hub.host.runs() == []  # nothing registered, nothing stored


async def test_the_same_run_id_on_a_second_lane_or_stream_takes_over_and_the_first_is_told(hub, mux):
    first, second = _Lane(mux), _Lane(mux)
    await first.hello("twice", pid=111)
    await first.send(run_events("twice", 2))
    assert (await first.read_until("confirmed_sequence")).confirmed_sequence == 1
    assert (await second.hello("twice", pid=222)).welcome.stored_through == 1
    bye = await first.read_until("goodbye")
    assert "took it over" in bye.goodbye and "222" in bye.goodbye
    assert await first.read() is grpc.aio.EOF
    await second.send(run_events("twice", 3, start=1)[1:])  # 2, 3
    assert (await second.read_until("confirmed_sequence")).confirmed_sequence == 3
    other = HubMux(hub.address)  # another process's stream takes it over in turn
    try:
        third = _Lane(other)
        assert (await third.hello("twice", pid=333)).welcome.stored_through == 3
        assert "333" in (await second.read_until("goodbye")).goodbye
        (run,) = hub.host.runs()
        assert (run.pid, run.connection) == (333, "connected")
    finally:
        await other.close()
    assert _stored(hub, "twice") == [0, 1, 2, 3]


async def test_a_control_reaches_a_run_on_a_lane_and_its_ack_comes_back(hub, mux):
    channels = [ControlChannel() for _ in range(3)]
    links = [HubLink(hub.address, ch, mux=mux) for ch in channels]
    answers = [asyncio.create_task(_answer(ch)) for ch in channels]
    try:
        for i, link in enumerate(links):
            await link.emit(events.run_started(Session(run_id=f"ctl-{i}"), goal_summary="g"))

        async def connected() -> bool:
            return len([r for r in hub.host.runs() if (a := runner_of(r)) is not None and a.conn is not None]) == 3

        await until(connected, what="three runs connected")
        async with RemoteClient(hub.address) as client:
            ack = await client.send_control("ctl-1", ControlMessage(ControlKind.STATUS_QUERY), timeout=10)
        assert ack.result is AckResult.SUCCESS and ack.detail == "seen STATUS_QUERY"
        for link in links:
            await link.close()
    finally:
        for task in answers:
            task.cancel()


async def test_runs_on_lanes_survive_a_hub_restart_gap_free_with_no_duplicate(tmp_path: Path):
    addr = f"127.0.0.1:{free_port()}"
    db = tmp_path / "hub.sqlite"
    server = await start_server(RunHost(db), listen=addr)
    mux = HubMux(addr)
    sessions = [Session(run_id=f"restart-{i}") for i in range(4)]
    links = [HubLink(addr, ControlChannel(), mux=mux, close_timeout=20, max_backoff=0.2) for _ in sessions]
    try:
        for session, link in zip(sessions, links):
            await link.emit(events.run_started(session, goal_summary="restart"))
        for step in range(40):
            if step == 15:
                await server.stop(None)  # the hub goes away under the runs
            if step == 25:
                host = RunHost(db)
                host.load_recorded()  # as serve does: what the first hub stored and confirmed
                server = await start_server(host, listen=addr)
            for session, link in zip(sessions, links):
                await link.emit(events.task_progress(session, "t1", detail=f"step {step}"))
            await asyncio.sleep(0.02)
        for session, link in zip(sessions, links):
            await link.emit(events.run_completed(session, outcome_summary="ok"))
        for link in links:
            await link.close()
        assert mux.streams >= 2  # the first stream ended with the hub
    finally:
        await mux.close()
        await server.stop(None)
    with sqlite3.connect(db) as conn:
        for session in sessions:
            seqs = [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (session.run_id,))]
            assert seqs == list(range(42)), session.run_id


def test_a_runner_token_may_connect_runs_on_a_shared_stream() -> None:
    assert "/goldfive.v1.Hub/ConnectShared" in RUNNER_METHODS


async def test_a_long_connected_run_keeps_a_bounded_tail_in_memory_and_is_still_served_whole(hub, mux):
    from goldfive.hub.service import KEEP_IN_MEMORY

    lane = _Lane(mux)
    await lane.hello("long")
    evs = run_events("long", 600)
    async with RemoteClient(hub.address) as client:
        early = client.subscribe("long")  # a reader that starts with the run, and lags
        await lane.send(evs[:50])
        assert (await lane.read_until("confirmed_sequence")).confirmed_sequence == 49
        first = await anext(early)
        for i in range(50, 550, 50):
            await lane.send(evs[i : i + 50])
        assert (await lane.read_until("confirmed_sequence")).confirmed_sequence >= 0

        async def trimmed() -> bool:
            (run,) = hub.host.runs()
            return run.state.last_sequence == 549 and len(run.memory.events) <= 2 * KEEP_IN_MEMORY

        await until(trimmed, what="the run's memory trimmed after the commits")
        await lane.send(evs[550:])
        rest = []
        async for ev in early:
            rest.append(ev.sequence)
            if ev.sequence == 599:
                break
        assert [first.sequence, *rest] == list(range(600))  # gap-free across memory and recording
        whole = []
        async for ev in client.subscribe("long", after_sequence=9):  # from the recording, then memory
            whole.append(ev.sequence)
            if ev.sequence == 599:
                break
        assert whole == list(range(10, 600))


async def test_one_frame_with_parts_of_several_lanes_is_checked_part_by_part_in_order(hub):
    from goldfive.pb.goldfive.v1 import service_pb2_grpc

    def part(lane: int, **kw: Any) -> service_pb2.RunnerPart:
        return service_pb2.RunnerPart(lane=lane, **kw)

    def batch(evs: list[Event]) -> service_pb2.RunnerMessage:
        return service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=evs))

    def hello(run_id: str) -> service_pb2.RunnerMessage:
        return service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id=run_id, host="h", pid=1))

    a, b = run_events("frame-a", 5), run_events("frame-b", 4)
    async with grpc.aio.insecure_channel(hub.address) as channel:
        call = service_pb2_grpc.HubStub(channel).ConnectShared()
        frame = [
            part(1, message=hello("frame-a")),
            part(2, message=hello("frame-b")),
            part(1, message=batch(a[:3])),
            part(2, message=batch(b[:2])),
            part(1, message=batch(a[3:])),  # follows lane 1's batch of this same frame
            part(2, message=batch(b[3:])),  # skips event 2: lane 2 refused, its first batch kept
            part(1, done=True),  # lane 1 ends: confirmed, then ended
        ]
        await call.write(service_pb2.RunnerFrame(parts=frame))
        got: dict[int, list[Any]] = {1: [], 2: []}
        while not all(any(p.ended for p in parts) for parts in got.values()):
            reply = await asyncio.wait_for(call.read(), 10)
            for p in reply.parts:
                got[p.lane].append(p)
        call.cancel()
    confirmed = [p.message.confirmed_sequence for p in got[1] if p.message.WhichOneof("body") == "confirmed_sequence"]
    assert confirmed == [4] and got[1][-1].ended and got[1][-1].code == 0
    refused = got[2][-1]
    assert refused.ended and refused.code == grpc.StatusCode.INVALID_ARGUMENT.value[0] and "gap" in refused.detail
    assert _stored(hub, "frame-a") == [0, 1, 2, 3, 4]
    assert _stored(hub, "frame-b") == [0, 1]


async def test_an_ack_does_not_wait_for_the_links_linger_over_a_batch_ofrun_events(hub):
    channel = ControlChannel()
    link = HubLink(hub.address, channel, linger=2.0)  # a batch of events waits two seconds to fill
    answer = asyncio.create_task(_answer(channel))
    session = Session(run_id="lingering")
    try:
        await link.emit(events.run_started(session, goal_summary="g"))

        async def connected() -> bool:
            return any((a := runner_of(r)) is not None and a.conn is not None and r.state.last_sequence == 0 for r in hub.host.runs())

        await until(connected, what="the run connected")
        await link.emit(events.task_progress(session, "t1", detail="waits for the linger"))
        await asyncio.sleep(0.05)  # the link's writer is lingering over it now
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with RemoteClient(hub.address) as client:
            ack = await client.send_control("lingering", ControlMessage(ControlKind.STATUS_QUERY), timeout=10)
        assert ack.result is AckResult.SUCCESS and loop.time() - started < 1.0
        await link.close()
    finally:
        answer.cancel()


async def test_a_backlog_of_large_events_goes_in_frames_no_larger_than_the_bound_and_is_stored_whole(hub):
    from goldfive.link.wire import MAX_FRAME_BYTES

    mux = HubMux(hub.address)
    session = Session(run_id="backlog")
    link = HubLink(hub.address, ControlChannel(), mux=mux, close_timeout=30)
    try:
        await link.emit(events.run_started(session, goal_summary="g"))
        big = "x" * 2000
        for step in range(400):  # held before the lane's welcome: one backlog of about 800 KB
            await link.emit(events.task_progress(session, "t1", detail=f"{step} {big}"))
        await link.close()
    finally:
        await mux.close()
    assert _stored(hub, "backlog") == list(range(401))
    assert 0 < mux.largest_frame <= MAX_FRAME_BYTES + 4096  # the bound, overshot by one event at most
