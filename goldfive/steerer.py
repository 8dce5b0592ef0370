"""DefaultSteerer: the task state machine, drift classification and the intervention ladder.

State machine: statuses only move forward; a terminal status (COMPLETED, FAILED, CANCELLED,
NOT_NEEDED) absorbs every later transition; a transition to the current status is harmless.
The one way back is ``rewind`` (REWIND_TO), which resets a task and everything downstream;
``unstart`` takes back a start whose commit failed, before the agent ran.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from goldfive import events
from goldfive.control import ControlMessage
from goldfive.controls.payloads import Cancel, Control, GoldfivePauseEscalate, GoldfiveSteer, Pause, Steer, decode, message
from goldfive.errors import InvalidTransitionError
from goldfive.inbox import InjectedMessage
from goldfive.ladder import DriftOutcome, InterventionLevel, ladder_level
from goldfive.protocols import EXACT_TRANSITIONS, can_replan, move_task
from goldfive.run.acks import PROCESSED_STEER_IDS
from goldfive.run.current_run import _CURRENT, current
from goldfive.run.outcome import RunCancelled
from goldfive.steering import notes_of
from goldfive.usage.model import Purpose
from goldfive.usage.report import usage_scope
from goldfive.types import (
    DriftEvent,
    DriftKind,
    DriftSeverity,
    Plan,
    Session,
    Task,
    TaskStatus,
    set_task_status,
)

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.context import RunContext

__all__ = ["FAILURE_REASONS", "NOT_STARTED", "PROCESSED_STEER_IDS", "DefaultSteerer", "DriftOutcome", "can_replan"]

log = logging.getLogger("goldfive.steerer")

S = TaskStatus
_ALLOWED: dict[TaskStatus, frozenset[TaskStatus]] = {
    S.PENDING: frozenset({S.RUNNING, S.BLOCKED, S.CANCELLED, S.NOT_NEEDED, S.FAILED, S.COMPLETED}),
    S.RUNNING: frozenset({S.COMPLETED, S.FAILED, S.CANCELLED, S.BLOCKED}),
    S.BLOCKED: frozenset({S.RUNNING, S.COMPLETED, S.FAILED, S.CANCELLED}),
}
_TERMINAL = frozenset(s for s in TaskStatus if s.is_terminal)
_NONE: frozenset[TaskStatus] = frozenset()
#: The reason of a start taken back because it could not be recorded (``unstart``).
NOT_STARTED = "not started: the recording failed"
_USER_KINDS = frozenset({DriftKind.USER_STEER, DriftKind.USER_CANCEL, DriftKind.USER_PAUSE})
#: Drifts that are records of a decision already taken, never inputs to the ladder.
_NOT_LADDERED = _USER_KINDS | {
    DriftKind.REFINE_VALIDATION_FAILED,
    DriftKind.HUMAN_INTERVENTION_REQUIRED,
    DriftKind.REPEATED_FAILURE,
}
#: Read once (an enum member read is slow on Python 3.11: see goldfive.run.handlers._STATUS).
_INFO = DriftSeverity.INFO


#: session.state key: task id -> the reason it FAILED (the run's abort reason quotes it).
FAILURE_REASONS = "goldfive.failure_reasons"
_STEER_ID_MEMORY = 512


@dataclass
class DefaultSteerer:
    #: The ladder is consulted through ``ladder_level``; subclass and override to retune it.
    refine_failure_limit: int = 2
    #: Refines a run may do on drifts goldfive detected itself (user steers are not counted),
    #: so an agent that keeps failing cannot make the planner replan forever.
    max_auto_refines: int = 8
    _auto_refines: int = 0
    _refine_failures: dict[tuple[str, str], int] = field(default_factory=dict)
    _occurrences: dict[tuple[str, str, str], int] = field(default_factory=dict)

    # -- the state machine ------------------------------------------------------------
    async def transition(
        self, task_id: str, to: TaskStatus, *, session: Session, detail: str = "", cancel_reason: str = ""
    ) -> bool:
        """Move ``task_id`` to ``to`` and emit the event (goldfive v1's signature, so a
        subclass written for v1 overrides it as is). ``detail`` is the result of a COMPLETED
        task and the reason for any other status; ``cancel_reason``, when given, is the reason
        of a CANCELLED one. Returns False when nothing changed (same status, or the task is
        already terminal). Raises InvalidTransitionError for a move the machine forbids (e.g.
        RUNNING -> PENDING) and UnknownTaskError."""
        reason = (cancel_reason or detail) if to == S.CANCELLED else detail
        result = detail
        # Two transitions per task: the run, the plan and the task are read directly (the
        # helpers only when one is missing, for their errors).
        ctx = _CURRENT.get() or current()
        plan = session.plan or _plan(session)
        task = plan._by_id.get(task_id) or plan.task(task_id)
        frm = task.status
        if frm == to or frm in _TERMINAL:
            return False
        if to not in _ALLOWED.get(frm, _NONE):
            raise InvalidTransitionError(f"task {task_id}: {frm} -> {to} is not allowed")
        # (this is set_task_status, the steerer being its writer, inlined)
        entry = task._tally
        if entry is not None:
            entry[0].moved(entry[1], task, to)
        task.status = to
        if to == S.RUNNING and frm == S.PENDING:
            task.attempt += 1
            session.current_task_id = task_id
            await ctx.emit_task(events.task_started, task_id, task.assignee_agent_id)
        elif to == S.COMPLETED:
            session.completed_results[task_id] = result
            await ctx.emit_task(events.task_completed, task_id, result)
        elif to == S.FAILED:
            session.state.setdefault(FAILURE_REASONS, {})[task_id] = reason  # for the run's abort reason
            await ctx.emit(events.task_failed, task_id, reason)
        elif to == S.CANCELLED:
            await ctx.emit(events.task_cancelled, task_id, reason)
        elif to == S.BLOCKED:
            await ctx.emit(events.task_blocked, task_id, reason)
        else:
            await ctx.emit(events.task_transitioned, task_id, frm, to, reason)
        if to in _TERMINAL and session.current_task_id == task_id:
            session.current_task_id = ""
        return True

    async def unstart(self, session: Session, task_id: str, reason: str = NOT_STARTED) -> bool:
        """Take back the start of ``task_id`` before its agent ran (its start could not be
        recorded): RUNNING -> PENDING, the attempt given back. False when it is not RUNNING."""
        ctx = current()
        task = _plan(session).task(task_id)
        if task.status != S.RUNNING:
            return False
        set_task_status(task, S.PENDING)
        task.attempt = max(0, task.attempt - 1)
        if session.current_task_id == task_id:
            session.current_task_id = ""
        await ctx.emit(events.task_transitioned, task_id, S.RUNNING, S.PENDING, reason)
        return True

    async def mark_task_blocked(self, session: Session, task_id: str, blocker: str) -> bool:
        return await move_task(self, session, task_id, S.BLOCKED, blocker)

    async def cascade_cancel_downstream(self, session: Session, task_id: str, reason: str) -> list[str]:
        """Cancel every non-terminal task reachable from ``task_id``."""
        cancelled = []
        plan = _plan(session)
        for tid in plan.downstream(task_id):
            if await move_task(self, session, tid, S.CANCELLED, reason):
                cancelled.append(tid)
        return cancelled

    async def rewind(self, session: Session, task_id: str) -> list[str]:
        """Reset ``task_id`` and every task downstream of it to PENDING and drop their results."""
        ctx = current()
        plan = _plan(session)
        plan.task(task_id)
        reset = []
        for tid in [task_id, *plan.downstream(task_id)]:
            task = plan.task(tid)
            session.completed_results.pop(tid, None)
            session.task_progress.pop(tid, None)
            if task.status != S.PENDING:
                frm = task.status
                set_task_status(task, S.PENDING)
                await ctx.emit(events.task_transitioned, tid, frm, S.PENDING, "rewind")
                reset.append(tid)
        return reset

    # -- drift --------------------------------------------------------------------------
    async def observe(self, msg: Control[Any] | ControlMessage, session: Session) -> DriftEvent | None:
        """The drift a user control stands for, or None (also for a duplicate STEER).

        The run hands its controls decoded; a ControlMessage (the spec's ``observe(msg,
        session)``) is decoded here, and a malformed payload raises ControlPayloadError."""
        control = msg if isinstance(msg, Control) else decode(msg)
        p = control.payload
        if isinstance(p, Steer):
            dedupe = p.dedupe_id(control.id)
            seen: deque[str] = session.state.setdefault(PROCESSED_STEER_IDS, deque(maxlen=_STEER_ID_MEMORY))
            if dedupe in seen:
                return None
            seen.append(dedupe)
            detail = f"by {p.author}: {p.note}" if p.author else p.note
            return DriftEvent(
                DriftKind.USER_STEER,
                DriftSeverity.WARNING,
                detail,
                task_id=session.current_task_id,
                annotation_id=p.annotation_id,
                metadata={"note": p.note, "suggested_action": p.suggested_action, "author": p.author, "control_id": control.id},
            )
        if isinstance(p, Pause):
            return DriftEvent(DriftKind.USER_PAUSE, DriftSeverity.INFO, "paused by control", session.current_task_id)
        if isinstance(p, Cancel):
            return DriftEvent(DriftKind.USER_CANCEL, DriftSeverity.CRITICAL, p.why, session.current_task_id)
        return None

    async def report_drift(self, session: Session, drift: DriftEvent) -> None:
        """Record a drift on the event stream. One that calls for an intervention (WARNING and
        above, not a user control's own drift) is queued for the ladder, which runs at the next
        task boundary so a plan is never swapped under a running invocation."""
        ctx = current()
        await ctx.emit(events.drift_detected, drift)
        severity = drift.severity
        # INFO (every STATUS_QUERY's snapshot) is below WARNING: no comparison, no enum read.
        if severity is not _INFO and severity >= DriftSeverity.WARNING and drift.kind not in _NOT_LADDERED:
            ctx.deferred_drifts.append(drift)

    async def handle_drift(self, session: Session, drift: DriftEvent, *, emit: bool = True, live: bool = False) -> DriftOutcome:
        """Emit the drift, then act on it per the intervention ladder.

        ``live``: the drift was seen while its task runs (the watchdog). Observing, nudging and
        escalating happen now; a level that changes the plan (ABSORB, CANCEL_REINVOKE) waits
        for the next task boundary, where it is handled (and counted) as a deferred drift."""
        ctx = current()
        if emit:
            await ctx.emit(events.drift_detected, drift)
        key = (str(drift.kind), str(drift.severity), drift.task_id)
        self._occurrences[key] = self._occurrences.get(key, 0) + 1
        level = self.ladder_level_for(drift, self._occurrences[key])
        out = DriftOutcome(level)
        if live and level in (InterventionLevel.ABSORB, InterventionLevel.CANCEL_REINVOKE):
            self._occurrences[key] -= 1
            ctx.deferred_drifts.append(drift)
            return out
        if level == InterventionLevel.OBSERVE:
            return out
        if level == InterventionLevel.NUDGE:
            await ctx.messages.inject(InjectedMessage(text=_corrective(drift), role="user"))
            return out
        if level in (InterventionLevel.PAUSE_ESCALATE, InterventionLevel.TERMINATE):
            out.intervention = await self._escalate(ctx, drift, level)
            return out
        if not can_replan(ctx.planner):
            return out  # a fixed plan: the drift stays observed
        if drift.kind not in _USER_KINDS:
            if self._auto_refines >= self.max_auto_refines:
                log.warning("not refining on %s: %d automatic refines already", drift.kind, self._auto_refines)
                return out
            self._auto_refines += 1
        out.revised, out.error = await self.refine(session, drift)
        if out.revised and level == InterventionLevel.CANCEL_REINVOKE:
            out.intervention = message(GoldfiveSteer(note=_corrective(drift), drift_id=drift.id))
        return out

    def ladder_level_for(self, drift: DriftEvent, occurrences: int) -> InterventionLevel:
        return ladder_level(DriftKind(drift.kind), DriftSeverity(drift.severity), occurrences)

    async def _escalate(self, ctx: RunContext, drift: DriftEvent, level: InterventionLevel) -> ControlMessage:
        human = DriftEvent(
            DriftKind.HUMAN_INTERVENTION_REQUIRED,
            DriftSeverity.CRITICAL,
            f"{drift.kind}: {drift.detail}",
            task_id=drift.task_id,
        )
        await ctx.emit(events.drift_detected, human)
        deadline = 600.0 if level == InterventionLevel.TERMINATE else None
        return message(GoldfivePauseEscalate(reason=human.detail, drift_id=drift.id, deadline_s=deadline))

    async def refine(self, session: Session, drift: DriftEvent) -> tuple[bool, str]:
        """Ask the planner for a revision and install it. Returns (revised, error)."""
        ctx = current()
        old = _plan(session)
        metadata = dict(drift.metadata)
        metadata.setdefault("completed_results", dict(session.completed_results))
        # The run's standing guidance (texts, oldest first): a planner puts it in the replan
        # prompt, so a revised plan follows it as every later task's input does.
        metadata.setdefault("standing_guidance", [n.text for n in notes_of(session).standing])
        drift = replace(drift, metadata=metadata)
        error = ""
        try:
            with usage_scope(ctx, "", Purpose.REPLAN):  # the run's, not the task's
                new = await ctx.controls.responsive(ctx.planner.refine(plan=old, drift=drift, goals=session.goals), "replanning")
        except RunCancelled:
            raise
        except Exception as exc:  # isolation boundary: a planner bug becomes a drift, not a crash
            log.warning("planner.refine raised", exc_info=True)
            new, error = None, f"planner.refine raised {type(exc).__name__}: {exc}"
        if new is not None:
            try:
                new = self._checked_revision(old, new, drift, session)
            except Exception as exc:
                new, error = None, f"revised plan rejected: {exc}"
        if new is None:
            error = error or str(getattr(ctx.planner, "last_error", "") or "planner returned no plan")
            await ctx.emit(
                events.drift_detected,
                DriftEvent(DriftKind.REFINE_VALIDATION_FAILED, DriftSeverity.CRITICAL, error, drift.task_id),
            )
            await self._count_refine_failure(session, drift)
            return False, error
        self._refine_failures.pop((str(drift.kind), drift.task_id), None)
        session.plan = new
        session.state["goldfive.current_plan_id"] = new.id
        await ctx.emit(events.plan_revised, old, new, drift_id=drift.id)
        return True, ""

    def _checked_revision(self, old: Plan, new: Plan, drift: DriftEvent, session: Session) -> Plan:
        """Completed work is never redone: a task terminal in the old plan keeps its status;
        everything new starts PENDING, and so does a CANCELLED task the planner lists again
        (spec 5: the replan reintroduces the task a STEER cancelled). Revision metadata is
        stamped when the planner did not."""
        tasks: list[Task] = []
        for t in new.tasks:
            prev = old.task(t.id) if old.has_task(t.id) else None
            if prev is not None and prev.status == S.COMPLETED:
                tasks.append(replace(prev))
            elif prev is not None and prev.status.is_terminal and prev.status != S.CANCELLED:
                tasks.append(replace(t, status=prev.status))
            else:
                tasks.append(replace(t, status=S.PENDING))
        index = new.revision_index if new.revision_index > old.revision_index else old.revision_index + 1
        plan = replace(
            new,
            tasks=tasks,
            run_id=new.run_id or session.run_id,
            revision_index=index,
            revision_kind=new.revision_kind or str(drift.kind),
            revision_severity=new.revision_severity or str(drift.severity),
            revision_reason=new.revision_reason or drift.detail,
        )
        return plan.validate()

    async def _count_refine_failure(self, session: Session, drift: DriftEvent) -> None:
        key = (str(drift.kind), drift.task_id)
        n = self._refine_failures.get(key, 0) + 1
        self._refine_failures[key] = n
        if n < self.refine_failure_limit or not drift.task_id:
            return
        self._refine_failures.pop(key, None)
        plan = _plan(session)
        # A task that already ended (e.g. completed) keeps its status, and its dependents stay
        # runnable: only a task this rule actually fails takes its downstream with it.
        reason = f"refine failed {n} times for {drift.kind}"
        if plan.has_task(drift.task_id) and await move_task(self, session, drift.task_id, S.FAILED, reason):
            await self.cascade_cancel_downstream(session, drift.task_id, f"upstream {drift.task_id} failed")
        await current().emit(
            events.drift_detected,
            DriftEvent(
                DriftKind.REPEATED_FAILURE,
                DriftSeverity.CRITICAL,
                f"{n} failed refines for {drift.kind} on {drift.task_id}",
                drift.task_id,
            ),
        )



# Returns exactly whether the status changed: move_task trusts it (one plan read instead of three).
EXACT_TRANSITIONS.add(DefaultSteerer.transition)


def _plan(session: Session) -> Plan:
    if session.plan is None:
        raise InvalidTransitionError("the session has no plan yet")
    return session.plan


def _corrective(drift: DriftEvent) -> str:
    if drift.metadata.get("watchdog"):
        return (
            f"[goldfive steering] {drift.kind}: {drift.detail}. Repeating it will not help: change your "
            "approach, or report the task blocked or failed with the reason."
        )
    return f"[goldfive steering] {drift.kind}: {drift.detail}. Get back to the current task."
