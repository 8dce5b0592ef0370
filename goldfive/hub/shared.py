"""The hub's end of ``Hub.ConnectShared``: many runs of one process on one stream, a lane each.

A lane carries what a run's own ``Connect`` stream carries and is checked the same way: its
first part is a ``RunnerHello``, then batches of events (gap-free after what the hub stored;
a bad batch is refused whole, nothing of it stored) and acks; controls, confirmations and a
goodbye go down it. A refused lane ends alone (an ended part with the gRPC code and detail
``Connect`` would have aborted with); the other lanes go on. Everything queued for the
stream while the previous frame was being written goes down in one ``HubFrame``, so many runs
cost a few messages, not one per run (what limited a fleet of runs on per-run streams).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, Protocol

import grpc

from goldfive.hub.connected import CHUNK_EVENTS, RunnerAttachment
from goldfive.hub.limits import MAX_FRAME_BYTES, MAX_HOST, hello_problem
from goldfive.hub.quota import Quotas
from goldfive.hub.turns import Turn, Turns
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.remote.auth import caller
from goldfive.store.recorder import HubRecorder


__all__ = ["LaneConn", "Refused", "SharedStream", "hand"]

log = logging.getLogger("goldfive.hub")

#: Bytes of frames read (their acks handed over) while earlier frames' events are still being
#: stored: beyond this the stream is not read (the runner's writes wait). A runner's ack to a
#: control rides the same stream behind its events, so the reader must stay ahead of the
#: worker through a burst (a group commit, a control in flight shortening the worker's turns):
#: with four frames ahead, as before, an ack waited up to a second behind unread frames at
#: 1,000 runs (bench_hub_fleet --runners). 8 MiB is 64 of today's runners' frames; at least
#: one frame is always taken.
AHEAD_BYTES = 8 * 1024 * 1024
#: What goes down ahead of the parts queued before it: controls, and welcomes (so a control
#: never overtakes its lane's welcome).
_URGENT = ("control", "welcome")


async def hand(queue: asyncio.Queue[Any], item: Any, worker: asyncio.Task[Any]) -> bool:
    """Queue ``item`` for ``worker``, waiting while ``queue`` is full (a run's own stream);
    False when the worker ended first."""
    if not queue.full():
        queue.put_nowait(item)
        return True
    put = asyncio.ensure_future(queue.put(item))
    try:
        await asyncio.wait({put, worker}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not put.done():
            put.cancel()
    return not put.cancelled()


class _Ahead:
    """The frames ``SharedStream.read`` has read and its worker has not taken yet: a FIFO
    bounded by their size in bytes (:data:`AHEAD_BYTES`), not by their number, since a
    frame holds anything from one ack to a thousand runs' events."""

    def __init__(self, limit: int = AHEAD_BYTES) -> None:
        self.limit = limit
        self.bytes = 0
        self._items: deque[tuple[Any, int]] = deque()
        self._getter: asyncio.Future[None] | None = None
        self._room: asyncio.Future[None] | None = None

    def empty(self) -> bool:
        return not self._items

    async def put(self, item: Any, size: int, worker: asyncio.Task[Any]) -> bool:
        """Queue ``item`` (``size`` bytes); past the limit, wait until the worker has taken
        enough. False when the worker ended first."""
        self._items.append((item, size))
        self.bytes += size
        _wake(self._getter)
        while self.bytes > self.limit and len(self._items) > 1:
            if worker.done():
                return False
            room = self._room = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait({room, worker}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._room = None
        return not worker.done()

    async def get(self) -> Any:
        while not self._items:
            getter = self._getter = asyncio.get_running_loop().create_future()
            try:
                await getter
            finally:
                self._getter = None
        item, size = self._items.popleft()
        self.bytes -= size
        if self.bytes <= self.limit or len(self._items) <= 1:
            _wake(self._room)
        return item


#: What a frame's part costs beyond its events (lane, flags, a small message), roughly.
_PART_BYTES = 16


def _batch_sizes(parts: Any) -> list[int]:
    """Each part's events in bytes (0 for a part that carries no events). Sizing a message
    costs about as much as parsing it, so each batch is sized once, here."""
    return [p.message.events.ByteSize() if p.message.WhichOneof("body") == "events" else 0 for p in parts]


def _wake(fut: asyncio.Future[None] | None) -> None:
    if fut is not None and not fut.done():
        fut.set_result(None)


class Refused(Exception):
    """A lane refused by HubService while claiming its run (``_LaneContext.abort``)."""

    def __init__(self, code: grpc.StatusCode, detail: str) -> None:
        super().__init__(detail)
        self.code, self.detail = code, detail


class CallContext(Protocol):
    """What HubService asks of a call's context while it claims a run: to refuse the call (a
    gRPC call's context aborts it; a shared stream's lane context refuses that lane)."""

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None: ...


class _LaneContext:
    """Stands in for the call's context where HubService refuses a run (``claim``,
    ``_claim_in_fleet``): on a shared stream only that lane is refused."""

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        raise Refused(code, details)


class LaneConn:
    """One lane: a :class:`~goldfive.hub.connected.RunnerConnection` whose messages go down
    the shared stream, tagged with the lane."""

    def __init__(self, stream: SharedStream, lane: int, hello: service_pb2.RunnerHello) -> None:
        self.stream = stream
        self.lane = lane
        self.host = hello.host[:MAX_HOST]
        self.pid = hello.pid
        self.closed = False
        self.received = -1  # the last sequence stored from this lane
        #: The credential whose run this lane counts as (goldfive.hub.quota); None once released.
        self.owner: str | None = None

    def send(self, msg: service_pb2.HubMessage) -> None:
        if not self.closed:
            self.stream.put(service_pb2.HubPart(lane=self.lane, message=msg))

    def end(self) -> None:
        """End the lane without a goodbye (the hub is stopping: the runner comes back)."""
        self.refuse(grpc.StatusCode.OK, "")

    def goodbye(self, why: str) -> None:
        if not self.closed:
            self.send(service_pb2.HubMessage(goodbye=why))
            self.refuse(grpc.StatusCode.OK, "")

    def refuse(self, code: grpc.StatusCode, detail: str) -> None:
        if not self.closed:
            value = code.value[0] if isinstance(code.value, tuple) else int(code.value)
            self.stream.put(service_pb2.HubPart(lane=self.lane, ended=True, code=value, detail=detail))
            self.closed = True
            self.stream.closing.append(self)


class LaneHost(Protocol):
    """What a shared stream needs of the hub serving it (HubService): each lane is claimed,
    recorded, confirmed and let go exactly as a Connect stream is."""

    @property
    def fleet(self) -> object | None:
        """This hub's part in a fleet of hubs (HubService.fleet), or None: alone."""
        ...

    @property
    def quotas(self) -> Quotas: ...

    @property
    def recorder(self) -> HubRecorder: ...

    @property
    def turns(self) -> Turns:
        """The hub's baton for long ingest work (goldfive.hub.turns)."""
        ...

    async def claim(self, hello: service_pb2.RunnerHello, conn: LaneConn, context: CallContext) -> RunnerAttachment: ...

    def opened(self, conn: LaneConn) -> None: ...

    def mark_stored(self, conn: LaneConn, run: RunnerAttachment) -> None: ...

    def unmark(self, conn: LaneConn) -> bool: ...

    def stored_some(self) -> None: ...

    async def commit(self) -> bool: ...

    def left(self, run: RunnerAttachment, conn: LaneConn) -> None: ...


class SharedStream:
    """One ConnectShared call: its lanes, and the parts waiting to go down."""

    def __init__(self, service: LaneHost) -> None:
        self.service = service
        self.lanes: dict[int, tuple[LaneConn, RunnerAttachment]] = {}
        self.over: set[int] = set()  # lanes that ended: their late parts are dropped
        self.closing: list[LaneConn] = []
        self.out: list[service_pb2.HubPart] = []
        self._urgent = 0  # the first parts of ``out`` that went ahead of the others
        self.wake = asyncio.Event()
        self.finished = False
        #: The credential that opened the stream ("" on a hub without tokens): only it may
        #: send the stream's acks apart (goldfive.hub.acks).
        self.who = ""
        #: Acks handed over from the stream's ShareAcks call (benches and tests).
        self.acks_apart = 0

    def put(self, part: service_pb2.HubPart) -> None:
        """Queue ``part`` for the next frame. A control (a person waits for its ack) goes
        ahead of the confirmations and goodbyes queued before it, behind the controls and
        welcomes already ahead (a lane's welcome always comes before its first control)."""
        if part.HasField("message") and part.message.WhichOneof("body") in _URGENT:
            self.out.insert(self._urgent, part)
            self._urgent += 1
        else:
            self.out.append(part)
        self.wake.set()

    def take(self) -> list[service_pb2.HubPart]:
        """The parts of the next frame (at most about MAX_FRAME_BYTES, at least one)."""
        out, size, n = self.out, 0, 0
        while n < len(out) and (n == 0 or size < MAX_FRAME_BYTES):
            size += out[n].ByteSize()
            n += 1
        parts, self.out = out[:n], out[n:]
        self._urgent = max(0, self._urgent - n)
        if self.out:
            self.wake.set()
        return parts

    # -- reading ---------------------------------------------------------------------------
    async def read(self, frames: Any) -> None:
        """Read the stream's frames. Each frame's acks are handed over as it is read; its other
        parts are stored and handled in order by a worker (``_work``) at most
        :data:`AHEAD_BYTES` of frames behind, so an ack (a person waits for it) never waits
        for the events of the frames before it to be recorded and folded."""
        who = caller()  # this call's credential: its events are spent against its rate
        queue = _Ahead()
        worker = asyncio.get_running_loop().create_task(self._work(queue, who))
        try:
            async for frame in frames:
                parts = frame.parts
                acked = self._acks_first(parts)
                sizes = _batch_sizes(parts)  # (the worker checks each batch's size with these)
                if not await queue.put((frame, acked, sizes), sum(sizes) + _PART_BYTES * len(parts), worker):
                    break  # the worker stopped (its failure is raised below)
            else:
                await queue.put(None, 0, worker)
            await worker
            # The runner's process ended its side: confirm what it sent, then end its lanes.
            service = self.service
            dirty = [conn for conn, _ in self.lanes.values() if service.unmark(conn)]
            if dirty and await service.commit():
                for conn in dirty:
                    conn.send(service_pb2.HubMessage(confirmed_sequence=conn.received))
            for conn, _ in list(self.lanes.values()):
                conn.end()
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError:
            pass  # the runner's connection broke: every lane is disconnected
        except grpc.aio.AbortError:  # bytes that are not a RunnerFrame: the call is refused already
            log.info("hub: a shared stream sent bytes that do not parse; refused")
        finally:
            if not worker.done():
                worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
            self.finished = True
            self.wake.set()

    async def _work(self, queue: _Ahead, who: str) -> None:
        """Store and handle the frames ``read`` queued, in order (their acks were handled), in
        chunks of at most CHUNK_EVENTS events, letting the loop turn between two once the turn
        is used up (goldfive.hub.turns): a frame of a hundred runs' events, or one run's
        resent batch of 500, does not hold a control up for milliseconds."""
        turns = self.service.turns
        turn = turns.turn()
        while True:
            waited = queue.empty()
            if (item := await queue.get()) is None:
                break
            if waited:
                turn = turns.turn()  # (idle until now: a fresh turn)
            else:
                await turn.check()
            frame, acked, sizes = item
            batch: list[tuple[LaneConn, RunnerAttachment, Any]] = []
            held = 0  # events in ``batch``
            sent = 0  # the frame's events, spent against the caller's rate (counted as they go by)
            for i, part in enumerate(frame.parts):
                if i in acked:
                    continue
                sent += len(part.message.events.events)
                checked = self._collect(part, batch, sizes[i])
                if checked is None:  # not a plain batch: what came before it is stored first
                    if batch:
                        await self._ingest(batch)
                        batch, held = [], 0
                    await self._part(part, turn)
                    await turn.check()
                    continue
                if not checked:
                    continue  # refused, dropped, or empty
                conn, run, events = checked
                n, start = len(events), 0
                while start < n:
                    take = min(n - start, CHUNK_EVENTS - held)
                    batch.append((conn, run, events if take == n else events[start : start + take]))
                    held += take
                    start += take
                    if held >= CHUNK_EVENTS:
                        await self._ingest(batch)
                        batch, held = [], 0
                        if await turn.check() and conn.closed:
                            break  # taken over meanwhile: the rest of its batch is not the run's
                        if conn.closed:
                            break  # refused while storing
            if batch:
                await self._ingest(batch)
            await self.service.quotas.spend(who, sent)

    def _acks_first(self, parts: Any) -> set[int]:
        """Hand the acks of a frame to whoever waits for them before its events are stored (a
        person waits for an ack; an ack is not an event of the run, its audit event comes
        with the events). The positions of the parts handled."""
        done: set[int] = set()
        for i, part in enumerate(parts):
            if part.message.WhichOneof("body") != "ack" or part.done or part.cancelled:
                continue
            entry = self.lanes.get(part.lane)
            if entry is not None and not entry[0].closed:
                entry[1].acked(part.message.ack)
                done.add(i)
        return done

    def _collect(
        self, part: service_pb2.RunnerPart, batch: list[tuple[LaneConn, RunnerAttachment, Any]], size: int
    ) -> tuple[LaneConn, RunnerAttachment, Any] | tuple[()] | None:
        """A plain batch of events for an open lane: checked (after the lane's events still
        waiting in ``batch``), and returned with its lane to be stored; ``()`` when there is
        nothing to store (its lane refused, closed, or no events). None for any other part."""
        if part.done or part.cancelled or self.service.fleet is not None:
            return None  # (several hubs: each batch on its own, the FleetRecorder has no bulk path)
        entry = self.lanes.get(part.lane)
        if entry is None or part.message.WhichOneof("body") != "events":
            return None
        conn, run = entry
        if conn.closed:
            return ()  # taken over or refused: dropped, as in _part
        events = part.message.events.events
        after = conn.received
        for c, _, evs in reversed(batch):  # this lane's earlier batch in the same frame
            if c is conn:
                after = evs[-1].sequence
                break
        problem = run.check_batch(events, after, size)
        if problem:
            conn.refuse(grpc.StatusCode.INVALID_ARGUMENT, problem)
            return ()
        return (conn, run, events) if events else ()

    async def _ingest(self, batch: list[tuple[LaneConn, RunnerAttachment, Any]]) -> None:
        """Record the checked batches of a frame in one step, then fold and serve each."""
        service = self.service
        try:
            await service.recorder.emit_many([ev for _, _, events in batch for ev in events])
            for conn, run, events in batch:
                await run.ingest_batch(events, record=False)
                conn.received = events[-1].sequence
                service.mark_stored(conn, run)
        except asyncio.CancelledError:
            raise
        except Exception:  # isolation boundary: a bug here ends these lanes, not the stream
            log.exception("hub: storing a frame of %d runs' events failed", len(batch))
            for conn, run, _ in batch:
                conn.refuse(grpc.StatusCode.INTERNAL, f"the hub failed while storing run {run.run_id}; its log has the details")
        service.stored_some()

    async def _part(self, part: service_pb2.RunnerPart, turn: Turn) -> None:
        entry = self.lanes.get(part.lane)
        if entry is None:
            if part.lane in self.over or part.done or part.cancelled:
                return
            body = part.message.WhichOneof("body")
            if body != "hello":
                self._refuse_new(part.lane, grpc.StatusCode.INVALID_ARGUMENT, "the first message of a lane must be a RunnerHello")
                return
            await self._open(part.lane, part.message.hello)
            return
        conn, run = entry
        if conn.closed:
            return  # taken over or refused: this lane's events are no longer the run's
        if part.cancelled:
            conn.closed = True
            self.closing.append(conn)
            self.wake.set()
            return
        service = self.service
        try:
            body = part.message.WhichOneof("body")
            if body == "events":
                events = part.message.events.events
                problem = run.check_batch(events, conn.received, part.message.events.ByteSize())
                if problem:
                    conn.refuse(grpc.StatusCode.INVALID_ARGUMENT, problem)
                    return
                if events:
                    await run.ingest_in_turns(events, conn, turn)
                    service.mark_stored(conn, run)
                    service.stored_some()
            elif body == "ack":
                run.acked(part.message.ack)
            elif body == "hello":
                conn.refuse(grpc.StatusCode.INVALID_ARGUMENT, "a second RunnerHello on the same lane")
                return
            if part.done:  # the runner closed this run's side: confirm what it sent, then end
                if service.unmark(conn) and await service.commit():
                    conn.send(service_pb2.HubMessage(confirmed_sequence=conn.received))
                conn.end()
        except asyncio.CancelledError:
            raise
        except Exception:  # isolation boundary: a bug here ends this lane, not the stream
            log.exception("hub: reading run %s's lane failed", run.run_id)
            conn.refuse(grpc.StatusCode.INTERNAL, f"the hub failed while storing run {run.run_id}; its log has the details")

    async def _open(self, lane: int, hello: service_pb2.RunnerHello) -> None:
        problem = hello_problem(hello)
        if problem:
            self._refuse_new(lane, grpc.StatusCode.INVALID_ARGUMENT, problem)
            return
        service = self.service
        problem = service.quotas.lane_problem(len(self.lanes))
        if problem:
            self._refuse_new(lane, grpc.StatusCode.RESOURCE_EXHAUSTED, problem)
            return
        conn = LaneConn(self, lane, hello)
        try:
            run = await service.claim(hello, conn, _LaneContext())
        except Refused as exc:
            self._refuse_new(lane, exc.code, exc.detail)
            return
        run.attach(conn, hello.goal_summary[:1000])
        conn.received = run.stored_through
        if hello.resume_after > conn.received:
            log.warning(
                "hub: run %s's runner was told events through %d were stored, this hub holds %d (a replaced database?)",
                run.run_id, hello.resume_after, conn.received,
            )  # fmt: skip
        self.lanes[lane] = (conn, run)
        service.opened(conn)
        conn.send(service_pb2.HubMessage(welcome=service_pb2.HubWelcome(stored_through=conn.received)))

    def _refuse_new(self, lane: int, code: grpc.StatusCode, detail: str) -> None:
        self.over.add(lane)
        value = code.value[0] if isinstance(code.value, tuple) else int(code.value)
        self.put(service_pb2.HubPart(lane=lane, ended=True, code=value, detail=detail))

    # -- lanes that ended ------------------------------------------------------------------
    def sweep(self) -> None:
        """Forget the lanes that ended, as Connect's handler does when its stream ends."""
        closing, self.closing = self.closing, []
        for conn in closing:
            entry = self.lanes.pop(conn.lane, None)
            self.over.add(conn.lane)
            if entry is not None:
                self._forget(conn, entry[1])

    def close_all(self) -> None:
        """The stream ended: every lane still open is disconnected."""
        self.sweep()
        for conn, run in list(self.lanes.values()):
            conn.closed = True
            self._forget(conn, run)
        self.lanes.clear()

    def _forget(self, conn: LaneConn, run: RunnerAttachment) -> None:
        self.service.left(run, conn)
