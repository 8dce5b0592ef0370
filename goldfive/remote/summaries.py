"""What the Runs service says about a run: its summary row, its snapshot, what it waits for.

A served run is a :class:`~goldfive.remote.host.ServedRun` (a hub's connected, placed and
hooked runs are ServedRuns too): every field read here is one it defines, nothing is looked up
by name. "Needs you" comes from
:func:`goldfive.view.attention.attention`, so every screen gives the same answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from goldfive import conv
from goldfive.pb.goldfive.v1 import events_pb2, service_pb2, types_pb2
from goldfive.steering import note_to_pb
from goldfive.store.registry import ACKNOWLEDGED, ARCHIVED, RunMark
from goldfive.types import TaskStatus
from goldfive.view.attention import attention, escalation_drift, state_label
from goldfive.view.state import RunState

if TYPE_CHECKING:
    from goldfive.remote.host import ServedRun

__all__ = ["current_task", "snapshot", "summary", "waiting_items"]


def current_task(state: RunState) -> str:
    """The id of the task running now (the first in plan order when several are), or ""."""
    for task_id in state.task_order:
        task = state.tasks.get(task_id)
        if task is not None and task.status is TaskStatus.RUNNING:
            return task_id
    return ""


def _label(run: ServedRun, state: RunState) -> str:
    if run.label:
        return run.label
    return "INTERRUPTED" if run.interrupted else state_label(state)


def summary(run: ServedRun, marks: Mapping[str, RunMark] | None = None) -> service_pb2.RunSummary:
    """``marks``: what a person said about the run (the hub's registry): an acknowledged
    failure needs nobody any more."""
    marks = marks or {}
    state: RunState = run.state
    out = service_pb2.RunSummary(
        run_id=run.run_id,
        state=_label(run, state),
        tasks_completed=state.count_status(TaskStatus.COMPLETED),
        tasks_total=len(state.tasks),
        goal_summary=state.goal_summary,
        damaged_events=run.damaged,
        history_error=run.history_error,
        write_error=run.write_error,
        unwritten_events=run.unwritten,
        dropped_events=run.dropped,
        origin=run.origin_label,
        host=run.host,
        pid=run.pid,
        connection=run.connection,
        owner=run.owner,
        hub=run.hub,
        current_task=current_task(state),
        waiting_approvals=len(state.approvals),
        acknowledged_by=marks[ACKNOWLEDGED].by if ACKNOWLEDGED in marks else "",
        archived_by=marks[ARCHIVED].by if ARCHIVED in marks else "",
        queued_steers=len(state.notes.queue),
        standing_guidance=len(state.notes.standing),
    )
    if state.usage.calls:
        out.usage.CopyFrom(conv.to_pb_usage_totals(state.usage))
    out.budget = state.budget_line()
    if state.started_ms:
        out.started_at.FromMilliseconds(state.started_ms)
    need = attention(state, acknowledged=ACKNOWLEDGED in marks)
    if need is not None:
        out.needs_you = need.reason
        if need.since_ms:
            out.needs_you_since.FromMilliseconds(need.since_ms)
    return out


def snapshot(run: ServedRun, marks: Mapping[str, RunMark] | None = None) -> service_pb2.RunSnapshot:
    state: RunState = run.state
    plan = types_pb2.Plan()
    if run.plan is not None:
        plan.CopyFrom(run.plan)
        for task in plan.tasks:  # the plan as emitted, with the statuses as they are now
            view = state.tasks.get(task.id)
            if view is not None:
                task.status = conv.task_status_to_pb(view.status)
    approvals = [
        events_pb2.ApprovalRequested(
            target_id=a.target_id,
            kind=a.kind,
            prompt=a.prompt,
            task_id=a.task_id,
            tool_name=a.tool_name,
            args_json=a.args_json,
            timeout_ms=a.timeout_ms,
            parameters_json=a.parameters_json,
            on_timeout=a.on_timeout,
            review=a.review,
            review_reason=a.review_reason,
            under_review=a.under_review,
        )
        for a in state.approvals.values()
    ]
    out = service_pb2.RunSnapshot(
        summary=summary(run, marks),
        plan=plan,
        pending_approvals=approvals,
        paused=state.paused,
        last_sequence=state.last_sequence,
    )
    for task_id, view in state.tasks.items():
        if view.usage.calls:
            out.task_usage[task_id].CopyFrom(conv.to_pb_usage_totals(view.usage))
    out.steer_queue.extend(note_to_pb(n) for n in state.notes.queue)
    out.guidance.extend(note_to_pb(n) for n in state.notes.standing)
    return out


def waiting_items(run: ServedRun) -> list[service_pb2.WaitingItem]:
    """The run's pending approvals and questions (each with the sequence of the event that asked), and its
    escalation from the drift ladder if it is paused by one. Not an approval the run's reviewer
    has (until it asks a person): nobody needs to decide it."""
    state: RunState = run.state
    items = []
    for a in state.waiting_for_a_person():
        item = service_pb2.WaitingItem(
            run_id=run.run_id, kind="question" if a.is_question else "approval", target_id=a.target_id, task_id=a.task_id,
            tool_name=a.tool_name, args_json=a.args_json, prompt=a.prompt, sequence=max(a.sequence, 0),
            options=a.options, free_text=a.free_text if a.is_question else False,
        )  # fmt: skip
        if a.requested_ms:
            item.since.FromMilliseconds(a.requested_ms)
        items.append(item)
    need = attention(state)
    if need is not None and need.kind == "escalation":
        task_id = escalation_drift(state).task_id or current_task(state)
        item = service_pb2.WaitingItem(run_id=run.run_id, kind="escalation", target_id=task_id, task_id=task_id, prompt=need.reason)
        if need.since_ms:
            item.since.FromMilliseconds(need.since_ms)
        items.append(item)
    return items
