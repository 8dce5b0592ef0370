"""A shared stream's acks on a stream of their own (``Hub.ShareAcks``).

A run's ack to a control is what a person waits for, and on ``ConnectShared`` it rides the
same stream as the process's events: when the hub is behind on reading them (a group commit,
a burst, a busy loop), the ack waits behind every frame in between, in gRPC's buffers and the
hub's. At 1,000 runs this was most of a control's time (bench_hub_fleet: from the runner's
write of the ack to the hub reading it, p50 0.2-0.8 s). So the hub gives each shared stream a
key in its first frame (``HubFrame.acks_key``), and the runner's process sends the acks of
that stream's lanes on a ``ShareAcks`` call of their own, which the hub reads at once.

Who may call it: only the credential that opened the shared stream the key names (the key
alone is not enough: a key that leaked to another runner's credential, or to an operator's,
is refused with PERMISSION_DENIED). An unknown key (the stream ended) is NOT_FOUND. Its
frames hold ack parts only; anything else is refused (INVALID_ARGUMENT), and an ack is
handed over exactly as one on the shared stream is (its lane open on that stream).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any

import grpc

from goldfive.hub.shared import SharedStream
from goldfive.link.acks import ACKS_KEY_HEADER
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.remote.auth import caller

__all__ = ["ACKS_KEY_HEADER", "AckKeys"]

log = logging.getLogger("goldfive.hub")



class AckKeys:
    """The open shared streams, by the key each was given for its acks."""

    def __init__(self) -> None:
        self._streams: dict[str, SharedStream] = {}

    def open(self, stream: SharedStream) -> str:
        key = secrets.token_urlsafe(24)
        self._streams[key] = stream
        return key

    def close(self, key: str) -> None:
        self._streams.pop(key, None)

    async def serve(self, frames: AsyncIterator[service_pb2.RunnerFrame], context: Any) -> service_pb2.ShareAcksResponse:
        """One ShareAcks call: its acks handed over as they are read, until the runner ends
        the call or the shared stream ends."""
        key = ""
        for name, value in context.invocation_metadata() or ():
            if name == ACKS_KEY_HEADER:
                key = value if isinstance(value, str) else ""
        stream = self._streams.get(key) if key else None
        if stream is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no open shared stream has this acks key (it ended, or the key is wrong)")
            raise AssertionError("unreachable: abort raises")
        if caller(context) != stream.who:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "only the credential that opened a shared stream may send its acks")
        async for frame in frames:
            if stream.finished:
                break
            for part in frame.parts:
                if part.message.WhichOneof("body") != "ack" or part.done or part.cancelled:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a ShareAcks frame holds ack parts only")
            stream.acks_apart += len(stream._acks_first(frame.parts))
        return service_pb2.ShareAcksResponse()
