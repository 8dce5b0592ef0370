"""What the ADK adapter hangs on the framework: the reporting tools and one plugin.

ADK runs every plugin callback for every agent of the tree, before the agent's own callbacks,
so one :class:`GoldfivePlugin` on the adapter's Runner sees each model call and each tool call
without touching the user's agent:

- ``before_model_callback``: the messages injected into the running task are appended to
  ``LlmRequest.contents`` and to the ADK session (so the later model calls of the turn, and the
  later tasks of the run, see them too);
- ``after_model_callback`` / ``after_tool_callback`` / ``on_tool_error_callback``: the model
  turns and tool calls on the goldfive event stream; a call to a hidden reporting tool
  (``report_task_started``, not on the agent) reaches ``on_tool_error_callback`` as a tool ADK
  did not find, and runs there;
- ``before_tool_callback`` / ``after_tool_callback``: a confirmation the person answered is
  applied: edited arguments replace the call's arguments in place (the dict the tool is called
  with), a rejection's result carries the person's reason for the model.

The callbacks find their goldfive task from the ADK session id (one task at a time per ADK
session); a call from an ADK session goldfive did not start passes through untouched.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from goldfive.adapters.common import ToolDecision, framework_span, record_model_turn, record_tool_call, to_text
from goldfive.run.context import RunContext
from goldfive.run.current_run import read_injected
from goldfive.usage import ModelUsage, report_usage
from goldfive.run.tools import HIDDEN_TOOL_NAMES, ReportingToolSpec
from goldfive.types import Session

FRAMEWORK = "adk"

#: The error ADK's confirmation gate answers a rejected call with (tools/_confirmation_utils.py).
_ADK_REJECTED = "This tool call is rejected."


@dataclass
class Turn:
    """One goldfive task running in one ADK session."""

    ctx: RunContext
    session: Session
    task_id: str
    specs: dict[str, ReportingToolSpec]
    #: The person's decisions, by the framework's id of the original call.
    decisions: dict[str, ToolDecision] = field(default_factory=dict)
    #: The arguments a call carried before a person edited them, by call id.
    original_args: dict[str, dict[str, Any]] = field(default_factory=dict)


class TurnRegistry(dict[str, Turn]):
    """ADK session id -> the goldfive task running in it."""

    def of(self, context: CallbackContext | ToolContext) -> Turn | None:
        return self.get(context.session.id)


class ReportingTool(BaseTool):
    """One of goldfive's reporting tools as an ADK tool; it runs the spec of the task running
    in the calling ADK session (the agent copy is built once, the specs change per task)."""

    def __init__(self, spec: ReportingToolSpec, turns: TurnRegistry) -> None:
        super().__init__(name=spec.name, description=spec.description)
        self._parameters = spec.parameters
        self._turns = turns

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self._parameters
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        turn = self._turns.of(tool_context)
        spec = turn.specs.get(self.name) if turn is not None else None
        if spec is None:
            return {"ok": False, "error": f"{self.name}: no goldfive task is running in this ADK session"}
        return await spec(**args)


class GoldfivePlugin(BasePlugin):
    """Injection, visibility and applying confirmation answers (see the module docstring)."""

    def __init__(self, turns: TurnRegistry) -> None:
        super().__init__(name="goldfive")
        self._turns = turns

    async def before_model_callback(self, *, callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse | None:
        turn = self._turns.of(callback_context)
        if turn is None:
            return None
        # Over budget the run pauses and this model call waits (docs/cost.md#budgets).
        await turn.ctx.budget.before_call("model_call", turn.task_id)
        texts = await read_injected(turn.session, turn.task_id)
        if not texts:
            return None
        ic = callback_context.get_invocation_context()
        for text in texts:
            content = types.Content(role="user", parts=[types.Part(text=text)])
            llm_request.contents.append(content)
            # Kept in the ADK session: the request is rebuilt from it before every model call.
            event = Event(invocation_id=ic.invocation_id, author="user", branch=ic.branch, content=content)
            await ic.session_service.append_event(session=ic.session, event=event)
        return None

    async def after_model_callback(self, *, callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
        turn = self._turns.of(callback_context)
        if turn is None or llm_response.partial:
            return None
        parts = llm_response.content.parts or [] if llm_response.content is not None else []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        calls = [p.function_call.name or "?" for p in parts if p.function_call is not None]
        if llm_response.error_message:
            text = f"{text} [model error: {llm_response.error_message}]".strip()
        await _report_usage(turn, callback_context, llm_response)
        await record_model_turn(turn.ctx, task_id=turn.task_id, framework=FRAMEWORK, text=text, tool_calls=calls)
        return None

    async def before_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any] | None:
        turn = self._turns.of(tool_context)
        call_id = tool_context.function_call_id or ""
        decision = turn.decisions.get(call_id) if turn is not None else None
        confirmation = tool_context.tool_confirmation
        if turn is None or decision is None or confirmation is None or not confirmation.confirmed:
            return None
        if decision.arguments is not None and decision.arguments != tool_args:
            # ADK calls the tool with this very dict (the caller's deep copy of the call's args).
            turn.original_args[call_id] = dict(tool_args)
            tool_args.clear()
            tool_args.update(decision.arguments)
        return None

    async def after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: dict[str, Any]
    ) -> dict[str, Any] | None:
        turn = self._turns.of(tool_context)
        if turn is None:
            return None
        call_id = tool_context.function_call_id or ""
        confirmation = tool_context.tool_confirmation
        if confirmation is None and call_id in (tool_context.actions.requested_tool_confirmations or {}):
            return None  # ADK's "waiting for confirmation" placeholder: the call has not run yet
        decision = turn.decisions.get(call_id)
        replaced: dict[str, Any] | None = None
        outcome = "ok"
        if confirmation is not None and not confirmation.confirmed:
            outcome = "rejected"
            denial = decision.denial_for_model(tool.name) if decision is not None else f"The call to {tool.name} was rejected."
            replaced = _with(result, error=denial, drop=_ADK_REJECTED)
        elif call_id in turn.original_args:
            before = turn.original_args[call_id]
            note = f"A person changed the arguments before approving: it ran with {to_text(tool_args)} instead of {to_text(before)}."
            replaced = _with(result, goldfive_note=note)
        elif isinstance(result, dict) and "error" in result:
            outcome = "error"
        shown = replaced if replaced is not None else result
        await record_tool_call(
            turn.ctx, task_id=turn.task_id, framework=FRAMEWORK, tool_name=tool.name,
            args=tool_args, result=shown, outcome=outcome, call_id=call_id,
        )
        # A dict is changed in place (the user's own after_tool_callbacks still run); another
        # result has to be replaced, which ADK allows from a plugin.
        return None if replaced is result else replaced

    async def on_tool_error_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict[str, Any] | None:
        turn = self._turns.of(tool_context)
        spec = turn.specs.get(tool.name) if turn is not None and tool.name in HIDDEN_TOOL_NAMES else None
        if spec is not None:
            # A hidden reporting tool (not on the agent, so ADK found no such tool): it still runs.
            return await spec(**tool_args)
        if turn is not None and not isinstance(error, asyncio.CancelledError):
            await record_tool_call(
                turn.ctx, task_id=turn.task_id, framework=FRAMEWORK, tool_name=tool.name, args=tool_args,
                result=f"{type(error).__name__}: {error}", outcome="error", call_id=tool_context.function_call_id or "",
            )
        return None


def _with(result: Any, *, drop: str = "", **extra: str) -> dict[str, Any]:
    """``result`` with ``extra`` keys: the same dict changed in place, or a new dict."""
    if isinstance(result, dict):
        for key, value in extra.items():
            old = result.get(key)
            result[key] = value if not old or old == drop else f"{value} ({old})"
        return result
    return {"result": result, **extra}


async def _report_usage(turn: Turn, callback_context: CallbackContext, llm_response: LlmResponse) -> None:
    """The response's usage_metadata: prompt_token_count (cached content included,
    cached_content_token_count) and, as output, candidates plus thoughts (thinking is billed as
    output). ADK runs this callback inside its own ``call_llm`` span: the usage names it."""
    meta = llm_response.usage_metadata
    if meta is None:
        return
    inp = int(meta.prompt_token_count or 0)
    out = int(meta.candidates_token_count or 0) + int(meta.thoughts_token_count or 0)
    if not (inp or out):
        return
    trace_id, span_id = framework_span()
    usage = ModelUsage(
        model=llm_response.model_version or _agent_model(callback_context), input_tokens=inp, output_tokens=out,
        cached_tokens=min(int(meta.cached_content_token_count or 0), inp), source=FRAMEWORK,
        otel_trace_id=trace_id, otel_span_id=span_id,
    )  # fmt: skip
    await report_usage(usage, session=turn.session, task_id=turn.task_id)


def _agent_model(callback_context: CallbackContext) -> str:
    agent = callback_context.get_invocation_context().agent
    model = getattr(agent, "model", "")
    return model if isinstance(model, str) else str(getattr(model, "model", "") or "")
