"""The help screen, generated from the app's binding table."""

from __future__ import annotations

from typing import ClassVar, Iterable

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


def bindings_table(bindings: Iterable[Binding], key_display: dict[str, str]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for b in bindings:
        keys = b.key_display or ", ".join(key_display.get(k, k) for k in b.key.split(","))
        table.add_row(keys, b.tooltip or b.description)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss_help", "Close", id="help.close"),
        # The body's own keys, held by the screen too: a click or a tap on the dialog leaves
        # the body unfocused, and End must still reach the end.
        Binding("home", "scroll_help('home')", "Top", show=False),
        Binding("end", "scroll_help('end')", "End", show=False),
        Binding("pageup", "scroll_help('page_up')", "Page up", show=False),
        Binding("pagedown", "scroll_help('page_down')", "Page down", show=False),
        Binding("up", "scroll_help('up')", "Up", show=False),
        Binding("down", "scroll_help('down')", "Down", show=False),
    ]

    def __init__(self, bindings: Iterable[Binding], key_display: dict[str, str]) -> None:
        super().__init__(classes="dialog-screen")
        self._table = bindings_table(bindings, key_display)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help"):
            yield Label("goldfive keys", classes="dialog-title")
            # Scrolls: at 80x24 the table is taller than the screen.
            with VerticalScroll(id="help-body", can_focus=True):
                yield Static(self._table)
            yield Label("↑↓ PgUp PgDn Home End · Esc or ? closes this help", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        # The table as tall as it is, up to what leaves the title and the hint on screen
        # (the dialog's border, padding, title and hint take 8 rows); the rest scrolls.
        self.query_one("#help-body").styles.max_height = max(3, self.size.height - 8)

    def action_scroll_help(self, where: str) -> None:
        body = self.query_one("#help-body", VerticalScroll)
        getattr(body, f"scroll_{where}")()

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
