"""The one control junction both executors share (spec CONTROL.md section 4).

``dispatch_control`` decides the ack for a message and returns it with the effect to apply;
the executor publishes the ack first, then applies the effect (``ControlOutcome.apply``), then
does what only it can do (cancel in-flight invocations, abort, replan after a cancel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from goldfive import events
from goldfive.approvals import resolve_approval
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage, kind_name
from goldfive.inbox import InjectedMessage
from goldfive.runtime import RunContext, runtime_of
from goldfive.steerer import PROCESSED_STEER_IDS, can_replan
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, TaskStatus

Effect = Callable[[], Awaitable[None]]


@dataclass
class ControlOutcome:
    ack: ControlAck
    #: Applied after the ack is published.
    effect: Effect | None = None
    #: A STEER whose replan runs after the in-flight invocation is cancelled.
    steer_message: ControlMessage | None = None
    #: Abort the run (CANCEL).
    cancel_run: bool = False
    cancel_reason: str = ""
    #: Stop the in-flight invocation(s) (STEER with a replanning planner, GOLDFIVE_STEER).
    cancel_invocation: bool = False
    #: Re-run the interrupted task(s) afterwards (GOLDFIVE_STEER).
    rerun_cancelled: bool = False

    async def apply(self) -> None:
        if self.effect is not None:
            await self.effect()


def _ok(msg: ControlMessage, detail: str, **kw: Any) -> ControlOutcome:
    return ControlOutcome(ack=ControlAck(msg.id, AckResult.SUCCESS, detail), **kw)


def _fail(msg: ControlMessage, detail: str) -> ControlOutcome:
    return ControlOutcome(ack=ControlAck(msg.id, AckResult.FAILURE, detail))


def status_snapshot(session: Session, control_id: str) -> str:
    plan = session.plan
    if plan is None:
        return f"status_query control_id={control_id} current_task= completed=0/0 pending="
    done = sum(1 for t in plan.tasks if t.status == TaskStatus.COMPLETED)
    pending = ",".join(t.id for t in plan.tasks if t.status == TaskStatus.PENDING)
    running = ",".join(t.id for t in plan.tasks if t.status in (TaskStatus.RUNNING, TaskStatus.BLOCKED))
    return (
        f"status_query control_id={control_id} current_task={running or session.current_task_id} "
        f"completed={done}/{len(plan.tasks)} pending={pending}"
    )


def _note_problem(ctx: RunContext, what: str, text: str) -> str:
    if not text.strip():
        return f"{what} is empty"
    size = len(text.encode("utf-8"))
    if size > ctx.config.max_note_bytes:
        return f"{what} is {size} bytes; the limit is {ctx.config.max_note_bytes}"
    return ""


async def dispatch_control(
    msg: ControlMessage, *, session: Session, mid_task: bool = False, **_: Any
) -> ControlOutcome:
    ctx = runtime_of(session)
    kind = msg.kind
    payload = msg.payload or {}
    if not isinstance(kind, ControlKind):
        return ControlOutcome(
            ack=ControlAck(msg.id, AckResult.UNSUPPORTED, f"unsupported control kind {kind_name(kind)}")
        )

    if kind is ControlKind.PAUSE:
        async def pause() -> None:
            ctx.paused = session.paused = True
            await ctx.steerer.report_drift(
                session, DriftEvent(DriftKind.USER_PAUSE, DriftSeverity.INFO, "paused by control", session.current_task_id)
            )

        if ctx.paused:
            return _ok(msg, "already paused")
        detail = "paused; the running task finishes, no new task starts" if mid_task else "paused"
        return _ok(msg, detail, effect=pause)

    if kind is ControlKind.RESUME:
        if not ctx.paused:
            return _ok(msg, "not paused; nothing to resume")

        async def resume() -> None:
            _unpause(ctx)

        return _ok(msg, "resumed", effect=resume)

    if kind is ControlKind.CANCEL:
        reason = str(payload.get("reason", "") or "cancelled by control")

        async def audit() -> None:
            drift = await ctx.steerer.observe(msg, session)
            if drift is not None:
                await ctx.steerer.report_drift(session, drift)

        return _ok(msg, f"cancelling: {reason}", effect=audit, cancel_run=True, cancel_reason=reason)

    if kind is ControlKind.STEER:
        note = str(payload.get("note", "") or "")
        problem = _note_problem(ctx, "steer note", note)
        if problem:
            return _fail(msg, problem)
        dedupe = str(payload.get("annotation_id") or msg.id)
        if dedupe in session.state.get(PROCESSED_STEER_IDS, ()):
            return _ok(msg, f"duplicate steer {dedupe} ignored (already applied)")
        if can_replan(ctx.planner):
            return _ok(
                msg,
                "steer accepted: delete-and-replan" + (" after cancelling the running task" if mid_task else ""),
                steer_message=msg,
                cancel_invocation=mid_task,
            )

        async def inject_note() -> None:
            _unpause(ctx)
            drift = await ctx.steerer.observe(msg, session)
            if drift is None:
                return
            await ctx.steerer.report_drift(session, drift)
            await ctx.inject(InjectedMessage(text=note, role="user", control_id=msg.id))

        where = "the running agent" if ctx.inbox.running() else "the next task's agent"
        return _ok(msg, f"steer accepted: the planner cannot replan; note injected into {where}", effect=inject_note)

    if kind is ControlKind.REWIND_TO:
        task_id = str(payload.get("task_id", "") or "")
        if not task_id:
            return _fail(msg, "REWIND_TO needs payload.task_id")
        if session.plan is None or not session.plan.has_task(task_id):
            return _fail(msg, f"unknown task id {task_id!r}")
        n = len(session.plan.downstream(task_id))

        async def rewind() -> None:
            _unpause(ctx)
            ctx.pending_rewinds.append(task_id)

        where = "at the next task boundary" if mid_task else "now"
        return _ok(msg, f"rewinding {task_id} and {n} downstream task(s) {where}", effect=rewind)

    if kind is ControlKind.STATUS_QUERY:
        detail = status_snapshot(session, msg.id)

        async def snapshot() -> None:
            await ctx.steerer.report_drift(
                session, DriftEvent(DriftKind.CUSTOM, DriftSeverity.INFO, detail, session.current_task_id)
            )

        return _ok(msg, detail, effect=snapshot)

    if kind is ControlKind.INTERCEPT_TRANSFER:
        enabled = bool(payload.get("enabled", True))

        async def flip() -> None:
            session._intercept_transfer = enabled

        return _ok(msg, f"intercept_transfer={'on' if enabled else 'off'}", effect=flip)

    if kind in (ControlKind.APPROVE, ControlKind.REJECT):
        target = str(payload.get("target_id", "") or "")
        verb = kind_name(kind)
        if not target:
            return _fail(msg, f"{verb} needs payload.target_id")
        if target not in session.pending_approvals:
            return _fail(msg, f"no pending approval for {target!r}")
        detail = str(payload.get("detail", "") or "")

        async def decide() -> None:
            await resolve_approval(ctx, target, approve=kind is ControlKind.APPROVE, detail=detail)

        return _ok(msg, f"{'approved' if kind is ControlKind.APPROVE else 'rejected'} {target}", effect=decide)

    if kind is ControlKind.INJECT_MESSAGE:
        text = str(payload.get("text", "") or "")
        problem = _note_problem(ctx, "message", text)
        if problem:
            return _fail(msg, problem)
        role = str(payload.get("role", "") or "user")
        running = ctx.inbox.running()

        async def park() -> None:
            await ctx.inject(InjectedMessage(text=text, role=role, control_id=msg.id))

        where = f"parked on the running turn {running[0]}" if running else "queued for the next turn"
        return _ok(msg, where, effect=park)

    if kind is ControlKind.GOLDFIVE_STEER:
        if not mid_task:
            return _ok(msg, "no invocation in flight; the revised plan applies next")
        return _ok(msg, "restarting the in-flight invocation with a corrective", cancel_invocation=True, rerun_cancelled=True)

    if kind is ControlKind.GOLDFIVE_PAUSE_ESCALATE:
        deadline = payload.get("deadline_s")

        async def escalate() -> None:
            import time

            ctx.paused = session.paused = True
            ctx.pause_deadline = time.monotonic() + float(deadline) if deadline else None

        return _ok(msg, "paused for human intervention", effect=escalate)

    return ControlOutcome(ack=ControlAck(msg.id, AckResult.UNSUPPORTED, f"unsupported control kind {kind_name(kind)}"))


def _unpause(ctx: RunContext) -> None:
    ctx.paused = ctx.session.paused = False
    ctx.pause_deadline = None


async def publish_ack(ctx: RunContext, msg: ControlMessage, ack: ControlAck) -> None:
    """The ack goes to the sender and onto the event stream (the audit trail)."""
    if ctx.control is not None:
        await ctx.control.ack(ack)
    await ctx.emit(events.control_acked, ack, kind_name(msg.kind))


async def drain_controls(executor: Any, ctx: RunContext) -> list[ControlOutcome]:
    """Handle every message already queued, without waiting. Used at task boundaries."""
    outcomes = []
    if ctx.control is None:
        return outcomes
    take = getattr(executor, "_take_received", None)
    while True:
        # A message the executor's pending receive already took precedes the queued ones.
        msg = take(ctx) if take is not None else None
        if msg is None:
            msg = await ctx.control.receive(timeout=0)
        if msg is None:
            return outcomes
        outcomes.append(await executor.handle_control(ctx, msg, mid_task=False))
        if outcomes[-1].cancel_run:
            return outcomes  # the run ends now; what is queued behind it is not applied to it
