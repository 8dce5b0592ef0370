"""A scripted PydanticAI model for the adapter's tests: PydanticAI's own ``FunctionModel``.

``Script`` answers each model request with the next step of a per-task script (a task is found
from goldfive's task input in the latest user prompt), records every request's messages, and can
hold a request on an asyncio.Event so "in the middle of a model call" is exact.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import AbstractToolset

_TASK = re.compile(r"Do the current task \((?P<id>[^)]*)\)")

Step = Callable[[list[ModelMessage]], ModelResponse] | ModelResponse


def text(s: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(s)])


def calls(*specs: tuple[str, dict[str, Any], str]) -> ModelResponse:
    """One model response calling (tool name, args, tool_call_id) for each spec."""
    return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=cid) for name, args, cid in specs])


def current_task(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        for part in getattr(message, "parts", []):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                found = _TASK.search(part.content)
                if found:
                    return found["id"]
    return ""


def user_texts(messages: list[ModelMessage]) -> list[str]:
    return [
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    ]


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


class Script:
    """``steps[task_id]`` is the list of answers for that task's model requests, in order; a task
    with no script (or past its end) answers ``text(f"done {task_id}")``."""

    def __init__(self, steps: dict[str, list[Step]] | None = None) -> None:
        self.steps = {k: list(v) for k, v in (steps or {}).items()}
        #: (task id, the messages of the request) for every model request, in order.
        self.requests: list[tuple[str, list[ModelMessage]]] = []
        self.tool_names: list[list[str]] = []
        self.entered: asyncio.Queue[str] = asyncio.Queue()
        self._holds: dict[tuple[str, int], asyncio.Event] = {}
        self.cancelled: list[str] = []

    def hold(self, task_id: str, nth: int = 0) -> asyncio.Event:
        """The ``nth`` request of ``task_id`` waits until the returned event is set."""
        gate = asyncio.Event()
        self._holds[(task_id, nth)] = gate
        return gate

    def of(self, task_id: str) -> list[list[ModelMessage]]:
        return [msgs for tid, msgs in self.requests if tid == task_id]

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        task_id = current_task(messages)
        nth = len(self.of(task_id))
        self.requests.append((task_id, list(messages)))
        self.tool_names.append([t.name for t in info.function_tools])
        self.entered.put_nowait(task_id)
        gate = self._holds.get((task_id, nth))
        if gate is not None:
            try:
                await gate.wait()
            except asyncio.CancelledError:
                self.cancelled.append(task_id)
                raise
        script = self.steps.get(task_id, [])
        if not script:
            return text(f"done {task_id}")
        step = script.pop(0)
        return step(messages) if callable(step) else step

    async def next_request(self) -> str:
        return await asyncio.wait_for(self.entered.get(), 5)


def make_agent(script: Script, toolsets: Sequence[AbstractToolset[None]] = ()) -> tuple[Agent[None, str], list[dict[str, Any]]]:
    """An agent with ``publish`` (needs approval) and ``lookup`` (does not), and ``toolsets``;
    the list collects the arguments each of its two tools actually ran with."""
    ran: list[dict[str, Any]] = []
    agent: Agent[None, str] = Agent(FunctionModel(script, model_name="scripted"), name="writer", toolsets=toolsets)

    @agent.tool_plain(requires_approval=True)
    def publish(channel: str, text: str) -> str:
        """Post text to a channel."""
        ran.append({"tool": "publish", "channel": channel, "text": text})
        return f"posted to {channel}"

    @agent.tool_plain
    def lookup(key: str) -> str:
        """Look a key up."""
        ran.append({"tool": "lookup", "key": key})
        return f"value of {key}"

    return agent, ran
