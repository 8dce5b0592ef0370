"""Hub.ShareAcks: a shared stream's acks on a call of their own (goldfive.hub.acks,
goldfive.link.acks), so a person's ack does not wait behind the events the hub has not read.
Who may call it: the credential that opened the shared stream its key names; everyone else
is refused."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import pytest

from goldfive import conv
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.hub.connected import runner_of
from goldfive.hub.quota import RunnerLimits
from goldfive.link.acks import ACKS_KEY_HEADER
from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
from goldfive.planners.static import StaticPlanner
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.remote.auth import bearer_metadata
from goldfive.remote.server import RemoteServer
from goldfive.runner import Runner
from goldfive.testing import until
from goldfive.types import Plan, Task
from tests.hub.drive import Lanes, next_control, run_events
from tests.remote_fixtures import Gate

OP = "o" * 24
R1 = "1" * 24
R2 = "2" * 24
TOKENS = {"token": "alice=" + OP, "runner_token": ["r1=" + R1, "r2=" + R2]}


def _service(server: RemoteServer):  # type: ignore[no-untyped-def]
    return next(x for x in server.extra if hasattr(x, "_ack_keys"))


def _part(lane: int, **message: object) -> service_pb2.RunnerPart:
    return service_pb2.RunnerPart(lane=lane, message=service_pb2.RunnerMessage(**message))  # type: ignore[arg-type]


async def test_a_runs_acks_go_on_the_acks_call(tmp_path: Path) -> None:
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    gate = Gate()
    plan = Plan(tasks=[Task("t1", "held")], edges=[], id="p1")
    runner = Runner(agent=gate.agent, planner=StaticPlanner(plan), run_id="apart-1", hub=server.address)
    task = asyncio.create_task(runner.run("one thing"))
    try:
        await asyncio.wait_for(gate.entered.wait(), 10)
        await until(lambda: (r := server.host.get("apart-1")) is not None and (a := runner_of(r)) is not None and a.conn is not None)
        async with RemoteClient(server.address) as client:
            for _ in range(3):
                ack = await asyncio.wait_for(client.send_control("apart-1", ControlMessage(ControlKind.STATUS_QUERY)), 10)
                assert ack.result is AckResult.SUCCESS, ack
        streams = list(_service(server)._ack_keys._streams.values())
        assert sum(s.acks_apart for s in streams) == 3  # every ack came on the acks call
        gate.open()
        assert (await asyncio.wait_for(task, 10)).success
        await runner.close()
    finally:
        gate.open()
        await server.stop(None)


async def test_an_ack_on_the_acks_call_is_handed_over_while_the_shared_stream_is_far_behind(tmp_path: Path) -> None:
    """The shared stream holds 11 s of events the hub has not stored (the runner is over its
    rate): an ack sent on the acks call is handed over at once."""
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", runner_limits=RunnerLimits(events=50))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel, RemoteClient(server.address) as client:
            lanes = Lanes(channel, "")
            welcome = await lanes.open(1, "behind")
            assert welcome.message.WhichOneof("body") == "welcome" and lanes.acks_key
            evs = run_events("behind", 601)
            await lanes.call.write(service_pb2.RunnerFrame(parts=[_part(1, events=service_pb2.EventBatch(events=evs[:100]))]))
            await until(lambda: server.host.get("behind") is not None and server.host.get("behind").state.last_sequence == 99)
            for i in range(10):
                batch = service_pb2.EventBatch(events=evs[100 + i * 50 : 150 + i * 50])
                await lanes.call.write(service_pb2.RunnerFrame(parts=[_part(1, events=batch)]))
            acks = service_pb2_grpc.HubStub(channel).ShareAcks(metadata=((ACKS_KEY_HEADER, lanes.acks_key),))
            t0 = time.perf_counter()
            sent = asyncio.create_task(client.send_control("behind", ControlMessage(ControlKind.STATUS_QUERY), timeout=30))
            control = await next_control(lanes.call)
            ack = conv.to_pb_control_ack(ControlAck(control.id, AckResult.SUCCESS, "apart"))
            await acks.write(service_pb2.RunnerFrame(parts=[_part(1, ack=ack)]))
            got = await asyncio.wait_for(sent, 30)
            took = time.perf_counter() - t0
            assert got.result is AckResult.SUCCESS and got.detail == "apart"
            assert took < 3.0, f"the ack took {took:.1f} s"
            assert server.host.get("behind").state.last_sequence < 599  # (the stream was still behind)
            acks.cancel()
            lanes.call.cancel()
    finally:
        await server.stop(None)


@pytest.fixture
async def hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", interrupt_after=60, **TOKENS)
    yield server
    await server.stop(None)


async def _refusal(channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...], frame: service_pb2.RunnerFrame) -> grpc.aio.AioRpcError:
    call = service_pb2_grpc.HubStub(channel).ShareAcks(metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call.write(frame)
        await call.done_writing()
        await asyncio.wait_for(call, 10)
    return exc.value


async def test_only_the_credential_that_opened_the_stream_may_send_its_acks(hub: RemoteServer) -> None:
    async with grpc.aio.insecure_channel(hub.address) as channel:
        lanes = Lanes(channel, R1)
        await lanes.open(1, "owned")
        key = lanes.acks_key
        assert key
        ack = _part(1, ack=conv.to_pb_control_ack(ControlAck("c-1", AckResult.SUCCESS, "x")))
        frame = service_pb2.RunnerFrame(parts=[ack])

        other = await _refusal(channel, (*bearer_metadata(R2), (ACKS_KEY_HEADER, key)), frame)
        assert other.code() is grpc.StatusCode.PERMISSION_DENIED
        operator = await _refusal(channel, (*bearer_metadata(OP), (ACKS_KEY_HEADER, key)), frame)
        assert operator.code() is grpc.StatusCode.PERMISSION_DENIED
        nobody = await _refusal(channel, ((ACKS_KEY_HEADER, key),), frame)
        assert nobody.code() is grpc.StatusCode.UNAUTHENTICATED
        unknown = await _refusal(channel, (*bearer_metadata(R1), (ACKS_KEY_HEADER, "not-a-key")), frame)
        assert unknown.code() is grpc.StatusCode.NOT_FOUND
        no_key = await _refusal(channel, bearer_metadata(R1), frame)
        assert no_key.code() is grpc.StatusCode.NOT_FOUND
        events = service_pb2.RunnerFrame(parts=[_part(1, events=service_pb2.EventBatch(events=run_events("owned", 1, 5)))])
        not_an_ack = await _refusal(channel, (*bearer_metadata(R1), (ACKS_KEY_HEADER, key)), events)
        assert not_an_ack.code() is grpc.StatusCode.INVALID_ARGUMENT
        # The owner's own acks call is taken (it ends when the owner ends it).
        mine = service_pb2_grpc.HubStub(channel).ShareAcks(metadata=(*bearer_metadata(R1), (ACKS_KEY_HEADER, key)))
        await mine.write(frame)
        await mine.done_writing()
        assert isinstance(await asyncio.wait_for(mine, 10), service_pb2.ShareAcksResponse)
        lanes.call.cancel()
