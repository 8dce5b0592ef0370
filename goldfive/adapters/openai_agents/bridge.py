"""The SDK objects goldfive runs the user's agent with, built once and shared by every task.

Each goes through a public SDK hook and finds its task with ``current_turn()``:

- a clone of the user's agent (``Agent.clone``: the user's object is not changed) whose tools are
  the agent's own, goldfive's user tools, and one reporting tool, ``goldfive_report``
  (``goldfive.run.report_tool``): the run's final output is the task's result, so there is no
  report_task_completed to offer, and the other reports are one tool with a ``kind`` (the SDK
  checks and fingerprints every tool of the agent on every run: one costs less than seven);
- the clone's ``tool_use_behavior`` ends the run once a tool moved the task to a terminal status
  (goldfive_report failed, report_task_failed), otherwise decides as the agent's own does;
- a tool whose calls always need approval (``needs_approval=True``) is copied with an invoker
  that runs an approved call with the arguments a person edited (the SDK has no way to change
  an approved call's arguments; without an edit the copy runs the SDK's own invoker unchanged);
- ``RunConfig.call_model_input_filter`` puts injected messages into the model input before each
  model call; ``RunConfig.tool_error_formatter`` learns which call raised (TOOL_ERROR drift).
  The user's own filter and formatter run after goldfive's.
- a reporting tool by its own name (report_task_completed, report_task_progress, ...: an older
  prompt or a model's habit) is not on the agent but still runs when the model calls it: the SDK
  reports the call as "tool not found" to the error formatter, which runs the tool with the
  call's arguments (kept from the model's response by the hooks, ``Turn.calls``) and answers
  with its result. One that ended the task (completed, failed) ends the run before the next
  model call (``TaskEnded``: the SDK has no way to stop a run from that answer). Any other
  unknown tool still ends the run with the SDK's ``ModelBehaviorError`` (the SDK's default
  ``raise_error``), raised before the next model call.
"""

from __future__ import annotations

import copy
import inspect
import json
from typing import Any

from agents import (
    Agent,
    AgentsException,
    FunctionTool,
    FunctionToolResult,
    ModelBehaviorError,
    RunConfig,
    RunContextWrapper,
    ToolsToFinalOutputResult,
)
from agents.run_config import CallModelData, ModelInputData, ToolErrorFormatterArgs
from agents.tool_context import ToolContext

from goldfive.adapters.common import record_tool_call, to_text
from goldfive.adapters.openai_agents.turn import FRAMEWORK, Turn, current_turn
from goldfive.run.report_tool import REPORT_TOOL_DESCRIPTION, REPORT_TOOL_NAME, REPORT_TOOL_PARAMETERS, report
from goldfive.run.tools import REPORTING_TOOL_NAMES, ReportingToolSpec

#: Said to the model in front of the result of a call that ran with a person's arguments.
EDITED_NOTE = "A person changed the arguments before approving; the call ran with {args}. Result: "
_TERMINAL_REPORTS = ("report_task_completed", "report_task_failed")


class TaskEnded(AgentsException):
    """Raised before the next model call when a reporting tool called by its own name (answered
    as "tool not found") ended the task: ``invoke`` takes it as the run's end."""


def clone_agent(user_agent: Agent[Any], specs: dict[str, ReportingToolSpec]) -> Agent[Any]:
    """The agent goldfive runs: ``user_agent`` with goldfive's user tools of ``specs`` (a task's
    ``RunContext.tools_for``) and ``goldfive_report``."""
    own = [_editable(t) if isinstance(t, FunctionTool) and always_asks(t) else t for t in user_agent.tools]
    names = {getattr(t, "name", "") for t in own}
    goldfive = [_user_tool(s) for s in specs.values() if s.name not in REPORTING_TOOL_NAMES and s.name not in names]
    if REPORT_TOOL_NAME not in names:
        goldfive.append(REPORT_TOOL)
    return user_agent.clone(tools=[*own, *goldfive], tool_use_behavior=_behavior(user_agent.tool_use_behavior))


def always_asks(tool: Any) -> bool:
    """Whether every call of ``tool`` needs approval, so its copy can run edited arguments.

    Only a plain True: a callable policy is checked by the SDK against arguments its own invoker
    prepares, which a replaced invoker would bypass, so those tools are left as they are."""
    return isinstance(tool, FunctionTool) and tool.needs_approval is True


def run_config(base: RunConfig) -> RunConfig:
    """``base`` with goldfive's input filter and error formatter in front of the user's."""
    user_filter, user_formatter = base.call_model_input_filter, base.tool_error_formatter
    # The SDK asks the formatter about an unknown tool only when it does not raise at once.
    raise_unknown = base.tool_not_found_behavior == "raise_error"

    async def input_filter(data: CallModelData[Any]) -> ModelInputData:
        turn = current_turn()
        if turn.unknown_tool:  # what raise_error would have raised, before the next model call
            raise ModelBehaviorError(f"Tool {turn.unknown_tool} not found in agent {data.agent.name}")
        if turn.ended_by_name and turn.status().is_terminal:
            raise TaskEnded(f"{turn.ended_by_name} ended task {turn.task.id}")
        model_data = await turn.with_injected(data.model_data)
        if user_filter is None:
            return model_data
        filtered: ModelInputData = await _maybe(user_filter(CallModelData(model_data=model_data, agent=data.agent, context=data.context)))
        return filtered

    async def error_formatter(args: ToolErrorFormatterArgs[Any]) -> str | None:
        if args.kind == "tool_exception":
            await current_turn().tool_raised(args)
        elif args.kind == "tool_not_found":
            turn = current_turn()
            if args.tool_name in REPORTING_TOOL_NAMES:
                return await _by_old_name(turn, args.tool_name, args.call_id)
            if raise_unknown:
                turn.unknown_tool = args.tool_name
                return None
        return await _maybe(user_formatter(args)) if user_formatter is not None else None

    out = copy.copy(base)
    out.call_model_input_filter = input_filter
    out.tool_error_formatter = error_formatter
    out.tool_not_found_behavior = "return_error_to_model"
    return out


def _json_args(name: str, raw: str) -> dict[str, Any] | str:
    """The call's arguments, or the JSON answer saying why they are not an object."""
    try:
        args = json.loads(raw or "{}")
    except ValueError as exc:
        return json.dumps({"ok": False, "error": f"{name}: arguments are not valid JSON ({exc})"})
    if not isinstance(args, dict):
        return json.dumps({"ok": False, "error": f"{name}: arguments must be a JSON object"})
    return args


def _user_tool(spec: ReportingToolSpec) -> FunctionTool:
    """A goldfive user tool (``Runner(tools=...)``) as a FunctionTool; each call runs the task's own binding."""
    name = spec.name

    async def invoke(tool_ctx: ToolContext[Any], raw: str) -> str:
        turn = current_turn()
        args = _json_args(name, raw)
        if isinstance(args, str):
            return args
        return json.dumps(await turn.ctx.tools_for(turn.task.id)[name](**args), default=str)

    return FunctionTool(
        name=name,
        description=spec.description,
        params_json_schema=spec.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,  # goldfive's schemas have optional arguments
    )


async def _report(tool_ctx: ToolContext[Any], raw: str) -> str:
    turn = current_turn()
    args = _json_args(REPORT_TOOL_NAME, raw)
    if isinstance(args, str):
        return args
    name, out = await report(turn.ctx.tools_for(turn.task.id), args)
    if name in _TERMINAL_REPORTS and out.get("ok"):
        turn.reported = str(args.get("detail") or "")
    return json.dumps(out, default=str)


#: goldfive_report, one object for every clone (it finds its task with ``current_turn``).
REPORT_TOOL = FunctionTool(
    name=REPORT_TOOL_NAME,
    description=REPORT_TOOL_DESCRIPTION,
    params_json_schema=REPORT_TOOL_PARAMETERS,
    on_invoke_tool=_report,
    strict_json_schema=False,  # optional arguments
)


async def _by_old_name(turn: Turn, name: str, call_id: str) -> str:
    """A reporting tool the model called by its own name (it is not on the agent): run with the
    call's arguments, recorded as a tool call, answered as the tool would have."""
    raw = turn.calls.pop(call_id, "")
    args = _json_args(name, raw)
    if isinstance(args, str):
        text = args
        out: dict[str, Any] = json.loads(args)
        args = {}
    else:
        out = await turn.ctx.tools_for(turn.task.id)[name](**args)
        text = json.dumps(out, default=str)
    if out.get("ok"):
        if name in _TERMINAL_REPORTS:
            turn.reported = str(args.get("result") or args.get("reason") or "")
        if turn.status().is_terminal:
            turn.ended_by_name = name
    await record_tool_call(
        turn.ctx, task_id=turn.task.id, framework=FRAMEWORK, tool_name=name, args=args, result=text,
        outcome="ok" if out.get("ok", True) else "error", call_id=call_id,
    )  # fmt: skip
    return text


def _editable(tool: FunctionTool) -> FunctionTool:
    clone = copy.copy(tool)  # FunctionTool.__copy__ rebinds its invoker to the copy
    inner = clone.on_invoke_tool

    async def invoke(tool_ctx: ToolContext[Any], raw: str) -> Any:
        args = current_turn().edited.get(tool_ctx.tool_call_id)
        if args is None:
            return await inner(tool_ctx, raw)
        text = json.dumps(args, ensure_ascii=False)
        out = await inner(tool_ctx, text)
        return EDITED_NOTE.format(args=text) + to_text(out) if isinstance(out, (str, int, float, dict, list)) else out

    clone.on_invoke_tool = invoke
    return clone


def _behavior(original: Any) -> Any:
    async def behavior(wrapper: RunContextWrapper[Any], results: list[FunctionToolResult]) -> ToolsToFinalOutputResult:
        turn = current_turn()
        if turn.status().is_terminal:
            return ToolsToFinalOutputResult(is_final_output=True, final_output=turn.reported)
        return await _original_behavior(original, wrapper, results)

    return behavior


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


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
