"""The command palette provider: the same actions as the keys, from the same table.

A screen lists it in its ``COMMANDS`` and offers its keys through ``offered_bindings``; the
palette then shows only what the key would do now (Pause or Resume, not both; no control on
an ended run), each run on that screen.
"""

from __future__ import annotations

from functools import partial
from typing import Protocol, cast

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider


class OffersKeys(Protocol):
    def offered_bindings(self) -> list[Binding]: ...

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None: ...


class KeyCommands(Provider):
    def _commands(self) -> list[tuple[str, str, str]]:
        screen = cast(OffersKeys, self.screen)
        offered = screen.offered_bindings()
        return [(b.description, b.tooltip, b.action) for b in offered if screen.check_action(b.action.split("(")[0], ()) is not False]

    async def discover(self) -> Hits:
        for name, help_text, action in self._commands():
            yield DiscoveryHit(name, partial(self.app.run_action, action, self.screen), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, action in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self.app.run_action, action, self.screen), help=help_text)
