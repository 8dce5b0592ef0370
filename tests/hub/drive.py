"""Driving a hub stream by hand, as a runner would: the events of a run, and a call (a
``Hub.Connect`` call or a HubMux lane) written and read message by message."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from goldfive import events
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote.auth import bearer_metadata
from goldfive.types import Session


def run_events(run_id: str, n: int, start: int = 0) -> list[Event]:
    """``n`` events of run ``run_id`` (a start, then progress notes), sequences from ``start``."""
    session = Session(run_id=run_id)
    out = [events.run_started(session, goal_summary="by hand")]
    out += [events.task_progress(session, "t1", detail=f"step {i}") for i in range(n - 1)]
    for i, ev in enumerate(out):
        ev.sequence = start + i
    return out


class CallDriver:
    """A runner's side of one stream (``call``), driven by a test."""

    call: Any

    async def hello(self, run_id: str, resume_after: int = -1, pid: int = 1) -> Any:
        hello = service_pb2.RunnerHello(run_id=run_id, host="test-host", pid=pid, resume_after=resume_after)
        await self.call.write(service_pb2.RunnerMessage(hello=hello))
        return await self.read()

    async def send(self, evs: list[Event]) -> None:
        await self.call.write(service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=evs)))

    async def read(self) -> Any:
        return await asyncio.wait_for(self.call.read(), 10)

    async def read_until(self, body: str) -> Any:
        while True:
            msg = await self.read()
            if msg is grpc.aio.EOF or msg.WhichOneof("body") == body:
                return msg


class Stream(CallDriver):
    """A runner's Hub.Connect call made with ``secret``."""

    def __init__(self, channel: grpc.aio.Channel, secret: str) -> None:
        connect = channel.stream_stream(
            "/goldfive.v1.Hub/Connect",
            request_serializer=service_pb2.RunnerMessage.SerializeToString,
            response_deserializer=service_pb2.HubMessage.FromString,
        )
        self.call = connect(metadata=bearer_metadata(secret))

    async def hello_as(self, run_id: str, *, take_over: bool = False) -> Any:
        hello = service_pb2.RunnerHello(run_id=run_id, host="test-host", pid=1, resume_after=-1, take_over=take_over)
        await self.call.write(service_pb2.RunnerMessage(hello=hello))
        return await self.read()

    async def refused(self) -> grpc.aio.AioRpcError:
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            while True:
                msg = await self.read()
                if msg is grpc.aio.EOF:
                    raise AssertionError("the stream ended without a refusal")
        return exc.value


class Lanes:
    """A runner's Hub.ConnectShared call made with ``secret``, lanes opened by hand."""

    def __init__(self, channel: grpc.aio.Channel, secret: str) -> None:
        shared = channel.stream_stream(
            "/goldfive.v1.Hub/ConnectShared",
            request_serializer=service_pb2.RunnerFrame.SerializeToString,
            response_deserializer=service_pb2.HubFrame.FromString,
        )
        self.call = shared(metadata=bearer_metadata(secret))
        #: The key the hub named for this stream's acks (Hub.ShareAcks), from its first frame.
        self.acks_key = ""

    async def open(self, lane: int, run_id: str) -> service_pb2.HubPart:
        hello = service_pb2.RunnerHello(run_id=run_id, host="test-host", pid=1, resume_after=-1)
        await self.call.write(service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=lane, message=service_pb2.RunnerMessage(hello=hello))]))
        frame = await asyncio.wait_for(self.call.read(), 10)
        self.acks_key = self.acks_key or frame.acks_key
        [part] = [p for p in frame.parts if p.lane == lane]
        return part


async def next_control(call: Any) -> Any:
    """Read a ConnectShared call's frames until one carries a control; that control."""
    while True:
        frame = await asyncio.wait_for(call.read(), 10)
        control = next((p.message.control for p in frame.parts if p.message.WhichOneof("body") == "control"), None)
        if control is not None:
            return control
