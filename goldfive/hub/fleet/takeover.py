"""Taking over the runs a gone hub hosted: continued here, or placed on the cluster again.

A run started by a hub (``ctl start``, ``serve TARGET``) runs in that hub's process and holds
the run's lock. When that hub is not seen for ``interrupt_after`` seconds (or said it
stopped), one hub of the fleet takes the lock and continues the run from the launch the
starting hub recorded in the shared registry (never from what the run's events say).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from goldfive.hub.connected import RunnerAttachment, runner_of
from goldfive.hub.fleet.following import Following
from goldfive.hub.fleet.ownership import Ownership
from goldfive.remote.host import HostedRun, RunFactory, RunHost
from goldfive.store.fleet import FleetEvents, FleetStore
from goldfive.store.postgres_registry import PostgresRegistry
from goldfive.store.recorder import HubRecorder
from goldfive.store.registry import PLACED_LOCK_HOLDER, LaunchSpec
from goldfive.errors import one_line

if TYPE_CHECKING:
    from goldfive.remote.service import Placer

__all__ = ["Takeover"]

log = logging.getLogger("goldfive.hub")


class Takeover:
    """Looks for runs a gone hub hosted (``soon``: at start, when the hubs change, every few
    heartbeats) and continues each under its lock, so exactly one hub continues it. With
    neither ``resume_with`` nor ``placer`` they stay INTERRUPTED."""

    def __init__(
        self,
        tables: FleetStore,
        log_: FleetEvents,
        host: RunHost,
        registry: PostgresRegistry,
        recorder: HubRecorder,
        following: Following,
        ownership: Ownership,
        *,
        interrupt_after: float,
        resume_with: Callable[[LaunchSpec], RunFactory | None] | None,
        placer: Placer | None,
    ) -> None:
        self.tables = tables
        self.log = log_
        self.host = host
        self.registry = registry
        self.recorder = recorder
        self.following = following
        self.ownership = ownership
        self.interrupt_after = interrupt_after
        self.resume_with = resume_with
        self.placer = placer
        self._task: asyncio.Task[None] | None = None
        self._refused: set[str] = set()  # runs that cannot go on here: not tried again
        self.stopped = False

    def soon(self) -> None:
        if (self.resume_with is None and self.placer is None) or self.stopped or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.get_running_loop().create_task(self._take_orphans(), name="fleet-adopt")

    async def stop(self) -> None:
        self.stopped = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _take_orphans(self) -> None:
        try:
            for run_id in await self.tables.orphans(self.interrupt_after):
                run = runner_of(self.host.get(run_id))
                if run_id in self._refused or run is None or run.conn is not None or run.run.state.finished:
                    continue
                # The one write of the run's lock for the takeover: taken through the registry,
                # which then knows it holds it, so neither the claim below nor the placed run's
                # new actor connecting writes it again (they check it).
                if await self.registry.hold_runs([run_id], PLACED_LOCK_HOLDER):
                    continue  # another hub took it first
                try:
                    await self._continue_here(run)
                except Exception as exc:  # isolation boundary: one run that cannot go on must not stop the others
                    self._refused.add(run_id)
                    await self.registry.let_go([run_id], PLACED_LOCK_HOLDER)
                    log.warning("hub: run %s (its hub is gone) stays interrupted: %s", run_id, one_line(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("hub: looking for runs a gone hub hosted failed: %s", one_line(exc))

    async def _continue_here(self, old: RunnerAttachment) -> None:
        async with self.following.lock(old.run_id):
            reg = await self.registry.get(old.run_id)
            if reg is None or not reg.started_by_hub or reg.launch is None:
                raise ValueError("no hub of this fleet started it (ctl start or serve TARGET): nothing here can build it again")
            launch = reg.launch  # what the starting hub recorded, never what the run's events say
            history = [ev async for ev in self.log.events(old.run_id)]
            if self.placer is not None:  # on the cluster, as the gone hub had it
                from goldfive.placement.pending import PlacedRun

                placed = PlacedRun(old.run_id, self.recorder, goal_summary=old.run.state.goal_summary)
                for ev in history:
                    placed.load(ev)
                self.following.adopt(placed)
                await self.placer.place_again(placed, launch)  # serves it (host.adopt) and starts its actor
                # The run is this hub's now, before its new actor connects (which takes seconds):
                # left owned by the gone hub, the next sweep found it an orphan again, its actor
                # not yet connected, and placed it a second time (the run then resumed twice).
                await self.ownership.claim(old.run_id, socket.gethostname(), os.getpid(), hosted=True, locked=True)
                where = "is placed on the cluster again"
            else:
                assert self.resume_with is not None
                factory = self.resume_with(launch)
                if factory is None:
                    raise ValueError("this hub cannot build it again")
                run = HostedRun(old.run_id)
                run.start(factory, None, ":memory:", recorder=self.recorder, history=history)
                self.host.adopt(run)
                await self.ownership.claim(run.run_id, socket.gethostname(), os.getpid(), hosted=True, locked=True)
                where = "goes on here"
            if old.run.memory is not None:
                await old.run.memory.close()  # its watchers' streams end here; they find the run going on
        log.warning("hub: run %s, started by a hub that is gone, %s", old.run_id, where)
