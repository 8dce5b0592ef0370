"""A Google ADK agent steered by goldfive, offline (a scripted ADK model, no API key):

    goldfive run examples.adk_agent:agent --goal "publish a haiku" --plan examples/adk_plan.json

``agent`` is a plain ADK ``LlmAgent``; goldfive picks its ADK adapter itself. ``publish_haiku``
needs approval (ADK's ``FunctionTool(..., require_confirmation=True)``): the call waits in the
approvals pane, APPROVE runs it, REJECT with a reason tells the model why. With a real model,
swap ``OfflineModel()`` for ``"gemini-2.5-flash"`` (or any ADK model) and nothing else changes.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import FunctionTool
from google.genai import types

DELAY_S = 0.5  # seconds per model call, so there is time to press keys

#: Token counts, as a real model reports them (ADK's metrics warn when they are missing).
_USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=1, candidates_token_count=1, total_token_count=2)
_TASK = re.compile(r"Do the current task \(([^)]*)\): (.*)")


def publish_haiku(text: str) -> dict[str, Any]:
    """Publish the haiku (here: print it)."""
    print(f"PUBLISHED: {text}")
    return {"published": True, "text": text}


class OfflineModel(BaseLlm):
    """A stand-in for Gemini: for each task, one tool call then a short final answer."""

    model: str = "offline-haiku"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        await asyncio.sleep(DELAY_S)
        task_id, title, answered = "", "", []
        for content in llm_request.contents:  # the last "Do the current task" and what followed it
            for part in content.parts or []:
                found = _TASK.search(part.text or "")
                if found:
                    task_id, title, answered = found.group(1), found.group(2), []
                elif part.function_response is not None:
                    answered.append(part.function_response.response or {})
        if not answered:
            if task_id == "publish":
                call = types.FunctionCall(name="publish_haiku", args={"text": "old pond / a frog jumps in / the sound of water"})
            else:
                call = types.FunctionCall(name="report_task_progress", args={"detail": f"working on {title}"})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]), usage_metadata=_USAGE)
            return
        last = answered[-1]
        if "error" in last:
            text = f"{title}: not done ({last['error']})"
        else:
            text = f"{title}: done"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), usage_metadata=_USAGE)


agent = LlmAgent(
    name="haiku_writer",
    model=OfflineModel(),
    instruction="Write and publish a haiku, one task at a time.",
    tools=[FunctionTool(publish_haiku, require_confirmation=True)],
)
