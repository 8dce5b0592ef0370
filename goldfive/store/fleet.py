"""FleetStore: what the hubs of one fleet share in their database, as one protocol.

Several hubs on one database (goldfive.hub.fleet) each keep a few rows there besides the
runs' events (which they read and write through the EventLog, goldfive.store.log):

- **membership**: each hub's address and heartbeat (``join``, ``heartbeat``, ``leave``,
  ``tidy``);
- **ownership**: which hub each run's runner is connected to (``claim``, ``release``,
  ``owners``), and which hub holds the lock of a run hosted in a hub's own process
  (``take_run``, ``drop_run``, ``orphans``);
- **routed controls**: a control one hub sends to the hub that has the run, and its ack
  (``route``, ``routed``, ``answer``, ``ack_of``);
- **notifications**: what another hub must hear at once (``listen``): a run stored further, an
  owner changed, a control routed here, an ack of one routed from here. Each is a typed value;
  the wire format is the store's business.

``goldfive.store.postgres_fleet.FleetTables`` implements it on PostgreSQL (rows plus
LISTEN/NOTIFY); the hub's fleet code calls only these methods, never SQL or a connection pool.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks.sqlite import RunInfo

__all__ = ["ControlAnswered", "ControlRouted", "FleetEvents", "FleetStore", "Notification", "Owner", "OwnerChanged", "Stored"]


@dataclass(frozen=True)
class Owner:
    """The hub a run's runner is connected to, and where that runner is."""

    hub_id: str
    host: str
    pid: int
    #: Hosted in that hub's process (not a runner of its own that reconnects by itself).
    hosted: bool = False


@dataclass(frozen=True)
class Stored:
    """Hub ``hub_id`` stored run ``run_id`` through ``sequence``."""

    hub_id: str
    run_id: str
    sequence: int


@dataclass(frozen=True)
class OwnerChanged:
    """Hub ``hub_id`` (at ``address``) took run ``run_id`` (``owner``), or let it go (``owner``
    None: no hub has it now, unless another took it meanwhile)."""

    hub_id: str
    run_id: str
    address: str
    owner: Owner | None


@dataclass(frozen=True)
class ControlRouted:
    """Another hub routed a control here: its row (``FleetStore.routed``)."""

    row: int


@dataclass(frozen=True)
class ControlAnswered:
    """The ack of a control this hub routed is written: its row (``FleetStore.ack_of``)."""

    row: int


Notification = Stored | OwnerChanged | ControlRouted | ControlAnswered


class FleetEvents(Protocol):
    """What the fleet reads of the runs' events: the EventLog's ``events`` and ``runs``, its
    ``events`` an async generator (closed when a reader stops early, as a takeover does)."""

    def events(self, run_id: str, after: int = -1) -> AsyncGenerator[Event, None]: ...

    async def runs(self) -> list[RunInfo]: ...


class FleetStore(Protocol):
    """One hub's view of the fleet's shared rows (this hub is ``hub_id``, at ``address``)."""

    hub_id: str
    #: This hub's address as the other hubs reach it (set once the server is bound).
    address: str

    @property
    def where(self) -> str:
        """The database, for messages (no password)."""
        ...

    # -- membership ----------------------------------------------------------------------
    async def join(self) -> None: ...

    async def leave(self) -> None:
        """Say this hub is gone; its hosted runs' rows stay (another hub may continue them)."""
        ...

    async def heartbeat(self, dead_after: float, *, with_owners: bool) -> tuple[dict[str, str], dict[str, Owner] | None]:
        """Say this hub is up; the hubs seen within ``dead_after`` seconds (id -> address) and,
        ``with_owners``, every run's owner read in the same transaction (else None)."""
        ...

    async def tidy(self) -> None:
        """Forget routed controls and stopped hubs older than a day."""
        ...

    # -- ownership -----------------------------------------------------------------------
    async def owners(self) -> dict[str, Owner]: ...

    async def claim(self, run_id: str, host: str, pid: int, hosted: bool) -> None:
        """``run_id``'s runner is connected to this hub now (every hub is told)."""
        ...

    async def release(self, run_id: str) -> None:
        """``run_id``'s runner left this hub (nothing if another hub has it by now)."""
        ...

    async def orphans(self, gone_after: float) -> list[str]:
        """The hosted runs of other hubs not seen for ``gone_after`` seconds (or stopped)."""
        ...

    async def take_run(self, run_id: str, gone_after: float) -> bool:
        """Take the run's lock for this hub: free, this hub's already, or held by a hub not
        seen for ``gone_after`` seconds. True when it is this hub's now."""
        ...

    async def drop_run(self, run_id: str) -> None:
        """Give up this hub's lock of the run."""
        ...

    # -- routed controls -----------------------------------------------------------------
    async def route(self, run_id: str, to_hub: str, control: bytes, registered: Callable[[int], None]) -> int:
        """Write a control for hub ``to_hub`` and tell it; the row's id. ``registered(row)`` is
        called before the other hub can see it, so its ack cannot come sooner."""
        ...

    async def routed(self, row: int) -> tuple[str, str, bytes] | None:
        """A control routed here: (run id, the hub that routed it, the control's bytes)."""
        ...

    async def answer(self, row: int, from_hub: str, ack: bytes) -> None:
        """Write the ack of a routed control and tell the hub that routed it."""
        ...

    async def ack_of(self, row: int) -> bytes | None: ...

    # -- notifications -------------------------------------------------------------------
    def listen(self) -> AbstractAsyncContextManager[AsyncIterator[Notification]]:
        """A connection listening for this hub's notifications (entered once it listens: none
        sent after that is missed); raises when the database cannot be reached, and its
        iterator raises when the connection is lost. Malformed notifications are logged and
        skipped."""
        ...
