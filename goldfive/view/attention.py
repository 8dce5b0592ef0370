"""Does a run need a person now, why, and since when: one answer for every screen.

The runs screen's "needs you" column, the hub's ``RunSummary.needs_you``, ``ctl waiting`` and
the notifications all ask :func:`attention` of a run's :class:`~goldfive.view.state.RunState`,
so they never disagree. What needs a person: a recording that failed (the run paused until
its database can be written again), a pending approval, an escalation from the drift ladder
(GOLDFIVE_PAUSE_ESCALATE), a pause, a failed (aborted) run. Mere completion does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from goldfive.view.state import RunState

__all__ = ["Attention", "attention", "URGENCY"]

#: Sort rank of each kind: lower needs a person sooner.
URGENCY = {"recording": 0, "approval": 0, "escalation": 0, "failed": 1, "paused": 2}


@dataclass(frozen=True)
class Attention:
    #: "recording", "approval", "escalation", "failed" or "paused".
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


def attention(state: RunState) -> Attention | None:
    """What the run waits on a person for, the most urgent first; None when nothing."""
    if state.finished == "ABORTED":
        return Attention("failed", f"failed: {_clip(state.abort_reason) or 'aborted'}", state.ended_ms)
    if state.finished:
        return None
    if state.paused and state.pause_kind == "RECORDING":
        return Attention("recording", f"recording failed: {_clip(state.recording_error)}", state.paused_ms)
    if state.paused and state.pause_kind == "GOLDFIVE_PAUSE_ESCALATE":
        detail = next((d.detail for d in reversed(state.drifts)), "")
        return Attention("escalation", f"escalation: {_clip(detail) or 'the drift ladder paused the run'}", state.paused_ms)
    if state.approvals:
        oldest = min(state.approvals.values(), key=lambda a: a.requested_ms)
        what = oldest.tool_name or oldest.target_id
        more = f" (+{len(state.approvals) - 1} more)" if len(state.approvals) > 1 else ""
        return Attention("approval", f"approval: {what}{more}", oldest.requested_ms)
    if state.paused:
        return Attention("paused", "paused", state.paused_ms)
    return None


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
