"""Controls between hubs: a control for a run whose runner is connected to another hub goes
there through the database, and its ack comes back the same way.

A control is a row in ``goldfive_controls`` plus a notification to the owning hub; that hub
sends it down the runner's stream, writes the run's ack into the row and notifies the asking
hub. A row and not only a notification: a control (a steer note) can be longer than NOTIFY's
8,000-byte payload, and the row is a record of who routed what, answered or not. A
notification and not polling: a routed control costs four round trips to the database, not a
poll interval.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from goldfive import conv
from goldfive.control import AckResult, ControlAck, ControlMessage
from goldfive.hub.connected import runner_of
from goldfive.hub.fleet.membership import Membership
from goldfive.hub.fleet.ownership import Ownership
from goldfive.pb.goldfive.v1 import control_pb2
from goldfive.remote.host import RUN_NOT_ACTIVE, RunHost
from goldfive.store.fleet import FleetStore
from goldfive.errors import one_line

__all__ = ["Routing"]

log = logging.getLogger("goldfive.hub")


class Routing:
    """This hub's controls for runs owned elsewhere (``route``), and the controls other hubs
    route here (``routed_here``): each handled in a task of its own, so one slow run does
    not hold up the notifications of the others."""

    def __init__(
        self, tables: FleetStore, host: RunHost, ownership: Ownership, membership: Membership, *, control_timeout: float
    ) -> None:
        self.tables = tables
        self.host = host
        self.ownership = ownership
        self.membership = membership
        self.control_timeout = control_timeout
        #: control row -> who waits for its ack here.
        self._acks: dict[int, asyncio.Future[ControlAck]] = {}
        self._handlers: set[asyncio.Task[None]] = set()

    async def route(self, run_id: str, msg: ControlMessage, timeout: float) -> ControlAck:
        """Send ``msg`` to the hub ``run_id``'s runner is connected to; its ack, or
        TimeoutError after ``timeout`` s (the control may still reach the run)."""
        owner = self.ownership.of(run_id)
        if owner is None or owner.hub_id not in self.membership.alive:
            why = "its runner is not connected to any hub" if owner is None else f"its hub {owner.hub_id} stopped answering"
            return ControlAck(msg.id, AckResult.FAILURE, f"{RUN_NOT_ACTIVE} now: {why}; not delivered")
        if not msg.issued_at_ms:
            msg.issued_at_ms = int(time.time() * 1000)
        payload = conv.to_pb_control_event(msg).SerializeToString()
        fut: asyncio.Future[ControlAck] = asyncio.get_running_loop().create_future()
        control_row = await self.tables.route(run_id, owner.hub_id, payload, lambda row: self._acks.__setitem__(row, fut))
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._acks.pop(control_row, None)

    def routed_here(self, row: int) -> None:
        """Another hub routed the control in ``row`` here: deliver it, answer with its ack."""
        self._spawn(self._deliver, row)

    def answered(self, row: int) -> None:
        """The ack of a control this hub routed (``row``) is written: hand it to its caller."""
        self._spawn(self._acked, row)

    def recheck(self) -> None:
        """Notifications were missed (the database was lost): read every awaited ack again."""
        for row in list(self._acks):
            self.answered(row)

    async def stop(self) -> None:
        for task in self._handlers:
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _deliver(self, control_row: int) -> None:
        routed = await self.tables.routed(control_row)
        if routed is None:
            return
        run_id, from_hub, payload = routed
        pb = control_pb2.ControlEvent()
        pb.ParseFromString(payload)
        run = self.host.get(run_id)
        try:
            msg = conv.from_pb_control_event(pb)
        except Exception as exc:
            ack = ControlAck(pb.id, AckResult.FAILURE, f"malformed control: {one_line(exc)}")
        else:
            attached = runner_of(run)
            if attached is not None:
                ack = await attached.control_here(msg, self.control_timeout)
            elif run is not None and run.live:
                ack = await run.control(msg, self.control_timeout)
            else:
                ack = ControlAck(msg.id, AckResult.FAILURE, f"{RUN_NOT_ACTIVE} on hub {self.tables.address}")
        await self.tables.answer(control_row, from_hub, conv.to_pb_control_ack(ack).SerializeToString())

    async def _acked(self, control_row: int) -> None:
        fut = self._acks.get(control_row)
        if fut is None or fut.done():
            return
        answer = await self.tables.ack_of(control_row)
        if answer is None:
            return
        pb = control_pb2.ControlAck()
        pb.ParseFromString(answer)
        if not fut.done():
            fut.set_result(conv.from_pb_control_ack(pb))

    def _spawn(self, work: Callable[[int], Awaitable[None]], row: int) -> None:
        task = asyncio.get_running_loop().create_task(self._guarded(work, row))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _guarded(self, work: Callable[[int], Awaitable[None]], row: int) -> None:
        try:
            await work(row)
        except asyncio.CancelledError:
            raise
        except Exception:  # isolation boundary: one routed control must not stop the others
            log.exception("hub: handling routed control %d failed", row)
