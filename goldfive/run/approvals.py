"""Pending approvals: both flows of spec CONTROL.md section 6, framework-neutral.

``request_approval`` registers a waiter in ``session.pending_approvals``, emits
ApprovalRequested and waits (finitely) for APPROVE / REJECT, which ``resolve_approval``
delivers: the granted / rejected event is emitted before the waiter wakes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from goldfive import events
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.context import RunContext

#: ApprovalRejected detail when the waiting invocation was cancelled before a decision.
WITHDRAWN = "withdrawn: the waiting invocation was cancelled"


async def request_approval(
    ctx: RunContext,
    *,
    target_id: str,
    kind: str,
    prompt: str = "",
    task_id: str = "",
    tool_name: str = "",
    args: dict[str, Any] | None = None,
    timeout_ms: int | None = None,
) -> dict[str, str]:
    """Wait for a decision. Returns {"decision": approve|reject|timeout|unavailable, "detail"}.

    With no control channel, or a closed one with nothing left in it, nobody could answer:
    "unavailable" at once, nothing registered.
    Cancelling the caller withdraws the request (no waiter is left behind)."""
    session = ctx.session
    if ctx.control is None:
        return {"decision": "unavailable", "detail": "no control channel is bound to this run"}
    if not ctx.controls.usable():
        return {"decision": "unavailable", "detail": "the control channel is closed; nobody can answer"}
    if target_id in session.pending_approvals:
        return {"decision": "unavailable", "detail": f"an approval for {target_id} is already pending"}
    timeout = ctx.config.approval_default_timeout_ms if timeout_ms is None else int(timeout_ms)
    waiter = asyncio.Event()
    meta: dict[str, Any] = {
        "kind": kind,
        "prompt": prompt,
        "task_id": task_id,
        "tool_name": tool_name,
        "args": args or {},
    }
    session.pending_approvals[target_id] = waiter
    session.pending_approvals_meta[target_id] = meta
    try:
        await ctx.emit(
            events.approval_requested,
            target_id=target_id,
            kind=kind,
            prompt=prompt,
            task_id=task_id,
            tool_name=tool_name,
            args=args if kind == "tool" else None,
            timeout_ms=timeout,
        )
        try:
            await asyncio.wait_for(waiter.wait(), timeout / 1000 if timeout > 0 else None)
        except TimeoutError:
            session.pending_approvals.pop(target_id, None)
            await ctx.emit(events.approval_rejected, target_id, "timeout")
            return {"decision": "timeout", "detail": f"no decision within {timeout} ms"}
        except asyncio.CancelledError:
            # The waiting invocation was cancelled (CANCEL, STEER): close the request on the
            # stream too, so no UI keeps offering a decision nobody waits for.
            if session.pending_approvals.pop(target_id, None) is not None:
                await ctx.emit(events.approval_rejected, target_id, WITHDRAWN)
            raise
        return {"decision": meta.get("decision", "reject"), "detail": str(meta.get("detail", ""))}
    finally:
        session.pending_approvals.pop(target_id, None)
        session.pending_approvals_meta.pop(target_id, None)


async def resolve_approval(ctx: RunContext, target_id: str, *, approve: bool, detail: str = "") -> bool:
    """Deliver a decision. False when nothing is pending under ``target_id``."""
    session = ctx.session
    waiter = session.pending_approvals.pop(target_id, None)
    if waiter is None:
        return False
    meta = session.pending_approvals_meta.get(target_id, {})
    meta["decision"] = "approve" if approve else "reject"
    meta["detail"] = detail
    factory = events.approval_granted if approve else events.approval_rejected
    await ctx.emit(factory, target_id, detail)
    waiter.set()
    return True
