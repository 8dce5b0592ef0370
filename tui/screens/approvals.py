"""Approval screens: edit a tool call's arguments before approving it, answer a question
(type, or pick one of its options), the run's ledger (every decision: who, through which
client, when, what ran) and its rules for "always"."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from goldfive.approvals.arguments import arguments_problem
from goldfive.approvals.ledger import LedgerEntry, format_entry, when_text
from goldfive.approvals.rules import Rule, matchers_from
from goldfive.control import AckResult, ControlAck
from goldfive.view import ApprovalView

from ..widgets.submit_area import SubmitArea
from .dialogs import ConfirmScreen
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
        # Not a priority binding: in the editor ctrl+s is the SubmitArea's own, handled in
        # order with the typed keys, so a call is never approved with arguments half typed.
        Binding("ctrl+s", "approve", "Approve edited", id="edit.approve"),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
    ]

    def __init__(self, view: ApprovalView) -> None:
        super().__init__(classes="dialog-screen")
        self.view = view

    def compose(self) -> ComposeResult:
        v = self.view
        with Vertical(classes="dialog detail"):
            yield Label(f"Edit, then approve: {v.tool_name or v.target_id} ({v.target_id})", classes="dialog-title")
            yield SubmitArea(pretty_json(v.args if v.args is not None else {}), language="json", id="edit-args")
            yield Label("", id="edit-error", classes="dialog-error")
            yield Label("ctrl+s approve with these arguments · Esc cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.cursor_blink = getattr(self.app, "cursor_blink", True)
        area.focus()

    def on_submit_area_submitted(self, message: SubmitArea.Submitted) -> None:
        message.stop()
        self.action_approve()

    def action_approve(self) -> None:
        value, problem = edited_arguments(self.query_one(TextArea).text, self.view.parameters_json)
        if value is None:
            self.query_one("#edit-error", Label).update(problem)  # the text stays: nothing is lost
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def always_choices(view: ApprovalView) -> list[tuple[str, dict[str, Any]]]:
    """The rules "Approve, and don't ask again" offers for a tool call, each as (what the
    person reads, the APPROVE's ``always`` payload): these exact arguments (when the call has
    any) or any call to the tool, for this run or for every run on this machine (saved). The text is
    the rule's own description, the one the rules screen lists once it is made."""
    tool = view.tool_name or view.target_id
    args = view.args if isinstance(view.args, dict) else {}
    matches: list[dict[str, Any]] = []
    if args:
        matches.append({name: {"kind": "exact", "value": value} for name, value in sorted(args.items())})
    matches.append({})
    out: list[tuple[str, dict[str, Any]]] = []
    for scope, where in (("run", "this run"), ("machine", "this machine")):
        for match in matches:
            described = Rule(tool, matchers_from(match), scope=scope).describe()
            if not match:
                described = f"{tool}: any arguments"
            out.append((f"{where:<12} · {described}", {"scope": scope, "match": match}))
    return out


class AlwaysScreen(ModalScreen[dict[str, Any] | None]):
    """Approve, and don't ask again: pick the rule (shown whole before it is chosen); the
    APPROVE carries it as ``always`` and the run adds it as it approves. Esc approves nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="always.cancel")]

    def __init__(self, view: ApprovalView) -> None:
        super().__init__(classes="dialog-screen")
        self.view = view
        self.choices = always_choices(view)

    def compose(self) -> ComposeResult:
        v = self.view
        with Vertical(classes="dialog detail"):
            yield Label(f"Approve {v.tool_name or v.target_id}, and don't ask again for:", classes="dialog-title")
            yield OptionList(*(Option(f"{n}  {text}", id=str(n - 1)) for n, (text, _) in enumerate(self.choices, 1)), id="always-options")
            yield Label("↑↓ Enter or 1-4 approve and add that rule (r lists the rules) · Esc cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.dismiss(self.choices[int(event.option.id)][1])

    def on_key(self, event: Any) -> None:
        n = int(event.character) if (event.character or "").isdigit() else 0
        if 1 <= n <= len(self.choices):
            event.stop()
            self.dismiss(self.choices[n - 1][1])

    def action_cancel(self) -> None:
        self.dismiss(None)


class AnswerScreen(ModalScreen[dict[str, str] | None]):
    """A question: its prompt, its options to pick (↑↓ Enter, or the option's number) and,
    when it takes one, a line to type an answer in (Enter). Dismisses with ``{"option": ...}``
    or ``{"text": ...}`` (the ANSWER payload), None on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="answer.cancel")]

    def __init__(self, prompt: str, options: tuple[str, ...], free_text: bool, *, title: str = "Answer") -> None:
        super().__init__(classes="dialog-screen")
        self.prompt, self.options, self.free_text, self.title_text = prompt, options, free_text or not options, title

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog detail"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(Text(self.prompt), id="answer-prompt")
            if self.options:
                yield OptionList(*(Option(f"{n}  {o}" if n <= 9 else f"   {o}", id=str(n - 1)) for n, o in enumerate(self.options, 1)), id="answer-options")
            if self.free_text:
                yield Input(placeholder="type an answer, Enter sends", id="answer-text")
            yield Label("", id="answer-error", classes="dialog-error")
            hints = ["↑↓ Enter or 1-9 pick"] if self.options else []
            if self.free_text:
                hints.append("type, then Enter" + (" (Tab to the line)" if self.options else ""))
            yield Label(" · ".join([*hints, "Esc cancel"]), classes="dialog-hint")

    def on_mount(self) -> None:
        for line in self.query(Input).results(Input):
            line.cursor_blink = getattr(self.app, "cursor_blink", True)
        target = self.query("#answer-options") or self.query("#answer-text")
        target.first().focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.dismiss({"option": self.options[int(event.option.id)]})

    def on_key(self, event: Any) -> None:
        # A digit picks the option of that number, unless the person is typing an answer.
        if isinstance(self.focused, Input) or not (event.character or "").isdigit():
            return
        n = int(event.character)
        if 1 <= n <= min(len(self.options), 9):
            event.stop()
            self.dismiss({"option": self.options[n - 1]})

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.query_one("#answer-error", Label).update("the answer is empty")
            return
        self.dismiss({"text": event.value})

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
            n = len(self.entries)
            yield Label(f"Approvals ledger ({n} decision{'' if n == 1 else 's'})", classes="dialog-title")
            with VerticalScroll(id="ledger-body", classes="detail-body", can_focus=True):
                text = Text("\n".join(format_entry(e, sep="\n    ") for e in self.entries) or "no approval decisions yet")
                yield Static(text, id="ledger-text")
            yield Label("↑↓ scroll · Esc close", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#ledger-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)


class RulesScreen(ModalScreen[None]):
    """The run's rules for "always" (run scope and the machine's saved ones), asked of the run
    itself with the ``approval_rules`` control; ``d`` removes the selected rule (it holds from
    the next call), ``r`` reads them again."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "remove", "Remove rule", id="rules.remove"),
        Binding("r", "reload", "Reload", id="rules.reload"),
        Binding("escape,q", "close", "Close", id="rules.close"),
    ]

    def __init__(self, ask: Callable[[dict[str, Any]], Awaitable[ControlAck]], *, read_only: bool = False) -> None:
        super().__init__(classes="dialog-screen")
        self._ask = ask
        #: The run has ended: its rules are listed, none removed (d is off).
        self.read_only = read_only
        self.rules: list[Rule] = []
        self.never_auto: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog detail"):
            yield Label("Approval rules", classes="dialog-title")
            yield OptionList(id="rules-list")
            yield Label("", id="rules-note", classes="dialog-error")
            hint = "read-only: the run has ended · Esc close" if self.read_only else "d remove the selected rule (asks first) · r reload · Esc close"
            yield Label(hint, classes="dialog-hint")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (self.read_only and action == "remove")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._load(), group="rules", exclusive=True)

    async def _load(self) -> None:
        ack = await self._ask({"op": "list"})
        if AckResult(ack.result) is not AckResult.SUCCESS:
            ended = "the run has ended and " if self.read_only else ""
            self._note(f"{ended}cannot list the rules: {ack.detail}")
            return
        try:
            listing = json.loads(ack.detail)
            self.rules = [Rule.from_dict(r) for r in listing["rules"]]
            self.never_auto = [str(t) for t in listing.get("never_auto", [])]
            recorded = bool(listing.get("recorded"))
        except (ValueError, KeyError, TypeError) as exc:
            self._note(f"the run answered something that is not a rule list: {exc}")
            return
        options = self.query_one(OptionList)
        keep = options.highlighted or 0
        options.clear_options()
        for r in self.rules:
            made = f" at {when_text(r.made_at_ms)}" if r.made_at_ms else ""
            options.add_option(Option(f"{r.id:<5} {r.scope:<8} {r.describe()}  (made by {r.author or '?'}{made})", id=r.id))
        if self.rules:
            options.highlighted = min(keep, len(self.rules) - 1)
        never = f"never automatic: {', '.join(self.never_auto)}" if self.never_auto else ""
        if recorded:  # an ended run's, read from its events
            never = "the rules this run made, from its events (rules it started with are not recorded)"
            self._note(never if self.rules else "no rules made in this run (rules it started with are not recorded)")
            return
        self._note(never if self.rules else ("no rules. " + never).strip())

    def action_remove(self) -> None:
        options = self.query_one(OptionList)
        index = options.highlighted
        if index is None or not self.rules:
            self._note("no rule selected")
            return
        rule_id = options.get_option_at_index(index).id or ""
        rule = next((r for r in self.rules if r.id == rule_id), None)
        what = f"{rule_id} ({rule.describe()}, {rule.scope})" if rule is not None else rule_id
        machine = " It is saved for this machine: every run here asks again." if rule is not None and rule.scope == "machine" else ""

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._remove(rule_id), group="rules")

        self.app.push_screen(ConfirmScreen(f"Remove rule {what}? Calls like it are asked again from the next one.{machine}", yes="Remove"), confirmed)

    async def _remove(self, rule_id: str) -> None:
        ack = await self._ask({"op": "remove", "rule_id": rule_id})
        ok = AckResult(ack.result) is AckResult.SUCCESS
        self.notify(ack.detail, title="rule removed" if ok else "not removed", severity="information" if ok else "error")
        await self._load()

    def _note(self, text: str) -> None:
        self.query_one("#rules-note", Label).update(text)

    def action_close(self) -> None:
        self.dismiss(None)
