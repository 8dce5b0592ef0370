"""Continuing a run from its recording: the checks that refuse an unsafe resume, and putting a
``Recovered`` state back into a fresh RunContext."""

from __future__ import annotations

import os
from collections import deque
from typing import Any

from goldfive import events
from goldfive.store import locks as lock
from goldfive.durable.recover import Recovered, recover
from goldfive.durable.store import ResumeRefused, open_log, read_run, resolve_run
from goldfive.run.context import RunContext
from goldfive.run.acks import PROCESSED_STEER_IDS
from goldfive.control import AckResult
from goldfive.controls.payloads import SteerQueue
from goldfive.run.steering_controls import guidance_control, steer_later, steer_queue_control, steer_standing
from goldfive.steering import NOTES_KEY, SteeringNote
from goldfive.types import TaskStatus, set_task_status
from goldfive.approvals.rules import Rule

__all__ = ["ResumeRefused", "check_resumable", "install", "load_for_resume"]


def load_for_resume(path: str | os.PathLike[str], ref: str, *, hold: lock.RunRecording | None = None) -> Recovered:
    """The run ``ref`` (an id or a unique prefix) of recording ``path``, folded; refuses a run
    that ended, that never got a plan, or that a live process still runs.

    Without ``hold`` nothing is written: a live holder is only looked at. With ``hold`` (the
    sink that will record the resumed run) the run's lock is taken through it first, checked
    and written in one transaction, and the recording is read after that: of two processes
    resuming one run at once, one holds it and the other is refused. A refusal after the lock
    releases it."""
    log = open_log(path)
    run_id = resolve_run(log, ref)
    if hold is None:
        held = log.lock_holder(run_id)
        if held is not None and held.alive(log.path):
            raise lock.RunLocked(f"run {run_id} is still running in {held.describe()}")
    else:
        hold.hold_run(run_id)
    try:
        evs, left_out = read_run(log, run_id)
        rec = recover(run_id, evs, unreadable=left_out)
        check_resumable(rec)
    except BaseException:
        if hold is not None:
            hold.release_run(run_id)
        raise
    return rec


def check_resumable(rec: Recovered) -> None:
    """Refuse a run that ended or that never got a plan (ResumeRefused, one line)."""
    run_id = rec.run_id
    if rec.ended == "run_completed":
        raise ResumeRefused(f"run {run_id} completed ({rec.end_reason}); there is nothing to resume")
    if rec.ended:
        raise ResumeRefused(f"run {run_id} ended: {rec.end_reason}; there is nothing to resume")
    if rec.plan is None:
        raise ResumeRefused(f"run {run_id} stopped before it had a plan; start it again instead")


def check_matches(rec: Recovered, planner: Any, adapter: Any) -> None:
    """Refuse a planner whose fixed plan or an agent whose names do not fit the recording."""
    fixed = getattr(planner, "fixed_plan", None)
    if fixed is not None and rec.first_plan is not None:
        want = [t.id for t in rec.first_plan.tasks]
        have = [t.id for t in fixed.tasks]
        if want != have:
            raise ResumeRefused(
                f"the plan's tasks ({_ids(have)}) do not match the recording's ({_ids(want)}): not the same run"
            )
    agents = set(getattr(adapter, "available_agents", []) or [])
    assert rec.plan is not None
    named = {t.assignee_agent_id for t in rec.plan.tasks if t.assignee_agent_id and not t.status.is_terminal}
    if agents and named - agents:
        raise ResumeRefused(
            f"the recording assigns tasks to {_ids(sorted(named - agents))}, which this agent does not offer ({_ids(sorted(agents))})"
        )


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:6]) + (", ..." if len(ids) > 6 else "")


async def install(ctx: RunContext, rec: Recovered) -> None:
    """Put the recovered state into ``ctx`` and record the RunResumed event."""
    session = ctx.session
    assert rec.plan is not None
    interrupted = rec.interrupted
    for tid in interrupted:  # cut off mid-task: it runs again (its attempt says so)
        set_task_status(rec.plan.task(tid), TaskStatus.PENDING)
    session.continue_after(rec.last_sequence)
    session.user_input = rec.user_input
    session.goals = list(rec.goals)
    session.plan = rec.plan
    session.state["goldfive.current_plan_id"] = rec.plan.id
    session.state["goldfive.goals_summary"] = "; ".join(g.summary for g in rec.goals)
    session.completed_results.update(rec.results)
    seen = session.state.setdefault(PROCESSED_STEER_IDS, deque(maxlen=512))
    seen.extend(rec.processed_steer_ids)
    session.state[NOTES_KEY] = rec.notes  # the steer queue and the standing guidance
    if hasattr(ctx.steerer, "_auto_refines"):
        ctx.steerer._auto_refines = rec.auto_refines
    if rec.paused:
        ctx.pause()
    _restore_rules(ctx, rec)
    ctx.messages.carryover.extend(rec.undelivered)
    ctx.pending_rewinds.extend(rec.rewinds_to_apply)
    what = _what_was_interrupted(rec, interrupted)
    await ctx.emit(
        events.run_resumed,
        resumed_after_sequence=rec.last_sequence,
        resume_count=rec.resume_count + 1,
        interrupted_task_ids=interrupted,
        pending_approval_ids=list(rec.pending_approvals),
        paused=rec.paused,
        undelivered_message_ids=[m.id for m in rec.undelivered],
        unreadable_rows=rec.unreadable,
        detail=what,
    )
    for message in rec.messages_to_inject:
        await ctx.messages.inject(message)
    for steer in rec.steers_to_apply:
        await ctx.controls.apply_steer(steer, interrupted=[])
    for note in rec.notes_to_add:  # acked, but the stop came before its event
        added = await (steer_standing(ctx, note) if note.payload.standing else steer_later(ctx, note))
        await added.apply()
    for change in rec.note_changes_to_apply:  # a STEER_QUEUE / GUIDANCE change acked, its event cut off
        half = rec.half_made_standing.get(change.id)
        if half is not None:  # the note left the queue, its guidance_added was cut off: add it now
            notes = rec.notes
            made = SteeringNote(notes.next_guidance_id(), half.text, half.author or change.payload.author, half.client, change.id,
                                added_ms=int(session.clock()))  # fmt: skip
            await ctx.emit(events.guidance_added, made, made_from=half.id)
            continue
        if isinstance(change.payload, SteerQueue):
            changed = await steer_queue_control(ctx, change, False)
        else:
            changed = await guidance_control(ctx, change, False)
        if changed.ack.result is AckResult.SUCCESS:  # against the notes as the recording left them
            await changed.apply()


def _restore_rules(ctx: RunContext, rec: Recovered) -> None:
    """The run-scope rules the run made go back into its desk, each under its id when that is
    free (a rule the run was started with, given again, keeps its own; the made one gets the
    next id)."""
    book = ctx.approval_desk.run_rules
    for rule in rec.rules:
        try:
            book.add(rule)
        except ValueError:
            book.add(Rule(rule.tool, dict(rule.matchers), "", rule.author, rule.made_at_ms, rule.scope))


def _what_was_interrupted(rec: Recovered, interrupted: list[str]) -> str:
    parts = []
    done = sum(1 for t in rec.plan.tasks if t.status is TaskStatus.COMPLETED) if rec.plan else 0
    total = len(rec.plan.tasks) if rec.plan else 0
    parts.append(f"{done}/{total} tasks done")
    if interrupted:
        parts.append("running again: " + _ids(interrupted))
    if rec.pending_approvals:
        parts.append(f"{len(rec.pending_approvals)} approval(s) asked again")
    if rec.rules:
        parts.append(f"{len(rec.rules)} approval rule(s) kept")
    if rec.paused:
        parts.append("paused")
    if rec.undelivered:
        parts.append(f"{len(rec.undelivered)} undelivered message(s) kept")
    if rec.notes.queue or rec.notes.standing:
        parts.append(f"{len(rec.notes.queue)} queued steer(s) and {len(rec.notes.standing)} standing note(s) kept")
    again = (rec.steers_to_apply, rec.rewinds_to_apply, rec.messages_to_inject, rec.notes_to_add, rec.note_changes_to_apply)
    if any(again):
        n = sum(len(x) for x in again)
        parts.append(f"{n} acked control(s) applied again")
    if rec.unreadable:
        parts.append(f"{rec.unreadable} unreadable row(s) ignored")
    return "; ".join(parts)
