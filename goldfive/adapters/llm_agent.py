"""LLMAgentAdapter: runs a task as a tool-calling loop over any ChatModel.

The model sees the goals, the plan, the current task and the completed results (the
``agent_task.system`` prompt); it is offered the 8 reporting tools and the user's tools. Before
every model call the messages injected into the running turn are appended as user messages.
What goes wrong becomes a drift on the event stream (audit only, never a replan mid-task):
TOO_MANY_STEPS, CONTEXT_PRESSURE, AGENT_REFUSAL, SCHEMA_VIOLATION; a user tool that raises
reports TOOL_ERROR itself and its error goes back to the model.

Cancelling ``invoke`` cancels the model call in flight (the HTTP client closes its request)
and propagates at once; nothing keeps running.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from goldfive.adapters.common import GOLDFIVE_FRAMEWORK, record_model_turn, recording_tools
from goldfive.adapters.task_prompt import system_prompt
from goldfive.budget.gate import before_model_call
from goldfive.errors import LLMError
from goldfive.llm.base import ChatModel, ChatResult, ToolCall
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext
from goldfive.run.current_run import current, read_injected
from goldfive.run.tools import HIDDEN_TOOL_NAMES, ReportingToolSpec
from goldfive.run.user_tools import UserTool
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, Task, TaskStatus



class LLMAgentAdapter:
    """An AgentAdapter whose agent is a chat model with tools.

    ``max_steps`` bounds the model calls per invocation. ``tools`` are UserTools or plain
    functions (JSON schemas come from their signatures); the Runner installs them.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        model_name: str = "",
        tools: Iterable[UserTool | Callable[..., Any]] = (),
        max_steps: int = 12,
        name: str = "llm_agent",
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.model = model
        self.model_name = model_name
        self.user_tools = [t if isinstance(t, UserTool) else UserTool(t) for t in tools]
        self.max_steps = max_steps
        self.name = name

    @property
    def available_agents(self) -> list[str]:
        return [self.name]

    async def invoke(self, task: Task, session: Session) -> InvocationResult:
        ctx = current()
        specs = recording_tools(ctx, task.id, ctx.tools_for(task.id), all_tools=True)
        # Hidden reporting tools (report_task_started) still run when called, unlisted.
        schemas = [spec.openai_schema() for name, spec in specs.items() if name not in HIDDEN_TOOL_NAMES]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt(session, task)},
            {"role": "user", "content": f"Do the current task ({task.id}): {task.title}"},
        ]
        reported = ""  # what report_task_completed / report_task_failed said
        for _ in range(self.max_steps):
            for text in await read_injected(session, task.id):
                messages.append({"role": "user", "content": text})
            await before_model_call(task.id)  # over budget: the run pauses, this call waits
            try:
                result = await self.model.chat(messages, tools=schemas or None, model=self.model_name)
            except LLMError as exc:
                return InvocationResult(task.id, stop_reason="model_error", error=f"model call failed: {exc}")
            if result.refusal or result.finish_reason == "content_filter":
                words = result.refusal or result.content or "finish_reason content_filter"
                await _drift(ctx, DriftKind.AGENT_REFUSAL, DriftSeverity.WARNING, f"model refused: {words}", task.id)
                return InvocationResult(task.id, text=result.content, stop_reason="refusal", error=f"model refused: {words}")
            calls = [c.name for c in result.tool_calls]
            await record_model_turn(ctx, task_id=task.id, framework=GOLDFIVE_FRAMEWORK, text=result.content, tool_calls=calls)
            if result.finish_reason == "length":
                await _drift(
                    ctx, DriftKind.CONTEXT_PRESSURE, DriftSeverity.WARNING, "model answer cut off (finish_reason length)", task.id
                )
            if not result.tool_calls:
                return InvocationResult(task.id, text=result.content, stop_reason=result.finish_reason or "stop")
            messages.append(_assistant_message(result))
            for call in result.tool_calls:
                out = await self._run_tool(ctx, task.id, specs, call)
                if call.name in ("report_task_completed", "report_task_failed") and out.get("ok"):
                    reported = _reported_text(call)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(out, default=str)})
            status = _status(session, task)
            if status.is_terminal:
                if status == TaskStatus.COMPLETED:
                    return InvocationResult(task.id, text=reported or result.content, stop_reason="task_completed")
                return InvocationResult(task.id, stop_reason=f"task_{status.lower()}", error=reported or f"task {status.lower()}")
        detail = f"no final answer after {self.max_steps} model calls"
        await _drift(ctx, DriftKind.TOO_MANY_STEPS, DriftSeverity.WARNING, detail, task.id)
        return InvocationResult(task.id, stop_reason="max_steps", error=f"step limit exceeded: {detail}")

    async def _run_tool(
        self, ctx: RunContext, task_id: str, specs: dict[str, ReportingToolSpec], call: ToolCall
    ) -> dict[str, Any]:
        spec = specs.get(call.name)
        if spec is None:
            detail = f"unknown tool {call.name!r}; available: {', '.join(specs)}"
            await _drift(ctx, DriftKind.SCHEMA_VIOLATION, DriftSeverity.INFO, detail, task_id)
            return {"ok": False, "error": detail}
        try:
            args = json.loads(call.arguments_json or "{}")
        except ValueError as exc:
            args, problem = None, f"arguments are not valid JSON ({exc})"
        else:
            problem = "" if isinstance(args, dict) else f"arguments must be a JSON object, got {type(args).__name__}"
        if problem or not isinstance(args, dict):
            detail = f"{call.name}: {problem}: {call.arguments_json[:200]!r}"
            await _drift(ctx, DriftKind.SCHEMA_VIOLATION, DriftSeverity.INFO, detail, task_id)
            return {"ok": False, "error": f"{detail}. Call the tool again with a JSON object."}
        return await spec(**args)


def _assistant_message(result: ChatResult) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": result.content or None,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
            for c in result.tool_calls
        ],
    }


def _reported_text(call: ToolCall) -> str:
    try:
        args = json.loads(call.arguments_json)
    except ValueError:
        return ""
    if not isinstance(args, dict):
        return ""
    return str(args.get("result") or args.get("reason") or "")


def _status(session: Session, task: Task) -> TaskStatus:
    plan = session.plan
    if plan is not None and plan.has_task(task.id):
        return plan.task(task.id).status
    return task.status


async def _drift(ctx: RunContext, kind: DriftKind, severity: DriftSeverity, detail: str, task_id: str) -> None:
    await ctx.steerer.report_drift(ctx.session, DriftEvent(kind, severity, detail, task_id))
