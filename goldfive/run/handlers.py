"""What each control kind does (docs/protocol.md#the-controls), as one table.

``decide`` looks the kind up in ``HANDLERS`` and returns a ControlOutcome: the ack, and the
effect the ControlLoop applies once the ack is out. Each handler gets its control with the
payload already decoded (``goldfive.controls``) and says on the ack what it applied the
control as (``AppliedAs``); what that means for the run, the views and resume is the table
beside this one, ``goldfive.run.acks.ACK_MEANING``. What only the executor can do (cancel the
running invocations, abort the run) is asked for through the outcome's flags.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from goldfive.approvals.arguments import arguments_problem
from goldfive.control import AckResult, AppliedAs, ControlKind, ControlMessage
from goldfive.controls.payloads import (
    RULES_VERB,
    Answer,
    Approve,
    BudgetSet,
    Cancel,
    Control,
    GoldfivePauseEscalate,
    GoldfiveSteer,
    Inject,
    InterceptTransfer,
    Pause,
    Reject,
    Resume,
    Rewind,
    StatusQuery,
    Steer,
    SteerWhen,
)
from goldfive.errors import ControlPayloadError
from goldfive.inbox import InjectedMessage
from goldfive.approvals.reviewer import REVIEWER
from goldfive.run.approval_rules import machine_note, rule_from_always, rules_control
from goldfive.run.approvals import answer_problem, desk_of, resolve_answer, resolve_approval
from goldfive.protocols import can_replan
from goldfive.run.acks import PROCESSED_STEER_IDS
from goldfive.run.outcome import ControlOutcome, Effect, fail, ok, refused, unsupported
from goldfive.run.steering_controls import guidance_control, steer_later, steer_queue_control, steer_standing
from goldfive.run.validate import accept
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, TaskStatus

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.parts import Run

__all__ = ["CUSTOM_HANDLERS", "HANDLERS", "ControlOutcome", "decide", "handler_for", "status_snapshot"]

_STAYS_PAUSED = "; the run stays paused until RESUME"


#: What a status snapshot counts a task's status as: done, pending, or running now.
_DONE, _PENDING, _RUNNING = 0, 1, 2
_STATUS_BUCKET: dict[TaskStatus, int] = {
    TaskStatus.COMPLETED: _DONE,
    TaskStatus.PENDING: _PENDING,
    TaskStatus.RUNNING: _RUNNING,
    TaskStatus.BLOCKED: _RUNNING,
}


def status_snapshot(ctx: Run, control_id: str) -> str:
    session = ctx.session
    plan = session.plan
    busy = ctx.controls.busy_with
    state = f" state={ctx.pause_state}" + (f" busy={busy}" if busy else "")
    if ctx.recording_error:
        state += f' needs_you="recording failed: {ctx.recording_error}"'
    elif ctx.budget.reached is not None and ctx.paused:
        state += f' needs_you="{ctx.budget.reached.reason}"'
    if not ctx.budget.budget.empty:
        state += f' budget="{ctx.budget.describe()}"'
    if plan is None:
        return f"status_query control_id={control_id} current_task= completed=0/0 pending={state}"
    # One pass over the plan (it was three): a query costs one look at each task.
    done = 0
    pending: list[str] = []
    running: list[str] = []
    bucket = _STATUS_BUCKET.get
    for t in plan.tasks:
        b = bucket(t.status)
        if b is _DONE:
            done += 1
        elif b is _PENDING:
            pending.append(t.id)
        elif b is _RUNNING:
            running.append(t.id)
    return (
        f"status_query control_id={control_id} current_task={','.join(running) or session.current_task_id} "
        f"completed={done}/{len(plan.tasks)} pending={','.join(pending)}{state}"
    )


def _paused_note(ctx: Run) -> str:
    return _STAYS_PAUSED if ctx.paused else ""


def _drift(session: Session, kind: DriftKind, severity: DriftSeverity, detail: str) -> DriftEvent:
    return DriftEvent(kind, severity, detail, session.current_task_id)


async def _pause(ctx: Run, c: Control[Pause], mid_task: bool) -> ControlOutcome:
    if ctx.paused:
        return ok(c, AppliedAs.PAUSED, f"already {str(ctx.pause_state).lower()}")

    async def pause() -> None:
        ctx.pause()
        drift = _drift(ctx.session, DriftKind.USER_PAUSE, DriftSeverity.INFO, "paused by control")
        await ctx.steerer.report_drift(ctx.session, drift)

    busy = ctx.controls.busy_with
    if busy:
        detail = f"pausing: {busy} finishes, then no task starts"
    else:
        detail = "pausing: the running task finishes, no new task starts" if mid_task else "paused"
    return ok(c, AppliedAs.PAUSED, detail, effect=pause)


async def _resume(ctx: Run, c: Control[Resume], mid_task: bool) -> ControlOutcome:
    if not ctx.paused:
        return ok(c, AppliedAs.RESUMED, "not paused; nothing to resume")
    detail = "resumed"
    over = ctx.budget.over()
    if over is not None:  # goes on only once the budget allows it
        return fail(c, f"{over.reason}: raise it with BUDGET first (ctl budget RUN {over.limit}=...); the run stays paused")
    if ctx.recording_error:  # paused by a failed commit: it goes on only once one works
        problem = await ctx.retry_recording()
        if problem:
            return fail(c, f"the recording still fails ({problem}); the run stays paused until RESUME finds it works")
        detail = "the recording works again; resumed"

    async def resume() -> None:
        ctx.unpause()

    return ok(c, AppliedAs.RESUMED, detail, effect=resume)


async def _budget(ctx: Run, c: Control[BudgetSet], mid_task: bool) -> ControlOutcome:
    from goldfive.budget import BudgetError

    p = c.payload
    try:
        budget = ctx.budget.budget.changed(p.changes())
    except BudgetError as exc:
        return fail(c, f"{exc}; the budget is unchanged")
    over = ctx.budget.over(budget)
    resume = p.resume and ctx.paused and over is None

    async def apply() -> None:
        await ctx.budget.set(budget, author=p.author, control_id=c.id)
        if resume:
            ctx.unpause()

    detail = f"budget set: {budget.describe()}"
    if resume:
        return ok(c, AppliedAs.BUDGET_SET_RESUMED, detail + "; resumed", effect=apply)
    if over is not None:
        detail += f"; still {over.reason}" + ("" if ctx.paused else ": the run pauses before its next model call")
    elif ctx.paused:
        detail += "; the run stays paused until RESUME"
    return ok(c, AppliedAs.BUDGET_SET, detail, effect=apply)


async def _cancel(ctx: Run, c: Control[Cancel], mid_task: bool) -> ControlOutcome:
    async def audit() -> None:
        drift = await ctx.steerer.observe(c, ctx.session)
        if drift is not None:
            await ctx.steerer.report_drift(ctx.session, drift)

    return ok(c, AppliedAs.CANCELLED, f"cancelling: {c.payload.why}", effect=audit)


async def _steer(ctx: Run, c: Control[Steer], mid_task: bool) -> ControlOutcome:
    session = ctx.session
    dedupe = c.payload.dedupe_id(c.id)
    if dedupe in session.state.get(PROCESSED_STEER_IDS, ()):
        return ok(c, AppliedAs.DUPLICATE, f"duplicate steer {dedupe} ignored (already applied)")
    if c.payload.standing:
        return await steer_standing(ctx, c)
    if c.payload.when is SteerWhen.LATER:
        return await steer_later(ctx, c)
    if can_replan(ctx.planner) and ctx.controls.busy_with:
        detail = f"steer accepted: applied to the plan once {ctx.controls.busy_with} ends"
        return ok(c, AppliedAs.QUEUED, detail + _paused_note(ctx), cancel_invocation=True)
    if can_replan(ctx.planner):
        detail = "steer accepted: delete-and-replan" + (" after cancelling the running task" if mid_task else "")
        return ok(c, AppliedAs.REPLANNED, detail + _paused_note(ctx), cancel_invocation=mid_task)
    running = ctx.messages.running()
    target = running[0] if running else _next_task(ctx)

    async def inject_note() -> None:
        drift = await ctx.steerer.observe(c, session)
        if drift is None:
            return
        await ctx.steerer.report_drift(session, drift)
        await ctx.messages.inject(InjectedMessage(text=c.payload.note, role="user", control_id=c.id))

    if running:
        where = f"the running task {target}"
    elif target:
        where = f"the next task {target}"
    else:
        where = "the next task (none is ready)"
    detail = f"steer accepted: the planner cannot replan; note injected into {where}"
    return ok(c, AppliedAs.NOTED, detail + _paused_note(ctx), effect=inject_note)


def _next_task(ctx: Run) -> str:
    plan = ctx.session.plan
    if plan is None:
        return ""
    for task in plan.tasks:
        if plan.is_ready(task.id):
            return task.id
    return ""


async def _rewind(ctx: Run, c: Control[Rewind], mid_task: bool) -> ControlOutcome:
    plan = ctx.session.plan
    task_id = c.payload.task_id
    if plan is None or not plan.has_task(task_id):
        return fail(c, f"unknown task id {task_id!r}")
    if plan.task(task_id).status is TaskStatus.PENDING:
        return fail(c, f"task {task_id!r} has not run yet; there is nothing to rewind")
    n = len(plan.downstream(task_id))

    async def rewind() -> None:
        ctx.pause_deadline = None
        ctx.pending_rewinds.append(task_id)

    where = "at the next task boundary" if mid_task else "now"
    detail = f"rewinding {task_id} and {n} downstream task(s) {where}{_paused_note(ctx)}"
    return ok(c, AppliedAs.REWOUND, detail, effect=rewind)


#: Enum members read once: on Python 3.11 each ``Enum.MEMBER`` read goes through the enum
#: metaclass's ``__getattr__`` hook (about ten times a global's cost), and every STATUS_QUERY
#: and APPROVE read these.
_STATUS, _DECIDED, _CUSTOM, _INFO = AppliedAs.STATUS, AppliedAs.DECIDED, DriftKind.CUSTOM, DriftSeverity.INFO


async def _status(ctx: Run, c: Control[StatusQuery], mid_task: bool) -> ControlOutcome:
    detail = status_snapshot(ctx, c.message.id)

    async def snapshot() -> None:
        session = ctx.session
        await ctx.steerer.report_drift(session, DriftEvent(_CUSTOM, _INFO, detail, session.current_task_id))

    return ok(c, _STATUS, detail, effect=snapshot)


async def _intercept(ctx: Run, c: Control[InterceptTransfer], mid_task: bool) -> ControlOutcome:
    if not getattr(ctx.adapter, "supports_intercept_transfer", False):
        return unsupported(c, "INTERCEPT_TRANSFER: this run's agent adapter does not hand work between agents")
    enabled = c.payload.enabled

    async def flip() -> None:
        ctx.intercept_transfer = enabled

    return ok(c, AppliedAs.INTERCEPT_SET, f"intercept_transfer={'on' if enabled else 'off'}", effect=flip)


def _claims_reviewer(c: Control[Approve] | Control[Reject]) -> str:
    """Why a control claiming to be the run's reviewer is refused ("" when it does not): the
    reviewer decides inside the run, never through a control, so its ledger entries are its own."""
    if REVIEWER in (c.payload.author, c.payload.client):
        return f"author and client {REVIEWER!r} are the run's reviewer's own: a control cannot decide as it; nothing was decided"
    return ""


async def _approve(ctx: Run, c: Control[Approve], mid_task: bool) -> ControlOutcome:
    target = c.payload.target_id
    if target not in ctx.session.pending_approvals:
        return fail(c, f"no pending approval for {target!r}")
    if claim := _claims_reviewer(c):
        return fail(c, claim)
    meta = ctx.session.pending_approvals_meta.get(target, {})
    arguments = dict(c.payload.arguments) if c.payload.arguments is not None else None
    if arguments is not None:
        if meta.get("kind") != "tool":
            return fail(c, f"{target} is a {meta.get('kind') or 'task'} approval: it has no arguments to edit; nothing ran")
        if meta.get("editable") is False:
            return fail(c, f"{target}: the agent's framework takes no edited arguments for this call; approve or reject it; nothing ran")
        problem = arguments_problem(meta.get("parameters"), arguments)
        if problem:
            return fail(c, f"edited arguments refused: {problem}; nothing ran")
    rule = None
    if c.payload.always is not None:
        try:
            rule = rule_from_always(c.payload.always, str(meta.get("tool_name", "")), meta, c.payload.author, ctx.session.clock())
        except ValueError as exc:
            return fail(c, f"always: {exc}; nothing ran")

    what = "approved with edited arguments" if arguments is not None else "approved"
    if rule is None:
        return ok(c, _DECIDED, f"{what} {target}", effect=_decision(ctx, c, approve=True, detail=c.payload.detail, arguments=arguments))

    async def resolve() -> None:
        made = desk_of(ctx).add_rule(rule)
        added = f"rule {made.id} added ({made.describe()}, scope {made.scope}){machine_note(ctx, made.scope)}"
        await _decision(ctx, c, approve=True, detail=c.payload.detail or added, arguments=arguments)()

    note = machine_note(ctx, rule.scope)
    return ok(c, AppliedAs.DECIDED, f"{what}, and always for {rule.describe()} ({rule.scope}): {target}{note}", effect=resolve)


async def _reject(ctx: Run, c: Control[Reject], mid_task: bool) -> ControlOutcome:
    target = c.payload.target_id
    if target not in ctx.session.pending_approvals:
        return fail(c, f"no pending approval for {target!r}")
    if claim := _claims_reviewer(c):
        return fail(c, claim)

    return ok(c, AppliedAs.DECIDED, f"rejected {target}", effect=_decision(ctx, c, approve=False, detail=c.payload.detail, arguments=None))


def _decision(ctx: Run, c: Control[Approve] | Control[Reject], *, approve: bool, detail: str, arguments: dict[str, Any] | None) -> Effect:
    """The effect of an APPROVE / REJECT: the decision delivered (``resolve_approval``). A
    plain function handing back the coroutine, so the ControlLoop awaits that one frame, not
    a wrapper around it (every approval decided by a person passes here)."""
    p = c.payload

    def deliver() -> Awaitable[bool]:
        return resolve_approval(
            ctx, p.target_id, approve=approve, detail=detail, arguments=arguments, author=p.author, client=p.client, control_id=c.id
        )

    return deliver


async def _answer(ctx: Run, c: Control[Answer], mid_task: bool) -> ControlOutcome:
    p = c.payload
    target = p.target_id
    if target not in ctx.session.pending_approvals:
        return fail(c, f"no pending question {target!r}")
    problem = answer_problem(ctx.session.pending_approvals_meta.get(target, {}), p.text, p.option)
    if problem:
        return fail(c, f"{target}: {problem}; nothing was answered")

    async def resolve() -> None:
        await resolve_answer(ctx, target, text=p.text, option=p.option, author=p.author, client=p.client, control_id=c.id)

    return ok(c, AppliedAs.ANSWERED, f"answered {target}: {p.option or p.text}", effect=resolve)


async def _inject(ctx: Run, c: Control[Inject], mid_task: bool) -> ControlOutcome:
    running = ctx.messages.running()

    async def park() -> None:
        await ctx.messages.inject(InjectedMessage(text=c.payload.text, role=c.payload.role, control_id=c.id))

    where = f"parked on the running turn {running[0]}" if running else "queued for the next turn"
    return ok(c, AppliedAs.INJECTED, where, effect=park)


async def _ladder_steer(ctx: Run, c: Control[GoldfiveSteer], mid_task: bool) -> ControlOutcome:
    if not mid_task:
        return ok(c, AppliedAs.UNCHANGED, "no invocation in flight; the revised plan applies next")
    detail = "restarting the in-flight invocation with a corrective"
    return ok(c, AppliedAs.RESTARTED, detail, cancel_invocation=True, rerun_cancelled=True)


async def _escalate(ctx: Run, c: Control[GoldfivePauseEscalate], mid_task: bool) -> ControlOutcome:
    deadline = c.payload.deadline_s

    async def escalate() -> None:
        ctx.pause(deadline)

    return ok(c, AppliedAs.PAUSED, "paused for human intervention", effect=escalate)


#: A handler gets the control with the payload class its kind decodes to (PAYLOAD_TYPES).
Handler = Callable[["Run", Control[Any], bool], Awaitable[ControlOutcome]]

HANDLERS: dict[ControlKind, Handler] = {
    ControlKind.PAUSE: _pause,
    ControlKind.RESUME: _resume,
    ControlKind.CANCEL: _cancel,
    ControlKind.STEER: _steer,
    ControlKind.REWIND_TO: _rewind,
    ControlKind.STATUS_QUERY: _status,
    ControlKind.INTERCEPT_TRANSFER: _intercept,
    ControlKind.APPROVE: _approve,
    ControlKind.REJECT: _reject,
    ControlKind.ANSWER: _answer,
    ControlKind.INJECT_MESSAGE: _inject,
    ControlKind.GOLDFIVE_STEER: _ladder_steer,
    ControlKind.GOLDFIVE_PAUSE_ESCALATE: _escalate,
    ControlKind.STEER_QUEUE: steer_queue_control,
    ControlKind.GUIDANCE: guidance_control,
    ControlKind.BUDGET: _budget,
}

#: Custom verbs (docs/protocol.md#custom-controls) goldfive itself answers.
CUSTOM_HANDLERS: dict[str, Handler] = {RULES_VERB: rules_control}


async def decide(ctx: Run, control: Control[Any] | ControlMessage, *, mid_task: bool = False) -> ControlOutcome:
    """The ack for a control and the effect to apply after it. Unknown kinds: UNSUPPORTED.

    A ControlMessage is checked and decoded first (``accept``), as the ControlLoop does."""
    if isinstance(control, ControlMessage):
        try:
            control = accept(control, ctx.config.limits)
        except ControlPayloadError as exc:
            return refused(control.id, AckResult.FAILURE, str(exc))
    handler = handler_for(control.kind)
    if handler is None:
        return unsupported(control)
    return await handler(ctx, control, mid_task)


def handler_for(kind: ControlKind | str) -> Handler | None:
    """The handler of ``kind`` (None: goldfive has none, the control is UNSUPPORTED)."""
    return HANDLERS.get(kind) if kind.__class__ is ControlKind else CUSTOM_HANDLERS.get(kind)
