"""The run's lifecycle: started or resumed, its goals and plans (with the diff a revised plan
carries), completed or aborted, and a recording that failed."""

from __future__ import annotations

from typing import Iterable

from goldfive import conv
from goldfive.clean import clean_goal, clean_plan, clean_text, encodable
from goldfive.compat import fill_v1_fields
from goldfive.events._envelope import _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.pb.goldfive.v1 import types_pb2
from goldfive.types import Goal, Plan, Session


def run_started(session: Session, *, goal_summary: str, user_input: str = "", launch_json: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.run_started
    p.goal_summary = clean_text(goal_summary)
    p.user_input = clean_text(user_input)
    p.launch_json = clean_text(launch_json)
    return fill_v1_fields(_stamp(session, ev))


def run_resumed(
    session: Session,
    *,
    resumed_after_sequence: int,
    resume_count: int,
    interrupted_task_ids: Iterable[str] = (),
    pending_approval_ids: Iterable[str] = (),
    paused: bool = False,
    undelivered_message_ids: Iterable[str] = (),
    unreadable_rows: int = 0,
    detail: str = "",
) -> pb.Event:
    ev = pb.Event()
    p = ev.run_resumed
    p.resumed_after_sequence = resumed_after_sequence
    p.resume_count = resume_count
    p.interrupted_task_ids.extend(clean_text(t) for t in interrupted_task_ids)
    p.pending_approval_ids.extend(clean_text(a) for a in pending_approval_ids)
    p.paused = paused
    p.undelivered_message_ids.extend(clean_text(m) for m in undelivered_message_ids)
    p.unreadable_rows = unreadable_rows
    p.detail = clean_text(detail)
    return _stamp(session, ev)


def goal_derived(session: Session, goals: Iterable[Goal]) -> pb.Event:
    ev = pb.Event()
    ev.goal_derived.goals.extend(encodable(conv.to_pb_goal, g, clean_goal) for g in goals)
    return _stamp(session, ev)


def _fill_plan(target: types_pb2.Plan, plan: Plan) -> None:
    """``conv.to_pb_plan`` built in the event itself (``encodable`` in place: a plan with text
    protobuf cannot encode is built again from its cleaned copy)."""
    target.SetInParent()
    try:
        conv.fill_pb_plan(target, plan)
    except UnicodeEncodeError:
        target.Clear()
        target.SetInParent()
        conv.fill_pb_plan(target, clean_plan(plan))


def plan_submitted(session: Session, plan: Plan) -> pb.Event:
    ev = pb.Event()
    _fill_plan(ev.plan_submitted.plan, plan)
    return _stamp(session, ev)


def plan_revised(session: Session, old: Plan | None, new: Plan, *, drift_id: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.plan_revised
    _fill_plan(p.plan, new)
    p.diff.CopyFrom(
        encodable(
            lambda plans: plan_diff(*plans),
            (old, new),
            lambda plans: (plans[0] and clean_plan(plans[0]), clean_plan(plans[1])),
        )
    )
    p.drift_id = clean_text(drift_id)
    return fill_v1_fields(_stamp(session, ev))


def run_completed(session: Session, outcome_summary: str = "") -> pb.Event:
    ev = pb.Event()
    ev.run_completed.outcome_summary = clean_text(outcome_summary)
    return _stamp(session, ev)


def run_aborted(session: Session, reason: str) -> pb.Event:
    ev = pb.Event()
    ev.run_aborted.reason = clean_text(reason)
    return _stamp(session, ev)


def recording_failed(session: Session, detail: str, failed_at_sequence: int) -> pb.Event:
    ev = pb.Event()
    p = ev.recording_failed
    p.detail = clean_text(detail)
    p.failed_at_sequence = max(failed_at_sequence, 0)
    return _stamp(session, ev)


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
