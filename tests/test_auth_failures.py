"""Failed authentications: a refused client that keeps writing on a stream is told
UNAUTHENTICATED, not INTERNAL. Against a real server with real grpc clients."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
from goldfive.remote import RemoteServer, RunHost, start_server
from tests.hub.drive import run_events

TOKEN = "the-right-token-0123456789"
WRONG = "guess-number-0000000000001"


@pytest.fixture
async def guarded(tmp_path: Path) -> AsyncIterator[RemoteServer]:
    from goldfive.remote.ingest import HostIngest, IngressService

    host = RunHost(tmp_path / "runs.sqlite")
    ingress = IngressService(HostIngest(host), known_event_ids=host.event_ids())  # StreamEvents too
    server = await start_server(host, listen="127.0.0.1:0", token=TOKEN, ingress=ingress)
    yield server
    await server.stop(None)


def _metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


# -- a client that keeps writing --------------------------------------------------------------


def _connect(channel: grpc.aio.Channel, md: Any) -> tuple[Any, Any]:
    return service_pb2_grpc.HubStub(channel).Connect(metadata=md), service_pb2.RunnerMessage(
        events=service_pb2.EventBatch(events=run_events("r1", 5))
    )


def _connect_shared(channel: grpc.aio.Channel, md: Any) -> tuple[Any, Any]:
    part = service_pb2.RunnerPart(lane=1, message=service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=run_events("r1", 5))))
    return service_pb2_grpc.HubStub(channel).ConnectShared(metadata=md), service_pb2.RunnerFrame(parts=[part])


def _stream_events(channel: grpc.aio.Channel, md: Any) -> tuple[Any, Any]:
    return service_pb2_grpc.GoldfiveIngressStub(channel).StreamEvents(metadata=md), run_events("r1", 1)[0]


@pytest.mark.parametrize("token", [None, WRONG], ids=["no token", "wrong token"])
@pytest.mark.parametrize("open_call", [_connect, _connect_shared, _stream_events], ids=["Connect", "ConnectShared", "StreamEvents"])
async def test_a_refused_client_that_keeps_writing_is_told_unauthenticated(
    guarded: RemoteServer, token: str | None, open_call: Callable[..., tuple[Any, Any]]
) -> None:
    codes: Counter[str] = Counter()
    for _ in range(3):
        async with grpc.aio.insecure_channel(guarded.address) as channel:
            call, message = open_call(channel, _metadata(token))
            try:
                for _ in range(500):  # writes all the while the server refuses the call
                    await call.write(message)
                await call.done_writing()
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass  # the write found the call over: its status says why
            codes[(await call.code()).name] += 1
    assert codes == Counter({"UNAUTHENTICATED": 3})
