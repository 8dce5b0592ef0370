"""Does a run need a person now, why, and since when: one answer for every screen.

The runs screen's "needs you" column, the hub's ``RunSummary.needs_you``, ``ctl waiting`` and
the notifications all ask :func:`attention` of a run's :class:`~goldfive.view.state.RunState`,
so they never disagree. What needs a person: a recording that failed (the run paused until
its database can be written again), a pending approval or question (not one the run's
reviewer has, until it asks a person: :func:`reviewer_has` says so), an escalation from the drift ladder
(GOLDFIVE_PAUSE_ESCALATE), a pause, a failed (aborted) run. Mere completion does not, nor
does a run its person cancelled (:func:`cancelled_by_person`): that is shown as CANCELLED.

Every list of runs (the runs screen, ``ctl runs``, ``n``) is in one order, :func:`order_key`:
what needs a person first (most urgent, then waiting longest), then live runs, then ended ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldfive.types import DriftKind, DriftSeverity
from goldfive.view.models import ApprovalView, DriftView
from goldfive.view.state import RunState

__all__ = [
    "CANCELLED",
    "Attention",
    "LIVE_STATES",
    "URGENCY",
    "attention",
    "cancelled_by_person",
    "escalation_drift",
    "kind_of_reason",
    "mark_refusal",
    "order_key",
    "reviewer_has",
    "reviewer_holds",
    "state_label",
]

#: Sort rank of each kind: lower needs a person sooner.
URGENCY = {"recording": 0, "approval": 0, "question": 0, "escalation": 0, "budget": 0, "failed": 1, "paused": 2}

#: The states (as a run's summary names them) of a run that is still going.
LIVE_STATES = frozenset({"PENDING", "RUNNING", "PAUSING", "PAUSED"})
#: How an ended run that a person cancelled is labelled (an ABORTED run that failed is ABORTED).
CANCELLED = "CANCELLED"
#: The reason the runner records when its own process cancels the run (the TUI quit or was closed).
_PROCESS_CANCEL = "run cancelled"


@dataclass(frozen=True)
class Attention:
    #: "recording", "approval", "question", "escalation", "budget", "failed" or "paused".
    kind: str
    #: In words, for a column or a notification: "approval: publish_deck", "escalation: ...".
    reason: str
    #: Event-clock milliseconds since which the run has needed a person.
    since_ms: int

    @property
    def rank(self) -> int:
        return URGENCY[self.kind]

    def age_s(self, now_ms: int) -> float:
        return max(0.0, (now_ms - self.since_ms) / 1000) if self.since_ms else 0.0


def cancelled_by_person(state: RunState) -> bool:
    """The run ended because someone ended it: a CANCEL control it acked (``c``, quit then
    Cancel, ``ctl cancel``), or its own process cancelling it (a TUI closed). Not a failure."""
    if state.finished != "ABORTED":
        return False
    if state.abort_reason == _PROCESS_CANCEL:
        return True
    if any(d.kind == DriftKind.USER_CANCEL for d in state.drifts):
        return True
    return any(c.kind == "CANCEL" and c.ack_result == "SUCCESS" for c in state.controls.values())


def state_label(state: RunState) -> str:
    """The run's state as lists show it: its phase, CANCELLED for a run a person ended."""
    return CANCELLED if cancelled_by_person(state) else str(state.phase)


def attention(state: RunState, *, acknowledged: bool = False) -> Attention | None:
    """What the run waits on a person for, the most urgent first; None when nothing.
    ``acknowledged``: a person has seen that the run failed (it needs nobody any more)."""
    if state.finished == "ABORTED":
        if acknowledged or cancelled_by_person(state):
            return None
        return Attention("failed", f"failed: {_clip(state.abort_reason) or 'aborted'}", state.ended_ms)
    if state.finished:
        return None
    if state.paused and state.pause_kind == "RECORDING":
        return Attention("recording", f"recording failed: {_clip(state.recording_error)}", state.paused_ms)
    if state.paused and state.pause_kind == "BUDGET":
        return Attention("budget", state.budget_reached or "budget reached", state.paused_ms)
    if state.paused and state.pause_kind == "GOLDFIVE_PAUSE_ESCALATE":
        detail = escalation_drift(state).detail
        return Attention("escalation", f"escalation: {_clip(detail) or 'the drift ladder paused the run'}", state.paused_ms)
    waiting = state.waiting_for_a_person()  # not those the run's reviewer has: it asks when it needs one
    if waiting:
        oldest = min(waiting, key=_asked_ms)
        more = f" (+{len(waiting) - 1} more)" if len(waiting) > 1 else ""
        if oldest.is_question:
            return Attention("question", f"question: {_clip(oldest.prompt, 60) or oldest.target_id}{more}", oldest.requested_ms)
        what = oldest.tool_name or oldest.target_id
        if oldest.review == "ask":
            why = f" (the reviewer asks you: {_clip(oldest.review_reason, 60)})" if oldest.review_reason else " (the reviewer asks you)"
            return Attention("approval", f"approval: {what}{why}{more}", _asked_ms(oldest))
        return Attention("approval", f"approval: {what}{more}", oldest.requested_ms)
    if state.paused:
        return Attention("paused", "paused", state.paused_ms)
    return None


def escalation_drift(state: RunState) -> DriftView:
    """The drift an escalation is about: the latest one of WARNING or above (what the ladder
    escalates), not a later INFO one such as the snapshot a STATUS_QUERY records (a person
    asking what the run does must not replace why it waits for them); the latest of any when
    there is none. An empty DriftView when the run has none."""
    latest = None
    for d in reversed(state.drifts):
        if d.severity != DriftSeverity.INFO:
            return d
        latest = latest or d
    return latest or DriftView(id="", kind="", severity="", detail="", task_id="", at_ms=0)


def _asked_ms(a: ApprovalView) -> int:
    """Since when a person has been asked: its request, or the reviewer's "ask"."""
    return a.reviewed_ms if a.under_review and a.reviewed_ms else a.requested_ms


def reviewer_has(state: RunState) -> str:
    """"reviewer has deploy (+1 more)": the run's pending approvals its reviewer has (not a
    person: see :func:`attention`), "" when none or once the run ended."""
    held = state.with_reviewer() if not state.finished else []
    if not held:
        return ""
    oldest = min(held, key=lambda a: a.requested_ms)
    more = f" (+{len(held) - 1} more)" if len(held) > 1 else ""
    return f"reviewer has {oldest.tool_name or oldest.target_id}{more}"


def reviewer_holds(summary: Any) -> str:
    """What a hub's run summary says of approvals its reviewer has: "reviewer has 2
    approvals" when nothing needs a person (``needs_you`` empty: :func:`attention` skips
    those the reviewer has) yet approvals wait on a live run; "" otherwise."""
    n = int(summary.waiting_approvals)
    if summary.needs_you or not n or summary.state not in LIVE_STATES:
        return ""
    return f"reviewer has {n} approval{'s' if n > 1 else ''}"


def kind_of_reason(reason: str) -> str:
    """The kind of an :class:`Attention` from its ``reason`` alone (a hub's ``needs_you``
    carries only the words): "" for no reason, "approval" for words it did not write."""
    if not reason:
        return ""
    if reason.startswith("recording failed"):
        return "recording"
    head = reason.split(":", 1)[0].split(" ", 1)[0].lower()
    return head if head in URGENCY else "approval"


def order_key(needs_kind: str, needs_since_ms: int, state: str, started_ms: int, run_id: str) -> tuple[int, int, str]:
    """Where a run goes in every list of runs: what needs a person first (most urgent, then
    waiting longest), then live runs (newest first), then ended ones (newest first)."""
    if needs_kind:
        return (URGENCY.get(needs_kind, 2), needs_since_ms, run_id)
    return (3 if state in LIVE_STATES else 4, -started_ms, run_id)


def mark_refusal(state: RunState, mark: str, *, undo: bool = False, interrupted: bool = False) -> str:
    """Why a person's ``mark`` (goldfive.store.registry: acknowledged, archived) cannot be put
    on this run ("" when it can): only a failure is acknowledged, only an ended run archived."""
    from goldfive.store.registry import ACKNOWLEDGED, ARCHIVED, MARKS

    if mark not in MARKS:
        return f"unknown mark {mark!r}: {' or '.join(MARKS)}"
    if undo:
        return ""
    label = state_label(state)
    if mark == ACKNOWLEDGED and (state.finished != "ABORTED" or label == CANCELLED):
        return f"run {state.run_id} has not failed ({'INTERRUPTED' if interrupted else label}): nothing to acknowledge"
    if mark == ARCHIVED and not state.finished and not interrupted:
        return f"run {state.run_id} is {label}: cancel it (or let it end) before archiving it"
    return ""


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
