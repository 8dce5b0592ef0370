"""The reporting tools handed to agents (user tools are in ``goldfive.run.user_tools``): seven
report on the task, and ``ask_person`` asks a person a question (docs/approvals.md#questions).
``report_task_started`` is still accepted when an agent calls it (an older prompt may say to) but
is not offered (:data:`OFFERED_TOOL_NAMES`): the executor moves the task to RUNNING before the
agent starts, so the call only cost every model request a tool schema.

A ``ReportingToolSpec`` is callable with keyword arguments and returns a dict. Bad
arguments or a transition the state machine refuses come back as ``{"ok": False, "error":
...}`` for the agent to read; tools never raise into the agent.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from goldfive import events
from goldfive.protocols import move_task
from goldfive.run.approvals import request_approval
from goldfive.run.tool_spec import Handler, ReportingToolSpec, validate_args
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, TaskStatus

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.parts import Run

__all__ = ["REPORTING_TOOL_NAMES", "Handler", "ReportingToolSpec", "build_tools", "validate_args"]

log = logging.getLogger("goldfive.tools")


def _schema(required: list[str], **props: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": t, "description": d} for k, (t, d) in props.items()},
        "required": required,
        "additionalProperties": False,
    }


_TASK_ID = ("string", "the task id; defaults to the current task")


def build_tools(ctx: Run, task_id: str) -> dict[str, ReportingToolSpec]:
    """The reporting tools bound to ``task_id``, plus the context's user tools."""
    session, steerer = ctx.session, ctx.steerer

    def tid(given: str | None) -> str:
        return given or task_id

    async def _move(task: str, to: TaskStatus, detail: str = "") -> dict[str, Any]:
        changed = await move_task(steerer, session, task, to, detail)
        status = session.plan.task(task).status if session.plan else to
        return {"ok": True, "task_id": task, "status": str(status), "changed": changed}

    async def started(task_id: str | None = None) -> dict[str, Any]:
        return await _move(tid(task_id), TaskStatus.RUNNING)

    async def progress(detail: str = "", fraction: float | None = None, task_id: str | None = None) -> dict[str, Any]:
        task = tid(task_id)
        session.plan.task(task) if session.plan else None
        session.task_progress.setdefault(task, []).append(detail)
        frac = -1.0 if fraction is None else max(0.0, min(1.0, float(fraction)))
        await ctx.emit(events.task_progress, task, detail=detail, fraction=frac)
        return {"ok": True, "task_id": task}

    async def completed(result: str = "", task_id: str | None = None) -> dict[str, Any]:
        return await _move(tid(task_id), TaskStatus.COMPLETED, result)

    async def failed(reason: str, recoverable: bool = False, task_id: str | None = None) -> dict[str, Any]:
        task = tid(task_id)
        out = await _move(task, TaskStatus.FAILED, reason)
        kind = DriftKind.TASK_FAILED_RECOVERABLE if recoverable else DriftKind.TASK_FAILED_FATAL
        sev = DriftSeverity.WARNING if recoverable else DriftSeverity.CRITICAL
        await steerer.report_drift(session, DriftEvent(kind, sev, reason, task))
        return out

    async def blocked(blocker: str, task_id: str | None = None) -> dict[str, Any]:
        task = tid(task_id)
        out = await _move(task, TaskStatus.BLOCKED, blocker)
        await steerer.report_drift(session, DriftEvent(DriftKind.BLOCKED, DriftSeverity.INFO, blocker, task))
        return out

    async def new_work(title: str, description: str = "", task_id: str | None = None) -> dict[str, Any]:
        drift = DriftEvent(
            DriftKind.NEW_WORK_DISCOVERED,
            DriftSeverity.WARNING,
            f"{title}: {description}" if description else title,
            tid(task_id),
            metadata={"title": title, "description": description},
        )
        await steerer.report_drift(session, drift)
        return {"ok": True, "queued_for_replan": True}

    async def divergence(detail: str, task_id: str | None = None) -> dict[str, Any]:
        drift = DriftEvent(DriftKind.PLAN_DIVERGENCE, DriftSeverity.WARNING, detail, tid(task_id))
        await steerer.report_drift(session, drift)
        return {"ok": True, "queued_for_replan": True}

    async def awaiting_approval(prompt: str, timeout_ms: int | None = None, task_id: str | None = None) -> dict[str, Any]:
        task = tid(task_id)
        if ctx.control is None:
            return {"decision": "unavailable", "detail": "no control channel is bound to this run"}
        session.plan.task(task) if session.plan else None
        await steerer.mark_task_blocked(session, task, "awaiting_approval")
        # Cancelled while waiting: the task stays BLOCKED until the executor cancels it (no
        # "approval resolved" for a request that was withdrawn).
        decision = await request_approval(
            ctx, target_id=task, kind="task", prompt=prompt, task_id=task, timeout_ms=timeout_ms
        )
        if session.plan and session.plan.task(task).status == TaskStatus.BLOCKED:
            await move_task(steerer, session, task, TaskStatus.RUNNING, "approval resolved")
        return decision

    async def ask_person(
        prompt: str, options: list[Any] | None = None, free_text: bool = True, timeout_ms: int | None = None, task_id: str | None = None
    ) -> dict[str, Any]:
        offered = tuple(dict.fromkeys(str(o) for o in options or () if str(o).strip()))
        if not prompt.strip():
            return {"ok": False, "error": "ask_person: the prompt is empty"}
        decision = await request_approval(
            ctx, target_id=f"question-{uuid.uuid4().hex[:12]}", kind="question", prompt=prompt, task_id=tid(task_id),
            timeout_ms=timeout_ms, options=offered, free_text=free_text or not offered,
        )  # fmt: skip
        outcome = str(decision.get("decision", ""))
        answer = str(decision.get("detail", ""))
        if outcome == "answer":
            return {"ok": True, "answer": answer, "option": str(decision.get("option", ""))}
        if outcome == "approve":  # a client that knows no questions said yes
            return {"ok": True, "answer": answer or "yes", "option": ""}
        if outcome == "reject":
            return {"ok": True, "answer": f"no: {answer}" if answer else "no", "option": ""}
        return {"ok": False, "error": f"no answer ({outcome}: {answer})"}

    handlers: dict[str, Handler] = {
        "report_task_started": started,
        "report_task_progress": progress,
        "report_task_completed": completed,
        "report_task_failed": failed,
        "report_task_blocked": blocked,
        "report_new_work_discovered": new_work,
        "report_plan_divergence": divergence,
        "report_awaiting_approval": awaiting_approval,
        "ask_person": ask_person,
    }
    # The names, descriptions and schemas are built once per process (_SCHEMAS); a task only
    # binds its handlers to them.
    specs = [ReportingToolSpec(name, description, parameters, handlers[name]) for name, description, parameters in _SCHEMAS]
    tools = {s.name: s for s in specs}
    for user_tool in ctx.user_tools:
        tools[user_tool.name] = user_tool.bind(ctx, task_id)
    return tools


_SCHEMAS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("report_task_started", "Report that you started the task.", _schema([], task_id=_TASK_ID)),
    (
        "report_task_progress",
        "Report progress on the task.",
        _schema(["detail"], detail=("string", "what you did"), fraction=("number", "0..1 done"), task_id=_TASK_ID),
    ),
    (
        "report_task_completed",
        "Report the task done, with its result.",
        _schema(["result"], result=("string", "the result"), task_id=_TASK_ID),
    ),
    (
        "report_task_failed",
        "Report that the task failed.",
        _schema(["reason"], reason=("string", "why"), recoverable=("boolean", "can a replan fix it"), task_id=_TASK_ID),
    ),
    (
        "report_task_blocked",
        "Report that the task is blocked.",
        _schema(["blocker"], blocker=("string", "what blocks it"), task_id=_TASK_ID),
    ),
    (
        "report_new_work_discovered",
        "Report work the plan is missing.",
        _schema(["title"], title=("string", "the new work"), description=("string", "details"), task_id=_TASK_ID),
    ),
    (
        "report_plan_divergence",
        "Report that the plan no longer fits.",
        _schema(["detail"], detail=("string", "how it diverges"), task_id=_TASK_ID),
    ),
    (
        "report_awaiting_approval",
        "Ask a human to approve before you continue; returns the decision.",
        _schema(["prompt"], prompt=("string", "the question"), timeout_ms=("integer", "how long to wait"), task_id=_TASK_ID),
    ),
    (
        "ask_person",
        "Ask a person a question and wait for the answer (their words, or one of the options you offer).",
        {
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "the question"},
                "options": {"type": "array", "items": {"type": "string"}, "description": "answers to pick from (optional)"},
                "free_text": {"type": "boolean", "description": "may the person type another answer (default true)"},
                "timeout_ms": {"type": "integer", "description": "how long to wait"},
                "task_id": {"type": _TASK_ID[0], "description": _TASK_ID[1]},
            },
            "required": ["prompt"],
            "additionalProperties": False,
        },
    ),
)

#: Every reporting tool name an agent's call is accepted for.
REPORTING_TOOL_NAMES = tuple(name for name, _, _ in _SCHEMAS)

#: Accepted when called, not offered to the agent (see the module docstring).
HIDDEN_TOOL_NAMES = ("report_task_started",)

#: The reporting tools an agent is offered (what the model's tool list holds).
OFFERED_TOOL_NAMES = tuple(name for name in REPORTING_TOOL_NAMES if name not in HIDDEN_TOOL_NAMES)


def offered(tools: dict[str, ReportingToolSpec]) -> dict[str, ReportingToolSpec]:
    """``tools`` (a ``RunContext.tools_for`` result) without the hidden reporting tools: what
    an adapter lists for the model."""
    return {name: spec for name, spec in tools.items() if name not in HIDDEN_TOOL_NAMES}
