"""The replay run picker: ``goldfive replay FILE`` on a recording of several runs, without
``--run-id``, lists them (state, goal, start, events) instead of silently taking the latest."""

from __future__ import annotations

import time
from typing import ClassVar, Sequence

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.filter import LineFilter
from textual.widgets import DataTable, Footer, Static

from goldfive.recording import RunChoice

from .safe_output import safe_line_filters

_STATE_STYLE = {"COMPLETED": "green", "ABORTED": "red", "INTERRUPTED": "yellow"}


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms > 0 else "?"


class RunPickerApp(App[str | None]):
    """Returns the chosen run id, or None (Esc / q: open nothing)."""

    CSS = """
    #title { height: 1; padding: 0 1; background: $panel; }
    DataTable { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "choose", "Open", priority=True),
        Binding("j", "cursor(1)", "Down", show=False),
        Binding("k", "cursor(-1)", "Up", show=False),
        Binding("g", "edge(0)", "First", show=False),
        Binding("G", "edge(-1)", "Last", show=False),
        Binding("escape,q", "quit_picker", "Quit"),
    ]

    def get_line_filters(self) -> Sequence[LineFilter]:
        return safe_line_filters(super().get_line_filters())  # goals read from the recording

    def __init__(self, path: str, choices: Sequence[RunChoice]) -> None:
        super().__init__()
        self.path = path
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        yield Static(f"{len(self.choices)} runs in {self.path}: Enter opens one", id="title")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("run", "state", "started", "events", "goal")
        for c in self.choices:
            state = f"[{_STATE_STYLE.get(c.state, 'white')}]{c.state}[/]"
            table.add_row(c.run_id[:12], state, _when(c.started_ms), str(c.events), c.goal or "(no goal recorded)", key=c.run_id)
        table.focus()

    def action_choose(self) -> None:
        table = self.query_one(DataTable)
        if self.choices:
            self.exit(self.choices[table.cursor_row].run_id)

    def action_cursor(self, delta: int) -> None:
        table = self.query_one(DataTable)
        table.move_cursor(row=max(0, min(len(self.choices) - 1, table.cursor_row + delta)))

    def action_edge(self, where: int) -> None:
        self.query_one(DataTable).move_cursor(row=0 if where == 0 else len(self.choices) - 1)

    def action_quit_picker(self) -> None:
        self.exit(None)


def pick_run(path: str, choices: Sequence[RunChoice]) -> str | None:
    return RunPickerApp(path, choices).run()
