"""User tools: a plain Python function offered to the agent, optionally behind an approval
(a tool approval: docs/protocol.md#approve-and-reject)."""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, get_type_hints

from goldfive.approvals.policy import ApprovalPolicy
from goldfive.clean import json_encoder, json_text
from goldfive.ids import random_hex
from goldfive.run.approvals import request_approval
from goldfive.run.tool_spec import ReportingToolSpec
from goldfive.types import DriftEvent, DriftKind, DriftSeverity

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.parts import Run

_PY_TO_JSON: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


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
    #: What happens when nobody decides (None: the run's policy; by default it waits).
    policy: ApprovalPolicy | None = None

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

    def bind(self, ctx: Run, task_id: str) -> ReportingToolSpec:
        schema = schema_from_signature(self.fn)
        #: The schema as JSON for ApprovalRequested, made at the turn's first approval and
        #: shared by the rest (it was dumped again for every approval).
        schema_json: str | None = None

        async def call(**kwargs: Any) -> dict[str, Any]:
            nonlocal schema_json
            note = ""
            if self.requires_approval is not False and self.needs_approval(kwargs):  # (most tools: False)
                if schema_json is None:
                    schema_json = json_text(schema)
                decision = await request_approval(
                    ctx,
                    target_id=f"call-{random_hex()[:12]}",
                    kind="tool",
                    prompt=self.prompt_for(kwargs),
                    task_id=task_id,
                    tool_name=self.name,
                    args=kwargs,
                    parameters=schema,
                    parameters_json=schema_json,
                    policy=self.policy,
                )
                if decision["decision"] != "approve":  # approved (the usual answer): no refusal to build
                    refusal = refusal_for_model(self.name, decision)
                    if refusal is not None:
                        return refusal
                edited = decision.get("arguments")
                if isinstance(edited, dict):
                    note = edited_note(kwargs, edited)
                    kwargs = dict(edited)
            result = await self._run(ctx, task_id, kwargs)
            if note:
                result = {**result, "approval_note": note}
            return result

        return ReportingToolSpec(self.name, self.description, schema, call)

    async def _run(self, ctx: Run, task_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            value = self.fn(**kwargs)
            if value.__class__ is not dict and inspect.isawaitable(value):  # a dict (most results) is not
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


def edited_note(asked: dict[str, Any], ran: dict[str, Any]) -> str:
    """What the model is told when a person changed the call before approving it."""
    return (
        "A person edited this call's arguments before approving it: it ran with "
        f"{_note_json(ran)} instead of {_note_json(asked)}."
    )


def refusal_for_model(tool_name: str, decision: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's result when the call did not run (None when it was approved)."""
    outcome = decision["decision"]
    detail = str(decision.get("detail", ""))
    if outcome == "approve":
        return None
    if outcome == "reject":
        why = f": {detail}" if detail else ""
        return {"skipped": True, "reason": "user_rejected", "detail": detail,
                "message": f"A person rejected the call to {tool_name}{why}. It did not run; do not retry it unchanged."}  # fmt: skip
    if outcome == "timeout":
        return {"skipped": True, "reason": "approval_timeout", "detail": detail,
                "message": f"Nobody approved the call to {tool_name} in time ({detail}); it timed out and did not run."}  # fmt: skip
    return {"skipped": True, "reason": f"approval_{outcome}", "detail": detail,
            "message": f"The call to {tool_name} could not be approved ({detail}); it did not run."}  # fmt: skip


#: The JSON of ``edited_note`` and ``_jsonable``'s check (``json.dumps`` with these options), made once.
_note_json = json_encoder(sort_keys=True, default=str)
_plain_json = json_encoder()


def _jsonable(value: Any) -> Any:
    try:
        _plain_json(value)
        return value
    except (TypeError, ValueError):
        return str(value)
