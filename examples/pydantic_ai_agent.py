"""A PydanticAI agent, as it is, steered by goldfive; runs offline with a scripted FunctionModel.

    goldfive run examples.pydantic_ai_agent:agent --goal "ship the 1.2 release notes" \
        --plan examples/pydantic_ai_plan.json

``publish`` needs approval (``requires_approval=True``): goldfive shows the call with its
arguments in the approvals pane; APPROVE runs it, REJECT sends your reason to the model. Swap
``FunctionModel(...)`` for a real model ("openai:gpt-5", ...) and nothing else changes.
"""

from __future__ import annotations

import asyncio
import re

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

DELAY_S = 0.5  # seconds per model call, so there is time to press keys

_TASK = re.compile(r"Do the current task \((?P<id>[^)]*)\): (?P<title>.*)$", re.S)


async def offline_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A stand-in for an LLM: progress (goldfive's reporting tool), then (for a publishing task)
    one ``publish`` call, then the answer, which is the task's result."""
    await asyncio.sleep(DELAY_S)
    start, title = _current_task(messages)
    steps = sum(isinstance(m, ModelResponse) for m in messages[start:])
    returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)] if isinstance(messages[-1], ModelRequest) else []
    if steps == 0:
        return ModelResponse(parts=[ToolCallPart("goldfive_report", {"kind": "progress", "detail": f"working on: {title}", "fraction": 0.5})])
    if "publish" in title.lower() and steps == 1:
        return ModelResponse(parts=[ToolCallPart("publish", {"channel": "#releases", "text": "goldfive 1.2: steer any agent"})])
    said = "; ".join(str(p.content) for p in returns if p.tool_name == "publish")
    return ModelResponse(parts=[TextPart(f"{title}: done" + (f" ({said})" if said else ""))])


def _current_task(messages: list[ModelMessage]) -> tuple[int, str]:
    """Where the current goldfive task's run starts in the history, and its title."""
    for i in range(len(messages) - 1, -1, -1):
        for part in getattr(messages[i], "parts", []):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                found = _TASK.search(part.content)
                if found:
                    return i, found["title"].strip()
    return 0, "the task"


agent = Agent(FunctionModel(offline_model, model_name="offline"), name="release_writer", instructions="You write release notes.")


@agent.tool_plain(requires_approval=True)
def publish(channel: str, text: str) -> str:
    """Post ``text`` to ``channel``; a person approves each call."""
    return f"posted to {channel}: {text}"
