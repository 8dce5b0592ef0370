"""What goes up a run's stream to its hub: the events the hub has not confirmed (an
:class:`EventBuffer`) and the acks of the run's controls, written by one session's writer.

On a stream of its own (``Hub.Connect``) the writer sends the events after what the hub
stored in batches (a batch closes at ``batch_events``, about ``MAX_FRAME_BYTES``, or ``linger``
seconds after its first event), an ack ahead of the batch it would wait behind. A batch is
bounded by bytes as a shared stream's frame is: events may carry tool arguments and results
up to the hub's event size limit, and 500 of those in one message passed gRPC's 4 MiB, which
the hub refused on every resend; an event larger than the bound goes alone. An event larger
than any message to a hub may carry (:data:`LARGEST_EVENT_BYTES`) stops the link, naming it:
resent, it would be refused forever (on a shared stream, breaking every run's lane each time). On a shared stream's lane the mux
pulls the events itself (:meth:`Outgoing.pull`) as it builds its frames, and the writer only
sends the acks and ends the lane once every event was pulled at close. Either way the events
go as the buffer holds them, serialized (goldfive.link.raw): a batch's message is their bytes
joined, never a copy of message objects.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from itertools import accumulate, takewhile
from typing import TYPE_CHECKING, Any, NoReturn

from goldfive import conv
from goldfive.control import ControlAck
from goldfive.link.buffer import EventBuffer
from goldfive.link.raw import entry_event_size, events_message
from goldfive.link.wire import LARGEST_EVENT_BYTES, MAX_FRAME_BYTES
from goldfive.pb.goldfive.v1 import service_pb2

if TYPE_CHECKING:
    from goldfive.link.lane import _Lane

__all__ = ["Outgoing"]


class _Ended(Exception):
    """The stream ended without a status (the hub went away mid-call)."""


class _Stopped(Exception):
    """This run's link ends for good (the hub's goodbye or refusal, an event no hub can take)."""


class Outgoing:
    """A run's events the hub has not confirmed and its acks to send up, and the writer that
    sends them on one session's call. ``closing`` (set by :meth:`close`) makes the writer end
    the stream once everything was handed over."""

    def __init__(self, buffer: EventBuffer, *, batch_events: int, linger: float) -> None:
        self.buffer = buffer
        self.batch_events = batch_events
        #: Seconds a batch waits to fill after its first event (a stream of its own).
        self.linger = linger
        self.acks: deque[ControlAck] = deque()  # to send up, in order
        #: Set when there is something to write (an event, an ack) or the link closes.
        self.wake = asyncio.Event()
        self.closing = False
        self._lingering: asyncio.Future[None] | None = None  # the writer's linger, while it waits
        #: The current session's lane's ``write_ack`` (a shared stream's lane), else None.
        self.ack_now: Any = None
        #: The current session's lane while its mux pulls this link's events (else None),
        #: and the last sequence handed to it.
        self.pulling: _Lane | None = None
        self.sent = -1
        #: Why the next event cannot be sent (found by ``pull``, raised by the writer).
        self._unsendable: _Stopped | None = None

    def close(self) -> None:
        """No more events come: the writer ends the stream once it handed every one over."""
        self.closing = True
        self.wake.set()

    async def write(self, call: Any, stored: int) -> None:
        """The writer on a stream of its own: the events after ``stored``, and the acks."""
        sent = stored
        self._unsendable = None
        while True:
            await self.send_acks(call)
            if self.buffer.has_after(sent):
                if self.linger > 0 and self.buffer.last_sequence - sent < self.batch_events:
                    await self._linger()  # let the batch fill a little (an ack cuts it short)
                    await self.send_acks(call)  # a person waits for an ack: before the batch
                seqs, batch = self.buffer.after_entries(sent, self.batch_events)
                try:
                    _fit(seqs, batch, MAX_FRAME_BYTES)
                except _Stopped as exc:
                    self._unsendable = exc
                    await self._stop(call, sent)
                if batch:
                    await send(call, events_message(batch))
                    sent = seqs[len(batch) - 1]
                continue
            if self.closing:
                await call.done_writing()
                return
            self.wake.clear()
            if self.acks or self.buffer.has_after(sent):
                continue
            await self.wake.wait()

    async def write_pulled(self, lane: _Lane, stored: int) -> None:
        """``write`` on a shared stream's lane: the mux pulls the events (:meth:`pull`) as it
        builds its frames; this task sends the acks, and ends the lane once every event was
        pulled when the link closes."""
        self.sent = stored
        self._unsendable = None
        lane.pull_with(self.pull)
        self.pulling = lane
        try:
            if self.buffer.has_after(stored):
                lane.ready()
            while True:
                await self.send_acks(lane)
                if self._unsendable is not None:
                    await self._stop(lane, self.sent)
                if self.closing:
                    if not self.buffer.has_after(self.sent):
                        await lane.done_writing()
                        return
                    lane.ready()
                self.wake.clear()
                if self.acks or self._unsendable is not None:
                    continue  # an unsendable event was found meanwhile: stop
                await self.wake.wait()
        finally:
            self.pulling = None

    async def _stop(self, call: Any, sent: int) -> NoReturn:
        """Raise the unsendable event's _Stopped once the hub confirmed every event sent before
        it (``close`` then names only what the hub did not get), sending acks meanwhile."""
        assert self._unsendable is not None
        while True:
            await self.send_acks(call)
            if self.buffer.first_sequence > sent:
                raise self._unsendable
            self.wake.clear()
            if not self.acks:
                await self.wake.wait()  # set by forget_through, an ack, an event

    def forget_through(self, sequence: int) -> None:
        """The hub confirmed every event through ``sequence``."""
        self.buffer.forget_through(sequence)
        if self._unsendable is not None:
            self.wake.set()  # the writer may be waiting for this to stop

    def pull(self, room: int) -> list[bytes]:
        """The next batch for the mux's frame: the events after the last one handed over, up
        to ``batch_events`` and about ``room`` bytes (at least one event), as held (entries of
        ``EventBatch.events``, goldfive.link.raw)."""
        seqs, batch = self.buffer.after_entries(self.sent, self.batch_events)
        try:
            _fit(seqs, batch, room)
        except _Stopped as exc:  # the mux's writer calls this: the link's writer ends the lane
            self._unsendable = exc
            self.wake.set()
            return []
        if batch:
            self.sent = seqs[len(batch) - 1]
            if self.buffer.has_after(self.sent):
                lane = self.pulling
                if lane is not None:
                    lane.ready()
            elif self.closing:
                self.wake.set()  # every event handed over: the writer may end the lane
        return batch

    async def send_acks(self, call: Any) -> None:
        while self.acks:
            ack = self.acks[0]
            await send(call, _ack_message(ack))
            self.acks.popleft()

    async def _linger(self) -> None:
        """Wait ``linger`` seconds, or less when an ack is queued meanwhile."""
        if self.acks:
            return
        loop = asyncio.get_running_loop()
        self._lingering = fut = loop.create_future()
        timer = loop.call_later(self.linger, _resolve, fut)
        try:
            await fut
        finally:
            timer.cancel()
            self._lingering = None

    def send_ack(self, ack: ControlAck) -> None:
        """Send ``ack`` up: at once on a shared stream's lane, else ahead of the writer's next
        batch (on the next session's call if this one broke first)."""
        now = self.ack_now
        if now is not None and not self.acks and now(_ack_message(ack)):
            return  # on its way: ahead of this process's queued events, not behind this link's writer
        self.acks.append(ack)
        self.wake.set()
        if self._lingering is not None:
            _resolve(self._lingering)


def _fit(seqs: Sequence[int], batch: list[bytes], room: int) -> None:
    """Keep the first events of ``batch`` whose held sizes add up to at most ``room`` bytes,
    and at least the first (an event larger than ``room`` goes alone); ``seqs`` are their
    sequences. Sizes are taken lazily, in C, and only up to the first event past the room.
    Raises _Stopped when the first event is larger than any message to a hub may carry."""
    if batch:
        sizes = accumulate(map(len, batch))
        if next(sizes) > LARGEST_EVENT_BYTES and (size := entry_event_size(batch[0])) > LARGEST_EVENT_BYTES:
            raise _Stopped(
                f"event {seqs[0]} is {size:,} bytes, more than a message to a hub can carry "
                f"({LARGEST_EVENT_BYTES:,} bytes per event); it and the events after it are not sent"
            )
        del batch[1 + len(list(takewhile(room.__ge__, sizes))) :]


def _ack_message(ack: ControlAck) -> service_pb2.RunnerMessage:
    """The RunnerMessage carrying ``ack``, converted into its own field (not built apart and
    copied in)."""
    msg = service_pb2.RunnerMessage()
    conv.fill_pb_control_ack(msg.ack, ack)
    return msg


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def send(call: Any, msg: service_pb2.RunnerMessage | bytes) -> None:
    """``call.write``, where a call that already ended is a broken session like any other.

    When the hub goes away, the call's status arrives and ``done()`` turns true a few loop
    steps before the reader's ``read()`` raises it as AioRpcError. A write in that window (the
    writer waking from ``linger`` or for a new event) gets ``asyncio.InvalidStateError`` from
    grpc instead; it must end this session (the reconnect loop then resends), not escape
    the link's connection loop and kill the link, which left ``close`` waiting for a
    confirmation never coming."""
    try:
        await call.write(msg)
    except asyncio.InvalidStateError as exc:
        raise _Ended(f"the stream ended while sending: {exc}") from exc
