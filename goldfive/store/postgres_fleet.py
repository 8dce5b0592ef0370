"""The fleet's tables in a PostgreSQL database several hubs share: the FleetStore
(goldfive.store.fleet) on PostgreSQL. goldfive.hub.fleet decides; this module is the only one
that writes their SQL:

- ``goldfive_hubs``: each hub's address and heartbeat;
- ``goldfive_run_owners``: which hub each run's runner is connected to (``hosted``: it runs in
  that hub's process);
- ``goldfive_controls``: controls one hub routes to another, and their acks.

Changes another hub must hear about are NOTIFYed in the same transaction: on
``goldfive_owners`` (owner rows) and on the receiving hub's own channel (routed controls);
PostgresStore.append NOTIFYs ``goldfive_events`` (how far a run is stored). ``listen`` turns
them back into typed values (goldfive.store.fleet's notifications).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import psycopg
from psycopg import sql

from goldfive.store.fleet import ControlAnswered, ControlRouted, Notification, Owner, OwnerChanged, Stored
from goldfive.store.postgres import EVENTS_CHANNEL, PostgresStore, redact

__all__ = ["FleetTables", "OWNERS_CHANNEL", "Owner", "hub_channel", "notification"]

log = logging.getLogger("goldfive.store")

#: Every hub LISTENs here for owner changes: "HUB<TAB>RUN<TAB>HOST<TAB>PID<TAB>ADDRESS<TAB>HOSTED".
OWNERS_CHANNEL = "goldfive_owners"
#: The runner host of an owner notification that says "no hub has it now".
RELEASED = "-"


def hub_channel(hub_id: str) -> str:
    """The channel a hub LISTENs on for controls routed to it and acks of those it routed."""
    return f"goldfive_hub_{hub_id}"


def notification(channel: str, payload: str) -> Notification:
    """The typed value of a notification on ``channel`` (EVENTS_CHANNEL, OWNERS_CHANNEL or a
    hub's own); ValueError when it is not one this module writes."""
    fields = payload.split("\t")
    if channel == EVENTS_CHANNEL:
        hub_id, run_id, seq = fields
        return Stored(hub_id, run_id, int(seq))
    if channel == OWNERS_CHANNEL:
        hub_id, run_id, host, pid, address, hosted = fields
        owner = None if host == RELEASED else Owner(hub_id, host, int(pid), hosted == "1")
        return OwnerChanged(hub_id, run_id, address, owner)
    what, row = fields
    if what == "control":
        return ControlRouted(int(row))
    if what == "ack":
        return ControlAnswered(int(row))
    raise ValueError(f"no notification {what!r}")


class FleetTables:
    """The fleet's rows, for the hub ``hub_id`` at ``address``."""

    def __init__(self, store: PostgresStore, hub_id: str, address: str) -> None:
        self.store = store
        self.hub_id = hub_id
        self.address = address

    @property
    def where(self) -> str:
        return redact(self.store.dsn)

    # -- hubs ----------------------------------------------------------------------------
    async def join(self) -> None:
        async with self.store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_hubs (hub_id, address, host, pid) VALUES (%s, %s, %s, %s)",
                (self.hub_id, self.address, socket.gethostname(), os.getpid()),
            )

    async def leave(self) -> None:
        """Say this hub is gone; its hosted runs' rows stay (another hub may continue them)."""
        async with self.store.connection(timeout=2.0) as conn:
            await conn.execute("DELETE FROM goldfive_run_owners WHERE hub_id = %s AND NOT hosted", (self.hub_id,))
            await conn.execute("DELETE FROM goldfive_hubs WHERE hub_id = %s", (self.hub_id,))

    async def heartbeat(self, dead_after: float, *, with_owners: bool) -> tuple[dict[str, str], dict[str, Owner] | None]:
        """Say this hub is up; the hubs seen within ``dead_after`` seconds (id -> address) and,
        ``with_owners``, every owner row in the same transaction (else None)."""
        async with self.store.connection() as conn:
            await conn.execute("UPDATE goldfive_hubs SET seen_at = now() WHERE hub_id = %s", (self.hub_id,))
            hubs = await (
                await conn.execute(
                    "SELECT hub_id, address FROM goldfive_hubs WHERE seen_at > now() - make_interval(secs => %s)", (dead_after,)
                )
            ).fetchall()
            owners = None
            if with_owners:
                rows = await (
                    await conn.execute("SELECT run_id, hub_id, runner_host, runner_pid, hosted FROM goldfive_run_owners")
                ).fetchall()
                owners = {str(r): Owner(str(h), str(host), int(pid), bool(hosted)) for r, h, host, pid, hosted in rows}
        return {str(h): str(a) for h, a in hubs}, owners

    async def owners(self) -> dict[str, Owner]:
        """Every owner row: which hub each run's runner is connected to."""
        async with self.store.connection() as conn:
            rows = await (await conn.execute("SELECT run_id, hub_id, runner_host, runner_pid, hosted FROM goldfive_run_owners")).fetchall()
        return {str(r): Owner(str(h), str(host), int(pid), bool(hosted)) for r, h, host, pid, hosted in rows}

    async def tidy(self) -> None:
        """Forget routed controls and stopped hubs older than a day (the run's own history
        keeps every control and ack)."""
        async with self.store.connection() as conn:
            await conn.execute("DELETE FROM goldfive_controls WHERE created_at < now() - interval '1 day'")
            await conn.execute("DELETE FROM goldfive_hubs WHERE seen_at < now() - interval '1 day'")

    # -- owners ----------------------------------------------------------------------------
    async def claim(self, run_id: str, host: str, pid: int, hosted: bool) -> None:
        """``run_id``'s runner is connected to this hub now (told to every hub)."""
        async with self.store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_run_owners (run_id, hub_id, runner_host, runner_pid, hosted) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (run_id) DO UPDATE SET hub_id = excluded.hub_id, runner_host = excluded.runner_host,"
                " runner_pid = excluded.runner_pid, hosted = excluded.hosted, since = now()",
                (run_id, self.hub_id, host[:255], pid, hosted),
            )
            await conn.execute(
                "SELECT pg_notify(%s, %s)",
                (OWNERS_CHANNEL, f"{self.hub_id}\t{run_id}\t{host[:255]}\t{pid}\t{self.address}\t{int(hosted)}"),
            )

    async def release(self, run_id: str) -> None:
        """``run_id``'s runner left this hub (unless another hub has it by now: then nothing)."""
        async with self.store.connection() as conn:
            cur = await conn.execute("DELETE FROM goldfive_run_owners WHERE run_id = %s AND hub_id = %s", (run_id, self.hub_id))
            if cur.rowcount:
                await conn.execute(
                    "SELECT pg_notify(%s, %s)", (OWNERS_CHANNEL, f"{self.hub_id}\t{run_id}\t{RELEASED}\t0\t{self.address}\t0")
                )

    async def orphans(self, gone_after: float) -> list[str]:
        """The hosted runs of hubs other than this one that are not seen for ``gone_after``
        seconds (or said they stopped)."""
        async with self.store.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT o.run_id FROM goldfive_run_owners o LEFT JOIN goldfive_hubs h ON h.hub_id = o.hub_id"
                    " WHERE o.hosted AND o.hub_id <> %s AND (h.hub_id IS NULL OR h.seen_at < now() - make_interval(secs => %s))",
                    (self.hub_id, gone_after),
                )
            ).fetchall()
        return [str(r) for (r,) in rows]

    async def take_run(self, run_id: str, gone_after: float) -> bool:
        """Take the run's lock for this hub (PostgresStore.take_lock_from_gone)."""
        return await self.store.take_lock_from_gone(run_id, self.hub_id, gone_after)

    async def drop_run(self, run_id: str) -> None:
        await self.store.drop_lock(run_id, self.hub_id)

    # -- routed controls ---------------------------------------------------------------------
    async def route(self, run_id: str, to_hub: str, control: bytes, registered: Callable[[int], None]) -> int:
        """Write a control for hub ``to_hub`` and tell it; the row's id (what its ack names).
        ``registered(row)`` is called before the commit, so its ack cannot come sooner."""
        async with self.store.connection() as conn:
            row = await (
                await conn.execute(
                    "INSERT INTO goldfive_controls (run_id, from_hub, to_hub, control) VALUES (%s, %s, %s, %s) RETURNING id",
                    (run_id, self.hub_id, to_hub, control),
                )
            ).fetchone()
            assert row is not None
            control_row = int(row[0])
            registered(control_row)
            await conn.execute("SELECT pg_notify(%s, %s)", (hub_channel(to_hub), f"control\t{control_row}"))
        return control_row

    async def routed(self, control_row: int) -> tuple[str, str, bytes] | None:
        """A control routed here: (run id, the hub that routed it, the control's bytes)."""
        async with self.store.connection() as conn:
            row = await (
                await conn.execute("SELECT run_id, from_hub, control FROM goldfive_controls WHERE id = %s", (control_row,))
            ).fetchone()
        return (str(row[0]), str(row[1]), bytes(row[2])) if row is not None else None

    async def answer(self, control_row: int, from_hub: str, ack: bytes) -> None:
        """Write the run's ack of a routed control and tell the hub that routed it."""
        async with self.store.connection() as conn:
            await conn.execute("UPDATE goldfive_controls SET ack = %s, acked_at = now() WHERE id = %s", (ack, control_row))
            await conn.execute("SELECT pg_notify(%s, %s)", (hub_channel(from_hub), f"ack\t{control_row}"))

    async def ack_of(self, control_row: int) -> bytes | None:
        async with self.store.connection() as conn:
            row = await (await conn.execute("SELECT ack FROM goldfive_controls WHERE id = %s", (control_row,))).fetchone()
        return bytes(row[0]) if row is not None and row[0] is not None else None

    # -- notifications ---------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[AsyncIterator[Notification]]:
        """A connection of its own (not the pool's: it waits for notifications as long as the
        hub runs) LISTENing on the events, owners and this hub's channels."""
        conn = await psycopg.AsyncConnection.connect(self.store.dsn, autocommit=True, connect_timeout=5)
        async with conn:
            for channel in (EVENTS_CHANNEL, OWNERS_CHANNEL, hub_channel(self.hub_id)):
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            async with contextlib.aclosing(self._notes(conn)) as notes:
                yield notes

    @staticmethod
    async def _notes(conn: psycopg.AsyncConnection[Any]) -> AsyncGenerator[Notification, None]:
        async for note in conn.notifies():
            try:
                yield notification(note.channel, note.payload)
            except ValueError:
                log.warning("hub: ignored a malformed notification on %s: %.200r", note.channel, note.payload)
