"""What each control kind does (docs/protocol.md#the-controls), as one table.

``decide`` looks the kind up in ``HANDLERS`` and returns a ControlOutcome: the ack, and the
effect the ControlLoop applies once the ack is out. What only the executor can do (cancel the
running invocations, abort the run) is asked for through the outcome's flags.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage, kind_name
from goldfive.inbox import InjectedMessage
from goldfive.approvals.arguments import arguments_problem
from goldfive.run.approvals import desk_of, resolve_approval
from goldfive.run.approval_rules import RULES_VERB, author_of, rule_from_always, rules_control
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, TaskStatus

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.context import RunContext

Effect = Callable[[], Awaitable[None]]

_STAYS_PAUSED = "; the run stays paused until RESUME"


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


def ok(msg: ControlMessage, detail: str, **kw: Any) -> ControlOutcome:
    return ControlOutcome(ack=ControlAck(msg.id, AckResult.SUCCESS, detail), **kw)


def fail(msg: ControlMessage, detail: str) -> ControlOutcome:
    return ControlOutcome(ack=ControlAck(msg.id, AckResult.FAILURE, detail))


def unsupported(msg: ControlMessage, detail: str = "") -> ControlOutcome:
    detail = detail or f"unsupported control kind {kind_name(msg.kind)}"
    return ControlOutcome(ack=ControlAck(msg.id, AckResult.UNSUPPORTED, detail))


def status_snapshot(ctx: RunContext, control_id: str) -> str:
    session = ctx.session
    plan = session.plan
    state = f" state={ctx.pause_state}" + (f" busy={ctx.controls.busy_with}" if ctx.controls.busy_with else "")
    if ctx.recording_error:
        state += f' needs_you="recording failed: {ctx.recording_error}"'
    if plan is None:
        return f"status_query control_id={control_id} current_task= completed=0/0 pending={state}"
    done = sum(1 for t in plan.tasks if t.status == TaskStatus.COMPLETED)
    pending = ",".join(t.id for t in plan.tasks if t.status == TaskStatus.PENDING)
    running = ",".join(t.id for t in plan.tasks if t.status in (TaskStatus.RUNNING, TaskStatus.BLOCKED))
    return (
        f"status_query control_id={control_id} current_task={running or session.current_task_id} "
        f"completed={done}/{len(plan.tasks)} pending={pending}{state}"
    )


def _paused_note(ctx: RunContext) -> str:
    return _STAYS_PAUSED if ctx.paused else ""


def _drift(session: Session, kind: DriftKind, severity: DriftSeverity, detail: str) -> DriftEvent:
    return DriftEvent(kind, severity, detail, session.current_task_id)


async def _pause(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    if ctx.paused:
        return ok(msg, f"already {str(ctx.pause_state).lower()}")

    async def pause() -> None:
        ctx.pause()
        drift = _drift(ctx.session, DriftKind.USER_PAUSE, DriftSeverity.INFO, "paused by control")
        await ctx.steerer.report_drift(ctx.session, drift)

    busy = ctx.controls.busy_with
    if busy:
        detail = f"pausing: {busy} finishes, then no task starts"
    else:
        detail = "pausing: the running task finishes, no new task starts" if mid_task else "paused"
    return ok(msg, detail, effect=pause)


async def _resume(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    if not ctx.paused:
        return ok(msg, "not paused; nothing to resume")
    detail = "resumed"
    if ctx.recording_error:  # paused by a failed commit: it goes on only once one works
        problem = await ctx.retry_recording()
        if problem:
            return fail(msg, f"the recording still fails ({problem}); the run stays paused until RESUME finds it works")
        detail = "the recording works again; resumed"

    async def resume() -> None:
        ctx.unpause()

    return ok(msg, detail, effect=resume)


async def _cancel(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    reason = str(msg.payload.get("reason", "") or "cancelled by control")

    async def audit() -> None:
        drift = await ctx.steerer.observe(msg, ctx.session)
        if drift is not None:
            await ctx.steerer.report_drift(ctx.session, drift)

    return ok(msg, f"cancelling: {reason}", effect=audit, cancel_run=True, cancel_reason=reason)


async def _steer(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    from goldfive.steerer import PROCESSED_STEER_IDS, can_replan

    session = ctx.session
    note = str(msg.payload.get("note", "") or "")
    dedupe = str(msg.payload.get("annotation_id") or msg.id)
    if dedupe in session.state.get(PROCESSED_STEER_IDS, ()):
        return ok(msg, f"duplicate steer {dedupe} ignored (already applied)")
    if can_replan(ctx.planner) and ctx.controls.busy_with:
        detail = f"steer accepted: applied to the plan once {ctx.controls.busy_with} ends"
        return ok(msg, detail + _paused_note(ctx), steer_message=msg, cancel_invocation=True)
    if can_replan(ctx.planner):
        detail = "steer accepted: delete-and-replan" + (" after cancelling the running task" if mid_task else "")
        return ok(msg, detail + _paused_note(ctx), steer_message=msg, cancel_invocation=mid_task)
    running = ctx.messages.running()
    target = running[0] if running else _next_task(ctx)

    async def inject_note() -> None:
        drift = await ctx.steerer.observe(msg, session)
        if drift is None:
            return
        await ctx.steerer.report_drift(session, drift)
        await ctx.messages.inject(InjectedMessage(text=note, role="user", control_id=msg.id))

    if running:
        where = f"the running task {target}"
    elif target:
        where = f"the next task {target}"
    else:
        where = "the next task (none is ready)"
    detail = f"steer accepted: the planner cannot replan; note injected into {where}"
    return ok(msg, detail + _paused_note(ctx), effect=inject_note)


def _next_task(ctx: RunContext) -> str:
    plan = ctx.session.plan
    if plan is None:
        return ""
    for task in plan.tasks:
        if plan.is_ready(task.id):
            return task.id
    return ""


async def _rewind(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    plan = ctx.session.plan
    task_id = str(msg.payload.get("task_id", "") or "")
    if plan is None or not plan.has_task(task_id):
        return fail(msg, f"unknown task id {task_id!r}")
    if plan.task(task_id).status is TaskStatus.PENDING:
        return fail(msg, f"task {task_id!r} has not run yet; there is nothing to rewind")
    n = len(plan.downstream(task_id))

    async def rewind() -> None:
        ctx.pause_deadline = None
        ctx.pending_rewinds.append(task_id)

    where = "at the next task boundary" if mid_task else "now"
    return ok(msg, f"rewinding {task_id} and {n} downstream task(s) {where}{_paused_note(ctx)}", effect=rewind)


async def _status(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    detail = status_snapshot(ctx, msg.id)

    async def snapshot() -> None:
        await ctx.steerer.report_drift(ctx.session, _drift(ctx.session, DriftKind.CUSTOM, DriftSeverity.INFO, detail))

    return ok(msg, detail, effect=snapshot)


async def _intercept(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    if not getattr(ctx.adapter, "supports_intercept_transfer", False):
        return unsupported(msg, "INTERCEPT_TRANSFER: this run's agent adapter does not hand work between agents")
    enabled = bool(msg.payload.get("enabled", True))

    async def flip() -> None:
        ctx.intercept_transfer = enabled

    return ok(msg, f"intercept_transfer={'on' if enabled else 'off'}", effect=flip)


async def _decide_approval(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    approve = msg.kind is ControlKind.APPROVE
    target = str(msg.payload.get("target_id", "") or "")
    if target not in ctx.session.pending_approvals:
        return fail(msg, f"no pending approval for {target!r}")
    detail = str(msg.payload.get("detail", "") or "")
    meta = ctx.session.pending_approvals_meta.get(target, {})
    arguments = msg.payload.get("arguments") if approve else None
    if arguments is not None:
        if meta.get("kind") != "tool":
            return fail(msg, f"{target} is a {meta.get('kind') or 'task'} approval: it has no arguments to edit; nothing ran")
        if meta.get("editable") is False:
            return fail(msg, f"{target}: the agent's framework takes no edited arguments for this call; approve or reject it; nothing ran")
        problem = arguments_problem(meta.get("parameters"), arguments)
        if problem:
            return fail(msg, f"edited arguments refused: {problem}; nothing ran")
    rule = None
    always = msg.payload.get("always") if approve else None
    if always is not None:
        try:
            rule = rule_from_always(always, str(meta.get("tool_name", "")), meta, author_of(msg), ctx.session.clock())
        except ValueError as exc:
            return fail(msg, f"always: {exc}; nothing ran")

    async def resolve() -> None:
        added = ""
        if rule is not None:
            made = desk_of(ctx).add_rule(rule)
            added = f"rule {made.id} added ({made.describe()}, scope {made.scope})"
        await resolve_approval(
            ctx, target, approve=approve, detail=detail or added,
            arguments=arguments if isinstance(arguments, dict) else None,
            author=author_of(msg), client=str(msg.payload.get("client", "") or ""), control_id=msg.id,
        )  # fmt: skip

    what = "approved" if approve else "rejected"
    if arguments is not None:
        what = "approved with edited arguments"
    if rule is not None:
        what += f", and always for {rule.describe()} ({rule.scope})"
    return ok(msg, f"{what} {target}" if rule is None else f"{what}: {target}", effect=resolve)


async def _inject(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    text = str(msg.payload.get("text", "") or "")
    role = str(msg.payload.get("role", "") or "user")
    running = ctx.messages.running()

    async def park() -> None:
        await ctx.messages.inject(InjectedMessage(text=text, role=role, control_id=msg.id))

    where = f"parked on the running turn {running[0]}" if running else "queued for the next turn"
    return ok(msg, where, effect=park)


async def _ladder_steer(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    if not mid_task:
        return ok(msg, "no invocation in flight; the revised plan applies next")
    return ok(msg, "restarting the in-flight invocation with a corrective", cancel_invocation=True, rerun_cancelled=True)


async def _escalate(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    deadline = msg.payload.get("deadline_s")

    async def escalate() -> None:
        ctx.pause(float(deadline) if deadline else None)

    return ok(msg, "paused for human intervention", effect=escalate)


Handler = Callable[["RunContext", ControlMessage, bool], Awaitable[ControlOutcome]]

HANDLERS: dict[ControlKind, Handler] = {
    ControlKind.PAUSE: _pause,
    ControlKind.RESUME: _resume,
    ControlKind.CANCEL: _cancel,
    ControlKind.STEER: _steer,
    ControlKind.REWIND_TO: _rewind,
    ControlKind.STATUS_QUERY: _status,
    ControlKind.INTERCEPT_TRANSFER: _intercept,
    ControlKind.APPROVE: _decide_approval,
    ControlKind.REJECT: _decide_approval,
    ControlKind.INJECT_MESSAGE: _inject,
    ControlKind.GOLDFIVE_STEER: _ladder_steer,
    ControlKind.GOLDFIVE_PAUSE_ESCALATE: _escalate,
}

#: Custom verbs (docs/protocol.md#custom-controls) goldfive itself answers.
CUSTOM_HANDLERS: dict[str, Handler] = {RULES_VERB: rules_control}


async def decide(ctx: RunContext, msg: ControlMessage, *, mid_task: bool = False) -> ControlOutcome:
    """The ack for ``msg`` and the effect to apply after it. Unknown kinds: UNSUPPORTED."""
    handler = HANDLERS.get(msg.kind) if isinstance(msg.kind, ControlKind) else CUSTOM_HANDLERS.get(msg.kind)
    if handler is None:
        return unsupported(msg)
    return await handler(ctx, msg, mid_task)


async def dispatch_control(msg: ControlMessage, *, session: Session, mid_task: bool = False, **_: Any) -> ControlOutcome:
    """The module-level dispatcher goldfive v1 documents (docs/protocol.md#custom-controls): a custom handler falls back to it."""
    from goldfive.run.context import context_of

    return await decide(context_of(session), msg, mid_task=mid_task)
