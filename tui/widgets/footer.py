"""The footer every goldfive screen shows: Textual's, fitted to narrow terminals.

Below ``NARROW`` columns the long descriptions get their short forms and the palette's key
(``ctrl+p``, still bound, listed in help) leaves, so that ``? Help`` and ``q Quit`` stay on
screen at 60 columns. Below ``PHONE`` columns (web mode on a phone) the keys go in rows of
``PHONE_COLUMNS`` (the run screen's ``-narrow`` style makes the footer a grid two rows tall),
so every key stays on screen to be tapped.

It draws its keys from the first paint even when the app does not have focus: in a browser
(``goldfive web``) Textual's web driver starts the app blurred until the page is tapped, and
Textual's own footer drew nothing until then.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["NARROW", "PHONE", "PHONE_COLUMNS", "SHORT", "FitFooter"]

NARROW = 80
PHONE = 60
PHONE_COLUMNS = 4
#: A description's short form on a narrow screen.
SHORT = {"Pause/Resume": "Pause", "Next needing you": "Next", "Ack failure": "Ack", "Edit+approve": "Edit"}


class FitFooter(Footer):
    def __init__(self, *, compact: bool = True) -> None:
        super().__init__(compact=compact)
        self._fit: int | None = None

    def _width_fit(self) -> int:
        """0 wide, 1 narrow (short descriptions), 2 a phone (and rows of keys)."""
        width = self.app.size.width
        return 2 if width < PHONE else 1 if width < NARROW else 0

    def compose(self) -> ComposeResult:
        fit = self._fit = self._width_fit()
        narrow = fit > 0
        for item in super().compose():
            if narrow and isinstance(item, FooterKey):
                if item.has_class("-command-palette"):
                    continue
                item.description = SHORT.get(item.description, item.description)
            yield item
        if fit == 2:  # Footer's compose sets one column per key
            self.styles.grid_size_columns = PHONE_COLUMNS

    def bindings_changed(self, screen: Screen) -> None:
        # Textual's footer recomposes only while the app has focus (so that a blur does not
        # empty it); the first time, it must draw its keys whatever the focus.
        first = not self._bindings_ready
        super().bindings_changed(screen)
        if first and not screen.app.app_focus and self.is_attached and screen is self.screen:
            self.call_after_refresh(self.recompose)

    def on_resize(self, event: Resize) -> None:
        if self._fit is not None and self._fit != self._width_fit():
            self.call_after_refresh(self.recompose)
