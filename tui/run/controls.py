"""The control keys of a run screen: each builds one ControlMessage, shows it as one log line
at once, and rewrites that line when its ack (and for STEER the plan revision) comes.

A RunScreen with a source has one ``RunControls``; its control keys (bound only when the screen
was built with ``controls=True``) call the methods here. Quitting while a run of this process is
live asks here too: cancelling it goes the same way as the c key's CANCEL.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.types import TaskStatus

from ..inputs import validate_message, validate_steer_note
from ..screens.approvals import AlwaysScreen, AnswerScreen, EditArgumentsScreen, RulesScreen
from ..screens.detail import ApprovalScreen
from ..screens.dialogs import DETACH, DETACH_REJECT, ConfirmScreen, QuitScreen, TextPrompt
from ..screens.note import NotePrompt
from ..screens.steering import SteeringScreen
from ..format import LogLine
from .feed import RunFeed, approval_name

if TYPE_CHECKING:
    from textual.app import App

    from ..source import RunSource

__all__ = ["ControlledScreen", "RunControls", "who"]


class ControlledScreen(Protocol):
    """What the control keys use of their screen (``goldfive_tui.run.screen.RunScreen`` is the
    one): named here so the screen imports its controls and they do not import it back."""

    feed: RunFeed

    @property
    def app(self) -> App[Any]: ...

    def now_ms(self) -> int: ...

    def at(self, ms: int | None = None) -> str: ...

    def log_size(self) -> int: ...

    def add_line(self, line: LogLine) -> None: ...

    def rewrite_control(self, control_id: str) -> bool: ...

    def repaint(self) -> None: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None) -> None: ...

    def run_worker(self, work: Any, name: str | None = "", group: str = "default", description: str = "", exit_on_error: bool = True, start: bool = True, exclusive: bool = False, thread: bool = False) -> Any: ...


def who() -> dict[str, object]:
    """Who sends a control from here: the OS user, through the TUI (on a hub, the hub records
    its token's name, keeping this beside it); ``GOLDFIVE_CLIENT`` names another client (the
    web page sets "web")."""
    from goldfive.settings import client_name, os_user

    return {"author": os_user(), "client": client_name("tui")}


class RunControls:
    def __init__(self, screen: ControlledScreen, source: RunSource) -> None:
        self.screen = screen
        self.source = source
        #: Notes sent this session, per prompt ("steer", "inject"), oldest first: ↑ recalls them.
        self.note_history: dict[str, list[str]] = {}

    # -- sending -------------------------------------------------------------------------
    def send(self, kind: ControlKind, payload: dict[str, object] | None = None) -> ControlMessage:
        """Show the control as sent at once and deliver it from a worker."""
        screen = self.screen
        msg = ControlMessage(kind=kind, payload={**who(), **(payload or {})})
        msg.issued_at_ms = screen.now_ms()
        screen.add_line(screen.feed.sent(msg, screen.log_size(), screen.at()))
        view_kind = screen.feed.state.controls[msg.id].kind
        screen.run_worker(self._deliver(msg, view_kind), group="controls")
        return msg

    async def _deliver(self, msg: ControlMessage, kind: str) -> None:
        try:
            ack = await self.source.send(msg)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: a broken transport is shown as a FAILURE
            ack = ControlAck(msg.id, AckResult.FAILURE, f"not delivered: {exc}")
        view = self.screen.feed.state.control_ack(ack, kind)
        first = self.screen.rewrite_control(view.id)
        refusal = self.screen.feed.refusal(view)
        if first and refusal:  # a refusal must not go unnoticed in a scrolled log
            self.screen.notify(refusal, title="refused", severity="error", timeout=6)
        self.screen.repaint()  # acks are rare and the person is waiting for this one: no throttle

    def _push(self, screen: Any, callback: Any = None) -> None:
        self.screen.app.push_screen(screen, callback)

    # -- the run ---------------------------------------------------------------------------
    def pause(self) -> None:
        self.send(ControlKind.RESUME if self.screen.feed.state.paused else ControlKind.PAUSE)

    def steer(self) -> None:
        def entered(note: str | None) -> None:
            if note is None:
                return
            payload: dict[str, object] = {"note": note.strip()}
            if prompt.mode == "later":
                payload["when"] = "later"
            elif prompt.mode == "standing":
                payload["standing"] = True
            self.send(ControlKind.STEER, payload)

        prompt = NotePrompt(
            "Steer the run: what should change? (e.g. focus on fewer, higher-quality slides)",
            hint="ctrl+s steer now · ctrl+l after this task · ctrl+g standing (every later task) · "
            "Enter new line · ↑ earlier notes · Esc cancels",
            validate=validate_steer_note,
            history=self.note_history.setdefault("steer", []),
            modes=frozenset({"later", "standing"}),
        )
        self._push(prompt, entered)

    def steering(self) -> None:
        """The steer queue and the standing guidance, with keys that change them."""

        async def ask(kind: ControlKind, payload: dict[str, Any]) -> ControlAck:
            msg = ControlMessage(kind, payload={**payload, **who()})
            try:
                return await self.source.send(msg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: a broken transport is shown, not raised
                return ControlAck(msg.id, AckResult.FAILURE, f"not delivered: {exc}")

        self._push(SteeringScreen(lambda: self.screen.feed.state.notes, ask))

    def rewind(self, task_id: str | None) -> None:
        if not task_id:
            self.screen.notify("Select a task in the plan first.", severity="warning")
            return
        task = self.screen.feed.state.tasks.get(task_id)
        name = f"{task_id} ({task.title})" if task and task.title and task.title != task_id else task_id
        if task is not None and task.status == TaskStatus.PENDING and not task.started_ms:
            self.screen.notify(f"{name} has not run yet: there is nothing to rewind.", severity="warning")
            return
        question = f"Rewind to {name}? It and every task after it run again."

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send(ControlKind.REWIND_TO, {"task_id": task_id})

        self._push(ConfirmScreen(question, yes="Rewind"), confirmed)

    def inject(self) -> None:
        def entered(text: str | None) -> None:
            if text is not None:
                self.send(ControlKind.INJECT_MESSAGE, {"role": "user", "text": text.strip()})

        prompt = NotePrompt(
            "Inject a message into the running turn",
            hint="ctrl+s sends INJECT_MESSAGE · Enter new line · ↑ earlier messages · Esc cancels",
            validate=validate_message,
            history=self.note_history.setdefault("inject", []),
        )
        self._push(prompt, entered)

    def budget(self) -> None:
        from goldfive.budget import BudgetError, parse_changes

        state = self.screen.feed.state
        held = state.paused and state.pause_kind == "BUDGET"
        now = state.budget_line()
        title = f"{'Budget reached' if held else 'Budget'}: {now or 'no limits'}. New limits:"

        def problem(text: str) -> str | None:
            try:
                parse_changes(text)
            except BudgetError as exc:
                return str(exc)
            return None

        def entered(text: str | None) -> None:
            if text is None:
                return
            payload: dict[str, object] = {k: 0 if v is None else v for k, v in parse_changes(text).items()}
            if held:
                payload["resume"] = True
            self.send(ControlKind.BUDGET, {**payload, **who()})

        go_on = "Enter sets it and the run goes on (if it allows)" if held else "Enter sets it"
        hint = f"{go_on} · none removes a limit · Esc cancels"
        self._push(TextPrompt(title, placeholder="tokens=100000,usd=5", hint=hint, validate=problem), entered)

    def cancel(self) -> None:
        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send(ControlKind.CANCEL, {"reason": "cancelled from the TUI"})

        self._push(ConfirmScreen("Cancel the whole run?", yes="Cancel run"), confirmed)

    # -- quitting while the run lives in this process ---------------------------------------------
    def ask_quit(self) -> None:
        """Cancel the run and quit, keep it running without the TUI (DETACH), or stay."""

        def chosen(choice: str | None) -> None:
            if choice == "cancel":
                self.screen.run_worker(self._cancel_and_exit(), group="quit", exclusive=True)
            elif choice in (DETACH, DETACH_REJECT):
                self.screen.app.exit(choice)

        where = getattr(self.source, "recorded_at", None)
        self._push(QuitScreen(where() if callable(where) else ""), chosen)

    async def _cancel_and_exit(self) -> None:
        """CANCEL the run and give it a moment to record how it ended, then quit."""
        self.send(ControlKind.CANCEL, {"reason": "cancelled: the TUI quit"})
        finished = getattr(self.source, "wait_finished", None)
        if finished is not None:
            try:
                await asyncio.wait_for(finished(), timeout=5)
            except asyncio.TimeoutError:
                pass  # stop() cancels what is left
        self.screen.app.exit()

    # -- approvals ---------------------------------------------------------------------------
    def approve(self, target: str, arguments: dict[str, object] | None = None, always: dict[str, Any] | None = None) -> None:
        payload: dict[str, object] = {"target_id": target, "detail": "", **who()}
        if arguments is not None:
            payload["arguments"] = arguments
        if always is not None:
            payload["always"] = always
        self.send(ControlKind.APPROVE, payload)

    def approve_always(self, target: str) -> None:
        """Approve, and don't ask again: the person picks the rule (shown whole), the APPROVE
        carries it and the run adds it as it approves (the rules screen lists it)."""
        view = self.screen.feed.state.approvals.get(target)
        if view is None:
            self.screen.notify("That approval is no longer waiting.", severity="warning")
            return
        if view.kind != "tool":
            self.screen.notify("Rules are for tool calls: approve this one with a.", severity="warning")
            return

        def chosen(always: dict[str, Any] | None) -> None:
            if always is not None:
                self.approve(target, always=always)

        self._push(AlwaysScreen(view), chosen)

    def answer_question(self, target: str) -> None:
        """A question: type an answer or pick an option, then ANSWER (the run checks it again)."""
        view = self.screen.feed.state.approvals.get(target)
        if view is None or not view.is_question:
            self.screen.notify("That question is no longer waiting.", severity="warning")
            return

        def answered(payload: dict[str, str] | None) -> None:
            if payload is not None:
                self.send(ControlKind.ANSWER, {"target_id": target, **payload, **who()})

        self._push(AnswerScreen(view.prompt, view.options, view.free_text, title=f"Answer ({target})"), answered)

    def edit(self, target: str) -> None:
        view = self.screen.feed.state.approvals.get(target)
        if view is None:
            self.screen.notify("That approval is no longer waiting.", severity="warning")
            return
        if view.kind != "tool":
            what = "A question" if view.is_question else "A task approval"
            self.screen.notify(f"{what} has no arguments to edit.", severity="warning")
            return

        def edited(arguments: dict[str, Any] | None) -> None:
            if arguments is not None:
                self.approve(target, arguments)

        self._push(EditArgumentsScreen(view), edited)

    def reject(self, target: str) -> None:
        def entered(reason: str | None) -> None:
            if reason is not None:
                self.send(ControlKind.REJECT, {"target_id": target, "detail": reason.strip(), **who()})

        name = approval_name(self.screen.feed.state, target)
        self._push(TextPrompt(f"Reject {name}: reason (optional)", hint="Enter sends REJECT · Esc cancels"), entered)

    def rules(self, *, read_only: bool = False) -> None:
        """The run's rules; ``read_only`` (an ended run): listed, nothing removed."""
        from goldfive.run.approval_rules import RULES_VERB

        async def ask(payload: dict[str, Any]) -> ControlAck:
            msg = ControlMessage(RULES_VERB, payload={**payload, **who()})
            if read_only:  # the run answers nothing now: its rules as its events recorded them
                return ControlAck(msg.id, AckResult.SUCCESS, self.screen.feed.rules.listing())
            try:
                return await self.source.send(msg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: a broken transport is shown, not raised
                return ControlAck(msg.id, AckResult.FAILURE, f"not delivered: {exc}")

        self._push(RulesScreen(ask, read_only=read_only))

    def answer(self, target: str, what: str | None) -> None:
        """What the person chose in an approval's detail (ApprovalScreen)."""
        if what == "answer_question":
            self.answer_question(target)
        elif what == "approve":
            self.approve(target)
        elif what == "reject":
            self.reject(target)
        elif what == "edit":
            self.edit(target)
        elif what == "always":
            self.approve_always(target)


def open_approval(screen: ControlledScreen, target: str, controls: RunControls | None) -> None:
    """The approval's detail: everything it asks, then (with controls) a / x / e right there."""
    view = screen.feed.state.approvals.get(target)
    if view is None:
        screen.notify("That approval is no longer waiting.", severity="warning")
        return
    detail = ApprovalScreen(view, screen.feed.state, screen.now_ms(), can_decide=controls is not None)
    screen.app.push_screen(detail, None if controls is None else (lambda what: controls.answer(target, what)))
