"""Following the other hubs' runs: every run in the database is served here too.

The events of a run whose runner is connected to another hub come through the database: that
hub's writes announce how far each run is stored, and this hub reads what it has not folded
yet. A run new to this hub is loaded (its history stays in the database, read from there when
a watcher asks: ``ServedRun.archive``); a run already served is followed event by event.
"""

from __future__ import annotations

import asyncio
import contextlib

from goldfive.hub.connected import Forward, RunnerAttachment, runner_of
from goldfive.hub.fleet.ownership import Ownership
from goldfive.remote.host import RunHost
from goldfive.store.fleet import FleetEvents, Stored
from goldfive.store.recorder import HubRecorder

__all__ = ["Following", "Unreachable"]


class Unreachable(Exception):
    """The database could not be read; what was wanted is kept for the next try."""


class Following:
    """The runs this hub serves from the database: ``want`` says how far a run is stored, a
    loop reads what is wanted (one run at a time under its lock, the lock ``catch_up`` and a
    takeover hold too)."""

    def __init__(self, log: FleetEvents, host: RunHost, recorder: HubRecorder, ownership: Ownership, *, forward: Forward, hub_id: str) -> None:
        self.log = log
        self.host = host
        self.recorder = recorder
        self.ownership = ownership
        self.forward = forward
        self.hub_id = hub_id
        self._want: dict[str, int] = {}  # run -> the sequence another hub said it stored
        self._wake = asyncio.Event()
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, run_id: str) -> asyncio.Lock:
        """Held while a run's stored events are folded here or the run changes hands."""
        lock = self._locks.get(run_id)
        if lock is None:
            lock = self._locks[run_id] = asyncio.Lock()
        return lock

    def adopt(self, run: RunnerAttachment) -> None:
        """``run`` is served from the fleet: its controls go to the hub that has its runner,
        its history is read from the database."""
        run.forward = self.forward
        run.run.archive = self.log

    async def catch_up(self, run: RunnerAttachment) -> None:
        """Fold what the database holds of ``run`` beyond what this hub has (a runner that
        was on another hub is connecting here: its welcome must say all that is stored)."""
        async with self.lock(run.run_id):
            async with contextlib.aclosing(self.log.events(run.run_id, run.stored_through)) as stored:
                async for ev in stored:
                    await run.follow(ev)

    def stored(self, note: Stored) -> None:
        """Another hub stored a run through a sequence."""
        if note.hub_id == self.hub_id:
            return
        self._want[note.run_id] = max(self._want.get(note.run_id, -1), note.sequence)
        self._wake.set()

    def want(self, run_id: str) -> None:
        """Serve ``run_id`` (new to this hub) from what the database holds."""
        self._want.setdefault(run_id, -1)
        self._wake.set()

    async def load_all(self) -> None:
        """Serve every run the database holds (at start, and after the database was lost)."""
        for info in await self.log.runs():
            self._want[info.run_id] = max(self._want.get(info.run_id, -1), info.last_sequence)
        self._wake.set()
        await self._drain()

    async def loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._drain()
            except Unreachable:
                await asyncio.sleep(1.0)
                self._wake.set()

    async def _drain(self) -> None:
        while self._want:
            want, self._want = self._want, {}
            for run_id, through in want.items():
                try:
                    await self._follow(run_id, through)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the database went away: try again when it is back
                    self._want[run_id] = max(self._want.get(run_id, -1), through)
                    raise Unreachable(" ".join(str(exc).split()) or type(exc).__name__) from exc

    async def _follow(self, run_id: str, through: int) -> None:
        async with self.lock(run_id):
            served = self.host.get(run_id)
            fresh = served is None
            if served is None:
                run = RunnerAttachment.new(run_id, self.recorder, followed=True)
                self.adopt(run)
            else:
                attached = runner_of(served)
                if attached is None or attached.conn is not None:
                    return  # hosted here, or its runner is on this hub: its events come from it
                run = attached
            if run.stored_through >= through:
                return
            async with contextlib.aclosing(self.log.events(run_id, run.stored_through)) as stored:
                async for ev in stored:
                    if fresh:
                        run.load(ev)  # its history stays in the database
                    else:
                        await run.follow(ev)
            if fresh:
                if run.run.state.finished and run.run.memory is not None:
                    await run.run.memory.close()
                self.ownership.show(run)
                self.host.adopt(run.run)
