"""Which hub each run's runner is connected to, and how a run whose runner is elsewhere shows."""

from __future__ import annotations

import logging

from goldfive.hub.connected import RunnerAttachment, runner_of
from goldfive.hub.fleet.membership import Membership
from goldfive.remote.host import RunHost
from goldfive.store.fleet import FleetStore, Owner, OwnerChanged
from goldfive.store.locks import RunLocked

__all__ = ["Ownership"]

log = logging.getLogger("goldfive.hub")


class Ownership:
    """The owner of every run of the fleet (the hub its runner is connected to, this one
    included), read from the database at start and as a repair, and kept current by the other
    hubs' notifications in between. A hub that takes a run writes itself as its owner
    (``claim``); a run hosted in a hub's process also takes the run's lock, so only one hub
    ever runs it."""

    def __init__(self, tables: FleetStore, host: RunHost, membership: Membership, *, interrupt_after: float) -> None:
        self.tables = tables
        self.host = host
        self.membership = membership
        self.interrupt_after = interrupt_after
        #: run id -> the hub its runner is connected to.
        self.owners: dict[str, Owner] = {}
        #: Notifications heard: a full read of the owners begun before one is stale.
        self.changes = 0

    def of(self, run_id: str) -> Owner | None:
        return self.owners.get(run_id)

    async def claim(self, run_id: str, host: str, pid: int, *, hosted: bool = False, locked: bool = False) -> None:
        """Say in the database that ``run_id``'s runner is connected here (``hosted``: runs
        in this hub's process, or placed by a hub of the fleet, and holds the run's lock so
        only one hub ever runs it). RunLocked when another live hub holds that lock (it took
        the run over, or placed it again): the run is not this hub's, nothing is written.
        ``locked``: the caller found the lock this hub's just now (a placed run's actor), or
        took it just now (the takeover of a gone hub's run), so it is not written a second time."""
        if hosted and not locked and not await self.tables.take_run(run_id, self.interrupt_after):
            raise RunLocked(f"run {run_id}'s lock is held by another live hub of the fleet, which runs it")
        self.owners[run_id] = Owner(self.tables.hub_id, host, pid, hosted)
        await self.tables.claim(run_id, host, pid, hosted)

    async def release(self, run_id: str) -> None:
        """``run_id``'s runner left this hub (unless another hub has it by now)."""
        if (owner := self.owners.get(run_id)) is not None and owner.hub_id == self.tables.hub_id:
            del self.owners[run_id]
        try:
            await self.tables.release(run_id)
        except Exception as exc:  # the heartbeat tells the other hubs when this one is gone for good
            log.warning("hub: could not record that run %s left this hub: %s", run_id, " ".join(str(exc).split()) or type(exc).__name__)

    def heard(self, note: OwnerChanged) -> bool:
        """Another hub took a run or let it go; False for this hub's own news (known already)."""
        if note.hub_id == self.tables.hub_id:
            return False
        self.changes += 1
        if note.owner is None:
            owner = self.owners.get(note.run_id)
            if owner is not None and owner.hub_id == note.hub_id:
                del self.owners[note.run_id]
        else:
            self.owners[note.run_id] = note.owner
            self.membership.saw(note.hub_id, note.address)
        return True

    def replace(self, owners: dict[str, Owner], *, read_after: int) -> None:
        """Every owner as read from the database when ``changes`` was ``read_after``: taken
        unless a notification came meanwhile (newer than the read)."""
        if read_after == self.changes:
            self.owners = owners

    def show(self, run: RunnerAttachment) -> None:
        """Show ``run`` (not connected here) as the database says: connected to another hub
        that is alive, or disconnected (then interrupted)."""
        if run.conn is not None or run.run.state.finished:
            return
        owner = self.owners.get(run.run_id)
        alive = self.membership.alive
        if owner is not None and owner.hub_id != self.tables.hub_id and owner.hub_id in alive:
            run.elsewhere(alive[owner.hub_id], owner.host, owner.pid)
        else:
            run.released(self.interrupt_after)

    def show_all(self) -> None:
        for served in self.host.runs():
            run = runner_of(served)
            if run is not None and run.conn is None:
                self.show(run)
