"""What newly needs a person, poll after poll: the runs screen's notices.

Each poll's Snapshot is compared with the last one's (``diff_notices``): the first poll only
learns what waits already. A new notice goes to ``--notify-cmd``'s command and, through the
terminal, to the desktop (OSC 9 and OSC 777; a terminal ignores the one it does not know); the
runs screen decides about its toast and the bell.
"""

from __future__ import annotations

from textual.app import App

from goldfive.notify import Notice, NotifyCommand, diff_notices, notice_key, osc9, osc777

from .model import Snapshot

__all__ = ["Announcer"]


class Announcer:
    def __init__(self, command: NotifyCommand | None = None, *, osc: bool = True) -> None:
        self.command = command
        self.osc = osc
        #: Every notice raised, in order (what the bell, the toasts and the hook were told).
        self.notices: list[Notice] = []
        self._keys: set[tuple[str, str, str]] | None = None

    def news(self, snap: Snapshot, app: App[object]) -> list[Notice]:
        """The notices new in ``snap``, each already told to the command and the terminal."""
        current = snap.notices()
        new = diff_notices(self._keys, current)
        self._keys = {notice_key(n) for n in current}
        for notice in new:
            self.notices.append(notice)
            if self.command is not None:
                self.command.send(notice)
            if self.osc and not app.is_headless and app._driver is not None:
                app._driver.write(osc9(notice) + osc777(notice))
        return new

    async def close(self) -> None:
        if self.command is not None:
            await self.command.aclose()
