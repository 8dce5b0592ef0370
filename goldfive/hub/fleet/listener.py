"""This hub's ear on the database: the notifications of the other hubs, heard as they come."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from goldfive.store.fleet import FleetStore, Notification
from goldfive.errors import one_line

__all__ = ["Listener"]

log = logging.getLogger("goldfive.hub")


class Listener:
    """Listens (``run``, a task as long as the hub runs) and hands each notification to
    ``heard``. A lost database is retried with a growing delay (at most 5 s) and said
    (``error``); once back, ``back`` reads again what the notifications missed meanwhile."""

    def __init__(self, tables: FleetStore, heard: Callable[[Notification], None], back: Callable[[], Awaitable[None]]) -> None:
        self.tables = tables
        self.heard = heard
        self.back = back
        #: Listening now: no notification sent from here on is missed.
        self.listening = False
        #: Why the database cannot be listened to now, or "".
        self.error = ""

    async def run(self) -> None:
        delay = 0.2
        while True:
            listened = False
            try:
                async with self.tables.listen() as notes:
                    listened = True
                    missed = bool(self.error)
                    self.listening, self.error, delay = True, "", 0.2
                    if missed:  # announcements were missed: read again what the database holds
                        log.warning("hub: the database is reachable again; catching up with the other hubs")
                        await self.back()
                    async for note in notes:
                        self.heard(note)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._lost(exc)
                await asyncio.sleep(delay)
                if not listened:
                    delay = min(delay * 2, 5.0)

    def _lost(self, exc: BaseException) -> None:
        if not self.error:
            log.warning("hub: lost the database at %s: %s; serving live runs from memory", self.tables.where, one_line(exc))
        self.listening = False
        self.error = one_line(exc)[:300]
