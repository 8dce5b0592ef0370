"""Which hubs make up the fleet now: this hub's row among them, its heartbeat, the others'."""

from __future__ import annotations

from goldfive.store.fleet import FleetStore, Owner

__all__ = ["Membership"]


class Membership:
    """This hub's place among the hubs of the fleet. A hub not seen for ``dead_after`` seconds
    (its heartbeat stopped, or it said it left) is taken as gone."""

    def __init__(self, tables: FleetStore, *, dead_after: float) -> None:
        self.tables = tables
        self.dead_after = dead_after
        #: hub id -> address, for the hubs seen alive at the last heartbeat (this one too).
        self.alive: dict[str, str] = {}

    async def join(self) -> None:
        await self.tables.join()

    async def leave(self) -> None:
        await self.tables.leave()

    def saw(self, hub_id: str, address: str) -> None:
        """Hub ``hub_id`` said something just now (it took a run): it is alive, at ``address``."""
        self.alive[hub_id] = address

    async def beat(self, *, owners: bool) -> dict[str, Owner] | None:
        """Say this hub is up and read which hubs are. The owner of every run read in the same
        step with ``owners``, or when a hub came or went since the last beat (its runs changed
        hands); else None."""
        alive, rows = await self.tables.heartbeat(self.dead_after, with_owners=owners)
        if rows is None and alive.keys() != self.alive.keys():
            rows = await self.tables.owners()
        self.alive = alive
        return rows

    async def tidy(self) -> None:
        """Forget routed controls and stopped hubs older than a day (the run's own history
        keeps every control and ack)."""
        await self.tables.tidy()
