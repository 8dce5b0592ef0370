"""Fleet: this hub's part in a fleet of hubs on one database, made of its jobs.

``Fleet`` builds the jobs (goldfive.hub.fleet's modules), starts their loops and answers
HubService and ``serve``: ``adopt``, ``catch_up``, ``claim``, ``release``, ``route``, the
recorder and registry every run of this hub uses, and ``health``. Its loops: the heartbeat
(membership, a repair read of the owners every 30 beats, a takeover sweep every 5, tidying
once in 600), the listener (notifications, handed to the job they concern) and following.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from goldfive.control import ControlAck, ControlMessage
from goldfive.hub.connected import RunnerAttachment, runner_of
from goldfive.hub.fleet.following import Following
from goldfive.hub.fleet.listener import Listener
from goldfive.hub.fleet.membership import Membership
from goldfive.hub.fleet.ownership import Ownership
from goldfive.hub.fleet.recorder import FleetRecorder
from goldfive.hub.fleet.routing import Routing
from goldfive.hub.fleet.takeover import Takeover
from goldfive.remote.host import RunFactory, RunHost
from goldfive.store.fleet import ControlAnswered, ControlRouted, Notification, OwnerChanged, Stored
from goldfive.store.postgres import PostgresStore
from goldfive.store.postgres_fleet import FleetTables
from goldfive.store.postgres_registry import PostgresRegistry
from goldfive.store.registry import LaunchSpec
from goldfive.errors import one_line

if TYPE_CHECKING:
    from goldfive.hub.service import FleetPart
    from goldfive.remote.service import Placer

__all__ = ["Fleet"]

log = logging.getLogger("goldfive.hub")


class Fleet:
    """This hub's part in the fleet on ``store``. ``await start()`` once the gRPC server is
    up (``address`` set to the bound one), ``await stop()`` when it stops."""

    def __init__(
        self,
        store: PostgresStore,
        host: RunHost,
        *,
        address: str,
        interrupt_after: float,
        heartbeat: float = 1.0,
        dead_after: float = 5.0,
        control_timeout: float = 30.0,
        resume_with: Callable[[LaunchSpec], RunFactory | None] | None = None,
        placer: Placer | None = None,
    ) -> None:
        self.store = store
        self.host = host
        self.address = address
        self.heartbeat = heartbeat
        self.hub_id = uuid.uuid4().hex[:16]
        #: The fleet's rows (hubs, owners, routed controls, notifications): all its SQL.
        self.tables = FleetTables(store, self.hub_id, address)
        self.recorder = FleetRecorder(store, self.hub_id)
        #: Every hub's records of the fleet's runs, in the shared database.
        self.registry = PostgresRegistry(store, hub_id=self.hub_id, gone_after=interrupt_after)
        self.membership = Membership(self.tables, dead_after=dead_after)
        self.ownership = Ownership(self.tables, host, self.membership, interrupt_after=interrupt_after)
        self.routing = Routing(self.tables, host, self.ownership, self.membership, control_timeout=control_timeout)
        self.following = Following(store, host, self.recorder, self.ownership, forward=self.routing.route, hub_id=self.hub_id)
        #: Builds a run a hub hosted again from the launch that hub recorded in the shared
        #: registry (goldfive.remote.launch.resume_with); with it, or ``placer`` (serve --ray:
        #: placed on the cluster again), the hosted runs of a hub gone for ``interrupt_after``
        #: seconds go on here. Neither: they stay INTERRUPTED.
        self.takeover = Takeover(
            self.tables, store, host, self.registry, self.recorder, self.following, self.ownership,
            interrupt_after=interrupt_after, resume_with=resume_with, placer=placer,
        )  # fmt: skip
        self.listener = Listener(self.tables, self._heard, self._back)
        self._tasks: list[asyncio.Task[None]] = []
        self.stopped = False

    # -- health --------------------------------------------------------------------------
    @property
    def health(self) -> str:
        """What a person should know about this hub's storage ("" when nothing): degraded,
        and events refused as conflicting with stored ones."""
        parts = [self.degraded]
        if self.store.conflicts:
            parts.append(
                f"{self.store.conflicts} event(s) refused: a different event was already stored at the same run and "
                f"sequence (last: {self.store.last_conflict}); see the hub's log"
            )
        return "; ".join(p for p in parts if p)

    @property
    def degraded(self) -> str:
        """Why this hub cannot use its database now, or ""."""
        if self.recorder.write_error:
            held = self.recorder.unwritten
            return f"database unreachable: {held} event(s) held in memory until it is back ({self.recorder.write_error})"
        if self.listener.error:
            return f"database unreachable: other hubs' runs are not followed ({self.listener.error})"
        return ""

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        self.tables.address = self.address  # the bound one, known now
        await self.membership.join()
        await self._refresh()
        await self.following.load_all()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self.listener.run(), name="fleet-listen"),
            loop.create_task(self._beat(), name="fleet-heartbeat"),
            loop.create_task(self.following.loop(), name="fleet-follow"),
        ]
        for _ in range(200):  # listening before serving: no announcement is missed
            if self.listener.listening or self.listener.error:
                break
            await asyncio.sleep(0.01)
        self.takeover.soon()  # runs a hub hosted before it stopped (this one's previous life, say)

    async def stop(self) -> None:
        self.stopped = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, self.routing.stop(), self.takeover.stop(), return_exceptions=True)
        await self.registry.aclose()  # the routed controls still waiting are written
        await self.recorder.shutdown()
        with contextlib.suppress(Exception):  # leaving is a courtesy: the heartbeat says it anyway
            await self.membership.leave()

    # -- what HubService and serve ask of the fleet ---------------------------------------
    def adopt(self, run: RunnerAttachment) -> None:
        """``run`` is served from the fleet (controls routed, history from the database)."""
        self.following.adopt(run)

    async def catch_up(self, run: RunnerAttachment) -> None:
        await self.following.catch_up(run)

    async def claim(self, run_id: str, host: str, pid: int, *, hosted: bool = False, locked: bool = False) -> None:
        await self.ownership.claim(run_id, host, pid, hosted=hosted, locked=locked)

    async def release(self, run_id: str) -> None:
        await self.ownership.release(run_id)

    async def route(self, run_id: str, msg: ControlMessage, timeout: float) -> ControlAck:
        return await self.routing.route(run_id, msg, timeout)

    # -- the loops -------------------------------------------------------------------------
    def _heard(self, note: Notification) -> None:
        if isinstance(note, Stored):
            self.following.stored(note)
        elif isinstance(note, OwnerChanged):
            if not self.ownership.heard(note):
                return
            served = self.host.get(note.run_id)
            run = runner_of(served)
            if run is not None:
                self.ownership.show(run)
            elif served is None:
                self.following.want(note.run_id)
        elif isinstance(note, ControlRouted):
            self.routing.routed_here(note.row)
        elif isinstance(note, ControlAnswered):
            self.routing.answered(note.row)

    async def _back(self) -> None:
        """The database is back after notifications were missed: read again what it holds."""
        await self._refresh()
        await self.following.load_all()
        self.routing.recheck()

    async def _refresh(self, *, owners: bool = True) -> None:
        """Heartbeat: say this hub is up and read which hubs are; with ``owners`` (at start,
        when a hub came or went, and every 30 s as a repair) also which hub has each run.
        Between those, owner changes come as notifications."""
        changes = self.ownership.changes
        rows = await self.membership.beat(owners=owners)
        if rows is None:
            return
        self.ownership.replace(rows, read_after=changes)
        self.ownership.show_all()
        self.takeover.soon()

    async def _beat(self) -> None:
        beats = 0
        while True:
            await asyncio.sleep(self.heartbeat)
            beats += 1
            try:
                await self._refresh(owners=beats % 30 == 0)
                if beats % 5 == 0:
                    self.takeover.soon()
                if beats % 600 == 1:
                    await self.membership.tidy()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("hub heartbeat failed: %s", one_line(exc))


if TYPE_CHECKING:

    def _what_hubservice_asks(fleet: Fleet) -> FleetPart:
        return fleet  # mypy checks that a Fleet is the FleetPart HubService takes
