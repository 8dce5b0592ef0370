"""GoldfiveApp: one app for every front-end; what it shows is the screen it is given.

The first screen is a RunScreen (``goldfive demo``, ``run``, ``attach --run-id``, ``replay``)
or the RunsScreen (``demo --runs``, ``attach ADDR``), which pushes a RunScreen for the run
opened. The app keeps what is the same everywhere: the styles, the theme a person picked,
the palette's system commands, the line filter that keeps a run's text from reaching the
terminal as escapes, and q, which asks the first screen what quitting would end.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Union

from textual.app import App, SystemCommand
from textual.filter import LineFilter
from textual.screen import Screen

from .prefs import load_prefs, save_pref
from .safe_output import safe_line_filters

if TYPE_CHECKING:
    from .run.screen import RunScreen
    from .screens.runs import RunsScreen

    #: The first screen; each knows what quitting would end (``confirm_quit``).
    Home = Union[RunScreen, RunsScreen]

__all__ = ["GoldfiveApp"]


class GoldfiveApp(App[str | None]):
    """Returns DETACH when the person chose to keep a local run going without the TUI."""

    TITLE = "goldfive"
    CSS_PATH = ["styles/app.tcss", "styles/runs.tcss"]
    #: "-short" on every screen below 24 rows: dialogs drop their padding (styles/app.tcss).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]

    #: Set once any GoldfiveApp of this process mounted: a ``goldfive web`` tab whose command
    #: failed before that shows the error instead (tui/start_failed.py).
    mounted_once: ClassVar[bool] = False

    def __init__(self, home: Home, *, cursor_blink: bool = True) -> None:
        super().__init__()
        self.home = home
        #: False for snapshots: a blinking cursor would make screenshots racy.
        self.cursor_blink = cursor_blink
        self._theme_ready = False  # the saved theme is applied before changes are saved

    def get_default_screen(self) -> Screen:
        return self.home

    def on_mount(self) -> None:
        GoldfiveApp.mounted_once = True
        theme = load_prefs().get("theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme  # the one the person picked last time (ctrl+p → theme)
        self._theme_ready = True

    def watch_theme(self, theme: str) -> None:
        if getattr(self, "_theme_ready", False):
            save_pref("theme", theme)

    def get_line_filters(self) -> Sequence[LineFilter]:
        return safe_line_filters(super().get_line_filters())  # a run's text holds no escapes on screen

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # The palette's Quit is the q key's (which asks first while a run is live), not a second one.
        return (c for c in super().get_system_commands(screen) if c.title != "Quit")

    async def action_quit(self) -> None:
        """q (on every screen) and ctrl+q: the first screen decides."""
        await self.home.confirm_quit()

    def action_help_quit(self) -> None:
        """ctrl+c (when no text field takes it as copy) does what q does, as in lazygit and k9s:
        quit, asking first while a run of this process is live; again in that dialog: stay in it."""
        from .screens.dialogs import QuitScreen

        if isinstance(self.screen, QuitScreen):
            return
        self.call_next(self.action_quit)
