"""The views a run's event stream folds into (``goldfive.view.state.RunState`` holds them):
the run's phase, each task, approval, control and drift as a watcher sees it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from goldfive.control import AppliedAs, normalize_kind
from goldfive.controls.payloads import Custom, decode_payload
from goldfive.errors import GoldfiveError
from goldfive.types import TaskStatus
from goldfive.usage.model import UsageTotals

_NO_USAGE = UsageTotals()


class RunPhase(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    #: Paused while a task still runs: it finishes, no new task starts.
    PAUSING = "PAUSING"
    PAUSED = "PAUSED"
    COMPLETED = "COMPLETED"
    ABORTED = "ABORTED"


@dataclass(slots=True)
class TaskView:
    id: str
    title: str
    description: str = ""
    status: TaskStatus = TaskStatus.PENDING
    deps: tuple[str, ...] = ()
    started_ms: int = 0
    ended_ms: int = 0
    progress: str = ""
    fraction: float = -1.0
    result: str = ""
    #: Why it was cancelled, failed, blocked or changed status.
    reason: str = ""
    #: The plan revision in which the task first appeared (0: the submitted plan).
    added_revision: int = 0
    #: The model calls made for it (every attempt).
    usage: UsageTotals = _NO_USAGE

    @property
    def duration_ms(self) -> int | None:
        if self.started_ms and self.ended_ms >= self.started_ms:
            return self.ended_ms - self.started_ms
        return None


@dataclass(frozen=True, slots=True)
class ApprovalView:
    target_id: str
    kind: str
    prompt: str
    task_id: str
    tool_name: str
    args: Any
    args_json: str
    requested_ms: int
    timeout_ms: int
    #: The tool's parameters as a JSON schema (edited arguments are checked against it).
    parameters_json: str = ""
    #: What the deadline does: "wait", "reject" or "escalate" ("" from older recordings).
    on_timeout: str = ""
    #: The sequence of the ApprovalRequested event in its run (-1: not known).
    sequence: int = -1
    #: False when the agent's framework takes no edited arguments for it.
    editable: bool = True
    #: Reminders announced so far, and when it was escalated (0: not yet).
    reminders: int = 0
    escalated_ms: int = 0
    #: A question (kind "question"): the answers offered, and whether a typed one is taken.
    options: tuple[str, ...] = ()
    free_text: bool = True
    #: The run's reviewer on it (docs/approvals.md#a-reviewer): "approve" / "reject" (applied
    #: after its grace unless a person decides), "ask" (escalated to a person), "" not reviewed;
    #: its reason, or what failed when it could not decide.
    review: str = ""
    review_reason: str = ""
    #: The reviewer looks at it first (ApprovalRequested.under_review), and when it gave its
    #: verdict (event clock, 0: not yet).
    under_review: bool = False
    reviewed_ms: int = 0

    @property
    def is_question(self) -> bool:
        return self.kind == "question"

    @property
    def with_reviewer(self) -> bool:
        """The reviewer has it, not a person: it is reviewing, or its approve / reject waits
        out its grace. Once it asks (its verdict "ask", or it could not decide) a person has it."""
        return self.under_review and self.review != "ask"


@dataclass(slots=True)
class ControlView:
    id: str
    kind: str
    summary: str
    sent_ms: int = 0
    author: str = ""
    ack_result: str = ""
    ack_detail: str = ""
    acked_ms: int = 0
    #: For STEER: the plan revision it produced, once plan_revised arrived.
    revision: int | None = None
    #: What the ack says the control was applied as (None before the ack, or not said).
    applied_as: AppliedAs | None = None

    @property
    def acked(self) -> bool:
        return bool(self.ack_result)


@dataclass(frozen=True, slots=True)
class DriftView:
    id: str
    kind: str
    severity: str
    detail: str
    task_id: str
    at_ms: int
    #: What a detector saw: (when, what) pairs such as (ms, 'deploy({"v": 2})'), oldest first.
    evidence: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class BudgetPauseView:
    """The budget_reached that holds a run paused: which limit, used and allowed."""

    limit: str
    used: float
    allowed: float
    #: "tokens 3,000 of 2,500".
    detail: str
    #: The budget_reached event's sequence: names this pause (a link to it decides it only).
    sequence: int
    at_ms: int

    @property
    def target_id(self) -> str:
        """What a link to this pause names: "budget-SEQUENCE"."""
        return f"budget-{self.sequence}"


def summarize_payload(kind: str, payload: dict[str, Any]) -> str:
    """A one-line human summary of a control's payload (its typed payload's ``summary``)."""
    try:
        typed = decode_payload(normalize_kind(kind), payload)
    except GoldfiveError:
        typed = None
    if typed is not None and not isinstance(typed, Custom):
        return typed.summary
    return ", ".join(f"{k}={v}" for k, v in sorted(payload.items())) if payload else ""


def parse_args(args_json: str) -> Any:
    if not args_json:
        return None
    try:
        return json.loads(args_json)
    except ValueError:
        return args_json  # shown verbatim rather than dropped


