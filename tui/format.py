"""Pure text formatting shared by the widgets: status marks, durations, event log lines.

What an event's log line says comes from ``goldfive.event_kinds`` (the one table of event
kinds every text view uses); this module lays it out for the log."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from goldfive.event_kinds import EVENT_KINDS, render_fields
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


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _whole_field(text: str, width: int) -> str:
    return " ".join(text.split())


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


def control_line(view: ControlView, at: str, *, received: bool = False) -> LogLine:
    """The one line of a control, rewritten as its ack (and, for STEER, the plan revision it
    produced) arrives: ``PAUSE sent → SUCCESS``. ``received``: a control sent from elsewhere
    (another client, or one in the run's history), shown with its author when known."""
    summary = f' "{clip(view.summary, 60)}"' if view.summary else ""
    if received and view.author:
        summary += f" by {clip(view.author, 30)}"
    if not view.acked:
        verb = "received" if received else "sent"
        return LogLine(at, "control", f"{view.kind}{summary} {verb}, waiting for the ack", "control")
    detail = f": {view.ack_detail}" if view.ack_detail else ""
    revision = f" → plan revision {view.revision}" if view.revision is not None else ""
    style = "ack-ok" if view.ack_result == "SUCCESS" else "ack-fail"
    return LogLine(at, "control", f"{view.kind}{summary} → {view.ack_result}{detail}{revision}", style)


def describe(ev: Event, *, whole: bool = False) -> tuple[str, str, str]:
    """(label, text, style) of one event for the event log, from the one table of event
    kinds (``goldfive.event_kinds``); ``whole``: every field, none shortened (the log's wrap
    mode shows every character)."""
    kind = ev.WhichOneof("payload") or "unknown"
    info = EVENT_KINDS.get(kind)
    p = getattr(ev, kind, None) if kind != "unknown" else None
    if info is None or p is None:
        return kind, "", "other"
    # A brief line clips each field as ``clip`` does (the table's default); whole, none.
    text = render_fields(info, p, clip=_whole_field, brief=False) if whole else render_fields(info, p)
    return info.label, text, info.tone(p)  # a Tone is its style name (a StrEnum)
