"""HubMux: the runs of one process share one ``Hub.ConnectShared`` stream, a lane each.

``HubLink(..., mux=HubMux(addr))`` connects through the mux instead of its own ``Connect``
call; the link's logic (hello, welcome, resending after what the hub stored, confirmations,
controls and acks, reconnecting) is the same, on a lane that behaves like a call: ``write``,
``read`` (``grpc.aio.EOF`` when the hub ended the lane), ``done_writing``, ``cancel``, and a
refusal raised as the ``grpc.aio.AioRpcError`` Connect would have raised.

The mux writes one ``RunnerFrame`` with every part its lanes queued during ``linger`` seconds
(:data:`LINGER`, up to about ``MAX_FRAME_BYTES``), so a process running many runs sends a few large messages
instead of one small message per run. A run's events are not queued as parts: its link marks
its lane ready (:meth:`_Lane.ready`, one dict entry per emit) and the mux pulls each ready
lane's events when it builds the frame, in one part per lane; the link's own task then wakes
only for acks and its close, not per event. When the stream breaks every lane on it fails the way its own call
would have (the links reconnect, each with its own backoff), and the next lane opened starts a
new stream, on the next address when there are several. A hub older than ConnectShared
answers UNIMPLEMENTED: a link that took the process's mux (``shared=True``) then uses a
Connect stream of its own; one given a mux by hand stops and says so.

``Runner(hub=...)`` (``hub_shared=True``, the default) and ``HubLink(shared=True)`` take this
process's mux for those hubs, token and CA from :func:`acquire` and give it back when the link
closes (the last one closes it); ``HubLink(mux=...)`` uses a mux the caller owns.
``Runner(hub_shared=False)`` and a plain ``HubLink`` open a ``Connect`` stream per run.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from goldfive.link.acks import AckSide
from goldfive.link.lane import _Lane
from goldfive.link.raw import events_part, hub_stub
from goldfive.link.wire import MAX_FRAME_BYTES
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.link.wire import bearer_metadata, hub_addresses

__all__ = ["HubMux", "acquire", "release"]

#: Seconds a frame waits for more runs' events after the first (acks, hellos and ends do not
#: wait): 20 ms cost a run's subscribers up to that much latency, and against 5 ms cut a busy
#: process's frames (each a gRPC write here and a read at the hub) fourfold and the runner's
#: CPU per event by about a fifth (bench_hub_fleet --runners).
LINGER = 0.02
#: Parts queued by the lanes before a lane's ``write`` waits for the stream to take them.
_MAX_QUEUED = 512
_CODES = {code.value[0]: code for code in grpc.StatusCode}


def _done(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class HubMux:
    """One ``Hub.ConnectShared`` stream shared by this process's HubLinks (same hubs, token
    and CA). Its connection opens with the first lane; :meth:`close` ends it."""

    def __init__(
        self,
        address: str | Sequence[str],
        *,
        token: str | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
        linger: float = LINGER,
        grpc_channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.addresses = hub_addresses(address)
        self._at = 0
        self.linger = linger
        self._metadata = bearer_metadata(token)
        self._tls_ca = tls_ca
        self._shared_channel = grpc_channel
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._lanes: dict[int, _Lane] = {}
        self._next = 0
        self._out: list[service_pb2.RunnerPart] = []
        self._first = 0  # the acks at the head of ``_out``, which went ahead of the others
        self._urgent = False  # a queued part must not wait for the linger
        self._ready: dict[int, _Lane] = {}  # lanes whose events wait to be pulled, oldest first
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._linger: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        #: This stream's acks call, once the hub named a key for it.
        self._acks: AckSide | None = None
        #: Acks sent on acks calls so far (benches and tests).
        self.acks_apart = 0
        #: Streams opened (1 = never reconnected), frames written and the largest frame's
        #: size in bytes (of a frame that carried events), for benches and tests.
        self.streams = 0
        self.frames = 0
        self.largest_frame = 0

    @property
    def address(self) -> str:
        return self.addresses[self._at]

    def Connect(self, metadata: Any = None) -> _Lane:
        """A new lane (HubLink's call); ``metadata`` is ignored: the mux's token is sent once
        for the whole stream."""
        if self._closed:
            raise RuntimeError("HubMux is closed")
        self._next += 1
        lane = _Lane(self, self._next)
        self._lanes[lane.lane] = lane
        if self._task is None or self._task.done():
            self._out = [p for p in self._out if p.lane in self._lanes]  # parts of lanes of a dead stream
            self._first = 0
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"HubMux({self.address})")
        return lane

    async def close(self) -> None:
        """End the stream and its lanes (the links using it should be closed first)."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        for lane in list(self._lanes.values()):
            lane._end()
        self._lanes.clear()
        for channel in self._channels.values():
            await channel.close()

    # -- lanes -----------------------------------------------------------------------------
    async def _put(self, part: service_pb2.RunnerPart, urgent: bool = False) -> None:
        while len(self._out) >= _MAX_QUEUED:
            self._room.clear()
            await self._room.wait()
        self._put_nowait(part, urgent)

    def _put_nowait(self, part: service_pb2.RunnerPart, urgent: bool = False) -> None:
        self._out.append(part)
        if urgent:
            self._hurry()
        else:
            self._wake.set()

    def _put_first(self, part: service_pb2.RunnerPart) -> None:
        """Queue ``part`` (an ack) ahead of everything but the acks queued before it, without
        waiting for room or the linger; on the hub's acks call when it has one
        (goldfive.link.acks)."""
        if self._acks is not None and self._acks.put(part):
            return
        self._out.insert(self._first, part)
        self._first += 1
        self._hurry()

    def _hurry(self) -> None:
        self._urgent = True
        linger = self._linger
        if linger is not None and not linger.done():
            linger.set_result(None)  # cut the linger short
        self._wake.set()

    def _forget(self, lane: _Lane) -> None:
        self._lanes.pop(lane.lane, None)
        self._ready.pop(lane.lane, None)

    def _pull_parts(self, size: int) -> list[bytes]:
        """The ready lanes' events as serialized ``RunnerFrame.parts`` elements (one per lane,
        in the order the lanes became ready), until the frame reaches ``MAX_FRAME_BYTES``; a
        lane with more left is marked again, behind the others. The events go as their links
        hold them (bytes, goldfive.link.raw): joined, not copied into message objects."""
        ready = self._ready
        pieces: list[bytes] = []
        while ready and size < MAX_FRAME_BYTES:
            number = next(iter(ready))
            lane = ready.pop(number)
            pull = lane._pull
            if pull is None or lane._ended or lane._error is not None:
                continue
            batch = pull(MAX_FRAME_BYTES - size)  # marks the lane ready again when it holds more
            if batch:
                piece = events_part(lane.prefix, batch)
                pieces.append(piece)
                size += len(piece)
        self.largest_frame = max(self.largest_frame, size)
        return pieces

    # -- the stream ------------------------------------------------------------------------
    def _stub(self) -> Any:
        if self._shared_channel is not None:
            return hub_stub(self._shared_channel)
        channel = self._channels.get(self.address)
        if channel is None:
            if self._tls_ca is not None:
                creds = grpc.ssl_channel_credentials(Path(self._tls_ca).read_bytes())
                channel = grpc.aio.secure_channel(self.address, creds)
            else:
                channel = grpc.aio.insecure_channel(self.address)
            self._channels[self.address] = channel
        return hub_stub(channel)

    async def _run(self) -> None:
        self.streams += 1
        call = self._stub().ConnectShared(metadata=self._metadata)
        error: BaseException | None = None
        reader = asyncio.ensure_future(self._read(call))
        writer = asyncio.ensure_future(self._write(call))
        try:
            done, _ = await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as exc:
            error = exc
        except Exception as exc:  # a write on a call that already ended, or a bug: the lanes reconnect
            error = exc
        finally:
            for task in (reader, writer):
                task.cancel()
            await asyncio.gather(reader, writer, return_exceptions=True)
            call.cancel()
            acks, self._acks = self._acks, None
            if acks is not None:
                self.acks_apart += acks.sent
                await acks.close()
            # Every lane on this stream fails as its own call would have; the links reconnect.
            lanes, self._lanes = list(self._lanes.values()), {}
            for lane in lanes:
                lane._end(error)
            self._out.clear()
            self._ready.clear()
            self._first = 0
            self._room.set()
            if error is not None and len(self.addresses) > 1:
                self._at = (self._at + 1) % len(self.addresses)

    async def _write(self, call: Any) -> None:
        while True:
            if not self._out and not self._ready:
                self._wake.clear()
                await self._wake.wait()
                continue
            if self.linger > 0 and not self._urgent:
                # Let other lanes' parts join this frame; an urgent part ends the wait.
                self._linger = asyncio.get_running_loop().create_future()
                timer = asyncio.get_running_loop().call_later(self.linger, _done, self._linger)
                try:
                    await self._linger
                finally:
                    timer.cancel()
                    self._linger = None
            self._urgent = False
            out, size, n = self._out, 0, 0
            while n < len(out) and (n == 0 or size < MAX_FRAME_BYTES):
                size += out[n].ByteSize()
                n += 1
            parts, self._out = out[:n], out[n:]
            self._first = max(0, self._first - n)
            self._room.set()
            frame = service_pb2.RunnerFrame(parts=parts)
            # Nothing queued left behind: the lanes' events may follow it. A frame is its
            # parts one after the other, so the pulled ones are appended to the others' bytes.
            pulled = self._pull_parts(size) if n == len(out) else []
            if pulled:
                await call.write(b"".join([frame.SerializeToString(), *pulled]))
            elif parts:
                await call.write(frame)
            else:
                continue
            self.frames += 1

    async def _read(self, call: Any) -> None:
        while True:
            frame = await call.read()
            if frame is grpc.aio.EOF:
                return  # the hub ended the stream: every lane ends (EOF), the links reconnect
            if frame.acks_key and self._acks is None:
                self._acks = AckSide(self._stub(), self._metadata, frame.acks_key, self._put_first)
            for part in frame.parts:
                lane = self._lanes.get(part.lane)
                if lane is None:
                    continue
                if part.HasField("message"):
                    lane._deliver(part.message)
                if part.ended:
                    self._lanes.pop(part.lane, None)
                    if part.code:
                        code = _CODES.get(part.code, grpc.StatusCode.UNKNOWN)
                        lane._end(grpc.aio.AioRpcError(code, None, None, part.detail))
                    else:
                        lane._end()


#: The muxes shared by this process's links: (loop, hubs, token, CA) -> [mux, links using it].
_SHARED: dict[tuple[int, tuple[str, ...], str | None, str | None], list[Any]] = {}


def acquire(addresses: Sequence[str], *, token: str | None, tls_ca: str | os.PathLike[str] | None) -> HubMux:
    """This event loop's shared mux to ``addresses`` with ``token`` and ``tls_ca``, made on
    first use; each call must be paired with :func:`release`."""
    loop = asyncio.get_running_loop()
    key = (id(loop), tuple(addresses), token, os.fspath(tls_ca) if tls_ca is not None else None)
    entry = _SHARED.get(key)
    if entry is None or entry[0]._closed or entry[2] is not loop:
        entry = _SHARED[key] = [HubMux(list(addresses), token=token, tls_ca=tls_ca), 0, loop]
    entry[1] += 1
    mux: HubMux = entry[0]
    return mux


async def release(mux: HubMux) -> None:
    """A link is done with ``mux``: the last one closes it."""
    for key, entry in list(_SHARED.items()):
        if entry[0] is mux:
            entry[1] -= 1
            if entry[1] <= 0:
                del _SHARED[key]
                await mux.close()
            return
