"""Pure text formatting shared by the widgets: status marks, durations, event log lines."""

from __future__ import annotations

from contextvars import ContextVar

import json
from typing import Any, NamedTuple

from goldfive import conv
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.view import ControlView, TaskView
from goldfive.types import TaskStatus

STATUS_MARK: dict[TaskStatus, str] = {
    TaskStatus.PENDING: "○",
    TaskStatus.RUNNING: "◐",
    TaskStatus.COMPLETED: "●",
    TaskStatus.FAILED: "✗",
    TaskStatus.CANCELLED: "⊘",
    # Not ⏸ (U+23F8): many terminals draw it as a double-width emoji and common monospace
    # fonts lack it (a blank box in the screenshots).
    TaskStatus.BLOCKED: "‖",
    TaskStatus.NOT_NEEDED: "–",
}


class LogLine(NamedTuple):
    """One event log line. ``style`` names an EventLog component class suffix; ``event`` is
    the event it shows (None for a control sent from here), opened whole by Enter."""

    at: str
    label: str
    text: str
    style: str
    event: Event | None = None


def clock_text(ms: int) -> str:
    """mm:ss (or h:mm:ss) of a non-negative duration."""
    s = max(0, ms) // 1000
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def duration_text(ms: int) -> str:
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    return clock_text(ms)


def age_text(ms: int) -> str:
    s = max(0, ms) // 1000
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def compact_json(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)


#: Set while ``describe(ev, whole=True)`` runs: clip() keeps every character.
_WHOLE: ContextVar[bool] = ContextVar("goldfive_tui_whole", default=False)


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    if _WHOLE.get():
        return text
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def task_note(task: TaskView, now_ms: int) -> str:
    """What the plan tree shows after a task's title: duration, reason or progress."""
    st = task.status
    if st == TaskStatus.COMPLETED:
        d = task.duration_ms
        return duration_text(d) if d is not None else ""
    if st in (TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.BLOCKED, TaskStatus.NOT_NEEDED):
        return task.reason
    if st == TaskStatus.RUNNING:
        base = duration_text(max(0, now_ms - task.started_ms)) if task.started_ms else ""
        return f"{base} {task.progress}".strip()
    return ""


def control_line(view: ControlView, at: str) -> LogLine:
    """The one line of a control sent from here, rewritten as its ack (and, for STEER, the
    plan revision it produced) arrives: ``PAUSE sent → SUCCESS``."""
    summary = f' "{clip(view.summary, 60)}"' if view.summary else ""
    if not view.acked:
        return LogLine(at, "control", f"{view.kind}{summary} sent, waiting for the ack", "control")
    detail = f": {view.ack_detail}" if view.ack_detail else ""
    revision = f" → plan revision {view.revision}" if view.revision is not None else ""
    style = "ack-ok" if view.ack_result == "SUCCESS" else "ack-fail"
    return LogLine(at, "control", f"{view.kind}{summary} → {view.ack_result}{detail}{revision}", style)


def describe(ev: Event, *, whole: bool = False) -> tuple[str, str, str]:
    """(label, text, style) of one event for the event log; ``whole``: no field is shortened
    (the log's wrap mode shows every character)."""
    if whole:
        token = _WHOLE.set(True)
        try:
            return describe(ev)
        finally:
            _WHOLE.reset(token)
    kind = ev.WhichOneof("payload") or "unknown"
    p = getattr(ev, kind, None) if kind != "unknown" else None
    fn = _DESCRIBE.get(kind)
    if fn is None or p is None:
        return kind, "", "other"
    text, style = fn(p)
    return _LABELS.get(kind, kind), text, style


def _task_id(p: Any) -> tuple[str, str]:
    return p.task_id, "task"


def _drift(p: Any) -> tuple[str, str]:
    sev = str(conv.drift_severity_from_pb(p.severity)) or "INFO"
    kind = str(conv.drift_kind_from_pb(p.kind)) or "UNSPECIFIED"
    return f"{kind} {sev}: {clip(p.detail, 80)}", f"drift-{sev.lower()}"


def _plan(p: Any, *, revised: bool) -> tuple[str, str]:
    n = len(p.plan.tasks)
    if not revised:
        return f"rev {p.plan.revision_index}  {n} tasks", "plan"
    d = p.diff
    return (
        f"rev {p.plan.revision_index}  +{len(d.added_task_ids)} -{len(d.removed_task_ids)} "
        f"~{len(d.modified_task_ids)}",
        "plan",
    )


def _status(value: int) -> str:
    return str(conv.task_status_from_pb(value)) if value else "UNSPECIFIED"


_LABELS = {"drift_detected": "drift"}
_ACK_NAMES = {1: "SUCCESS", 2: "FAILURE", 3: "UNSUPPORTED"}

_DESCRIBE: dict[str, Any] = {
    "run_started": lambda p: (clip(p.goal_summary, 80), "run"),
    "goal_derived": lambda p: (", ".join(g.summary for g in p.goals), "run"),
    "plan_submitted": lambda p: _plan(p, revised=False),
    "plan_revised": lambda p: _plan(p, revised=True),
    "task_started": _task_id,
    "task_progress": lambda p: (f"{p.task_id} {clip(p.detail, 70)}", "dim"),
    "task_completed": lambda p: (f'{p.task_id} "{clip(p.result_summary, 60)}"', "ok"),
    "task_failed": lambda p: (f"{p.task_id} {clip(p.reason, 70)}", "fail"),
    "task_cancelled": lambda p: (f"{p.task_id} {clip(p.reason, 70)}", "warn"),
    "task_blocked": lambda p: (f"{p.task_id} {clip(p.blocker, 70)}", "warn"),
    "task_transitioned": lambda p: (
        f"{p.task_id} {_status(p.from_status)} -> {_status(p.to_status)} {p.reason}".rstrip(),
        "task",
    ),
    "drift_detected": _drift,
    "approval_requested": lambda p: (f"{p.target_id} ({p.kind}) {clip(p.prompt, 60)}", "approval"),
    "approval_granted": lambda p: (f"{p.target_id} {p.detail}".rstrip(), "ok"),
    "approval_rejected": lambda p: (f"{p.target_id} {p.detail}".rstrip(), "fail"),
    "approval_decided": lambda p: (
        f"{p.outcome} {p.tool_name or p.target_id} by {p.author}" + (f" via {p.client}" if p.client else "")
        + (f": {clip(p.reason, 60)}" if p.reason else ""),
        "ok" if p.outcome.startswith("APPROVED") or p.outcome == "EDITED_APPROVED" else "fail",
    ),
    "approval_expiring": lambda p: (f"{p.target_id}: {p.on_timeout} in {p.ms_left / 1000:.0f}s unless decided", "warn"),
    "approval_reminded": lambda p: (f"{p.target_id}: still undecided after {p.waited_ms / 1000:.0f}s (reminder {p.reminder})", "warn"),
    "approval_escalated": lambda p: (f"{p.target_id}: escalated after {p.waited_ms / 1000:.0f}s ({p.why})", "warn"),
    "control_received": lambda p: (f"{p.kind} by {p.author}" if p.author else p.kind, "control"),
    "control_acked": lambda p: (
        f"{p.kind} {_ACK_NAMES.get(p.ack.result, '?')} {p.ack.detail}".rstrip(),
        "ack-ok" if p.ack.result == 1 else "ack-fail",
    ),
    "message_parked": lambda p: (f"{p.lane} {p.role}: {clip(p.text, 60)}", "dim"),
    "message_delivered": lambda p: (f"{p.lane} via {p.via}", "dim"),
    "message_returned": lambda p: (f"{p.lane} {p.message_id}", "dim"),
    "conversation_started": lambda p: (p.lane, "dim"),
    "conversation_ended": lambda p: (f"{p.lane} {p.reason}".rstrip(), "dim"),
    "invocation_abandoned": lambda p: (f"{p.task_id} after {p.grace_s:g}s: {p.reason}", "fail"),
    "run_resumed": lambda p: (f"#{p.resume_count}: {clip(p.detail, 100)}", "ok"),
    "recording_failed": lambda p: (f"paused: {clip(p.detail, 100)}", "fail"),
    "agent_step": lambda p: (
        (f"{p.task_id} {p.tool_name}({clip(p.args_json, 50)}) {p.outcome}: {clip(p.text, 40)}", "fail" if p.outcome in ("error", "rejected") else "dim")
        if p.step == "tool_call"
        else (f"{p.task_id} {p.tool_name or p.step}: {clip(p.text, 70)}", "dim")
        if p.step in ("hook", "usage")
        else (f"{p.task_id} model: {clip(p.text, 70)}", "dim")
    ),
    "run_completed": lambda p: (clip(p.outcome_summary, 80), "ok"),
    "run_aborted": lambda p: (clip(p.reason, 80), "fail"),
}
