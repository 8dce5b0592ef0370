"""A run's lane on the shared ``Hub.ConnectShared`` stream of goldfive.link.mux: what a HubLink
uses as its call (``write``, ``read``, ``done_writing``, ``cancel``), fed by the mux with what
the hub sent down the lane."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import grpc

from goldfive.link.raw import lane_prefix
from goldfive.pb.goldfive.v1 import service_pb2

__all__ = ["LaneOwner"]


class LaneOwner(Protocol):
    """What a lane calls on its mux (goldfive.link.mux.HubMux, the one implementation): queue a
    part (waiting for room, or at once, or ahead of the rest as an ack), drop the lane, and
    mark it ready for its events to be pulled into the next frame."""

    #: Lanes whose events wait to be pulled, oldest first.
    _ready: dict[int, _Lane]
    #: Set when the mux's writer has something to send.
    _wake: asyncio.Event

    async def _put(self, part: service_pb2.RunnerPart, urgent: bool = False) -> None: ...

    def _put_nowait(self, part: service_pb2.RunnerPart, urgent: bool = False) -> None: ...

    def _put_first(self, part: service_pb2.RunnerPart) -> None: ...

    def _forget(self, lane: _Lane) -> None: ...


class _Lane:
    """One run's lane on the shared stream, used by HubLink as its call."""

    def __init__(self, mux: LaneOwner, lane: int) -> None:
        self.mux = mux
        self.lane = lane
        self.prefix = lane_prefix(lane)  # its parts' lane field, serialized
        self._inbox: deque[service_pb2.HubMessage] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._error: BaseException | None = None
        self._ended = False  # no more messages will come down
        #: The link's events, pulled when a frame is built (``pull_with``).
        self._pull: Callable[[int], list[bytes]] | None = None

    # -- what HubLink calls ------------------------------------------------------------------
    async def write(self, msg: service_pb2.RunnerMessage) -> None:
        if self._ended or self._error is not None:
            raise asyncio.InvalidStateError(f"lane {self.lane} already ended")
        # An ack (a person waits for it) or a hello goes out at once, without the linger; an
        # ack also goes ahead of the parts queued before it (the hub hands acks over before
        # it stores the events around them anyway).
        body = msg.WhichOneof("body")
        if body == "ack":
            self.write_ack(msg)
            return
        await self.mux._put(service_pb2.RunnerPart(lane=self.lane, message=msg), body != "events")

    def write_ack(self, msg: service_pb2.RunnerMessage) -> bool:
        """Queue an ack now, ahead of the parts queued before it (no wait for room or the
        linger); False when the lane already ended (the link sends it on its next call)."""
        if self._ended or self._error is not None:
            return False
        self.mux._put_first(service_pb2.RunnerPart(lane=self.lane, message=msg))
        return True

    def pull_with(self, pull: Callable[[int], list[bytes]]) -> None:
        """From now on the mux takes this lane's events by calling ``pull(room)`` (the next
        batch after what it took last, about ``room`` bytes at most but at least one event,
        empty when none; each event serialized as an ``EventBatch.events`` entry,
        goldfive.link.raw) while it builds a frame, once the lane is marked :meth:`ready`; the
        link no longer writes ``events`` messages itself."""
        self._pull = pull

    def ready(self) -> None:
        """The link holds events the mux has not pulled yet: pull them into the next frame."""
        mux = self.mux
        if self.lane not in mux._ready and not self._ended and self._error is None:
            mux._ready[self.lane] = self
            mux._wake.set()

    async def read(self) -> Any:
        while not self._inbox:
            if self._error is not None:
                raise self._error
            if self._ended:
                return grpc.aio.EOF
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._inbox.popleft()

    async def done_writing(self) -> None:
        if not self._ended and self._error is None:
            await self.mux._put(service_pb2.RunnerPart(lane=self.lane, done=True))

    def cancel(self) -> bool:
        if self._ended or self._error is not None:
            return False
        self._ended = True
        self.mux._forget(self)
        self.mux._put_nowait(service_pb2.RunnerPart(lane=self.lane, cancelled=True))
        self._wake()
        return True

    # -- fed by the mux --------------------------------------------------------------------
    def _deliver(self, msg: service_pb2.HubMessage) -> None:
        self._inbox.append(msg)
        self._wake()

    def _end(self, error: BaseException | None = None) -> None:
        if error is not None:
            self._error = error
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
