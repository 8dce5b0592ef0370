"""What a link page can be about: one small class per kind of item a person decides.

An :class:`ItemKind` finds its items in a run's state (what waits now), says what the page shows
(facts, a block of formatted arguments) and which actions it offers (each a form), and turns a
submitted form into the control the hub sends, or a sentence saying what to fix. The pages
(goldfive.phone.pages), the links, the index and the notices know nothing more of a kind than
this, so another kind plugs in as one class and one entry in :data:`KINDS`:

* a question (docs/approvals.md#questions) is an approval of kind "question" underneath, so
  :class:`ApprovalKind` pages it too (a link issued for it stays valid): one button per
  option, a line for a typed answer when it takes one, both sent as ANSWER, and "No".
* a budget pause (docs/cost.md#budgets): :class:`BudgetKind` pages the budget_reached that
  holds a run paused (target id ``budget-SEQUENCE``: a link decides that pause only), one
  action "raise and continue" with the new limit of the dimension reached, sent as a BUDGET
  control with ``resume``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from goldfive.approvals.arguments import arguments_problem
from goldfive.budget.model import BudgetError, format_limit, read_value
from goldfive.control import ControlKind, ControlMessage
from goldfive.view.models import ApprovalView, BudgetPauseView
from goldfive.view.state import RunState

__all__ = ["KINDS", "Action", "ApprovalKind", "BudgetKind", "Field", "Item", "ItemKind", "item_kind_for_notice"]

#: The ledger's name for decisions made through a link page.
CLIENT = "link"


@dataclass(frozen=True)
class Field:
    """One input of an action's form."""

    name: str
    label: str
    #: "text" (one line), "textarea", "number".
    widget: str = "text"
    value: str = ""
    required: bool = False


@dataclass(frozen=True)
class Action:
    """A button (with its form's fields) on an item's page."""

    name: str
    label: str
    fields: tuple[Field, ...] = ()
    #: "primary" (the one-tap action), "danger", or "".
    style: str = ""


@dataclass(frozen=True)
class Item:
    """One thing waiting for a person, as the pages show it."""

    kind: str
    run_id: str
    target_id: str
    #: The headline: "deploy" or the question.
    title: str
    #: What the tool or the question is (for --approvers and notice filters; "" for none).
    tool_name: str
    since_ms: int
    #: Epoch seconds after which the item decides itself (its timeout policy), or None.
    deadline_s: float | None
    #: (label, value) lines shown above the actions.
    facts: tuple[tuple[str, str], ...] = ()
    #: A preformatted block (the arguments as indented JSON), "" for none.
    code: str = ""
    actions: tuple[Action, ...] = ()
    #: What the kind needs to build its control (the state's own view).
    source: Any = field(default=None, compare=False, repr=False)


class ItemKind(Protocol):
    """A kind of item (see the module's docstring)."""

    #: The name links and the index carry.
    name: str
    #: The notice kinds (goldfive.notify) whose notices name an item of this kind.
    notice_kinds: tuple[str, ...]

    def pending(self, run_id: str, state: RunState) -> Iterable[Item]:
        """Every item of this kind the run waits on now."""
        ...

    def find(self, run_id: str, state: RunState, target_id: str) -> Item | None:
        """The item ``target_id`` if the run waits on it now, else None (decided, gone)."""
        ...

    def control(self, item: Item, action: str, form: Mapping[str, str]) -> ControlMessage | str:
        """The control ``action`` with ``form`` sends, or a sentence saying what to fix (the
        page shows it, and nothing is sent)."""
        ...


def _age(ms: int) -> str:
    """How long ago epoch-milliseconds ``ms`` was, in words."""
    return _span(time.time() - ms / 1000 if ms else 0)


def _span(seconds_f: float) -> str:
    seconds = max(0, int(seconds_f))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class ApprovalKind:
    """A pending approval: a tool call (approve, reject with a reason, edit the arguments
    and approve, checked as ``e`` in the TUI checks them), a task approval, or a question
    (pick one of its options or type an answer: ANSWER; or no)."""

    name = "approval"
    notice_kinds: tuple[str, ...] = ("approval", "question")

    def pending(self, run_id: str, state: RunState) -> Iterable[Item]:
        goal = state.goal_summary
        for view in list(state.approvals.values()):
            yield self._item(run_id, state, view, goal)

    def find(self, run_id: str, state: RunState, target_id: str) -> Item | None:
        view = state.approvals.get(target_id)
        return None if view is None else self._item(run_id, state, view, state.goal_summary)

    def _item(self, run_id: str, state: RunState, view: ApprovalView, goal: str) -> Item:
        question = view.kind == "question"
        task = state.tasks.get(view.task_id)
        facts = [("goal", goal or "(none given)")]
        if view.task_id:
            facts.append(("task", f"{view.task_id}: {task.title}" if task is not None and task.title else view.task_id))
        if view.tool_name:
            facts.append(("tool", view.tool_name))
        if view.prompt and not question:
            facts.append(("asks", view.prompt))
        facts.append(("waiting", _age(view.requested_ms)))
        deadline = None
        if view.timeout_ms and view.on_timeout in ("reject", "escalate") and view.requested_ms:
            deadline = (view.requested_ms + view.timeout_ms) / 1000
            verb = "rejected" if view.on_timeout == "reject" else "escalated (the run pauses)"
            facts.append(("deadline", f"{verb} in {_span(deadline - time.time())} unless decided"))
        if view.escalated_ms:
            facts.append(("escalated", f"{_age(view.escalated_ms)} ago"))
        if view.review:
            facts.append(("reviewer", f"{'asks you' if view.review == 'ask' else view.review}: {view.review_reason}"))
        code = ""
        if view.kind == "tool":
            code = json.dumps(view.args, indent=2, ensure_ascii=False, sort_keys=True) if view.args is not None else view.args_json
        actions: tuple[Action, ...]
        if question:
            if view.options:
                facts.append(("options", " / ".join(view.options) + ("" if view.free_text else " (pick one)")))
            actions = tuple(Action(f"option:{n}", option, style="primary" if n == 0 else "") for n, option in enumerate(view.options))
            if view.free_text or not view.options:
                actions += (Action("answer", "Answer", (Field("text", "Your answer", "textarea", "", True),), "" if view.options else "primary"),)
            actions += (Action("reject", "No", (Field("reason", "Why not (optional)"),), "danger"),)
        else:
            actions = (
                Action("approve", "Approve", style="primary"),
                Action("reject", "Reject", (Field("reason", "Reason (optional)"),), "danger"),
            )
            if view.kind == "tool" and view.editable:
                actions += (Action("edit", "Approve with these arguments", (Field("arguments", "Arguments (JSON)", "textarea", code, True),)),)
        title = view.prompt if question else (view.tool_name or view.prompt or view.target_id)
        return Item(
            self.name, run_id, view.target_id, title, view.tool_name, view.requested_ms, deadline,
            tuple(facts), code, actions, view,
        )  # fmt: skip

    def control(self, item: Item, action: str, form: Mapping[str, str]) -> ControlMessage | str:
        view: ApprovalView = item.source
        payload: dict[str, Any] = {"target_id": item.target_id, "client": CLIENT}
        if view.kind == "question" and action.startswith("option:"):
            n = action.removeprefix("option:")
            if not n.isdigit() or int(n) >= len(view.options):
                return f"{action!r} is not one of the options this question offers"
            return ControlMessage(ControlKind.ANSWER, payload={**payload, "option": view.options[int(n)]})
        if view.kind == "question" and action == "answer" and (view.free_text or not view.options):
            text = form.get("text", "").strip()
            if not text:
                return "the answer is empty; nothing was sent"
            return ControlMessage(ControlKind.ANSWER, payload={**payload, "text": text})
        if action == "approve" and view.kind != "question":
            return ControlMessage(ControlKind.APPROVE, payload=payload)
        if action == "reject":
            payload["detail"] = form.get("reason", "").strip()
            return ControlMessage(ControlKind.REJECT, payload=payload)
        if action == "edit" and view.kind == "tool" and view.editable:
            try:
                arguments = json.loads(form.get("arguments", ""))
            except ValueError as exc:
                return f"the arguments are not JSON ({exc.args[0] if exc.args else exc}); nothing was sent"
            try:
                parameters = json.loads(view.parameters_json) if view.parameters_json else None
            except ValueError:
                parameters = None
            problem = arguments_problem(parameters if isinstance(parameters, dict) else None, arguments)
            if problem:
                return f"edited arguments refused: {problem}; nothing was sent"
            payload["arguments"] = arguments
            return ControlMessage(ControlKind.APPROVE, payload=payload)
        return f"{action!r} is not something this page offers for {item.title}"


def _plain(limit: str, value: float) -> str:
    """A limit's value as a person types it back: 6000, 4.5."""
    if limit in ("tokens", "model_calls", "tool_calls"):
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".") if limit == "usd" else str(int(value) if value == int(value) else value)


class BudgetKind:
    """A run its budget paused (budget_reached): the goal, the limit reached with its used and
    allowed figures, the whole budget; "raise and continue" sends BUDGET with the new limit of
    that dimension and ``resume`` (the run goes on once the new budget allows it)."""

    name = "budget"
    notice_kinds: tuple[str, ...] = ("budget",)

    def pending(self, run_id: str, state: RunState) -> Iterable[Item]:
        item = self._item(run_id, state)
        return () if item is None else (item,)

    def find(self, run_id: str, state: RunState, target_id: str) -> Item | None:
        item = self._item(run_id, state)
        return item if item is not None and item.target_id == target_id else None

    def _item(self, run_id: str, state: RunState) -> Item | None:
        pause = state.budget_pause
        if pause is None or not state.paused or state.finished or state.pause_kind != "BUDGET":
            return None
        facts = [("goal", state.goal_summary or "(none given)"), ("reached", pause.detail or pause.limit)]
        line = state.budget_line()
        if line and line != pause.detail:  # the other limits too
            facts.append(("budget", line))
        facts.append(("waiting", _age(pause.at_ms)))
        suggested = 2 * pause.allowed if 2 * pause.allowed > pause.used else 2 * pause.used
        label = f"New {pause.limit} limit (now {format_limit(pause.limit, pause.allowed)}; none: no limit)"
        action = Action("raise", "Raise and continue", (Field("limit", label, "text", _plain(pause.limit, suggested), True),), "primary")
        title = f"Budget reached: {pause.limit}"
        return Item(self.name, run_id, pause.target_id, title, "", pause.at_ms, None, tuple(facts), "", (action,), pause)

    def control(self, item: Item, action: str, form: Mapping[str, str]) -> ControlMessage | str:
        pause: BudgetPauseView = item.source
        if action != "raise":
            return f"{action!r} is not something this page offers for {item.title}"
        text = form.get("limit", "").strip()
        if not text:
            return f"give the new {pause.limit} limit; nothing was sent"
        try:
            value = read_value(pause.limit, text)
        except BudgetError as exc:
            return f"{exc}; nothing was sent"
        if value is not None and value <= pause.used:
            used = format_limit(pause.limit, pause.used)
            return f"{format_limit(pause.limit, value)} is not above what is used ({used}): the run would stay paused; nothing was sent"
        payload: dict[str, Any] = {pause.limit: 0 if value is None else value, "resume": True, "client": CLIENT}
        return ControlMessage(ControlKind.BUDGET, payload=payload)


#: Every kind of item a link can name, by name.
KINDS: dict[str, ItemKind] = {ApprovalKind.name: ApprovalKind(), BudgetKind.name: BudgetKind()}


def item_kind_for_notice(notice_kind: str) -> ItemKind | None:
    """The kind whose items notices of ``notice_kind`` name (None: such a notice has no page)."""
    return next((kind for kind in KINDS.values() if notice_kind in kind.notice_kinds), None)
