"""Approval screens: edit a tool call's arguments before approving it, and the run's ledger
(every decision: who, through which client, when, what ran)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from goldfive.approvals.arguments import arguments_problem
from goldfive.approvals.ledger import LedgerEntry, format_entry
from goldfive.view import ApprovalView

from .detail import pretty_json


def edited_arguments(text: str, parameters_json: str) -> tuple[dict[str, Any] | None, str]:
    """(arguments, "") when ``text`` is a JSON object the tool takes, else (None, why)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    try:
        schema = json.loads(parameters_json) if parameters_json else None
    except ValueError:
        schema = None  # a damaged schema: the run checks again anyway
    problem = arguments_problem(schema if isinstance(schema, dict) else None, value)
    if problem:
        return None, problem
    assert isinstance(value, dict)
    return value, ""


class EditArgumentsScreen(ModalScreen[dict[str, Any] | None]):
    """The call's arguments as JSON in an editor; ctrl+s approves the edited call (after
    checking it against the tool's parameters, here and again in the run), Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "approve", "Approve edited", id="edit.approve", priority=True),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
    ]

    def __init__(self, view: ApprovalView) -> None:
        super().__init__(classes="dialog-screen")
        self.view = view

    def compose(self) -> ComposeResult:
        v = self.view
        with Vertical(classes="dialog detail"):
            yield Label(f"Edit, then approve: {v.tool_name or v.target_id} ({v.target_id})", classes="dialog-title")
            yield TextArea(pretty_json(v.args if v.args is not None else {}), language="json", id="edit-args")
            yield Label("", id="edit-error", classes="dialog-error")
            yield Label("ctrl+s approve with these arguments · Esc cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.cursor_blink = getattr(self.app, "cursor_blink", True)
        area.focus()

    def action_approve(self) -> None:
        value, problem = edited_arguments(self.query_one(TextArea).text, self.view.parameters_json)
        if value is None:
            self.query_one("#edit-error", Label).update(problem)  # the text stays: nothing is lost
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class LedgerScreen(ModalScreen[None]):
    """The run's approval decisions, oldest first."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close", id="ledger.close")]

    def __init__(self, entries: list[LedgerEntry]) -> None:
        super().__init__(classes="dialog-screen")
        self.entries = list(entries)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog detail"):
            yield Label(f"Approvals ledger ({len(self.entries)} decisions)", classes="dialog-title")
            with VerticalScroll(id="ledger-body", classes="detail-body", can_focus=True):
                text = Text("\n".join(format_entry(e, sep="\n    ") for e in self.entries) or "no approval decisions yet")
                yield Static(text, id="ledger-text")
            yield Label("↑↓ scroll · Esc close", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#ledger-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
