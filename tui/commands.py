"""The command palette provider: the same actions as the keys, from the same table."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from .app import GoldfiveApp


class GoldfiveCommands(Provider):
    def _commands(self) -> list[tuple[str, str, str]]:
        app = cast("GoldfiveApp", self.app)
        # Only what the key would do now: Pause or Resume, not both.
        return [(b.description, b.tooltip, b.action) for b in app.action_bindings() if app.check_action(b.action, ()) is not False]

    async def discover(self) -> Hits:
        for name, help_text, action in self._commands():
            yield DiscoveryHit(name, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, action in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self.app.run_action, action), help=help_text)
