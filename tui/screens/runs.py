"""The runs screen (k9s-like): one row per run, what needs a person first.

Enter opens the run in the usual screen (Esc there comes back here), ``n`` opens the next run
that needs you, ``w`` (``d`` from anywhere) the waiting queue, ``/`` filters the rows. The app
(``HubApp``) feeds it a Snapshot at every poll through ``show``.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from ..runs.model import RunRow, Snapshot, sort_rows
from ..runs.table import RunsTable, header_text

__all__ = ["RUNS_KEYS", "RunsScreen"]

RUNS_KEYS: list[BindingType] = [
    Binding("enter", "open", "Open", tooltip="Open the selected run in the usual screen (Esc there comes back)", id="runs.open"),
    Binding("n", "app.next_needing", "Next needing you", tooltip="Open the next run that needs you (from anywhere)", id="runs.next"),
    Binding("w,d", "app.waiting", "Waiting", tooltip="Everything waiting for a person, every run, oldest first (d from anywhere)", id="runs.waiting"),
    Binding("slash", "filter", "Filter", tooltip="Filter the rows by text (id, state, task, needs, goal); Esc clears", id="runs.filter"),
    Binding("question_mark", "help", "Help", tooltip="Show the keys", id="runs.help"),
    Binding("q", "app.quit", "Quit", tooltip="Quit; runs started in this process are cancelled after a confirmation", id="runs.quit"),
    Binding("escape", "clear_filter", "Clear filter", show=False, id="runs.filter.clear"),
]  # fmt: skip


class RunsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = RUNS_KEYS

    def __init__(self, title: str = "runs") -> None:
        super().__init__(id="runs-screen")
        self.source_title = title
        self.snapshot = Snapshot()
        self.rows: list[RunRow] = []  # sorted and filtered, as shown
        self.filter_text = ""
        self._now = 0

    def compose(self) -> ComposeResult:
        yield Static(id="runs-title")
        yield Static(id="runs-head")
        yield RunsTable(id="runs")
        yield Input(placeholder="filter runs by text; Enter keeps it, Esc clears", id="runs-filter")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(RunsTable)
        table.empty_text = "no runs yet"
        self.query_one("#runs-filter", Input).cursor_blink = getattr(self.app, "cursor_blink", True)
        table.focus()
        self._paint()

    def on_resize(self) -> None:
        self._paint()

    # -- data -----------------------------------------------------------------------------------
    def show(self, snapshot: Snapshot, now_ms: int) -> None:
        self.snapshot, self._now = snapshot, now_ms
        if self.is_mounted:
            self._paint()

    def _paint(self) -> None:
        if not self.query(RunsTable):
            return  # composing, or torn down while a poll was in flight
        needle = self.filter_text.lower()
        rows = sort_rows(self.snapshot.rows)
        if needle:
            rows = [r for r in rows if needle in r.searchable()]
        self.rows = rows
        table = self.query_one(RunsTable)
        table.show(rows, self._now)
        width = table.scrollable_content_region.width or 80
        self.query_one("#runs-head", Static).update(header_text(width))
        self.query_one("#runs-title", Static).update(self._title())

    def _title(self) -> Text:
        rows = self.snapshot.rows
        needing = sum(1 for r in rows if r.needs_kind)
        out = Text()
        out.append("goldfive ", style="bold")
        out.append(self.source_title)
        out.append(f" · {len(rows)} runs · {sum(1 for r in rows if r.live)} live · ")
        out.append(f"{needing} need you", style="bold yellow" if needing else "dim")
        if waiting := len(self.snapshot.waiting):
            out.append(f" · {waiting} waiting (w)", style="yellow")
        if self.filter_text:
            out.append(f" · filter: {self.filter_text} ({len(self.rows)} shown)", style="dim")
        if self.snapshot.problem:
            out.append(f" · {self.snapshot.problem}", style="bold red")
        return out

    @property
    def selected_run(self) -> str | None:
        return self.query_one(RunsTable).selected_key

    # -- keys -----------------------------------------------------------------------------------
    def on_cursor_list_selected(self, event: RunsTable.Selected) -> None:
        event.stop()
        self.app.open_run(event.key)  # type: ignore[attr-defined]

    def action_open(self) -> None:
        if key := self.selected_run:
            self.app.open_run(key)  # type: ignore[attr-defined]

    def action_filter(self) -> None:
        box = self.query_one("#runs-filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#runs-filter", Input)
        box.value = ""
        box.display = False
        self.filter_text = ""
        self._paint()
        self.query_one(RunsTable).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "runs-filter":
            self.filter_text = event.value
            self._paint()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "runs-filter":
            if not event.value:
                event.input.display = False
            self.query_one(RunsTable).focus()

    def action_help(self) -> None:
        from ..keys import KEY_DISPLAY
        from .help import HelpScreen

        shown = [b for b in RUNS_KEYS if isinstance(b, Binding) and b.show]
        moves = Binding("j,k,g,G", "cursor", "Move", tooltip="Down, up, first, last (arrows, Home, End too)")
        self.app.push_screen(HelpScreen([*shown[:-2], moves, *shown[-2:]], KEY_DISPLAY))
