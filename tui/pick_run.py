"""The replay run picker: ``goldfive replay`` (the runs recorded here) or ``goldfive replay
FILE`` on a recording of several runs, without ``--run-id``, lists them (state, goal, start,
events) instead of silently taking the latest; ``/`` filters them by id, state or goal."""

from __future__ import annotations

import time
from typing import ClassVar, Sequence

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.filter import LineFilter
from textual.widgets import DataTable, Input, Static

from goldfive.recording import RunChoice

from .safe_output import safe_line_filters
from .widgets.footer import FitFooter

_STATE_STYLE = {"COMPLETED": "green", "ABORTED": "red", "INTERRUPTED": "yellow"}


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms > 0 else "?"


class RunPickerApp(App[str | None]):
    """Returns the chosen run id, or None (Esc / q: open nothing)."""

    CSS = """
    #title { height: 1; padding: 0 1; background: $panel; }
    #filter { display: none; }
    #filter.-on { display: block; }
    DataTable { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "choose", "Open", priority=True),
        Binding("j", "cursor(1)", "Down", show=False),
        Binding("k", "cursor(-1)", "Up", show=False),
        Binding("g", "edge(0)", "First", show=False),
        Binding("G", "edge(-1)", "Last", show=False),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("escape,q", "quit_picker", "Quit"),
    ]

    def get_line_filters(self) -> Sequence[LineFilter]:
        return safe_line_filters(super().get_line_filters())  # goals read from the recording

    def __init__(self, path: str, choices: Sequence[RunChoice]) -> None:
        super().__init__()
        self.path = path
        self.all = list(choices)
        #: The rows shown (the filter's matches), in the table's order.
        self.choices = list(choices)
        self._columns: tuple[str, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Input(placeholder="filter: id, state or goal (Enter keeps it, Esc clears)", id="filter")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield FitFooter()

    #: The columns at this width and wider: the goal is the one a person picks by, so at a
    #: narrow width the event count goes, then the start, and the id is shortened.
    WITH_EVENTS, WITH_START = 100, 76

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(DataTable).focus()

    def on_resize(self) -> None:
        if self._columns and self._columns != self._columns_for(self.size.width):  # filled already
            self._fill(self.query_one("#filter", Input).value)

    def _columns_for(self, width: int) -> tuple[str, ...]:
        if width >= self.WITH_EVENTS:
            return ("run", "state", "started", "events", "goal")
        return ("run", "state", "started", "goal") if width >= self.WITH_START else ("run", "state", "goal")

    def _fill(self, needle: str) -> None:
        needle = needle.strip().lower()
        self.choices = [c for c in self.all if not needle or needle in f"{c.run_id} {c.state} {c.goal}".lower()]
        table = self.query_one(DataTable)
        columns = self._columns_for(self.size.width)
        if columns != self._columns:
            table.clear(columns=True)
            table.add_columns(*columns)
            self._columns = columns
        table.clear()
        for c in self.choices:
            cells = {
                "run": c.run_id[: 12 if "events" in columns else 8], "state": f"[{_STATE_STYLE.get(c.state, 'white')}]{c.state}[/]",
                "started": _when(c.started_ms), "events": str(c.events), "goal": c.goal or "(no goal recorded)",
            }  # fmt: skip
            table.add_row(*(cells[name] for name in columns), key=c.run_id)
        shown = f"{len(self.choices)} of {len(self.all)}" if needle else str(len(self.all))
        empty = " · none match: Esc clears the filter" if needle and not self.choices else ""
        self.query_one("#title", Static).update(f"{shown} runs in {self.path}: Enter opens one · / filter{empty}")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(DataTable).focus()

    def action_filter(self) -> None:
        line = self.query_one("#filter", Input)
        line.add_class("-on")
        line.focus()

    def action_choose(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one(DataTable).focus()  # Enter in the filter keeps it and goes to the rows
            return
        table = self.query_one(DataTable)
        if self.choices:
            self.exit(self.choices[table.cursor_row].run_id)

    def action_cursor(self, delta: int) -> None:
        table = self.query_one(DataTable)
        table.move_cursor(row=max(0, min(len(self.choices) - 1, table.cursor_row + delta)))

    def action_edge(self, where: int) -> None:
        self.query_one(DataTable).move_cursor(row=0 if where == 0 else len(self.choices) - 1)

    def action_quit_picker(self) -> None:
        line = self.query_one("#filter", Input)
        if self.focused is line:  # Esc in the filter clears it (q there is a letter)
            line.value = ""
            line.remove_class("-on")
            self._fill("")
            self.query_one(DataTable).focus()
            return
        self.exit(None)


def pick_run(path: str, choices: Sequence[RunChoice]) -> str | None:
    return RunPickerApp(path, choices).run()
