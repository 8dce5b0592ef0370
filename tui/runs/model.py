"""What the runs screen shows, whatever the runs come from: rows, waiting items, the source.

A :class:`RunsSource` gives a :class:`Snapshot` of every run (``poll``), opens one run as the
per-run :class:`~goldfive_tui.source.RunSource` the usual screen reads, and answers a waiting
item (``decide``). Two implement it: :class:`~goldfive_tui.runs.local.InProcessRuns` (Runners
in this process) and :class:`~goldfive_tui.runs.remote.RemoteRuns` (a ``goldfive serve`` hub).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from goldfive.control import ControlAck
from goldfive.errors import GoldfiveError
from goldfive.notify import Notice
from goldfive.view.attention import LIVE_STATES, attention, order_key, reviewer_has, state_label
from goldfive.view.state import RunState
from goldfive.types import TaskStatus
from goldfive.usage.model import UsageTotals

from ..source import RunSource

__all__ = ["LIVE_STATES", "MarkRefused", "RunRow", "RunsSource", "Snapshot", "WaitingItem", "row_from_state", "sort_rows", "waiting_from_state"]


@dataclass(frozen=True, slots=True)
class RunRow:
    run_id: str
    #: PENDING, RUNNING, PAUSING, PAUSED, COMPLETED, ABORTED (or a hub's connection state).
    state: str
    done: int
    total: int
    current_task: str
    started_ms: int
    #: "local" (this process), "hosted" (in the hub's process) or "connected".
    origin: str
    #: "approval", "escalation", "failed", "paused" or "" (nothing needs a person).
    needs_kind: str = ""
    needs_reason: str = ""
    needs_since_ms: int = 0
    goal: str = ""
    #: The run's model calls so far (tokens, cost).
    usage: UsageTotals = UsageTotals()
    #: A person has acknowledged that the run failed: it needs nobody any more.
    acknowledged: bool = False
    #: Nothing needs a person, but the run's reviewer has approvals ("reviewer has deploy").
    reviewing: str = ""

    @property
    def failed(self) -> bool:
        return self.state == "ABORTED"

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES

    def sort_key(self) -> tuple[int, int, str]:
        """The order of every list of runs (:func:`goldfive.view.attention.order_key`)."""
        return order_key(self.needs_kind, self.needs_since_ms, self.state, self.started_ms, self.run_id)

    def searchable(self) -> str:
        return " ".join((self.run_id, self.state, self.current_task, self.origin, self.needs_reason, self.goal)).lower()


@dataclass(frozen=True, slots=True)
class WaitingItem:
    """One pending approval, question or escalation of one run."""

    run_id: str
    #: "approval", "question" or "escalation".
    kind: str
    target_id: str
    task_id: str = ""
    tool_name: str = ""
    args_json: str = ""
    prompt: str = ""
    since_ms: int = 0
    goal: str = ""
    #: A question's options, and whether it takes a typed answer.
    options: tuple[str, ...] = ()
    free_text: bool = True
    #: A tool call's parameters (JSON schema), when known here: edited arguments are checked
    #: against it before they are sent (the run checks them again in any case).
    parameters_json: str = ""

    @property
    def key(self) -> str:
        return f"{self.run_id}/{self.kind}/{self.target_id}"

    @property
    def what(self) -> str:
        if self.kind == "question":
            return "question"
        return self.tool_name or self.target_id if self.kind == "approval" else "escalation"

    def notice(self) -> Notice:
        if self.kind == "question":
            reason = f"question: {self.prompt}"
        else:
            reason = f"approval: {self.tool_name or self.target_id}" if self.kind == "approval" else f"escalation: {self.prompt}"
        return Notice(self.run_id, self.kind, reason, self.since_ms, self.target_id, self.task_id, self.tool_name,
                      self.prompt if self.kind != "escalation" else "", self.goal)  # fmt: skip


@dataclass(frozen=True)
class Snapshot:
    rows: list[RunRow] = field(default_factory=list)
    waiting: list[WaitingItem] = field(default_factory=list)
    #: Why part of it could not be read this time ("" when all went well).
    problem: str = ""
    #: The hub could not be reached: these rows are the last ones read, kept (not live).
    disconnected: bool = False

    def notices(self) -> list[Notice]:
        """Everything that waits for a person and is worth a notification (not a pause a
        person made)."""
        out = [w.notice() for w in self.waiting]
        out += [Notice(r.run_id, "failed", r.needs_reason, r.needs_since_ms, goal=r.goal) for r in self.rows if r.needs_kind == "failed"]
        return out


class RunsSource(Protocol):
    title: str
    #: The runs live in this process: quitting ends them.
    owns_runs: bool

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def poll(self) -> Snapshot:
        """Every run's row and every waiting item, now."""
        ...

    def open(self, run_id: str) -> RunSource:
        """The run as the usual screen's source (stopping it leaves the run going)."""
        ...

    async def decide(
        self, item: WaitingItem, approve: bool, reason: str = "", answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
    ) -> ControlAck:
        """Approve or reject an approval; answer a question (``answer``: the ANSWER payload's
        text or option; ``arguments``: a tool call's edited arguments, approved as edited);
        for an escalation, approve resumes the run and reject cancels it (with the reason)."""
        ...

    async def mark(self, run_id: str, mark: str, *, undo: bool = False) -> None:
        """Put a person's mark on the run (goldfive.store.registry: acknowledged, archived),
        or take it off; MarkRefused (in words) when the run cannot take it."""
        ...


class MarkRefused(GoldfiveError):
    """A mark the run cannot take: acknowledging a run that did not fail, archiving a live one."""


def sort_rows(rows: list[RunRow]) -> list[RunRow]:
    return sorted(rows, key=RunRow.sort_key)


def _current_task(state: RunState) -> str:
    for task in state.ordered_tasks():
        if task.status == TaskStatus.RUNNING:
            return task.title or task.id
    return ""


def row_from_state(state: RunState, run_id: str, origin: str, *, acknowledged: bool = False) -> RunRow:
    need = attention(state, acknowledged=acknowledged)
    done = state.count_status(TaskStatus.COMPLETED)
    return RunRow(
        run_id=run_id,
        state=state_label(state),
        done=done,
        total=len(state.tasks),
        current_task=_current_task(state),
        started_ms=state.started_ms,
        origin=origin,
        needs_kind=need.kind if need else "",
        needs_reason=need.reason if need else "",
        needs_since_ms=need.since_ms if need else 0,
        goal=state.goal_summary,
        usage=state.usage,
        acknowledged=acknowledged,
        reviewing=reviewer_has(state) if need is None else "",
    )


def waiting_from_state(state: RunState, run_id: str) -> list[WaitingItem]:
    items = [
        WaitingItem(run_id, "question" if a.is_question else "approval", a.target_id, a.task_id, a.tool_name, a.args_json, a.prompt,
                    a.requested_ms, state.goal_summary, a.options, a.free_text, a.parameters_json)  # fmt: skip
        for a in state.waiting_for_a_person()  # not those the run's reviewer has, until it asks
    ]
    need = attention(state)
    if need is not None and need.kind == "escalation":
        detail = need.reason.removeprefix("escalation: ")
        task = next((d.task_id for d in reversed(state.drifts)), "")
        items.append(WaitingItem(run_id, "escalation", task or run_id, task, "", "", detail, need.since_ms, state.goal_summary))
    return items
