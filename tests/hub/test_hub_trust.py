"""A runner token is not an operator: what a hub lets a credential do with a run, and what it
believes of what a runner reports (goldfive.hub.trust, goldfive.store.registry).

- a run belongs to the credential that registered it: another runner token (or an operator
  that does not ask to take it over) is refused, on Connect and on a ConnectShared lane;
- a decision in the ledger is "routed" only when the hub routed its control with that author;
- a runner's RunStarted cannot make the hub import, start or continue anything (the hub
  continues only what it recorded starting itself);
- quotas per runner token: event size, runs, lanes, events per second, hellos alone.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest

from goldfive import events
from goldfive.control import ControlKind, ControlMessage
from goldfive.hub.quota import RunnerLimits
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.remote.auth import bearer_metadata
from goldfive.remote.server import RemoteServer, serve
from goldfive.types import Plan, Session, Task, TaskStatus
from tests.hub.drive import Lanes, Stream, run_events
from goldfive.store.log import SqliteLog
from goldfive.store.recorder import RunRecorder
from goldfive.hub.connected import runner_of
from tests.hub.conftest import until

OP = "o" * 24
R1 = "1" * 24
R2 = "2" * 24
TOKENS = {"token": "alice=" + OP, "runner_token": ["r1=" + R1, "r2=" + R2]}


@pytest.fixture
async def hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", interrupt_after=60, **TOKENS)
    yield server
    await server.stop(None)


@pytest.fixture
async def channel(hub: RemoteServer):  # type: ignore[no-untyped-def]
    async with grpc.aio.insecure_channel(hub.address) as ch:
        yield ch


async def _connected(channel: grpc.aio.Channel, secret: str, run_id: str, n: int = 2) -> Stream:
    stream = Stream(channel, secret)
    welcome = await stream.hello_as(run_id)
    assert welcome.WhichOneof("body") == "welcome"
    await stream.send(run_events(run_id, n, start=welcome.welcome.stored_through + 1))
    return stream


# -- a run belongs to the credential that registered it -------------------------------------


async def test_another_runner_token_cannot_connect_as_a_registered_run(hub: RemoteServer, channel: grpc.aio.Channel) -> None:
    owner = await _connected(channel, R1, "mine")
    await until(lambda: _async(hub.host.get("mine") is not None and hub.host.get("mine").state.last_sequence == 1), what="stored")  # type: ignore[union-attr]
    thief = Stream(channel, R2)
    await thief.call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id="mine", host="evil", pid=666)))
    exc = await thief.refused()
    assert exc.code() is grpc.StatusCode.PERMISSION_DENIED
    assert exc.details() == "run mine belongs to token 'r1'; runner token 'r2' may not connect as it"
    run = hub.host.get("mine")
    assert (a := runner_of(run)) is not None and a.conn is not None and run.host == "test-host"  # the owner's stream still stands
    # The owner still gets the operator's controls; the thief never did.
    async with RemoteClient(hub.address, token=OP) as client:
        sent = asyncio.ensure_future(client.send_control("mine", ControlMessage(kind=ControlKind.PAUSE, id="c-1")))
        msg = await owner.read_until("control")
        assert msg.control.id == "c-1"
        await owner.call.write(_ack("c-1"))
        ack = await asyncio.wait_for(sent, 10)
        assert ack.result.value == "SUCCESS"
    await owner.call.done_writing()


def _ack(control_id: str) -> service_pb2.RunnerMessage:
    from goldfive.pb.goldfive.v1 import control_pb2

    return service_pb2.RunnerMessage(ack=control_pb2.ControlAck(control_id=control_id, result=control_pb2.CONTROL_ACK_RESULT_SUCCESS))


async def _async(value: bool) -> bool:
    return value


async def test_a_lane_of_another_runner_token_is_refused_and_the_owner_reconnects(hub: RemoteServer, channel: grpc.aio.Channel) -> None:
    owner = await _connected(channel, R1, "lane-run")
    await owner.call.done_writing()
    lanes = Lanes(channel, R2)
    part = await lanes.open(7, "lane-run")
    assert part.ended and part.code == grpc.StatusCode.PERMISSION_DENIED.value[0]
    assert part.detail == "run lane-run belongs to token 'r1'; runner token 'r2' may not connect as it"
    again = Stream(channel, R1)  # the owner comes back: welcomed, with what the hub stored
    welcome = await again.hello_as("lane-run")
    assert welcome.WhichOneof("body") == "welcome"
    await lanes.call.done_writing()
    await again.call.done_writing()


async def test_an_operator_takes_a_run_over_only_by_asking_to(hub: RemoteServer, channel: grpc.aio.Channel) -> None:
    owner = await _connected(channel, R1, "taken")
    quietly = Stream(channel, OP)
    await quietly.call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id="taken", host="op", pid=2)))
    exc = await quietly.refused()
    assert exc.code() is grpc.StatusCode.PERMISSION_DENIED and "take_over" in exc.details()
    asking = Stream(channel, OP)
    welcome = await asking.hello_as("taken", take_over=True)
    assert welcome.WhichOneof("body") == "welcome"
    bye = await owner.read_until("goodbye")
    assert "took it over" in bye.goodbye
    await asking.send(run_events("taken", 2, start=welcome.welcome.stored_through + 1))
    log = SqliteLog(hub.host.db_path)  # who wrote which events: the hub's log, from the credentials it checked

    async def both_written() -> bool:
        return len(await log.writers("taken")) == 2

    await until(both_written, what="the operator's events stored")
    assert await log.writers("taken") == [(0, "runner:r1"), (2, "operator:alice")]
    await asking.call.done_writing()


async def test_a_hosted_run_takes_no_runner(hub: RemoteServer, channel: grpc.aio.Channel) -> None:
    from goldfive.remote.launch import demo_run

    run = await hub.host.host(demo_run(50.0), started_by="alice")
    for secret in (R1, OP):
        stream = Stream(channel, secret)
        await stream.call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id=run.run_id, take_over=True)))
        exc = await stream.refused()
        assert exc.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert exc.details() == f"run {run.run_id} is hosted by this hub; a runner cannot connect as it"
    log = SqliteLog(hub.host.db_path)  # the log records the hub as its writer from its first event

    async def written() -> bool:
        return bool(await log.writers(run.run_id))

    await until(written, what="the hosted run's events stored")
    assert await log.writers(run.run_id) == [(0, "hub")]


# -- the ledger: a decision the hub did not route is not believed -------------------------


def _decided(run_id: str, seq: int, *, control_id: str, author: str, claim: str = "routed", outcome: str = "APPROVED", target: str = "call-1") -> Event:
    ev = events.approval_decided(
        Session(run_id=run_id), target_id=target, outcome=outcome, author=author, client="ctl",
        kind="tool" if outcome != "ANSWERED" else "question", tool_name="deploy" if outcome != "ANSWERED" else "", control_id=control_id,
    )  # fmt: skip
    ev.sequence = seq
    ev.approval_decided.hub_check = claim  # the runner claims the hub checked it: replaced
    return ev


async def test_a_decision_is_routed_only_when_the_hub_routed_its_control_with_that_author(hub: RemoteServer, channel: grpc.aio.Channel) -> None:
    stream = await _connected(channel, R1, "ledger")
    async with RemoteClient(hub.address, token=OP) as client:
        approve = ControlMessage(kind=ControlKind.APPROVE, id="ap-1", payload={"target_id": "call-1"})
        sent = asyncio.ensure_future(client.send_control("ledger", approve))
        msg = await stream.read_until("control")
        await stream.call.write(_ack(msg.control.id))
        await asyncio.wait_for(sent, 10)
        answer = ControlMessage(kind=ControlKind.ANSWER, id="an-1", payload={"target_id": "q-1", "text": "eu"})
        sent = asyncio.ensure_future(client.send_control("ledger", answer))
        msg = await stream.read_until("control")
        await stream.call.write(_ack(msg.control.id))
        await asyncio.wait_for(sent, 10)
    await stream.send([
        _decided("ledger", 2, control_id="ap-1", author="alice"),  # what the hub routed
        _decided("ledger", 3, control_id="ap-1", author="bob"),  # another author
        _decided("ledger", 4, control_id="forged-9", author="alice"),  # a control never routed
        _decided("ledger", 5, control_id="an-1", author="alice", outcome="ANSWERED", target="q-1"),  # a routed ANSWER
        _decided("ledger", 6, control_id="ap-1", author="alice", outcome="ANSWERED", target="call-1"),  # not answered by an ANSWER
    ])  # fmt: skip
    await until(lambda: _async(hub.host.get("ledger").state.last_sequence == 6), what="stored")  # type: ignore[union-attr]
    await stream.call.done_writing()
    checks = {}
    async with RemoteClient(hub.address, token=OP) as client:
        async for ev in client.subscribe("ledger", -1):
            if ev.WhichOneof("payload") == "approval_decided":
                checks[ev.sequence] = ev.approval_decided.hub_check
            if ev.sequence == 6:
                break
    assert checks == {2: "routed", 3: "reported", 4: "reported", 5: "routed", 6: "reported"}

    async def stored() -> bool:  # as stored, not only as served (the hub's group commit)
        with sqlite3.connect(hub.host.db_path) as db:
            return bool(db.execute("SELECT 1 FROM events WHERE run_id = 'ledger' AND sequence = 4").fetchall())

    await until(stored, what="the hub's commit")
    with sqlite3.connect(hub.host.db_path) as db:
        [(payload,)] = db.execute("SELECT payload FROM events WHERE run_id = 'ledger' AND sequence = 4")
    assert Event.FromString(payload).approval_decided.hub_check == "reported"


# -- nothing a runner sends makes the hub import, start or continue anything ---------------


def _evil_module(tmp_path: Path) -> tuple[Path, Path]:
    where = tmp_path / "evil"
    where.mkdir()
    marker = tmp_path / "imported"
    (where / "evilmod.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nasync def agent(task, session):\n    return 'x'\n")
    (where / "exiter.py").write_text("import sys\nsys.exit(3)\n")
    return where, marker


async def _serve_until_ready(db: Path, **kw: Any) -> tuple[asyncio.Task[None], RemoteServer]:
    from goldfive.remote.launch import resume_with

    ready: asyncio.Future[RemoteServer] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(serve("127.0.0.1:0", db_path=db, ready=ready, resume_with=resume_with, **TOKENS, **kw))
    done, _ = await asyncio.wait({task, ready}, timeout=20, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()  # raises what stopped it
    return task, ready.result()


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(
    "launch",
    [
        {"command": "serve", "target": "evilmod:agent", "cwd": "EVIL", "goal": "g"},
        {"command": "serve", "target": "exiter:agent", "cwd": "EVIL", "goal": "g"},
        {"command": "serve", "target": "asyncio:sleep", "base_url": "http://127.0.0.1:9/v1", "model": "m", "goal": "g"},
        {"command": "run", "agent": "evilmod:agent", "cwd": "EVIL"},
    ],
)
async def test_a_runner_sent_launch_is_never_imported_started_or_continued(tmp_path: Path, launch: dict[str, str]) -> None:
    where, marker = _evil_module(tmp_path)
    launch = {k: (str(where) if v == "EVIL" else v) for k, v in launch.items()}
    db = tmp_path / "hub.sqlite"
    task, server = await _serve_until_ready(db)
    async with grpc.aio.insecure_channel(server.address) as ch:
        stream = Stream(ch, R1)
        await stream.hello_as("planted")
        started = events.run_started(Session(run_id="planted"), goal_summary="g", launch_json=json.dumps(launch))
        started.sequence = 0
        await stream.send([started])
        await until(lambda: _async(server.host.get("planted") is not None and server.host.get("planted").state.last_sequence == 0), what="stored")  # type: ignore[union-attr]
        await stream.call.done_writing()
    await _stop(task)
    task, server = await _serve_until_ready(db)  # the restart that used to import it
    try:
        await asyncio.sleep(0.5)
        assert not marker.exists()
        run = server.host.get("planted")
        assert run is not None and not run.live and run.runner is None
        reg = await server.host.registry.get("planted")
        assert reg is not None and (reg.origin, reg.owner, reg.launch) == ("connected", "r1", None)
    finally:
        await _stop(task)
    assert not marker.exists()


async def test_an_operators_start_of_a_module_that_exits_on_import_leaves_the_hub_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where, _ = _evil_module(tmp_path)
    monkeypatch.chdir(where)
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", **TOKENS)
    try:
        async with RemoteClient(server.address, token=OP) as client:
            with pytest.raises(Exception) as exc:
                await client.start_run("exiter:agent", goal="go")
            assert "called sys.exit(3)" in str(exc.value)
            assert await client.list_runs() == []  # and it still answers
    finally:
        await server.stop(None)


# -- a graceful stop is not a cancel ---------------------------------------------------------


async def test_a_hub_stopped_gracefully_leaves_its_run_interrupted_and_the_next_start_continues_it(tmp_path: Path) -> None:
    from goldfive.remote.launch import demo_run

    db = tmp_path / "hub.sqlite"
    task, server = await _serve_until_ready(db, runs=[demo_run(4.0)])
    [run] = server.host.runs()
    run_id = run.run_id
    await until(lambda: _async(run.state.count_status(TaskStatus.COMPLETED) >= 1), timeout=30, what="a task completed")
    await _stop(task)  # what Ctrl+C and SIGTERM do
    with sqlite3.connect(db) as conn:
        kinds = [k for (k,) in conn.execute("SELECT kind FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))]
    assert "run_aborted" not in kinds and "run_completed" not in kinds
    task, server = await _serve_until_ready(db)
    try:
        again = server.host.get(run_id)
        assert again is not None and again.live  # continued, from the hub's own record of its launch
        await until(lambda: _async(bool(again.state.finished or again.state.approvals)), timeout=60, what="the run went on")
        with sqlite3.connect(db) as conn:
            kinds = [k for (k,) in conn.execute("SELECT kind FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))]
        assert kinds.count("run_resumed") == 1
    finally:
        await _stop(task)


# -- quotas per runner token -------------------------------------------------------------------


async def _limited(tmp_path: Path, **limits: int) -> RemoteServer:
    return await start_server(
        RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", runner_limits=RunnerLimits(**limits), **TOKENS
    )


async def test_an_event_over_the_size_limit_is_refused_with_its_size(tmp_path: Path) -> None:
    server = await _limited(tmp_path, event_bytes=10_000)
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            stream = Stream(ch, R1)
            await stream.hello_as("big")
            [ev] = run_events("big", 1)
            ev.run_started.goal_summary = "x" * 50_000
            await stream.send([ev])
            exc = await stream.refused()
            assert exc.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert "event 0 is 50,0" in exc.details() and "at most 10,000 bytes per event" in exc.details()
            assert server.host.get("big") is None or server.host.get("big").state.last_sequence == -1  # type: ignore[union-attr]
    finally:
        await server.stop(None)


async def test_a_token_is_held_to_its_runs_and_a_stream_to_its_lanes(tmp_path: Path) -> None:
    server = await _limited(tmp_path, runs=2, lanes=3)
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            a = await _connected(ch, R1, "a")
            b = await _connected(ch, R1, "b")
            third = Stream(ch, R1)
            await third.call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id="c")))
            exc = await third.refused()
            assert exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and "token 'r1' has 2 runs connected" in exc.details()
            await a.call.done_writing()
            await until(lambda: _async(runner_of(server.host.get("a")).conn is None), what="a left")  # type: ignore[union-attr]
            again = await _connected(ch, R1, "c")  # one left: one more may come
            for s in (b, again):
                await s.call.done_writing()
    finally:
        await server.stop(None)
    server = await _limited(tmp_path / "lanes", runs=10, lanes=3)
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            lanes = Lanes(ch, R2)
            parts = [await lanes.open(i, f"lane-{i}") for i in range(4)]
            assert [p.ended for p in parts] == [False, False, False, True]
            assert parts[3].code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
            assert parts[3].detail.startswith("this stream has 3 lanes open")
            await lanes.call.done_writing()
    finally:
        await server.stop(None)


async def test_a_token_over_its_event_rate_is_slowed_not_refused(tmp_path: Path) -> None:
    server = await _limited(tmp_path, events=500)
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            stream = Stream(ch, R1)
            await stream.hello_as("fast")
            evs = run_events("fast", 1500)
            for i in range(0, 1500, 250):
                await stream.send(evs[i : i + 250])
            await until(lambda: _async(server.host.get("fast").state.last_sequence == 1499), timeout=30, what="all stored")  # type: ignore[union-attr]
            hub = server.extra[0]
            assert hub.quotas.throttled_seconds > 0.5  # held back, by the token's own budget
            await stream.call.done_writing()
    finally:
        await server.stop(None)


async def test_runs_made_by_hellos_alone_are_forgotten_when_their_runner_leaves(hub: RemoteServer, channel: grpc.aio.Channel) -> None:
    for i in range(40):
        stream = Stream(channel, R1)
        await stream.hello_as(f"empty-{i}")
        await stream.call.done_writing()
        assert await stream.read_until("nothing") is grpc.aio.EOF
    kept = await _connected(channel, R1, "real")
    await until(lambda: _async(all(hub.host.get(f"empty-{i}") is None for i in range(40))), what="the empty runs forgotten")
    assert [r.run_id for r in hub.host.runs()] == ["real"]
    assert (await hub.host.registry.get("empty-3")) is None
    # The log forgets them too: the writer named for each runner was held until the hub stopped.
    recorder = hub.extra[0].recorder
    assert isinstance(recorder, RunRecorder) and recorder.sink is not None
    log = recorder.sink.log
    assert log.writer_of("real", 0) == "runner:r1"
    await until(lambda: all(log.writer_of(f"empty-{i}", 0) == "hub" for i in range(40)), what="the empty runs' writers forgotten")
    await kept.call.done_writing()


async def test_goldfive_resume_refuses_a_run_a_hub_recorded_from_a_runner(tmp_path: Path) -> None:
    import subprocess
    import sys

    where, marker = _evil_module(tmp_path)
    db = tmp_path / "hub.sqlite"
    server = await start_server(RunHost(db), listen="127.0.0.1:0", **TOKENS)
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            stream = Stream(ch, R1)
            await stream.hello_as("planted-run")
            launch = {"command": "run", "agent": "evilmod:agent", "cwd": str(where), "goal": "g"}
            evs = run_events("planted-run", 3)
            evs[0].run_started.launch_json = json.dumps(launch)
            evs[1] = events.plan_submitted(Session(run_id="planted-run"), Plan([Task("t1", "t1")], []))  # resumable
            evs[1].sequence = 1
            await stream.send(evs)
            await until(lambda: _async(server.host.get("planted-run").state.last_sequence == 2), what="stored")  # type: ignore[union-attr]
            await stream.call.done_writing()
    finally:
        await server.stop(None)
    for args in (["planted-run"], []):  # named, or "the one interrupted run"
        done = subprocess.run(
            [sys.executable, "-m", "goldfive.cli", "resume", *args, "--db", str(db), "--headless"],
            capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert not marker.exists()
        assert "Traceback" not in done.stderr
    assert "recorded by a goldfive hub from runner token 'r1'" in subprocess.run(
        [sys.executable, "-m", "goldfive.cli", "resume", "planted-run", "--db", str(db), "--headless"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    ).stderr  # fmt: skip


# -- bad input on a stream: refused in words, one log line, the call ended ---------------


@pytest.mark.parametrize("method", ["/goldfive.v1.Hub/Connect", "/goldfive.v1.Hub/ConnectShared"])
async def test_bytes_that_do_not_parse_after_a_hello_end_the_call_without_a_traceback(
    hub: RemoteServer, channel: grpc.aio.Channel, method: str, caplog: pytest.LogCaptureFixture
) -> None:
    hello = service_pb2.RunnerHello(run_id="garbled", resume_after=-1)
    first: Any = service_pb2.RunnerMessage(hello=hello)
    if method.endswith("Shared"):
        first = service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=first)])
    call = channel.stream_stream(method, request_serializer=lambda b: b, response_deserializer=lambda b: b)(
        metadata=bearer_metadata(R1)
    )
    await call.write(first.SerializeToString())
    await asyncio.wait_for(call.read(), 10)  # the welcome
    await call.write(b"\xff\xff\xff\xff not a message")
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        for _ in range(5):
            await asyncio.wait_for(call.read(), 10)  # ends, never left open
    assert exc.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert exc.value.details().startswith("the request could not be read")
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL") or r.exc_info]
    async with RemoteClient(hub.address, token=OP) as client:
        await client.list_runs()  # the hub goes on


@pytest.mark.parametrize(
    ("run_id", "says"),
    [("", "no run id"), ("two\nlines", "unprintable characters"), ("x" * 200_000, "200,000 characters; at most 128"), ("  ", "blank")],
)
async def test_ingest_refuses_a_run_id_no_run_may_have(tmp_path: Path, run_id: str, says: str) -> None:
    from goldfive.pb.goldfive.v1 import service_pb2_grpc
    from goldfive.remote.ingest import HostIngest, IngressService

    host = RunHost(tmp_path / "hub.sqlite")
    server = await start_server(host, listen="127.0.0.1:0", ingress=IngressService(HostIngest(host)))
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            good = run_events("fine", 1)[0]
            bad = run_events("fine", 2)[1]
            bad.run_id = run_id
            resp = await service_pb2_grpc.GoldfiveIngressStub(ch).StreamEvents(iter([good, bad]))
        assert resp.received == 1 and says in resp.error
        assert [r.run_id for r in host.runs()] == ["fine"]
    finally:
        await server.stop(None)
