"""Controls through a busy hub (issue 27 part 2): a control is not held up by the hub's
writes of events, and the records it leaves are still written."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable

from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.runner import Runner
from goldfive.store.registry import RoutedControl, SqliteRegistry
from goldfive.testing import until
from goldfive.types import Plan, Task
from goldfive.hub.connected import runner_of
from tests.remote_fixtures import Gate


async def _passes(check: Callable[[], object], what: str, limit: int = 20_000) -> None:
    """Wait for ``check`` one pass of the loop at a time (``until`` sleeps 20 ms between looks,
    time in which a fast machine stores the whole batch: these tests count passes, not time)."""
    for _ in range(limit):
        if check():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"not within {limit} passes of the loop: {what}")


def _routed_rows(path: str) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT run_id, control_id, author FROM hub_routed ORDER BY control_id").fetchall()
    finally:
        conn.close()


def _lock(path: str) -> sqlite3.Connection:
    """Another connection holding the file's write lock (what a long group commit does)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


async def test_routed_controls_are_written_behind_without_waiting_for_the_files_write_lock(tmp_path):
    path = str(tmp_path / "hub.sqlite")
    registry = SqliteRegistry(path)
    locker = _lock(path)
    try:
        t0 = time.perf_counter()
        await registry.routed("r1", RoutedControl("c1", "APPROVE", "alice", "call-1", 5))
        await registry.routed("r2", RoutedControl("c2", "PAUSE", "bob"))
        took = time.perf_counter() - t0
        assert took < 0.5, f"routed() waited {took:.2f} s for the write lock"
        # Not written yet, but the hub reading its records sees it (a run reconnecting now).
        assert await registry.routed_controls("r1") == {"c1": RoutedControl("c1", "APPROVE", "alice", "call-1", 5)}
        assert _routed_rows(path) == []
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert registry.flush_routed(10)
    assert _routed_rows(path) == [("r1", "c1", "alice"), ("r2", "c2", "bob")]
    await registry.routed("r1", RoutedControl("c3", "RESUME", "carol"))
    registry.close()  # writes what is left before closing
    assert ("r1", "c3", "carol") in _routed_rows(path)


async def test_a_forgotten_run_keeps_no_routed_control_that_was_still_waiting(tmp_path):
    path = str(tmp_path / "hub.sqlite")
    registry = SqliteRegistry(path)
    locker = _lock(path)
    await registry.routed("gone", RoutedControl("c1", "PAUSE", "alice"))
    await registry.routed("kept", RoutedControl("c2", "PAUSE", "alice"))
    locker.execute("ROLLBACK")
    locker.close()
    await registry.forget("gone")
    registry.close()
    assert _routed_rows(path) == [("kept", "c2", "alice")]


async def test_a_control_is_acked_while_the_hubs_database_is_write_locked(tmp_path):
    """A group commit of many runs' events holds the file's write lock for a while: the
    control's record (who sent it) used to be written on the event loop first, which held
    the control and the whole hub until the lock was free."""
    db = tmp_path / "hub.sqlite"
    host = RunHost(db)
    server = await start_server(host, listen="127.0.0.1:0")
    gate = Gate()
    plan = Plan(tasks=[Task("t1", "held")], edges=[], id="p1")
    runner = Runner(agent=gate.agent, planner=StaticPlanner(plan), run_id="busy-1", hub=server.address)
    task = asyncio.create_task(runner.run("one thing"))
    locker = None
    try:
        await asyncio.wait_for(gate.entered.wait(), 10)
        await until(lambda: bool(host.runs()) and (a := runner_of(host.runs()[0])) is not None and a.conn is not None)
        async with RemoteClient(server.address) as client:
            locker = _lock(str(db))
            t0 = time.perf_counter()
            ack = await asyncio.wait_for(client.send_control("busy-1", ControlMessage(ControlKind.STATUS_QUERY)), 5)
            took = time.perf_counter() - t0
            assert ack.result is AckResult.SUCCESS, ack
            assert took < 2.0, f"the control took {took:.2f} s while the database was locked"
            locker.execute("ROLLBACK")
            locker.close()
            locker = None
            gate.open()
            assert (await asyncio.wait_for(task, 10)).success
            await runner.close()
    finally:
        if locker is not None:
            locker.execute("ROLLBACK")
            locker.close()
        gate.open()
        await server.stop(None)
    assert [row[0] for row in _routed_rows(str(db))] == ["busy-1"]  # recorded once the lock was free


async def test_an_ack_is_handed_over_while_the_frames_before_it_are_still_held_back(tmp_path):
    """A runner over its events rate is slowed (the hub stops storing its stream's frames for
    a while): the ack of a control sent meanwhile still comes through at once, read and handed
    over ahead of the events the hub has not stored yet."""
    from goldfive import conv
    from goldfive.control import ControlAck
    from goldfive.hub.quota import RunnerLimits
    from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
    from tests.hub.drive import next_control, run_events

    import grpc

    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", runner_limits=RunnerLimits(events=50))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel, RemoteClient(server.address) as client:
            call = service_pb2_grpc.HubStub(channel).ConnectShared()
            hello = service_pb2.RunnerHello(run_id="slowed", host="h", pid=1)
            await call.write(service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=service_pb2.RunnerMessage(hello=hello))]))
            welcome = await asyncio.wait_for(call.read(), 10)
            assert welcome.parts[0].message.WhichOneof("body") == "welcome"
            burst = service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=run_events("slowed", 300)))
            await call.write(service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=burst)]))  # 6 s of its rate
            await until(lambda: server.host.get("slowed") is not None and server.host.get("slowed").state.last_sequence == 299)
            t0 = time.perf_counter()
            sent = asyncio.create_task(client.send_control("slowed", ControlMessage(ControlKind.STATUS_QUERY), timeout=20))
            control = await next_control(call)
            ack = conv.to_pb_control_ack(ControlAck(control.id, AckResult.SUCCESS, "seen"))
            await call.write(service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=service_pb2.RunnerMessage(ack=ack))]))
            got = await asyncio.wait_for(sent, 20)
            took = time.perf_counter() - t0
            assert got.result is AckResult.SUCCESS and got.detail == "seen"
            assert took < 2.0, f"the ack waited {took:.1f} s behind the slowed stream's events"
            call.cancel()
    finally:
        await server.stop(None)


async def test_an_ack_behind_many_unstored_frames_is_still_read_at_once(tmp_path):
    """The hub reads a shared stream ahead of its worker by bytes, not by a few frames: a
    runner's ack that comes behind more frames than the worker has stored (here the worker
    is slowed by the runner's rate; in a fleet, by a group commit or a control's short turns)
    is read and handed over at once. With four frames ahead, as before, it waited behind them
    (6 s here)."""
    from goldfive import conv
    from goldfive.control import ControlAck
    from goldfive.hub.quota import RunnerLimits
    from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
    from tests.hub.drive import next_control, run_events

    import grpc

    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", runner_limits=RunnerLimits(events=50))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel, RemoteClient(server.address) as client:
            call = service_pb2_grpc.HubStub(channel).ConnectShared()
            hello = service_pb2.RunnerHello(run_id="behind", host="h", pid=1)
            await call.write(service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=service_pb2.RunnerMessage(hello=hello))]))
            welcome = await asyncio.wait_for(call.read(), 10)
            assert welcome.parts[0].message.WhichOneof("body") == "welcome"

            def batch(evs: list) -> service_pb2.RunnerFrame:
                message = service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=evs))
                return service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=message)])

            await call.write(batch(run_events("behind", 100)))  # 2 s of its rate
            await until(lambda: server.host.get("behind") is not None and server.host.get("behind").state.last_sequence == 99)
            evs = run_events("behind", 501)[1:]  # progress notes, sequences 100..599
            for i in range(10):  # ten more frames, each 1 s of its rate: the worker is 11 s behind
                chunk = evs[i * 50 : (i + 1) * 50]
                for j, ev in enumerate(chunk):
                    ev.sequence = 100 + i * 50 + j
                await call.write(batch(chunk))
            t0 = time.perf_counter()
            sent = asyncio.create_task(client.send_control("behind", ControlMessage(ControlKind.STATUS_QUERY), timeout=30))
            control = await next_control(call)
            ack = conv.to_pb_control_ack(ControlAck(control.id, AckResult.SUCCESS, "seen"))
            await call.write(service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=service_pb2.RunnerMessage(ack=ack))]))
            got = await asyncio.wait_for(sent, 30)
            took = time.perf_counter() - t0
            assert got.result is AckResult.SUCCESS and got.detail == "seen"
            assert took < 3.0, f"the ack waited {took:.1f} s behind frames the hub had not stored"
            assert server.host.get("behind").state.last_sequence < 599  # (the worker was still behind)
            call.cancel()
    finally:
        await server.stop(None)


def test_the_frames_read_ahead_are_bounded_by_bytes():
    """Past ``limit`` bytes the reader waits for the worker; one frame is always taken."""
    from goldfive.hub.shared import _Ahead

    async def go() -> None:
        ahead = _Ahead(limit=100)
        worker = asyncio.get_running_loop().create_future()  # (stands in for the worker task)
        assert await ahead.put("big", 500, worker)  # alone: taken although over the limit
        second = asyncio.ensure_future(ahead.put("next", 10, worker))
        await asyncio.sleep(0.01)
        assert not second.done()  # 510 bytes ahead: the reader waits
        assert await ahead.get() == "big"
        assert await asyncio.wait_for(second, 1)
        assert ahead.bytes == 10 and await ahead.get() == "next" and ahead.empty()
        third = asyncio.ensure_future(ahead.put("x", 200, worker))
        fourth = asyncio.ensure_future(ahead.put("y", 200, worker))
        await asyncio.sleep(0.01)
        worker.set_result(None)  # the worker ended: the waiting reader is told so
        assert await asyncio.wait_for(third, 1) is False or await asyncio.wait_for(fourth, 1) is False

    asyncio.run(go())


def test_a_control_goes_down_a_shared_stream_ahead_of_the_confirmations_queued_before_it():
    from goldfive.hub.shared import SharedStream
    from goldfive.pb.goldfive.v1 import control_pb2, service_pb2

    def part(lane: int, **message: object) -> service_pb2.HubPart:
        return service_pb2.HubPart(lane=lane, message=service_pb2.HubMessage(**message))  # type: ignore[arg-type]

    stream = SharedStream(None)  # type: ignore[arg-type]  (put and take need no hub)
    stream.put(part(1, confirmed_sequence=5))
    stream.put(part(2, confirmed_sequence=7))
    stream.put(part(3, welcome=service_pb2.HubWelcome(stored_through=-1)))
    stream.put(part(1, control=control_pb2.ControlEvent(id="c1")))
    stream.put(part(3, control=control_pb2.ControlEvent(id="c3")))
    stream.put(service_pb2.HubPart(lane=4, ended=True, code=3, detail="refused"))
    order = [(p.lane, p.message.WhichOneof("body") or "ended") for p in stream.take()]
    assert order == [
        (3, "welcome"),  # a lane's welcome stays ahead of its first control
        (1, "control"),
        (3, "control"),
        (1, "confirmed_sequence"),
        (2, "confirmed_sequence"),
        (4, "ended"),
    ]
    stream.put(part(2, confirmed_sequence=8))
    stream.put(part(2, control=control_pb2.ControlEvent(id="c2")))  # ahead again after a take
    assert [p.message.WhichOneof("body") for p in stream.take()] == ["control", "confirmed_sequence"]


async def test_a_runners_ack_goes_up_ahead_of_its_queued_events_without_waiting_for_room():
    """The runner's process queues its runs' events for the shared stream (up to a bound,
    then a run's write waits): an ack neither waits for room nor goes behind them."""
    from goldfive.link.mux import _MAX_QUEUED, HubMux, _Lane
    from goldfive.pb.goldfive.v1 import control_pb2, service_pb2
    from tests.hub.drive import next_control, run_events

    mux = HubMux("127.0.0.1:1")  # never connected: only its queue is used
    lane = _Lane(mux, 1)
    batch = service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=run_events("r", 1)))
    for _ in range(_MAX_QUEUED):
        mux._put_nowait(service_pb2.RunnerPart(lane=1, message=batch))
    ack = service_pb2.RunnerMessage(ack=control_pb2.ControlAck(control_id="c1"))
    await asyncio.wait_for(lane.write(ack), 1)
    await asyncio.wait_for(lane.write(service_pb2.RunnerMessage(ack=control_pb2.ControlAck(control_id="c2"))), 1)
    assert [p.message.ack.control_id for p in mux._out[:2]] == ["c1", "c2"]
    assert len(mux._out) == _MAX_QUEUED + 2


async def test_an_ack_on_a_runs_own_stream_is_handed_over_while_its_batches_are_held_back(tmp_path):
    """The same on ``Hub.Connect`` (``Runner(hub_shared=False)``, an older runner)."""
    from goldfive import conv
    from goldfive.control import ControlAck
    from goldfive.hub.quota import RunnerLimits
    from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
    from tests.hub.drive import next_control, run_events

    import grpc

    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", runner_limits=RunnerLimits(events=50))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel, RemoteClient(server.address) as client:
            call = service_pb2_grpc.HubStub(channel).Connect()
            await call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id="slowed-own", host="h", pid=1)))
            assert (await asyncio.wait_for(call.read(), 10)).WhichOneof("body") == "welcome"
            await call.write(service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=run_events("slowed-own", 300))))
            await until(lambda: server.host.get("slowed-own") is not None and server.host.get("slowed-own").state.last_sequence == 299)
            t0 = time.perf_counter()
            sent = asyncio.create_task(client.send_control("slowed-own", ControlMessage(ControlKind.STATUS_QUERY), timeout=20))
            msg = await asyncio.wait_for(call.read(), 10)
            while msg.WhichOneof("body") != "control":
                msg = await asyncio.wait_for(call.read(), 10)
            await call.write(service_pb2.RunnerMessage(ack=conv.to_pb_control_ack(ControlAck(msg.control.id, AckResult.SUCCESS, "seen"))))
            got = await asyncio.wait_for(sent, 20)
            took = time.perf_counter() - t0
            assert got.result is AckResult.SUCCESS and got.detail == "seen"
            assert took < 2.0, f"the ack waited {took:.1f} s behind the slowed stream's events"
            call.cancel()
    finally:
        await server.stop(None)


async def test_a_group_commits_confirmations_to_many_runs_leave_the_loop_to_others_between_turns():
    """After a group commit the hub tells every run that sent something how far it is stored:
    with a thousand runs that was one step of tens of milliseconds, which a control (or an
    ack) waited behind. It goes in turns of the hub's loop now (goldfive.hub.turns; here a
    turn of no time at all: one confirmation each), every run confirmed."""
    from goldfive.hub.connected import RunnerAttachment
    from goldfive.hub.service import HubService
    from goldfive.hub.shared import LaneConn, SharedStream
    from goldfive.hub.turns import Turns
    from goldfive.pb.goldfive.v1 import service_pb2

    service = HubService(RunHost(":memory:"), confirm_interval=60)
    service.turns = Turns(seconds=0.0)
    stream = SharedStream(service)
    n = 200
    for i in range(n):
        conn = LaneConn(stream, i, service_pb2.RunnerHello(run_id=f"r{i}"))
        conn.received = i
        service.opened(conn)
        service.mark_stored(conn, RunnerAttachment.new(f"r{i}", service.recorder))
    seen: list[int] = []

    async def other() -> None:  # another task wanting the loop (a control's handler)
        while True:
            seen.append(len(stream.out))
            await asyncio.sleep(0)

    watcher = asyncio.get_running_loop().create_task(other())
    try:
        service._kick.set()  # many rows waiting: the ticker commits now
        await until(lambda: len(stream.out) == n, timeout=10)
    finally:
        watcher.cancel()
        await service.close()
    assert [p.message.confirmed_sequence for p in stream.out] == list(range(n))
    between = sorted({k for k in seen if 0 < k < n})
    assert len(between) > n // 2, between  # the other task ran between (nearly) every two confirmations


class _CommitsAfterReading:
    """The registry's own sqlite3 connection, passed through; once its read of ``hub_routed``
    has run, the writer thread is let commit the waiting row (``release``) and has done so
    before the read returns: the interleaving that lost a row, forced."""

    def __init__(self, conn: sqlite3.Connection, release: Callable[[], None], flushed: Callable[[], bool]) -> None:
        self._conn, self._release, self._flushed = conn, release, flushed

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Cursor:
        cur = self._conn.execute(sql, params)
        if "FROM hub_routed" in sql:
            self._release()
            assert self._flushed()
        return cur

    def close(self) -> None:
        self._conn.close()


async def test_a_routed_control_written_while_it_is_read_is_not_missed(tmp_path):
    """``routed_controls`` read the table, then the rows waiting: a row the writer thread
    committed in between was in neither. Forced: the writer waits on the file's write lock
    until the table has been read, and finishes before the waiting rows are looked at."""
    path = str(tmp_path / "hub.sqlite")
    registry = SqliteRegistry(path)
    locker = _lock(path)
    await registry.routed("r1", RoutedControl("c1", "APPROVE", "alice", "call-1", 5))
    await until(lambda: bool(registry._routed_writing))  # taken by the writer, stuck on the lock

    def release() -> None:
        locker.execute("ROLLBACK")
        locker.close()

    registry._conn = _CommitsAfterReading(registry._conn, release, lambda: registry.flush_routed(10))  # type: ignore[assignment]
    try:
        got = await registry.routed_controls("r1")
    finally:
        registry.close()
    assert _routed_rows(path) == [("r1", "c1", "alice")]  # committed meanwhile, as forced
    assert got == {"c1": RoutedControl("c1", "APPROVE", "alice", "call-1", 5)}


async def test_a_control_is_answered_while_a_large_batch_is_still_being_stored(tmp_path):
    """A runner's resent batch of thousands of events (or a frame of a hundred runs') was
    stored and folded in one step of the hub's loop: a control sent meanwhile waited for all
    of it, at every hop. It goes in turns now (here of no time at all, so the test does not
    depend on the machine's speed): the control goes down, its ack comes back and the
    control's handler returns while most of the batch still waits to be stored."""
    from goldfive import conv
    from goldfive.control import ControlAck
    from goldfive.hub.service import HubService
    from goldfive.hub.shared import SharedStream
    from goldfive.hub.turns import Turns, loop_turns
    from goldfive.pb.goldfive.v1 import service_pb2
    from tests.hub.drive import next_control, run_events

    n = 5000
    service = HubService(RunHost(tmp_path / "hub.sqlite"), confirm_interval=60)
    service.turns = Turns(seconds=0.0)
    stream = SharedStream(service)
    frames: asyncio.Queue[service_pb2.RunnerFrame | None] = asyncio.Queue()

    async def runner_frames():  # what the runner's process writes, frame by frame
        while (frame := await frames.get()) is not None:
            yield frame

    def frame(**message: object) -> service_pb2.RunnerFrame:
        return service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=service_pb2.RunnerMessage(**message))])  # type: ignore[arg-type]

    reader = asyncio.get_running_loop().create_task(stream.read(runner_frames()))
    try:
        await frames.put(frame(hello=service_pb2.RunnerHello(run_id="big", host="h", pid=1)))
        await until(lambda: 1 in stream.lanes)
        run = stream.lanes[1][1]
        await frames.put(frame(events=service_pb2.EventBatch(events=run_events("big", n))))
        await _passes(lambda: run.stored_through >= 0, "the batch is being stored")

        sent = asyncio.get_running_loop().create_task(run.run.control(ControlMessage(ControlKind.STATUS_QUERY), 10))

        def control_out() -> service_pb2.ControlEvent | None:
            return next((p.message.control for p in stream.out if p.message.WhichOneof("body") == "control"), None)

        await _passes(lambda: control_out() is not None, "the control is sent down the stream")
        control = control_out()
        assert control is not None
        assert loop_turns().urgent == 1  # the hub's ingest takes short turns while the control is out
        await frames.put(frame(ack=conv.to_pb_control_ack(ControlAck(control.id, AckResult.SUCCESS, "seen"))))
        ack = await asyncio.wait_for(sent, 10)
        stored_at_ack = run.stored_through
        assert ack.result is AckResult.SUCCESS and ack.detail == "seen"
        assert loop_turns().urgent == 0
        assert stored_at_ack < n // 2, f"the control was answered only after {stored_at_ack + 1} of {n} events were stored"
        await until(lambda: run.stored_through == n - 1, timeout=30)  # and the whole batch is stored, in order
        assert run.run.state.kind_counts.get("task_progress", 0) == n - 1
        assert [e.sequence for e in run.run.memory.events] == list(range(n))
    finally:
        await frames.put(None)
        await asyncio.wait_for(reader, 30)
        stream.close_all()
        await service.close()


async def test_a_control_is_answered_while_a_runners_own_stream_stores_a_large_batch(tmp_path):
    """The same on ``Hub.Connect`` (a run's own stream): its batch is stored in turns too."""
    from goldfive import conv
    from goldfive.control import ControlAck
    from goldfive.hub.service import HubService
    from goldfive.hub.turns import Turns
    from goldfive.pb.goldfive.v1 import service_pb2
    from tests.hub.drive import next_control, run_events

    class Context:  # what Connect asks of its call: nothing is refused here
        async def abort(self, code: object, details: str = "") -> None:
            raise AssertionError(f"refused: {details}")

    n = 5000
    service = HubService(RunHost(tmp_path / "hub.sqlite"), confirm_interval=60)
    service.turns = Turns(seconds=0.0)
    messages: asyncio.Queue[service_pb2.RunnerMessage | None] = asyncio.Queue()

    async def runner_messages():
        while (msg := await messages.get()) is not None:
            yield msg

    out = service.Connect(runner_messages(), Context())  # type: ignore[arg-type]
    try:
        await messages.put(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id="own", host="h", pid=1)))
        assert (await asyncio.wait_for(anext(out), 10)).WhichOneof("body") == "welcome"
        run = runner_of(service.host.get("own"))
        assert run is not None
        await messages.put(service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=run_events("own", n))))
        await _passes(lambda: run.stored_through >= 0, "the batch is being stored")
        sent = asyncio.get_running_loop().create_task(run.run.control(ControlMessage(ControlKind.STATUS_QUERY), 10))
        msg = await asyncio.wait_for(anext(out), 10)
        assert msg.WhichOneof("body") == "control"
        await messages.put(service_pb2.RunnerMessage(ack=conv.to_pb_control_ack(ControlAck(msg.control.id, AckResult.SUCCESS, "seen"))))
        ack = await asyncio.wait_for(sent, 10)
        stored_at_ack = run.stored_through
        assert ack.result is AckResult.SUCCESS
        assert stored_at_ack < n // 2, f"the control was answered only after {stored_at_ack + 1} of {n} events were stored"
        await until(lambda: run.stored_through == n - 1, timeout=30)
        assert [e.sequence for e in run.run.memory.events] == list(range(n))
        await messages.put(None)  # the runner ends its side: what it sent is confirmed, then the stream ends
        rest = [m async for m in out]
        assert [m.confirmed_sequence for m in rest if m.WhichOneof("body") == "confirmed_sequence"] == [n - 1]
    finally:
        await out.aclose()
        await service.close()


async def test_the_hubs_ingest_takes_short_turns_while_a_control_is_in_flight():
    from goldfive.hub.turns import Turns

    turns = Turns(seconds=10.0, urgent_seconds=0.0)
    turn = turns.turn()
    assert not turn.due()
    with turns.hurry():
        assert turn.due() and turns.budget == 0.0
        with turns.hurry():  # two controls: short until both are answered
            pass
        assert turn.due()
    assert not turn.due() and turns.budget == 10.0
    await turn.next()  # the baton goes round (nobody else waits)
    assert turns.handed == 1
