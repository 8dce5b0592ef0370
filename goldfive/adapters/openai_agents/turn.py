"""One invocation's glue between goldfive and an Agents SDK run, each through a public SDK hook.

- the reporting tools become ``FunctionTool``s of a clone of the user's agent;
- ``RunConfig.call_model_input_filter`` puts injected messages into the model input before each
  model call, and keeps the ones already delivered in place for the later calls of the task;
- ``RunConfig.tool_error_formatter`` learns which tool call raised (and reports TOOL_ERROR);
- ``RunHooks.on_llm_end`` / ``on_tool_end`` record each model answer and tool call;
- the agent's ``tool_use_behavior`` ends the run once a tool moved the task to a terminal
  status (report_task_completed / report_task_failed), otherwise does what the agent said;
- a tool whose calls always need approval is copied with an invoker that runs an approved call
  with the arguments a person edited (the SDK runs the model's arguments otherwise).
"""

from __future__ import annotations

import copy
import inspect
import json
from typing import Any

from agents import Agent, FunctionTool, FunctionToolResult, ModelResponse, RunConfig, RunContextWrapper, RunHooks, Tool
from agents import ToolsToFinalOutputResult
from agents.run_config import CallModelData, ModelInputData, ToolErrorFormatterArgs
from agents.tool_context import ToolContext

from goldfive.adapters.common import record_model_turn, record_tool_call, to_text
from goldfive.run.context import RunContext, read_injected
from goldfive.run.tools import ReportingToolSpec
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, Task, TaskStatus

FRAMEWORK = "openai_agents"

#: Said to the model in front of the result of a call that ran with a person's arguments.
EDITED_NOTE = "A person changed the arguments before approving; the call ran with {args}. Result: "


class Turn:
    """What one ``invoke`` (one task, one framework run and its resumptions) keeps."""

    def __init__(self, ctx: RunContext, session: Session, task: Task) -> None:
        self.ctx = ctx
        self.session = session
        self.task = task
        #: Injected messages given to the model, each with the length the SDK's input had then.
        self.injected: list[tuple[int, dict[str, Any]]] = []
        #: call id -> the arguments a person approved instead of the model's.
        self.edited: dict[str, dict[str, Any]] = {}
        #: call id -> "ExcType: message" of a tool call that raised.
        self.tool_errors: dict[str, str] = {}
        #: What report_task_completed / report_task_failed said.
        self.reported = ""

    # -- task status -------------------------------------------------------------------------
    def status(self) -> TaskStatus:
        plan = self.session.plan
        if plan is not None and plan.has_task(self.task.id):
            return plan.task(self.task.id).status
        return self.task.status

    # -- the agent ---------------------------------------------------------------------------
    def agent(self, user_agent: Agent[Any], specs: dict[str, ReportingToolSpec]) -> Agent[Any]:
        """A clone of ``user_agent`` with the reporting tools; the user's object is not touched."""
        own = [self._editable(t) if isinstance(t, FunctionTool) and _always_asks(t) else t for t in user_agent.tools]
        names = {getattr(t, "name", "") for t in own}
        reporting = [self._reporting_tool(s) for s in specs.values() if s.name not in names]
        return user_agent.clone(tools=[*own, *reporting], tool_use_behavior=self._behavior(user_agent.tool_use_behavior))

    def _reporting_tool(self, spec: ReportingToolSpec) -> FunctionTool:
        async def invoke(tool_ctx: ToolContext[Any], raw: str) -> str:
            try:
                args = json.loads(raw or "{}")
            except ValueError as exc:
                return json.dumps({"ok": False, "error": f"{spec.name}: arguments are not valid JSON ({exc})"})
            if not isinstance(args, dict):
                return json.dumps({"ok": False, "error": f"{spec.name}: arguments must be a JSON object"})
            out = await spec(**args)
            if spec.name in ("report_task_completed", "report_task_failed") and out.get("ok"):
                self.reported = str(args.get("result") or args.get("reason") or "")
            return json.dumps(out, default=str)

        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=spec.parameters,
            on_invoke_tool=invoke,
            strict_json_schema=False,  # goldfive's schemas have optional arguments
        )

    def _editable(self, tool: FunctionTool) -> FunctionTool:
        """A copy of ``tool`` that runs an approved call with the person's arguments, if edited."""
        clone = copy.copy(tool)  # FunctionTool.__copy__ rebinds its invoker to the copy
        inner = clone.on_invoke_tool
        edited = self.edited

        async def invoke(tool_ctx: ToolContext[Any], raw: str) -> Any:
            args = edited.get(tool_ctx.tool_call_id)
            if args is None:
                return await inner(tool_ctx, raw)
            text = json.dumps(args, ensure_ascii=False)
            out = await inner(tool_ctx, text)
            return EDITED_NOTE.format(args=text) + to_text(out) if isinstance(out, (str, int, float, dict, list)) else out

        clone.on_invoke_tool = invoke
        return clone

    def can_run_edited(self, agent: Agent[Any], tool_name: str) -> bool:
        """Whether a call of ``tool_name`` by ``agent`` can run with edited arguments."""
        return any(isinstance(t, FunctionTool) and t.name == tool_name and _always_asks(t) for t in agent.tools)

    def _behavior(self, original: Any) -> Any:
        async def behavior(wrapper: RunContextWrapper[Any], results: list[FunctionToolResult]) -> ToolsToFinalOutputResult:
            if self.status().is_terminal:
                return ToolsToFinalOutputResult(is_final_output=True, final_output=self.reported)
            return await _original_behavior(original, wrapper, results)

        return behavior

    # -- run config ------------------------------------------------------------------------
    def run_config(self, base: RunConfig) -> RunConfig:
        """``base`` with goldfive's input filter and error formatter in front of the user's."""
        user_filter, user_formatter = base.call_model_input_filter, base.tool_error_formatter

        async def input_filter(data: CallModelData[Any]) -> ModelInputData:
            model_data = await self.with_injected(data.model_data)
            if user_filter is None:
                return model_data
            filtered: ModelInputData = await _maybe(user_filter(CallModelData(model_data=model_data, agent=data.agent, context=data.context)))
            return filtered

        async def error_formatter(args: ToolErrorFormatterArgs[Any]) -> str | None:
            if args.kind == "tool_exception":
                await self._tool_raised(args)
            return await _maybe(user_formatter(args)) if user_formatter is not None else None

        out = copy.copy(base)
        out.call_model_input_filter = input_filter
        out.tool_error_formatter = error_formatter
        return out

    async def with_injected(self, data: ModelInputData) -> ModelInputData:
        """The model input with every message injected into this task so far, each where it
        was first given (the SDK rebuilds the input for each call without them)."""
        given = len(data.input)
        for text in await read_injected(self.session, self.task.id):
            self.injected.append((given, {"role": "user", "content": text}))
        if not self.injected:
            return data
        items: list[Any] = []
        pending = iter(self.injected)
        nxt = next(pending, None)
        for index, item in enumerate(data.input):
            while nxt is not None and nxt[0] <= index:
                items.append(nxt[1])
                nxt = next(pending, None)
            items.append(item)
        while nxt is not None:
            items.append(nxt[1])
            nxt = next(pending, None)
        return ModelInputData(input=items, instructions=data.instructions)

    async def _tool_raised(self, args: ToolErrorFormatterArgs[Any]) -> None:
        error = f"{type(args.error).__name__}: {args.error}" if args.error is not None else "raised"
        self.tool_errors[args.call_id] = error
        drift = DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.WARNING, f"{args.tool_name}: {error}", self.task.id)
        await self.ctx.steerer.report_drift(self.session, drift)

    # -- recording -------------------------------------------------------------------------
    async def record_rejected(self, tool_name: str, call_id: str, args: dict[str, Any], message: str) -> None:
        await record_tool_call(
            self.ctx, task_id=self.task.id, framework=FRAMEWORK, tool_name=tool_name, args=args,
            result=message, outcome="rejected", call_id=call_id,
        )


class RecordingHooks(RunHooks[Any]):
    """Each model answer and each tool call of the run on goldfive's event stream."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        text: list[str] = []
        calls: list[str] = []
        for item in response.output:
            kind = getattr(item, "type", "")
            if kind == "message":
                text.extend(str(getattr(part, "text", "") or getattr(part, "refusal", "")) for part in getattr(item, "content", []))
            elif kind == "function_call":
                calls.append(str(getattr(item, "name", "")))
            elif kind.endswith("_call"):
                calls.append(kind)
        turn = self.turn
        await record_model_turn(turn.ctx, task_id=turn.task.id, framework=FRAMEWORK, text="".join(text), tool_calls=calls)

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object) -> None:
        turn = self.turn
        call_id = str(getattr(context, "tool_call_id", "") or "")
        args = turn.edited.get(call_id) or _parse_args(getattr(context, "tool_arguments", None))
        error = turn.tool_errors.pop(call_id, None)
        outcome = "error" if error is not None or _reports_failure(result) else "ok"
        shown = f"{error} ({to_text(result)})" if error is not None else result
        await record_tool_call(
            turn.ctx, task_id=turn.task.id, framework=FRAMEWORK, tool_name=getattr(tool, "name", type(tool).__name__),
            args=args, result=shown, outcome=outcome, call_id=call_id,
        )


async def _original_behavior(original: Any, wrapper: RunContextWrapper[Any], results: list[FunctionToolResult]) -> ToolsToFinalOutputResult:
    """What the user's agent's ``tool_use_behavior`` decides (the SDK's four forms)."""
    if not results or original == "run_llm_again":
        return ToolsToFinalOutputResult(is_final_output=False)
    if original == "stop_on_first_tool":
        return ToolsToFinalOutputResult(is_final_output=True, final_output=results[0].output)
    if isinstance(original, dict):
        names = original.get("stop_at_tool_names", [])
        for r in results:
            if r.tool.name in names or r.tool.qualified_name in names:
                return ToolsToFinalOutputResult(is_final_output=True, final_output=r.output)
        return ToolsToFinalOutputResult(is_final_output=False)
    out = await _maybe(original(wrapper, results))
    if not isinstance(out, ToolsToFinalOutputResult):
        raise TypeError("the agent's tool_use_behavior must return ToolsToFinalOutputResult")
    return out


def _always_asks(tool: Any) -> bool:
    # Only a plain True: a callable policy sees the SDK's own prepared arguments, which a
    # replaced invoker would bypass, so those tools are not copied.
    return isinstance(tool, FunctionTool) and tool.needs_approval is True


def call_args(raw: Any) -> dict[str, Any]:
    """The arguments of a model's tool call (a function call's JSON, or what the item holds)."""
    arguments = raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", None)
    if isinstance(arguments, str):
        return _parse_args(arguments)
    action = raw.get("action") if isinstance(raw, dict) else getattr(raw, "action", None)
    if action is not None:
        dumped = action.model_dump() if hasattr(action, "model_dump") else action
        return dumped if isinstance(dumped, dict) else {"action": to_text(dumped)}
    return {}


def call_id_of(raw: Any) -> str:
    for key in ("call_id", "id"):
        value = raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)
        if value:
            return str(value)
    return ""


def _parse_args(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}


def _reports_failure(result: object) -> bool:
    """A reporting tool's ``{"ok": false, ...}`` answer."""
    if not isinstance(result, str) or not result.startswith("{"):
        return False
    try:
        value = json.loads(result)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("ok") is False


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
