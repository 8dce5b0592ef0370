"""One compact, human-readable line per event (``goldfive demo --headless``, ``ctl tail``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from goldfive import events
from goldfive.errors import ConversionError
from goldfive.pb.goldfive.v1 import control_pb2, types_pb2
from goldfive.pb.goldfive.v1.events_pb2 import AgentStep, Event
from goldfive.terminal_text import terminal_safe

if TYPE_CHECKING:
    from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

_CLIP = 100


def _clip(text: str, limit: int = _CLIP) -> str:
    text = " ".join(terminal_safe(str(text)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _q(text: str, limit: int = _CLIP) -> str:
    return f'"{_clip(text, limit)}"' if text else '""'


def _enum(enum: EnumTypeWrapper, value: int, prefix: str) -> str:
    try:
        name = enum.Name(value)
    except ValueError:
        return str(value)
    return name.removeprefix(prefix)


def _drift_kind(v: int) -> str:
    return _enum(types_pb2.DriftKind, v, "DRIFT_KIND_")


def _severity(v: int) -> str:
    return _enum(types_pb2.DriftSeverity, v, "DRIFT_SEVERITY_")


def _status(v: int) -> str:
    return _enum(types_pb2.TaskStatus, v, "TASK_STATUS_")


def _plan(ev: Event) -> str:
    p = ev.plan_submitted.plan
    return f"{len(p.tasks)} tasks: {', '.join(t.id for t in p.tasks)}"


def _revised(ev: Event) -> str:
    r = ev.plan_revised
    d = r.diff
    added = [t.title or t.id for t in r.plan.tasks if t.id in set(d.added_task_ids)]
    head = (
        f"rev {r.plan.revision_index} {_drift_kind(r.plan.revision_kind)} "
        f"+{len(d.added_task_ids)} -{len(d.removed_task_ids)} ~{len(d.modified_task_ids)}"
    )
    return head + (f" new: {_clip('; '.join(added), 160)}" if added else "")


def _progress(ev: Event) -> str:
    p = ev.task_progress
    frac = f" {round(p.fraction * 100)}%" if p.HasField("fraction") else ""
    return f"{p.task_id}{frac} {_q(p.detail)}"


def _drift(ev: Event) -> str:
    d = ev.drift_detected
    task = f" [{d.current_task_id}]" if d.current_task_id else ""
    return f"{_drift_kind(d.kind)} {_severity(d.severity)}{task} {_q(d.detail)}"


def _approval(ev: Event) -> str:
    a = ev.approval_requested
    what = a.tool_name or a.kind
    args = f" {_clip(a.args_json, 80)}" if a.args_json else ""
    return f"{a.target_id} {what} [{a.task_id}] {_q(a.prompt, 60)}{args}"


def _control(ev: Event) -> str:
    from goldfive.conv import from_pb_control_event

    r = ev.control_received
    try:
        payload = from_pb_control_event(r.control).payload
    except ConversionError:
        payload = {}
    key = next((k for k in ("note", "text", "target_id", "task_id", "reason") if payload.get(k)), "")
    by = f" by {r.author}" if r.author else ""
    return f"{r.kind} {r.control.id}{by}" + (f" {key}={_q(str(payload[key]), 60)}" if key else "")


def _ack(ev: Event) -> str:
    a = ev.control_acked
    result = _enum(control_pb2.ControlAckResult, a.ack.result, "CONTROL_ACK_RESULT_")
    return f"{a.kind} {a.ack.control_id} {result}" + (f" {_q(a.ack.detail)}" if a.ack.detail else "")


_FIELDS: dict[str, Callable[[Event], str]] = {
    "run_started": lambda e: _q(e.run_started.goal_summary),
    "goal_derived": lambda e: "; ".join(f"{g.id}: {_clip(g.summary, 60)}" for g in e.goal_derived.goals),
    "plan_submitted": _plan,
    "plan_revised": _revised,
    "task_started": lambda e: e.task_started.task_id,
    "task_progress": _progress,
    "task_completed": lambda e: f"{e.task_completed.task_id} {_q(e.task_completed.result_summary)}",
    "task_failed": lambda e: f"{e.task_failed.task_id} {_q(e.task_failed.reason, 200)}",
    "task_blocked": lambda e: f"{e.task_blocked.task_id} {_q(e.task_blocked.blocker)}",
    "task_cancelled": lambda e: f"{e.task_cancelled.task_id} {_q(e.task_cancelled.reason)}",
    "task_transitioned": lambda e: (
        f"{e.task_transitioned.task_id} {_status(e.task_transitioned.from_status)} -> "
        f"{_status(e.task_transitioned.to_status)}"
        + (f" {_q(e.task_transitioned.reason)}" if e.task_transitioned.reason else "")
    ),
    "drift_detected": _drift,
    "run_completed": lambda e: _q(e.run_completed.outcome_summary),
    "run_aborted": lambda e: _q(e.run_aborted.reason, 300),
    "conversation_started": lambda e: e.conversation_started.lane,
    "conversation_ended": lambda e: f"{e.conversation_ended.lane} {e.conversation_ended.reason}".strip(),
    "approval_requested": _approval,
    "approval_granted": lambda e: f"{e.approval_granted.target_id} {_q(e.approval_granted.detail)}",
    "approval_rejected": lambda e: f"{e.approval_rejected.target_id} {_q(e.approval_rejected.detail)}",
    "approval_decided": lambda e: _decided(e),
    "approval_expiring": lambda e: (
        f"{e.approval_expiring.target_id} {e.approval_expiring.on_timeout} in {e.approval_expiring.ms_left} ms unless decided"
    ),
    "approval_reminded": lambda e: (
        f"{e.approval_reminded.target_id} reminder {e.approval_reminded.reminder}: undecided after {e.approval_reminded.waited_ms} ms"
    ),
    "approval_escalated": lambda e: (
        f"{e.approval_escalated.target_id} escalated ({e.approval_escalated.why}): undecided after {e.approval_escalated.waited_ms} ms"
    ),
    "control_received": _control,
    "control_acked": _ack,
    "message_parked": lambda e: f"{e.message_parked.message_id} -> {e.message_parked.lane or '(next turn)'} {_q(e.message_parked.text, 60)}",
    "message_delivered": lambda e: f"{e.message_delivered.message_id} -> {e.message_delivered.lane} via {e.message_delivered.via}",
    "message_returned": lambda e: f"{e.message_returned.message_id} from {e.message_returned.lane or '(next turn)'}",
    "invocation_abandoned": lambda e: f"{e.invocation_abandoned.task_id} {_q(e.invocation_abandoned.reason)}",
    "run_resumed": lambda e: f"#{e.run_resumed.resume_count} {_q(e.run_resumed.detail, 200)}",
    "recording_failed": lambda e: f"at #{e.recording_failed.failed_at_sequence}, paused: {_q(e.recording_failed.detail, 200)}",
    "agent_step": lambda e: _agent_step(e.agent_step),
}


def _decided(ev: Event) -> str:
    d = ev.approval_decided
    who = f" by {d.author}" + (f" via {d.client}" if d.client else "") if d.author else ""
    ran = f" ran {_clip(d.ran_args_json, 120)}" if d.ran_args_json else ""
    return f"{d.target_id} {d.outcome}{who}" + (f" {_q(d.reason, 120)}" if d.reason else "") + ran


def _agent_step(p: AgentStep) -> str:
    if p.step == "tool_call":
        return f"{p.task_id} {p.tool_name}({_clip(p.args_json, 120)}) {p.outcome}: {_q(p.text, 120)}"
    if p.step in ("hook", "usage"):
        return f"{p.task_id} {p.tool_name or p.step} {_q(p.text, 160)}"
    return f"{p.task_id} model {_q(p.text, 160)}"


def format_event(event: Event) -> str:
    """``<sequence> <kind> <key fields>`` on one line, e.g.
    ``  12 task_completed     research "collected 5 key facts..."``. What the run wrote is
    made safe for a terminal (no escape sequences or control characters)."""
    kind = events.kind_of(event) or "(empty)"
    fields = _FIELDS.get(kind)
    detail = fields(event) if fields is not None else _clip(str(getattr(event, kind, "")) if kind != "(empty)" else "")
    return terminal_safe(f"{event.sequence:>4} {kind:<18} {detail}").rstrip()
