"""The control keys of the live app: each builds one ControlMessage, shows it as one log
line at once, and rewrites that line when its ack (and for STEER the plan revision) comes.

GoldfiveApp (``app.py``) builds on this App layer: the actions need the app's state, log and
screens, and keeping them here keeps the app module about the event stream and the layout.
"""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.filter import LineFilter

from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.approvals.ledger import LedgerEntry
from goldfive.view import ControlView, RunState

from .format import control_line
from .inputs import validate_message, validate_steer_note
from .screens.approvals import EditArgumentsScreen, LedgerScreen, RulesScreen
from .screens.detail import ApprovalScreen
from .screens.dialogs import ConfirmScreen, TextPrompt
from .safe_output import safe_line_filters
from .screens.note import NotePrompt
from .widgets.approvals import ApprovalsView
from .widgets.eventlog import EventLog
from .widgets.plan import PlanView

if TYPE_CHECKING:
    from .source import RunSource


def who() -> dict[str, object]:
    """Who decides an approval from here: the OS user, through the TUI (the ledger says so)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid
        user = "unknown"
    return {"author": user, "client": "tui"}


class ControlActions(App[str | None]):
    """The control keys; GoldfiveApp provides the state, the clock and the repaint."""

    source: RunSource
    state: RunState
    _mine: set[str]
    _control_lines: dict[str, int]
    _acked: set[str]
    _dirty: bool
    #: The run's approval decisions as they arrived (approval_decided events).
    ledger: list[LedgerEntry]
    #: Notes sent this session, per prompt ("steer", "inject"), oldest first: ↑ recalls them.
    note_history: dict[str, list[str]]

    def get_line_filters(self) -> Sequence[LineFilter]:
        return safe_line_filters(super().get_line_filters())  # a run's text holds no escapes on screen

    def now_ms(self) -> int:
        raise NotImplementedError

    def _at(self, ms: int | None = None) -> str:
        raise NotImplementedError

    def _repaint(self) -> None:
        raise NotImplementedError

    #: The keys that steer a run: gone from the footer and the palette once the run ended.
    RUN_CONTROLS = frozenset({"pause", "steer", "rewind", "approve", "reject", "edit_approval", "rules", "inject", "cancel_run"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.RUN_CONTROLS and self.state.finished:
            return False
        return super().check_action(action, parameters)

    # -- sending -------------------------------------------------------------------------
    def send_control(self, kind: ControlKind, payload: dict[str, object] | None = None) -> ControlMessage:
        """Show the control as sent at once and deliver it from a worker."""
        msg = ControlMessage(kind=kind, payload=dict(payload or {}))
        msg.issued_at_ms = self.now_ms()
        view = self.state.control_sent(msg, msg.issued_at_ms)
        self._mine.add(msg.id)
        log = self.query_one(EventLog)
        self._control_lines[msg.id] = len(log.lines)
        log.add((control_line(view, self._at()),))
        self.run_worker(self._deliver(msg, view.kind), group="controls")
        self._dirty = True
        return msg

    async def _deliver(self, msg: ControlMessage, kind: str) -> None:
        try:
            ack = await self.source.send(msg)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: a broken transport is shown as a FAILURE
            ack = ControlAck(msg.id, AckResult.FAILURE, f"not delivered: {exc}")
        view = self.state.control_ack(ack, kind)
        self._show_ack(view)

    def _show_ack(self, view: ControlView) -> None:
        first = self._refresh_control_line(view.id)
        if first and view.ack_result != "SUCCESS":  # a refusal must not go unnoticed in a scrolled log
            detail = f": {view.ack_detail}" if view.ack_detail else ""
            self.notify(f"{view.kind} {view.ack_result}{detail}", title="refused", severity="error", timeout=6)
        self._repaint()  # acks are rare and the person is waiting for this one: no throttle

    def _refresh_control_line(self, control_id: str) -> bool:
        """Rewrite the control's line from its view; True when this is the first ack shown."""
        index = self._control_lines.get(control_id)
        view = self.state.controls.get(control_id)
        if index is None or view is None:
            return False
        log = self.query_one(EventLog)
        old = log.lines[index]
        log.replace(index, control_line(view, old.at))
        first = view.acked and control_id not in self._acked
        if view.acked:
            self._acked.add(control_id)
        return first

    # -- the control keys ------------------------------------------------------------------
    def _run_ended(self) -> bool:
        """Say so, and send nothing, when the run has already ended."""
        if self.state.finished:
            self.notify(f"The run has ended ({self.state.finished}): there is nothing to control.", severity="warning")
        return bool(self.state.finished)

    def action_pause(self) -> None:
        if not self._run_ended():
            self.send_control(ControlKind.RESUME if self.state.paused else ControlKind.PAUSE)

    def action_resume(self) -> None:
        self.action_pause()

    def action_steer(self) -> None:
        if self._run_ended():
            return
        prompt = NotePrompt(
            "Steer the run: what should change? (e.g. focus on fewer, higher-quality slides)",
            hint="ctrl+s sends STEER · Enter new line · ↑ earlier notes · Esc cancels · at most 8 KiB",
            validate=validate_steer_note,
            history=self.note_history.setdefault("steer", []),
        )
        self.push_screen(prompt, self._steer_entered)

    def _steer_entered(self, note: str | None) -> None:
        if note is not None:
            self.send_control(ControlKind.STEER, {"note": note.strip(), "author": "you"})

    def action_rewind(self) -> None:
        if self._run_ended():
            return
        task_id = self.query_one(PlanView).selected_key
        if not task_id:
            self.notify("Select a task in the plan first.", severity="warning")
            return
        task = self.state.tasks.get(task_id)
        name = f"{task_id} ({task.title})" if task and task.title and task.title != task_id else task_id
        question = f"Rewind to {name}? It and every task after it run again."

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send_control(ControlKind.REWIND_TO, {"task_id": task_id})

        self.push_screen(ConfirmScreen(question, yes="Rewind"), confirmed)

    def action_inject(self) -> None:
        if self._run_ended():
            return

        def entered(text: str | None) -> None:
            if text is not None:
                self.send_control(ControlKind.INJECT_MESSAGE, {"role": "user", "text": text.strip()})

        prompt = NotePrompt(
            "Inject a message into the running turn",
            hint="ctrl+s sends INJECT_MESSAGE · Enter new line · ↑ earlier messages · Esc cancels",
            validate=validate_message,
            history=self.note_history.setdefault("inject", []),
        )
        self.push_screen(prompt, entered)

    def action_cancel_run(self) -> None:
        if self._run_ended():
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.send_control(ControlKind.CANCEL, {"reason": "cancelled from the TUI"})

        self.push_screen(ConfirmScreen("Cancel the whole run?", yes="Cancel run"), confirmed)

    # -- approvals ---------------------------------------------------------------------------
    def _selected_approval(self) -> str | None:
        target = self.query_one(ApprovalsView).selected_key
        if not target:
            self.notify("No approval is waiting.", severity="warning")
        return target

    def _approval_name(self, target: str) -> str:
        """The tool's name first: a target id is often an opaque call id."""
        view = self.state.approvals.get(target)
        return f"{view.tool_name} ({target})" if view and view.tool_name and view.tool_name != target else target

    def action_approve(self) -> None:
        if target := self._selected_approval():
            self._approve(target)

    def _approve(self, target: str, arguments: dict[str, object] | None = None) -> None:
        payload: dict[str, object] = {"target_id": target, "detail": "", **who()}
        if arguments is not None:
            payload["arguments"] = arguments
        self.send_control(ControlKind.APPROVE, payload)

    def action_edit_approval(self) -> None:
        if target := self._selected_approval():
            self._edit(target)

    def _edit(self, target: str) -> None:
        view = self.state.approvals.get(target)
        if view is None:
            self.notify("That approval is no longer waiting.", severity="warning")
            return
        if view.kind != "tool":
            self.notify("A task approval has no arguments to edit.", severity="warning")
            return

        def edited(arguments: dict[str, Any] | None) -> None:
            if arguments is not None:
                self._approve(target, arguments)

        self.push_screen(EditArgumentsScreen(view), edited)

    def action_ledger(self) -> None:
        self.push_screen(LedgerScreen(self.ledger))

    def action_rules(self) -> None:
        if self._run_ended():
            return
        from goldfive.run.approval_rules import RULES_VERB

        async def ask(payload: dict[str, Any]) -> ControlAck:
            msg = ControlMessage(RULES_VERB, payload={**payload, **who()})
            try:
                return await self.source.send(msg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: a broken transport is shown, not raised
                return ControlAck(msg.id, AckResult.FAILURE, f"not delivered: {exc}")

        self.push_screen(RulesScreen(ask))

    def action_reject(self) -> None:
        if target := self._selected_approval():
            self._reject(target)

    def _reject(self, target: str) -> None:
        def entered(reason: str | None) -> None:
            if reason is not None:
                self.send_control(ControlKind.REJECT, {"target_id": target, "detail": reason.strip(), **who()})

        prompt = TextPrompt(f"Reject {self._approval_name(target)}: reason (optional)", hint="Enter sends REJECT · Esc cancels")
        self.push_screen(prompt, entered)

    def open_approval(self, target: str) -> None:
        """The approval's detail: everything it asks, then a / x right there."""
        view = self.state.approvals.get(target)
        if view is None:
            self.notify("That approval is no longer waiting.", severity="warning")
            return

        def answered(what: str | None) -> None:
            if what == "approve":
                self._approve(target)
            elif what == "reject":
                self._reject(target)
            elif what == "edit":
                self._edit(target)

        self.push_screen(ApprovalScreen(view, self.state, self.now_ms()), answered)
