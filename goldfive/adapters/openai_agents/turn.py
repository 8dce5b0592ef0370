"""One invocation (one task: a framework run and its resumptions) and what it keeps.

The SDK objects (the agent clone, the RunConfig, the hooks) are built once per adapter and shared
by every task; they reach the task running them through ``current_turn()``, a context variable
set by ``invoke`` (the SDK runs tools, hooks and filters inside the task that called
``Runner.run``, or tasks it started, which inherit the variable).
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from agents import Agent, ModelResponse, RunContextWrapper, RunHooks, Tool
from agents.run_config import ModelInputData, ToolErrorFormatterArgs

from goldfive.adapters.common import record_model_turn, record_tool_call, to_text
from goldfive.usage import ModelUsage, report_usage
from goldfive.errors import GoldfiveError
from goldfive.run.context import RunContext
from goldfive.run.current_run import read_injected
from goldfive.run.tools import REPORTING_TOOL_NAMES
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, Task, TaskStatus

FRAMEWORK = "openai_agents"

_TURN: ContextVar[Turn | None] = ContextVar("goldfive_openai_agents_turn", default=None)


def current_turn() -> Turn:
    turn = _TURN.get()
    if turn is None:
        raise GoldfiveError("no goldfive task is running this agent (it was called outside OpenAIAgentsAdapter.invoke)")
    return turn


class Turn:
    """What one ``invoke`` keeps between the SDK's callbacks."""

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
        #: An unknown tool the model called (the SDK's raise_error, raised by the adapter).
        self.unknown_tool = ""
        #: call id -> the JSON arguments of a reporting tool the model called by its own name
        #: (not on the agent: the SDK's "tool not found" answer does not carry them).
        self.calls: dict[str, str] = {}
        #: The reporting tool, called by its own name, that ended the task (the run ends
        #: before the next model call).
        self.ended_by_name = ""
        #: This task's input (``task_input``: the run's context, or what changed since the
        #: session's previous task, then the task).
        self.input_text = ""

    def enter(self) -> Any:
        """Make this the turn of the current asyncio task; returns the token for ``leave``."""
        return _TURN.set(self)

    @staticmethod
    def leave(token: Any) -> None:
        _TURN.reset(token)

    def status(self) -> TaskStatus:
        plan = self.session.plan
        if plan is not None and plan.has_task(self.task.id):
            return plan.task(self.task.id).status
        return self.task.status

    async def with_injected(self, data: ModelInputData) -> ModelInputData:
        """The model input with every message injected into this task so far, each where it
        was first given (the SDK rebuilds the input for each call without them)."""
        # The SDK calls this before each model call: over budget the run pauses and the call waits.
        await self.ctx.budget.before_call("model_call", self.task.id)
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

    async def tool_raised(self, args: ToolErrorFormatterArgs[Any]) -> None:
        error = f"{type(args.error).__name__}: {args.error}" if args.error is not None else "raised"
        self.tool_errors[args.call_id] = error
        drift = DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.WARNING, f"{args.tool_name}: {error}", self.task.id)
        await self.ctx.steerer.report_drift(self.session, drift)

    async def record_rejected(self, tool_name: str, call_id: str, args: dict[str, Any], message: str) -> None:
        await record_tool_call(
            self.ctx, task_id=self.task.id, framework=FRAMEWORK, tool_name=tool_name, args=args,
            result=message, outcome="rejected", call_id=call_id,
        )


class RecordingHooks(RunHooks[Any]):
    """Each model answer and each tool call of the run on goldfive's event stream."""

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        turn = current_turn()
        text: list[str] = []
        calls: list[str] = []
        for item in response.output:
            kind = getattr(item, "type", "")
            if kind == "message":
                text.extend(str(getattr(part, "text", "") or getattr(part, "refusal", "")) for part in getattr(item, "content", []))
            elif kind == "function_call":
                name = str(getattr(item, "name", ""))
                calls.append(name)
                if name in REPORTING_TOOL_NAMES:
                    turn.calls[str(getattr(item, "call_id", ""))] = str(getattr(item, "arguments", "") or "")
            elif kind.endswith("_call"):
                calls.append(kind)
        await _report_usage(turn, agent, response)
        await record_model_turn(turn.ctx, task_id=turn.task.id, framework=FRAMEWORK, text="".join(text), tool_calls=calls)

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object) -> None:
        turn = current_turn()
        call_id = str(getattr(context, "tool_call_id", "") or "")
        args = turn.edited.get(call_id) or parse_args(getattr(context, "tool_arguments", None))
        error = turn.tool_errors.pop(call_id, None)
        outcome = "error" if error is not None or _reports_failure(result) else "ok"
        shown = f"{error} ({to_text(result)})" if error is not None else result
        await record_tool_call(
            turn.ctx, task_id=turn.task.id, framework=FRAMEWORK, tool_name=getattr(tool, "name", type(tool).__name__),
            args=args, result=shown, outcome=outcome, call_id=call_id,
        )


def call_args(raw: Any) -> dict[str, Any]:
    """The arguments of a model's tool call (a function call's JSON, or what the item holds)."""
    arguments = raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", None)
    if isinstance(arguments, str):
        return parse_args(arguments)
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


def parse_args(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}


def _reports_failure(result: object) -> bool:
    """A reporting tool's ``{"ok": false, ...}`` answer."""
    if not isinstance(result, str) or not result.startswith('{"ok": false'):
        return False
    try:
        value = json.loads(result)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("ok") is False


async def _report_usage(turn: Turn, agent: Agent[Any], response: ModelResponse) -> None:
    """The response's Usage: input_tokens (cached ones included, input_tokens_details.cached_tokens)
    and output_tokens. The model is the agent's (the SDK's response does not name it)."""
    u = response.usage
    if not (u.input_tokens or u.output_tokens):
        return
    details = getattr(u, "input_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    model = agent.model if isinstance(agent.model, str) else str(getattr(agent.model, "model", "") or "")
    usage = ModelUsage(
        model=model, input_tokens=u.input_tokens, output_tokens=u.output_tokens,
        cached_tokens=min(max(cached, 0), u.input_tokens), source=FRAMEWORK, response_id=response.response_id or "",
    )  # fmt: skip
    await report_usage(usage, session=turn.ctx.session, task_id=turn.task.id)
