"""Modal dialogs: a one-line text prompt and a yes/no confirmation."""

from __future__ import annotations

from typing import Callable, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

#: Returns an error message for a value that must not be sent, or None when it is fine.
Validator = Callable[[str], str | None]


class TextPrompt(ModalScreen[str | None]):
    """Ask for one line of text. Enter submits (when ``validate`` accepts it), Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(
        self, title: str, *, placeholder: str = "", hint: str = "", validate: Validator | None = None
    ) -> None:
        super().__init__(classes="dialog-screen")
        self._title = title
        self._placeholder = placeholder
        self._hint = hint
        self._validate = validate

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, classes="dialog-title")
            yield Input(placeholder=self._placeholder, id="prompt-input")
            yield Label("", id="prompt-error", classes="dialog-error")
            yield Label(self._hint or "Enter send · Esc cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).cursor_blink = getattr(self.app, "cursor_blink", True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        error = self._validate(event.value) if self._validate else None
        if error:
            self.query_one("#prompt-error", Label).update(error)
            return
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; y confirms, n or Esc declines. "No" has the focus, so a stray
    Enter declines a destructive action rather than confirming it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="dialog.yes"),
        Binding("n,escape", "answer(False)", "No", id="dialog.no"),
    ]

    def __init__(self, question: str, *, yes: str = "Yes") -> None:
        super().__init__(classes="dialog-screen")
        self._question = question
        self._yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._question, classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self._yes} (y)", variant="warning", id="confirm-yes")
                yield Button("No (n)", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
