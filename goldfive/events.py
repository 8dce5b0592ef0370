"""Typed factories for the proto event stream.

Every factory takes the Session first, stamps the envelope (event_id, run_id, sequence,
session_id, emitted_at) and returns a ``goldfive.v1.Event``. ``event.WhichOneof("payload")``
names the kind. Sequences come from ``session.next_sequence()``: gap-free from 0 per run.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from goldfive import conv
from goldfive.control import ControlAck, ControlMessage, kind_name
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.pb.goldfive.v1 import types_pb2
from goldfive.types import DriftEvent, Goal, Plan, Session, TaskStatus

Event = pb.Event


def _envelope(session: Session) -> pb.Event:
    seq = session.next_sequence()
    ev = pb.Event(
        event_id=session.event_id(seq),
        run_id=session.run_id,
        sequence=seq,
        session_id=session.session_id,
    )
    ev.emitted_at.FromMilliseconds(session.clock())
    return ev


def kind_of(event: pb.Event) -> str:
    """The payload kind of an event (``run_started``, ``task_completed``, ...)."""
    return event.WhichOneof("payload") or ""


# -- run lifecycle -------------------------------------------------------------------


def run_started(session: Session, *, goal_summary: str, user_input: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.run_started.goal_summary = goal_summary
    ev.run_started.user_input = user_input
    return ev


def goal_derived(session: Session, goals: Iterable[Goal]) -> pb.Event:
    ev = _envelope(session)
    ev.goal_derived.goals.extend(conv.to_pb_goal(g) for g in goals)
    return ev


def plan_submitted(session: Session, plan: Plan) -> pb.Event:
    ev = _envelope(session)
    ev.plan_submitted.plan.CopyFrom(conv.to_pb_plan(plan))
    return ev


def plan_revised(session: Session, old: Plan | None, new: Plan, *, drift_id: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.plan_revised.plan.CopyFrom(conv.to_pb_plan(new))
    ev.plan_revised.diff.CopyFrom(plan_diff(old, new))
    ev.plan_revised.drift_id = drift_id
    return ev


def run_completed(session: Session, outcome_summary: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.run_completed.outcome_summary = outcome_summary
    return ev


def run_aborted(session: Session, reason: str) -> pb.Event:
    ev = _envelope(session)
    ev.run_aborted.reason = reason
    return ev


# -- tasks ---------------------------------------------------------------------------


def task_started(session: Session, task_id: str, assignee_agent_id: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.task_started.task_id = task_id
    ev.task_started.assignee_agent_id = assignee_agent_id
    return ev


def task_progress(session: Session, task_id: str, *, detail: str = "", fraction: float = -1.0) -> pb.Event:
    ev = _envelope(session)
    ev.task_progress.task_id = task_id
    ev.task_progress.detail = detail
    ev.task_progress.fraction = fraction
    return ev


def task_completed(session: Session, task_id: str, result_summary: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.task_completed.task_id = task_id
    ev.task_completed.result_summary = result_summary
    return ev


def task_failed(session: Session, task_id: str, reason: str, *, recoverable: bool = False) -> pb.Event:
    ev = _envelope(session)
    ev.task_failed.task_id = task_id
    ev.task_failed.reason = reason
    ev.task_failed.recoverable = recoverable
    return ev


def task_blocked(session: Session, task_id: str, blocker: str) -> pb.Event:
    ev = _envelope(session)
    ev.task_blocked.task_id = task_id
    ev.task_blocked.blocker = blocker
    return ev


def task_cancelled(session: Session, task_id: str, reason: str) -> pb.Event:
    ev = _envelope(session)
    ev.task_cancelled.task_id = task_id
    ev.task_cancelled.reason = reason
    return ev


def task_transitioned(
    session: Session, task_id: str, from_status: TaskStatus, to_status: TaskStatus, reason: str = ""
) -> pb.Event:
    ev = _envelope(session)
    t = ev.task_transitioned
    t.task_id = task_id
    t.from_status = conv.task_status_to_pb(from_status)
    t.to_status = conv.task_status_to_pb(to_status)
    t.reason = reason
    return ev


# -- drift and approvals ---------------------------------------------------------------


def drift_detected(session: Session, drift: DriftEvent) -> pb.Event:
    ev = _envelope(session)
    d = ev.drift_detected
    d.id = drift.id
    d.kind = conv.drift_kind_to_pb(drift.kind)
    d.severity = conv.drift_severity_to_pb(drift.severity)
    d.detail = drift.detail
    d.current_task_id = drift.task_id or session.current_task_id
    d.annotation_id = drift.annotation_id
    return ev


def approval_requested(
    session: Session,
    *,
    target_id: str,
    kind: str,
    prompt: str = "",
    task_id: str = "",
    tool_name: str = "",
    args: dict[str, Any] | None = None,
    timeout_ms: int = 0,
    metadata: dict[str, str] | None = None,
) -> pb.Event:
    ev = _envelope(session)
    a = ev.approval_requested
    a.target_id = target_id
    a.kind = kind
    a.prompt = prompt
    a.task_id = task_id
    a.tool_name = tool_name
    if args is not None:
        a.args_json = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    a.timeout_ms = timeout_ms
    a.metadata.update(metadata or {})
    return ev


def approval_granted(session: Session, target_id: str, detail: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.approval_granted.target_id = target_id
    ev.approval_granted.detail = detail
    return ev


def approval_rejected(session: Session, target_id: str, detail: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.approval_rejected.target_id = target_id
    ev.approval_rejected.detail = detail
    return ev


# -- turns and injected messages ---------------------------------------------------------


def conversation_started(session: Session, lane: str, input_text: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.conversation_started.lane = lane
    ev.conversation_started.input = input_text
    return ev


def conversation_ended(session: Session, lane: str, reason: str = "") -> pb.Event:
    ev = _envelope(session)
    ev.conversation_ended.lane = lane
    ev.conversation_ended.reason = reason
    return ev


def message_parked(
    session: Session, *, message_id: str, lane: str, role: str, text: str, control_id: str = ""
) -> pb.Event:
    ev = _envelope(session)
    m = ev.message_parked
    m.message_id, m.lane, m.role, m.text, m.control_id = message_id, lane, role, text, control_id
    return ev


def message_delivered(session: Session, *, message_id: str, lane: str, via: str) -> pb.Event:
    ev = _envelope(session)
    m = ev.message_delivered
    m.message_id, m.lane, m.via = message_id, lane, via
    return ev


def message_returned(session: Session, *, message_id: str, lane: str) -> pb.Event:
    ev = _envelope(session)
    ev.message_returned.message_id = message_id
    ev.message_returned.lane = lane
    return ev


def invocation_abandoned(session: Session, task_id: str, grace_s: float, reason: str) -> pb.Event:
    ev = _envelope(session)
    a = ev.invocation_abandoned
    a.task_id, a.grace_s, a.reason = task_id, grace_s, reason
    return ev


# -- control audit trail ------------------------------------------------------------------


def control_received(session: Session, msg: ControlMessage) -> pb.Event:
    ev = _envelope(session)
    r = ev.control_received
    r.control.CopyFrom(conv.to_pb_control_event(msg))
    r.kind = kind_name(msg.kind)
    r.author = str((msg.payload or {}).get("author", "") or "")
    return ev


def control_acked(session: Session, ack: ControlAck, kind: str) -> pb.Event:
    ev = _envelope(session)
    ev.control_acked.ack.CopyFrom(conv.to_pb_control_ack(ack))
    ev.control_acked.kind = kind
    return ev


# -- plan diff ----------------------------------------------------------------------------


def plan_diff(old: Plan | None, new: Plan) -> pb.PlanRevisionDiff:
    """Added, removed and modified task ids (title, description, assignee or status changed)
    and added / removed edges, in plan order."""
    old_tasks = {t.id: t for t in old.tasks} if old else {}
    new_ids = {t.id for t in new.tasks}
    diff = pb.PlanRevisionDiff()
    for t in new.tasks:
        prev = old_tasks.get(t.id)
        if prev is None:
            diff.added_task_ids.append(t.id)
        elif (prev.title, prev.description, prev.assignee_agent_id, prev.status) != (
            t.title,
            t.description,
            t.assignee_agent_id,
            t.status,
        ):
            diff.modified_task_ids.append(t.id)
    if old:
        diff.removed_task_ids.extend(t.id for t in old.tasks if t.id not in new_ids)
    old_edges = {(e.from_task_id, e.to_task_id) for e in old.edges} if old else set()
    new_edges = {(e.from_task_id, e.to_task_id) for e in new.edges}
    for e in new.edges:
        if (e.from_task_id, e.to_task_id) not in old_edges:
            diff.added_edges.append(types_pb2.TaskEdge(from_task_id=e.from_task_id, to_task_id=e.to_task_id))
    if old:
        for e in old.edges:
            if (e.from_task_id, e.to_task_id) not in new_edges:
                diff.removed_edges.append(types_pb2.TaskEdge(from_task_id=e.from_task_id, to_task_id=e.to_task_id))
    return diff
