"""Modal dialogs: a one-line text prompt, a yes/no confirmation and the quit choice."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical
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


#: What GoldfiveApp.run() returns when the person chose to keep the run going headless.
DETACH = "detach"
#: ... and to have every approval nobody answers rejected after DETACHED_APPROVAL_S.
DETACH_REJECT = "detach-reject"
#: How long an approval waits for nobody, once the TUI closed with DETACH_REJECT.
DETACHED_APPROVAL_S = 600.0


class QuitScreen(ModalScreen[str | None]):
    """q while a run lives in this process: cancel it and quit, keep it running headless
    until it ends (its approvals waiting for ever, or rejected after DETACHED_APPROVAL_S), or
    stay. "Stay" has the focus: a stray Enter changes nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "choose('cancel')", "Quit and cancel", id="quit.cancel"),
        Binding("k", "choose('detach')", "Keep running", id="quit.detach"),
        Binding("t", "choose('detach-reject')", "Keep running, reject approvals in 10 min", id="quit.detach_reject"),
        Binding("s,escape", "choose(None)", "Stay", id="quit.stay"),
    ]

    def __init__(self, recorded_at: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self._recorded_at = recorded_at

    def compose(self) -> ComposeResult:
        where = f" It is recorded to {self._recorded_at}." if self._recorded_at else ""
        with Vertical(classes="dialog"):
            yield Label("The run is still going. Quit the TUI and…", classes="dialog-title")
            minutes = f"{DETACHED_APPROVAL_S / 60:g}"
            yield Label(
                "Keep running: the run goes on without the TUI, printing its events; Ctrl+C "
                f"cancels it.{where} Nobody can answer its approvals then: k leaves each waiting "
                f"for ever, t rejects each after {minutes} minutes. To answer them from elsewhere, "
                "run it with --hub (goldfive serve).",
                classes="dialog-hint",
            )
            with Grid(classes="dialog-buttons quit-buttons"):
                yield Button("Stay (Enter)", id="quit-stay", variant="primary", compact=True)
                yield Button("Cancel run (c)", id="quit-cancel", variant="error", compact=True)
                yield Button("Keep running (k)", id="quit-detach", variant="warning", compact=True)
                yield Button("Keep, reject (t)", id="quit-detach-reject", variant="warning", compact=True)

    def on_mount(self) -> None:
        self.query_one("#quit-stay", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        choice = {"quit-cancel": "cancel", "quit-detach": DETACH, "quit-detach-reject": DETACH_REJECT}.get(event.button.id or "")
        self.dismiss(choice)

    def action_choose(self, choice: str | None) -> None:
        self.dismiss(choice)


def start_problem(agent: str, goal: str) -> str | None:
    """Why ``agent`` and ``goal`` cannot start a run (as ``ctl start`` refuses them), or None."""
    agent = agent.strip()
    if not agent:
        return "say what to run: demo, or MODULE:FUNCTION"
    if agent != "demo":
        module, _, function = agent.partition(":")
        if not module or not function or " " in agent:
            return f"{agent!r} is not demo or MODULE:FUNCTION (for example examples.hello_agent:agent)"
        if not goal.strip():
            return "MODULE:FUNCTION needs a goal: say what the run should achieve"
    return None


class StartRunScreen(ModalScreen[tuple[str, str] | None]):
    """Start a run, as ``ctl start`` does: ``demo``, or an agent MODULE:FUNCTION the hub can
    import, with its goal. Enter on the last line starts it (after checking), Esc cancels.

    With ``start`` (the hub's start call) the dialog stays open until the hub answers: a
    refusal (a module the hub cannot import) is said here, with what was typed kept, and the
    result is (agent, run id); without it, the result is (agent, goal) once checked."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="start.cancel")]

    def __init__(self, where: str, start: Callable[[str, str], Awaitable[str]] | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.where = where
        self._start = start
        self._starting = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Start a run on {self.where}", classes="dialog-title")
            yield Input(value="demo", placeholder="demo, or MODULE:FUNCTION", id="start-agent")
            yield Input(placeholder="goal (for MODULE:FUNCTION; the demo has its own)", id="start-goal")
            yield Label("", id="start-error", classes="dialog-error")
            yield Label("Tab next line · Enter starts it · Esc cancels", classes="dialog-hint")

    def on_mount(self) -> None:
        for line in self.query(Input).results(Input):
            line.cursor_blink = getattr(self.app, "cursor_blink", True)
        self.query_one("#start-agent", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        agent = self.query_one("#start-agent", Input).value.strip()
        goal = self.query_one("#start-goal", Input).value.strip()
        if event.input.id == "start-agent" and agent != "demo" and not goal:
            self.query_one("#start-goal", Input).focus()  # the goal comes next
            return
        problem = start_problem(agent, goal)
        if problem:
            self.query_one("#start-error", Label).update(problem)
            return
        if self._start is None:
            self.dismiss((agent, goal))
            return
        if self._starting:
            return  # one start at a time: a second Enter while the hub answers does nothing
        self._starting = True
        self.query_one("#start-error", Label).update(f"starting {agent} on {self.where} ...")
        self.run_worker(self._start_it(agent, goal), group="start-run")

    async def _start_it(self, agent: str, goal: str) -> None:
        from goldfive.errors import RemoteError

        assert self._start is not None
        try:
            run_id = await self._start(agent, goal)
        except asyncio.CancelledError:
            raise
        except RemoteError as exc:  # the hub's own sentence for a refusal, else the connection in words
            why = exc.reason if exc.code in ("INVALID_ARGUMENT", "FAILED_PRECONDITION", "PERMISSION_DENIED") and exc.reason else exc.in_words(self.where)
        except Exception as exc:  # isolation boundary: a start that fails is said in the dialog, not raised
            why = str(exc) or type(exc).__name__
        else:
            self.dismiss((agent, run_id))
            return
        finally:
            self._starting = False
        if self.is_mounted:
            self.query_one("#start-error", Label).update(f"not started: {why}")

    def action_cancel(self) -> None:
        self.dismiss(None)
