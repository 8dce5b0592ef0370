"""The event log with its filter box: / opens the box, typing filters the log, Enter keeps the
filter and gives the keys back to the log, Esc clears it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input

from .eventlog import EventLog


class LogPane(Vertical):
    def __init__(self, log: EventLog, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.log_view = log
        self.box = Input(placeholder="filter the log by text or kind; Enter keeps it, Esc clears", id="filter")

    def compose(self) -> ComposeResult:
        yield self.log_view
        yield self.box

    def on_mount(self) -> None:
        self.box.cursor_blink = getattr(self.app, "cursor_blink", True)

    def open_filter(self) -> None:
        self.box.display = True
        self.box.focus()

    def clear_filter(self) -> bool:
        """Clear the filter and give the log the keys; False when there was none to clear."""
        if not self.box.display and not self.box.value:
            return False
        self.box.value = ""
        self.box.display = False
        self.log_view.filter_text = ""
        self.log_view.focus()
        return True

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is self.box:
            self.log_view.filter_text = event.value

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input is self.box:
            if not event.value:
                self.box.display = False
            self.log_view.focus()
