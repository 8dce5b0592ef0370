"""The steer and inject prompt: several lines (a TextArea), ctrl+s sends, with history.

Enter starts a new line; ctrl+s (or ctrl+enter where the terminal reports it) sends; Esc
cancels. A prompt built with ``modes`` also sends with ctrl+l ("later": after the running
task) and ctrl+g ("standing": in every later task); ``NotePrompt.mode`` says which. Up on the first line recalls the previous note sent this session, Down on the last
line the next one (past the newest: what was being typed before recalling).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Label

from ..widgets.submit_area import SubmitArea

from .dialogs import Validator


class NoteArea(SubmitArea):
    """A SubmitArea (ctrl+s sends, in order with the typed keys) that asks for the previous /
    next history entry at its top / bottom edge; ctrl+l and ctrl+g send with a mode (the
    prompt ignores a mode it was not built with)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+l", "submit('later')", "Send after this task", show=False),
        Binding("ctrl+g", "submit('standing')", "Send as standing guidance", show=False),
    ]

    class Recall(Message):
        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    async def _on_key(self, event: events.Key) -> None:
        row, _ = self.cursor_location
        if event.key == "up" and row == 0:
            event.prevent_default()
            event.stop()
            self.post_message(self.Recall(-1))
            return
        if event.key == "down" and row == self.document.line_count - 1:
            event.prevent_default()
            event.stop()
            self.post_message(self.Recall(1))
            return
        await super()._on_key(event)


class NotePrompt(ModalScreen[str | None]):
    """Ask for a note of one or more lines. Returns the text, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("ctrl+s,ctrl+enter", "send", "Send", id="dialog.send"),
    ]

    def __init__(
        self, title: str, *, hint: str = "", validate: Validator | None = None, history: list[str] | None = None,
        modes: frozenset[str] = frozenset(), text: str = "",
    ) -> None:  # fmt: skip
        super().__init__(classes="dialog-screen")
        #: The send keys besides ctrl+s this prompt takes ("later", "standing").
        self.modes = modes
        #: Which key sent the note: "" (ctrl+s), or one of ``modes``.
        self.mode = ""
        self._text = text
        self._title = title
        self._hint = hint
        self._validate = validate
        #: Notes sent before, oldest first; the list is the caller's, appended on send.
        self.history = history if history is not None else []
        self._at = len(self.history)  # == len(history): the draft being typed
        self._draft = ""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, classes="dialog-title")
            yield NoteArea(id="note-input", soft_wrap=True, tab_behavior="focus")
            yield Label("", id="prompt-error", classes="dialog-error")
            yield Label(self._hint or "ctrl+s sends · Enter new line · ↑ previous notes · Esc cancels", classes="dialog-hint")

    def on_mount(self) -> None:
        area = self.query_one(NoteArea)
        area.cursor_blink = getattr(self.app, "cursor_blink", True)
        if self._text:
            area.load_text(self._text)
            area.move_cursor(area.document.end)
        area.focus()

    def on_submit_area_submitted(self, message: SubmitArea.Submitted) -> None:
        message.stop()
        if message.mode and message.mode not in self.modes:
            return  # a send key this prompt does not offer
        self.mode = message.mode
        self.action_send()

    def on_note_area_recall(self, message: NoteArea.Recall) -> None:
        area = self.query_one(NoteArea)
        target = self._at + message.step
        if not 0 <= target <= len(self.history) or target == self._at:
            return
        if self._at == len(self.history):
            self._draft = area.text  # keep what was being typed
        self._at = target
        area.load_text(self._draft if target == len(self.history) else self.history[target])
        area.move_cursor(area.document.end if message.step > 0 else (0, 0))

    def action_send(self) -> None:
        text = self.query_one(NoteArea).text
        error = self._validate(text) if self._validate else None
        if error:
            self.query_one("#prompt-error", Label).update(error)
            return
        if not self.history or self.history[-1] != text:
            self.history.append(text)
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
