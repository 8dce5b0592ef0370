"""Tools handed to agents: the 8 reporting tools and user tools (with approval, flow B).

A ``ReportingToolSpec`` is callable with keyword arguments and returns a dict. Bad
arguments or a transition the state machine refuses come back as ``{"ok": False, "error":
...}`` for the agent to read; tools never raise into the agent.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, get_type_hints

from goldfive import events
from goldfive.approvals import request_approval
from goldfive.errors import GoldfiveError
from goldfive.runtime import RunContext
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, TaskStatus

log = logging.getLogger("goldfive.tools")

Handler = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ReportingToolSpec:
    name: str
    description: str
    #: JSON schema of the arguments (type "object").
    parameters: dict[str, Any]
    handler: Handler = field(repr=False, compare=False)

    async def __call__(self, **kwargs: Any) -> dict[str, Any]:
        problem = validate_args(self.parameters, kwargs)
        if problem:
            return {"ok": False, "error": f"{self.name}: {problem}"}
        try:
            return await self.handler(**kwargs)
        except asyncio.CancelledError:
            raise
        except GoldfiveError as exc:
            return {"ok": False, "error": f"{self.name}: {exc}"}

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list, tuple),
}


def validate_args(schema: dict[str, Any], args: dict[str, Any]) -> str:
    """A short description of what is wrong with ``args``, or "" when they fit the schema."""
    props: dict[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in args]
    if missing:
        return f"missing required argument(s): {', '.join(missing)}"
    if not schema.get("additionalProperties", True):
        extra = [k for k in args if k not in props]
        if extra:
            return f"unknown argument(s): {', '.join(sorted(extra))}"
    for key, value in args.items():
        expected = props.get(key, {}).get("type")
        if expected is None or value is None:
            continue
        types = _JSON_TYPES.get(expected, (object,))
        if isinstance(value, bool) and expected in ("integer", "number"):
            return f"argument {key!r} must be {expected}, got boolean"
        if not isinstance(value, types):
            return f"argument {key!r} must be {expected}, got {type(value).__name__}"
    return ""


def _schema(required: list[str], **props: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": t, "description": d} for k, (t, d) in props.items()},
        "required": required,
        "additionalProperties": False,
    }


_TASK_ID = ("string", "the task id; defaults to the current task")


def build_tools(ctx: RunContext, task_id: str) -> dict[str, ReportingToolSpec]:
    """The reporting tools bound to ``task_id``, plus the context's user tools."""
    session, steerer = ctx.session, ctx.steerer

    def tid(given: str | None) -> str:
        return given or task_id

    async def _move(task: str, to: TaskStatus, **kw: Any) -> dict[str, Any]:
        changed = await steerer.transition(session, task, to, **kw)
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
        return await _move(tid(task_id), TaskStatus.COMPLETED, result=result)

    async def failed(reason: str, recoverable: bool = False, task_id: str | None = None) -> dict[str, Any]:
        task = tid(task_id)
        out = await _move(task, TaskStatus.FAILED, reason=reason)
        kind = DriftKind.TASK_FAILED_RECOVERABLE if recoverable else DriftKind.TASK_FAILED_FATAL
        sev = DriftSeverity.WARNING if recoverable else DriftSeverity.CRITICAL
        await steerer.report_drift(session, DriftEvent(kind, sev, reason, task))
        return out

    async def blocked(blocker: str, task_id: str | None = None) -> dict[str, Any]:
        task = tid(task_id)
        out = await _move(task, TaskStatus.BLOCKED, reason=blocker)
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
            await steerer.transition(session, task, TaskStatus.RUNNING, reason="approval resolved")
        return decision

    specs = [
        ReportingToolSpec("report_task_started", "Report that you started the task.", _schema([], task_id=_TASK_ID), started),
        ReportingToolSpec(
            "report_task_progress",
            "Report progress on the task.",
            _schema(["detail"], detail=("string", "what you did"), fraction=("number", "0..1 done"), task_id=_TASK_ID),
            progress,
        ),
        ReportingToolSpec(
            "report_task_completed",
            "Report the task done, with its result.",
            _schema(["result"], result=("string", "the result"), task_id=_TASK_ID),
            completed,
        ),
        ReportingToolSpec(
            "report_task_failed",
            "Report that the task failed.",
            _schema(["reason"], reason=("string", "why"), recoverable=("boolean", "can a replan fix it"), task_id=_TASK_ID),
            failed,
        ),
        ReportingToolSpec(
            "report_task_blocked",
            "Report that the task is blocked.",
            _schema(["blocker"], blocker=("string", "what blocks it"), task_id=_TASK_ID),
            blocked,
        ),
        ReportingToolSpec(
            "report_new_work_discovered",
            "Report work the plan is missing.",
            _schema(["title"], title=("string", "the new work"), description=("string", "details"), task_id=_TASK_ID),
            new_work,
        ),
        ReportingToolSpec(
            "report_plan_divergence",
            "Report that the plan no longer fits.",
            _schema(["detail"], detail=("string", "how it diverges"), task_id=_TASK_ID),
            divergence,
        ),
        ReportingToolSpec(
            "report_awaiting_approval",
            "Ask a human to approve before you continue; returns the decision.",
            _schema(["prompt"], prompt=("string", "the question"), timeout_ms=("integer", "how long to wait"), task_id=_TASK_ID),
            awaiting_approval,
        ),
    ]
    tools = {s.name: s for s in specs}
    for user_tool in ctx.user_tools:
        tools[user_tool.name] = user_tool.bind(ctx, task_id)
    return tools


REPORTING_TOOL_NAMES = (
    "report_task_started",
    "report_task_progress",
    "report_task_completed",
    "report_task_failed",
    "report_task_blocked",
    "report_new_work_discovered",
    "report_plan_divergence",
    "report_awaiting_approval",
)

# -- user tools -----------------------------------------------------------------------------

_PY_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def schema_from_signature(fn: Callable[..., Any]) -> dict[str, Any]:
    """A JSON schema of ``fn``'s parameters from its signature and type hints."""
    sig = inspect.signature(fn)
    try:
        hints = get_type_hints(fn)
    except Exception:  # unresolvable forward references: fall back to untyped
        hints = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, p in sig.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        hint = hints.get(name)
        origin = getattr(hint, "__origin__", hint)
        props[name] = {"type": _PY_TO_JSON.get(origin, "string")} if hint is not None else {}
        if p.default is inspect.Parameter.empty:
            required.append(name)
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


@dataclass(frozen=True)
class UserTool:
    """A plain Python function offered to the agent. ``requires_approval`` is a bool or a
    predicate over the call's arguments; when it holds, the call waits for APPROVE/REJECT."""

    fn: Callable[..., Any]
    name: str = ""
    description: str = ""
    requires_approval: bool | Callable[[dict[str, Any]], bool] = False
    #: What the person approving is asked: text, or a function of the call's arguments.
    approval_prompt: str | Callable[[dict[str, Any]], str] = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.fn.__name__)
        if not self.description:
            object.__setattr__(self, "description", (inspect.getdoc(self.fn) or self.name).strip())

    def needs_approval(self, args: dict[str, Any]) -> bool:
        rule = self.requires_approval
        return bool(rule(args)) if callable(rule) else bool(rule)

    def prompt_for(self, args: dict[str, Any]) -> str:
        rule = self.approval_prompt
        text = rule(args) if callable(rule) else rule
        return str(text) if text else f"Run {self.name}?"

    def bind(self, ctx: RunContext, task_id: str) -> ReportingToolSpec:
        async def call(**kwargs: Any) -> dict[str, Any]:
            if self.needs_approval(kwargs):
                call_id = f"call-{uuid.uuid4().hex[:12]}"
                decision = await request_approval(
                    ctx,
                    target_id=call_id,
                    kind="tool",
                    prompt=self.prompt_for(kwargs),
                    task_id=task_id,
                    tool_name=self.name,
                    args=kwargs,
                )
                if decision["decision"] == "reject":
                    return {"skipped": True, "reason": "user_rejected", "detail": decision.get("detail", "")}
                if decision["decision"] != "approve":
                    return {"skipped": True, "reason": f"approval_{decision['decision']}", "detail": decision.get("detail", "")}
            try:
                value = self.fn(**kwargs)
                if inspect.isawaitable(value):
                    value = await value
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: the tool's failure goes back to the agent
                await ctx.steerer.report_drift(
                    ctx.session,
                    DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.WARNING, f"{self.name}: {exc}", task_id),
                )
                return {"ok": False, "error": f"{self.name} raised {type(exc).__name__}: {exc}"}
            return value if isinstance(value, dict) else {"ok": True, "result": _jsonable(value)}

        return ReportingToolSpec(self.name, self.description, schema_from_signature(self.fn), call)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)
