"""An OpenAI Agents SDK agent steered by goldfive, offline (its model is a small fake).

    goldfive run examples.openai_agents_agent:agent --goal "release notes for 1.2" \\
        --plan examples/openai_agents_plan.json

``agent`` is a plain ``agents.Agent``; goldfive picks its adapter. ``publish_notes`` needs
approval (``function_tool(needs_approval=True)``): the run stops at the call until you press
``a`` (approve) or ``x`` (reject, with a reason the model reads) in the approvals pane. Swap
``OfflineModel()`` for a real model name (``model="gpt-4.1"``) to use OpenAI.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, ModelResponse, Usage, function_tool
from agents.models.interface import Model
from agents.testing import assistant_message, function_call

DELAY_S = 0.5  # seconds per model call, so there is time to press keys

CHANGELOG = {"1.2": ["faster start-up", "a rules screen for approvals", "fixes for resume"]}


@function_tool
def read_changelog(version: str) -> str:
    """The changelog entries of a version."""
    return "; ".join(CHANGELOG.get(version, ["(no entries)"]))


@function_tool(needs_approval=True)
def publish_notes(title: str, body: str) -> str:
    """Publish release notes (asks a person first)."""
    return f"published {title!r} ({len(body)} characters)"


class OfflineModel(Model):
    """Stands in for an LLM: reads the current task from its input and answers it."""

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        await asyncio.sleep(DELAY_S)
        items = [input] if isinstance(input, str) else list(input)
        last = items[-1] if items else {}
        task = _current_task(items)
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            return _answer(assistant_message(f"{task}: {last.get('output')}"))
        if "Collect" in task:
            return _answer(function_call("read_changelog", {"version": "1.2"}, call_id=f"call-{len(items)}-changelog"))
        if "Publish" in task:
            body = "What's new in 1.2: " + ", ".join(CHANGELOG["1.2"])
            return _answer(function_call("publish_notes", {"title": "goldfive 1.2", "body": body}, call_id=f"call-{len(items)}-publish"))
        return _answer(assistant_message(f"{task}: done"))

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("OfflineModel does not stream")
        yield  # pragma: no cover - makes this an async generator


def _current_task(items: list[Any]) -> str:
    for item in reversed(items):
        text = item if isinstance(item, str) else item.get("content") if isinstance(item, dict) else None
        if isinstance(text, str):
            found = re.search(r"Do the current task \(([^)]*)\): (.*)$", text)
            if found:
                return found.group(2).strip()
    return "the task"


def _answer(item: Any) -> ModelResponse:
    return ModelResponse(output=[item], usage=Usage(), response_id=None)


agent = Agent(
    name="release-notes",
    instructions="You write and publish release notes.",
    model=OfflineModel(),
    tools=[read_changelog, publish_notes],
)
