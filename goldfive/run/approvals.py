"""Pending approvals: both kinds (docs/protocol.md#approve-and-reject), framework-neutral.

``request_approval`` first asks the run's rules (a tool call inside a rule is approved at once,
recorded as approved by that rule), else registers a waiter in ``session.pending_approvals``,
emits ApprovalRequested and waits under the approval's timeout policy (wait, reject at a
deadline, or pause the run and escalate; a warning goes out before the deadline).
``resolve_approval`` delivers APPROVE / REJECT (with edited arguments, checked by the handler
before it is called): the granted / rejected event is emitted before the waiter wakes.

Every decision is also an ``approval_decided`` event: the ledger (``goldfive.approvals.ledger``).

A question (docs/approvals.md#questions) is an approval of kind ``"question"`` with the answers
it offers (``options``) and whether a typed answer is taken (``free_text``): ``question_asked``
follows its ApprovalRequested, ``resolve_answer`` delivers an ANSWER, and every way it ends (an
answer, APPROVE / REJECT from a client that knows no questions, a timeout, a withdrawal) is a
``question_answered`` event before the approval's own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from goldfive import events
from goldfive.approvals.desk import ApprovalDesk
from goldfive.approvals.ledger import BY_GOLDFIVE, BY_RULE, Outcome, rule_text
from goldfive.approvals.policy import ApprovalPolicy, OnTimeout
from goldfive.approvals.reviewer import REVIEWER, Reviewer, review_call
from goldfive.clean import json_text
from goldfive.control import ControlKind, ControlMessage
from goldfive.run.defaults import run_defaults
from goldfive.types import DriftEvent, DriftKind, DriftSeverity

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.parts import Run

log = logging.getLogger("goldfive.approvals")

#: ApprovalRejected detail when the waiting invocation was cancelled before a decision.
WITHDRAWN = "withdrawn: the waiting invocation was cancelled"


def desk_of(ctx: Run) -> ApprovalDesk:
    """The run's approval desk (rules, policy, denials in the open turns)."""
    desk: ApprovalDesk | None = getattr(ctx, "approval_desk", None)
    if desk is None:
        desk = ApprovalDesk()
        ctx.approval_desk = desk
    return desk


def reviewer_of(ctx: Run) -> Reviewer | None:
    """The run's reviewer (``RuntimeConfig.approval_reviewer``, else the process's default,
    ``--approvals review``), or None."""
    given: Reviewer | None = ctx.config.approval_reviewer
    if given is None:
        given = run_defaults().reviewer
    return given


def _policy_for(desk: ApprovalDesk, timeout_ms: int | None, policy: ApprovalPolicy | None) -> ApprovalPolicy:
    if timeout_ms is not None:  # the agent named a deadline (flow A): it decides at it
        ms = int(timeout_ms)
        return ApprovalPolicy(OnTimeout.REJECT, ms / 1000) if ms > 0 else ApprovalPolicy()
    return policy or desk.policy


async def request_approval(
    ctx: Run,
    *,
    target_id: str,
    kind: str,
    prompt: str = "",
    task_id: str = "",
    tool_name: str = "",
    args: dict[str, Any] | None = None,
    timeout_ms: int | None = None,
    parameters: dict[str, Any] | None = None,
    parameters_json: str | None = None,
    policy: ApprovalPolicy | None = None,
    editable: bool = True,
    options: tuple[str, ...] = (),
    free_text: bool = True,
) -> dict[str, Any]:
    """Wait for a decision. Returns {"decision": approve|reject|timeout|unavailable, "detail"},
    plus "arguments" when a person edited them (the call runs with those) and "rule_id" when a
    rule approved it.

    ``parameters`` (the tool's JSON schema) is what edited arguments are checked against;
    ``parameters_json``, when given, is ``json_text(parameters)`` made once by the caller;
    ``editable=False`` (the framework accepts no changed arguments for this call) refuses edits.
    ``timeout_ms`` (an agent-given deadline) rejects at it; otherwise ``policy``, else the
    run's policy, says what happens when nobody decides (by default: wait).
    With no control channel, or a closed one with nothing left in it, nobody could answer:
    "unavailable" at once, nothing registered (rules still apply).
    Cancelling the caller withdraws the request (no waiter is left behind).

    A question (``kind="question"``) also takes ``options`` and ``free_text``; its answer
    comes back as {"decision": "answer", "detail": the text, "option": the option picked or ""}.
    """
    session = ctx.session
    desk = desk_of(ctx)
    if kind == "tool":
        rule = desk.match(tool_name, args or {})
        if rule is not None:
            why = rule_text(rule.id, rule.author, rule.made_at_ms)
            await ctx.emit(
                events.approval_decided, target_id=target_id, outcome=Outcome.APPROVED_BY_RULE, author=BY_RULE,
                kind=kind, task_id=task_id, tool_name=tool_name, requested_args=args or {}, ran_args=args or {},
                reason=why, rule_id=rule.id, rule_author=rule.author, rule_made_at_ms=rule.made_at_ms,
            )  # fmt: skip
            return {"decision": "approve", "detail": why, "rule_id": rule.id}
    if ctx.control is None:
        return {"decision": "unavailable", "detail": "no control channel is bound to this run"}
    if not ctx.controls.usable():
        return {"decision": "unavailable", "detail": "the control channel is closed; nobody can answer"}
    if target_id in session.pending_approvals:
        return {"decision": "unavailable", "detail": f"an approval for {target_id} is already pending"}
    pol = _policy_for(desk, timeout_ms, policy)
    deadline = pol.deadline_s
    waiter = asyncio.Event()
    meta: dict[str, Any] = {
        "kind": kind,
        "prompt": prompt,
        "task_id": task_id,
        "tool_name": tool_name,
        "args": args or {},
        # The request's arguments as JSON, made once: the request and its ledger entry share it.
        "args_json": json_text(args or {}) if kind == "tool" else None,
        "parameters": parameters,
        "editable": editable,
        "options": tuple(options),
        "free_text": free_text,
    }
    retry_of = desk.rejected_before(task_id, tool_name, args) if kind == "tool" else ""
    session.pending_approvals[target_id] = waiter
    session.pending_approvals_meta[target_id] = meta

    async def decided(outcome: Outcome, author: str, reason: str, ran: dict[str, Any] | None) -> None:
        await ctx.emit(
            events.approval_decided, target_id=target_id, outcome=outcome, author=author, kind=kind,
            task_id=task_id, tool_name=tool_name, requested_args=args if kind == "tool" else None,
            ran_args=ran, reason=reason, requested_args_json=meta["args_json"] if args is not None else None,
        )  # fmt: skip

    review: asyncio.Task[None] | None = None
    reviewer = reviewer_of(ctx) if kind == "tool" else None
    if reviewer is not None and (desk.never_auto(tool_name) or not reviewer.reviews(tool_name)):
        reviewer = None  # never automatic: only a person decides it
    try:
        await ctx.emit(
            events.approval_requested,
            target_id=target_id,
            kind=kind,
            prompt=prompt,
            task_id=task_id,
            tool_name=tool_name,
            args=args if kind == "tool" else None,
            args_json=meta["args_json"] if args is not None else None,
            timeout_ms=int(deadline * 1000) if deadline is not None else 0,
            on_timeout=str(pol.on_timeout) if deadline is not None else "wait",
            retry_of=retry_of,
            parameters=parameters if kind == "tool" else None,
            parameters_json=parameters_json if kind == "tool" and parameters else None,
            metadata=None if editable else {"editable": "false"},
            under_review=reviewer is not None,
        )
        if kind == "question":
            await ctx.emit(
                events.question_asked, target_id=target_id, prompt=prompt, task_id=task_id, options=options,
                free_text=free_text, timeout_ms=int(deadline * 1000) if deadline is not None else 0,
                on_timeout=str(pol.on_timeout) if deadline is not None else "wait",
            )  # fmt: skip
        if reviewer is not None:
            review = asyncio.create_task(_review(ctx, reviewer, waiter, target_id, task_id, tool_name, args or {}))
        try:
            if deadline is None and ctx.config.approval_reminders is None:
                await waiter.wait()  # no deadline, no reminders (the default): nothing to time
                timed_out = False
            else:
                timed_out = not await _wait(ctx, waiter, pol, target_id)
        except asyncio.CancelledError:
            # The waiting invocation was cancelled (CANCEL, STEER): close the request on the
            # stream too, so no UI keeps offering a decision nobody waits for.
            if session.pending_approvals.pop(target_id, None) is not None:
                if kind == "question":
                    await ctx.emit(events.question_answered, target_id, outcome="withdrawn", author=BY_GOLDFIVE)
                await ctx.emit(events.approval_rejected, target_id, WITHDRAWN)
                await decided(Outcome.CANCELLED, BY_GOLDFIVE, WITHDRAWN, None)
            raise
        if timed_out:
            session.pending_approvals.pop(target_id, None)
            ms = int((deadline or 0) * 1000)
            if kind == "question":
                await ctx.emit(events.question_answered, target_id, outcome="timed_out", author=BY_GOLDFIVE)
            await ctx.emit(events.approval_rejected, target_id, "timeout", timed_out=True)
            await decided(Outcome.TIMED_OUT, BY_GOLDFIVE, f"no decision within {ms} ms", None)
            return {"decision": "timeout", "detail": f"no decision within {ms} ms"}
        out: dict[str, Any] = {"decision": meta.get("decision", "reject"), "detail": str(meta.get("detail", ""))}
        if "arguments" in meta:
            out["arguments"] = meta["arguments"]
        if "option" in meta:
            out["option"] = meta["option"]
        if out["decision"] == "reject" and kind == "tool":
            desk.note_rejected(task_id, tool_name, args, target_id)
        return out
    finally:
        if review is not None and not review.done():
            review.cancel()  # decided (or withdrawn) first: the reviewer's answer no longer matters
        session.pending_approvals.pop(target_id, None)
        session.pending_approvals_meta.pop(target_id, None)


def _task_text(ctx: Run, task_id: str) -> str:
    plan = ctx.session.plan
    if plan is None or not task_id:
        return task_id
    try:
        task = plan.task(task_id)
    except KeyError:
        return task_id
    return f"{task.id}: {task.title}" + (f" ({task.description})" if task.description else "")


async def _review(
    ctx: Run, reviewer: Reviewer, waiter: asyncio.Event, target_id: str, task_id: str, tool_name: str, args: dict[str, Any]
) -> None:
    """Ask the reviewer about the pending call ``target_id``; record its verdict; apply an
    approve or reject after the grace unless a person decided first. A failure here leaves
    the approval waiting for a person (said in the log)."""
    session = ctx.session
    try:
        goal = "; ".join(g.summary for g in session.goals if g.summary)
        call_llm = reviewer.call_llm or getattr(ctx.planner, "call_llm", None)
        model = reviewer.model or str(getattr(ctx.planner, "model", "") or "")
        verdict = await review_call(
            reviewer, call_llm, goal=goal, task=_task_text(ctx, task_id), tool_name=tool_name, args=args, asked=session.user_input
        )
        if session.pending_approvals.get(target_id) is not waiter:
            return  # a person decided while the model thought: their decision stands, nothing to record
        grace_ms = int(reviewer.grace_s * 1000) if verdict.decision != "ask" else 0
        await ctx.emit(
            events.approval_reviewed, target_id, decision=verdict.decision, reason=verdict.reason,
            error=verdict.error, grace_ms=grace_ms, model=model,
        )  # fmt: skip
        if verdict.decision == "ask":
            return  # waits for a person, the reviewer's reason shown beside it
        if reviewer.grace_s > 0 and await _within(waiter, reviewer.grace_s):
            return  # a person decided within the grace: theirs wins
        if session.pending_approvals.get(target_id) is not waiter:
            return
        await resolve_approval(
            ctx, target_id, approve=verdict.decision == "approve", detail=verdict.reason, author=REVIEWER, client=REVIEWER,
            by_reviewer=True,
        )  # fmt: skip
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the approval stays pending for a person, who is told
        log.exception("the reviewer of approval %s failed; it waits for a person", target_id)
        if session.pending_approvals.get(target_id) is waiter:
            try:
                await ctx.emit(events.approval_reviewed, target_id, decision="ask", reason="",
                               error=f"the reviewer failed: {type(exc).__name__}: {exc}")  # fmt: skip
            except Exception:  # recording it failed too: the log has it
                log.exception("could not record the reviewer's failure on %s", target_id)


async def _wait(ctx: Run, waiter: asyncio.Event, pol: ApprovalPolicy, target_id: str) -> bool:
    """True once decided; False when the policy's deadline passed with policy REJECT.
    ESCALATE pauses the run at the deadline and waits on. Meanwhile, in time order: the run's
    reminders and escalation (``RuntimeConfig.approval_reminders``), the deadline's warning."""
    deadline, warn_at = pol.deadline_s, pol.warn_at_s
    reminders = ctx.config.approval_reminders
    steps: list[tuple[float, str]] = reminders.schedule(pol) if reminders is not None else []
    if warn_at is not None:
        steps.append((warn_at, "warn"))
    steps.sort(key=lambda step: step[0])  # stable: an escalation at the warning goes first
    start = time.monotonic()
    reminded = 0
    for at, what in steps:
        if await _within(waiter, at - (time.monotonic() - start)):
            return True
        waited = int((time.monotonic() - start) * 1000)
        if what == "remind":
            reminded += 1
            await ctx.emit(events.approval_reminded, target_id, waited_ms=waited, reminder=reminded)
        elif what.startswith("escalate:"):
            await ctx.emit(events.approval_escalated, target_id, waited_ms=waited, why=what.partition(":")[2])
        else:
            left = (deadline or 0) - (time.monotonic() - start)
            await ctx.emit(events.approval_expiring, target_id, ms_left=max(int(left * 1000), 0), on_timeout=str(pol.on_timeout))
    if deadline is None:
        await waiter.wait()
        return True
    if await _within(waiter, deadline - (time.monotonic() - start)):
        return True
    if pol.on_timeout is OnTimeout.REJECT:
        return False
    detail = f"approval {target_id} undecided after {deadline:g} s: run paused for a person (no new task starts)"
    await ctx.steerer.report_drift(
        ctx.session, DriftEvent(DriftKind.CUSTOM, DriftSeverity.WARNING, detail, ctx.session.current_task_id)
    )
    # Through the run's ControlLoop, as the ladder escalates: recorded and acked, so every
    # front end shows the run PAUSED by an escalation; it stays paused until RESUME.
    escalate = ControlMessage(ControlKind.GOLDFIVE_PAUSE_ESCALATE, payload={"reason": detail, "target_id": target_id})
    await ctx.controls.handle(escalate, mid_task=True, from_ladder=True)
    await waiter.wait()
    return True


async def _within(waiter: asyncio.Event, seconds: float) -> bool:
    try:
        await asyncio.wait_for(waiter.wait(), max(seconds, 0))
    except TimeoutError:
        return waiter.is_set()
    return True


async def resolve_approval(
    ctx: Run,
    target_id: str,
    *,
    approve: bool,
    detail: str = "",
    arguments: dict[str, Any] | None = None,
    author: str = "",
    client: str = "",
    control_id: str = "",
    by_reviewer: bool = False,
) -> bool:
    """Deliver a decision. False when nothing is pending under ``target_id``.

    ``arguments`` (approve only) replace the call's arguments; the caller checked them.
    ``by_reviewer``: the run's reviewer decided (its own outcomes in the ledger, never a person's)."""
    session = ctx.session
    waiter = session.pending_approvals.pop(target_id, None)
    if waiter is None:
        return False
    meta = session.pending_approvals_meta.get(target_id, {})
    meta["decision"] = "approve" if approve else "reject"
    meta["detail"] = detail
    asked: dict[str, Any] = meta.get("args") or {}
    edited = approve and arguments is not None and arguments != asked
    if edited:
        meta["arguments"] = arguments
    kind = meta.get("kind", "")
    if kind == "question":  # from a client that knows no questions: yes / no
        outcome_word = "yes" if approve else "no"
        await ctx.emit(events.question_answered, target_id, outcome=outcome_word, text=detail, author=author, client=client)
    if approve:
        await ctx.emit(events.approval_granted, target_id, detail, arguments=arguments if edited else None)
    else:
        await ctx.emit(events.approval_rejected, target_id, detail)
    is_tool = kind == "tool"
    outcome = Outcome.EDITED_APPROVED if edited else Outcome.APPROVED if approve else Outcome.REJECTED
    if by_reviewer:
        outcome = Outcome.APPROVED_BY_REVIEWER if approve else Outcome.REJECTED_BY_REVIEWER
    await ctx.emit(
        events.approval_decided, target_id=target_id, outcome=outcome, author=author, client=client,
        kind=str(kind), task_id=str(meta.get("task_id", "")), tool_name=str(meta.get("tool_name", "")),
        requested_args=asked if is_tool else None,
        ran_args=(arguments if edited else asked) if approve and is_tool else None,
        reason=detail, control_id=control_id, requested_args_json=meta.get("args_json") if is_tool else None,
    )  # fmt: skip
    waiter.set()
    return True


def answer_problem(meta: dict[str, Any], text: str, option: str) -> str:
    """Why the pending question ``meta`` cannot take this answer ("" when it can): an option
    it did not offer, or typed text when it takes only its options."""
    if meta.get("kind") != "question":
        return f"it is a {meta.get('kind') or 'task'} approval, not a question: APPROVE or REJECT it"
    options: tuple[str, ...] = tuple(meta.get("options") or ())
    if option:
        if option not in options:
            offered = " / ".join(options) if options else "none (answer with text)"
            return f"option {option!r} was not offered (the options: {offered})"
        return ""
    if not meta.get("free_text", True):
        return f"it takes one of its options, not free text (the options: {' / '.join(options)})"
    return ""


async def resolve_answer(
    ctx: Run, target_id: str, *, text: str = "", option: str = "", author: str = "", client: str = "", control_id: str = ""
) -> bool:
    """Deliver an ANSWER to the pending question ``target_id`` (checked by the handler with
    :func:`answer_problem`). False when nothing is pending under it. The agent gets the
    option's text when one was picked, else ``text``."""
    session = ctx.session
    waiter = session.pending_approvals.pop(target_id, None)
    if waiter is None:
        return False
    meta = session.pending_approvals_meta.get(target_id, {})
    answer = option or text
    meta["decision"] = "answer"
    meta["detail"] = answer
    meta["option"] = option
    await ctx.emit(events.question_answered, target_id, outcome="answered", text=answer, option=option, author=author, client=client)
    await ctx.emit(events.approval_granted, target_id, answer)
    await ctx.emit(
        events.approval_decided, target_id=target_id, outcome=Outcome.ANSWERED, author=author, client=client,
        kind="question", task_id=str(meta.get("task_id", "")), reason=answer, control_id=control_id,
    )  # fmt: skip
    waiter.set()
    return True
