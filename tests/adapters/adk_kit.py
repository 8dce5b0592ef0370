"""A scripted ADK model (a ``BaseLlm`` subclass: ADK's own extension point for models) for the
ADK adapter's tests, example and benchmark: no network, no API key."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr

#: Token counts, as a real model reports them (ADK's metrics warn when they are missing).
USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=1, candidates_token_count=1, total_token_count=2)

Step = LlmResponse | Callable[[LlmRequest], Awaitable[LlmResponse]]


def say(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), usage_metadata=USAGE)


def call(name: str, call_id: str | None = None, **args: Any) -> LlmResponse:
    return calls((name, args, call_id))


def calls(*items: tuple[str, dict[str, Any], str | None]) -> LlmResponse:
    parts = [types.Part(function_call=types.FunctionCall(name=n, args=a, id=i)) for n, a, i in items]
    return LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=USAGE)


def request_text(request: LlmRequest) -> str:
    """Every text, function call and function response of a request, one per line."""
    out: list[str] = []
    for content in request.contents:
        for p in content.parts or []:
            if p.text:
                out.append(f"{content.role}: {p.text}")
            if p.function_call:
                out.append(f"call {p.function_call.name} {p.function_call.args}")
            if p.function_response:
                out.append(f"response {p.function_response.name} {p.function_response.response}")
    return "\n".join(out)


class ScriptedLlm(BaseLlm):
    """Answers each model call with the next step; a step is an LlmResponse or an async
    function of the request (to hold a call open). Past the script it says "done"."""

    model: str = "scripted"
    _steps: list[Step] = PrivateAttr(default_factory=list)
    _seen: list[str] = PrivateAttr(default_factory=list)
    _tools: list[list[str]] = PrivateAttr(default_factory=list)

    def script(self, *steps: Step) -> ScriptedLlm:
        self._steps.extend(steps)
        return self

    @property
    def seen(self) -> list[str]:
        """What each model call was given (``request_text``), in order."""
        return self._seen

    @property
    def tools_offered(self) -> list[list[str]]:
        """The names of the tools each model call was offered."""
        return self._tools

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self._seen.append(request_text(llm_request))
        self._tools.append(sorted(llm_request.tools_dict))
        step: Step = self._steps.pop(0) if self._steps else say("done")
        yield step if isinstance(step, LlmResponse) else await step(llm_request)


def warm_up_adk() -> None:
    """One throwaway ADK run: ADK's first run in a process spends a second or more on lazy
    set-up, which must not count against the tests' 5-second waits on a loaded machine."""
    import asyncio

    from google.adk.agents import LlmAgent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    async def run() -> None:
        service = InMemorySessionService()
        runner = Runner(agent=LlmAgent(name="warm", model=ScriptedLlm()), app_name="warm", session_service=service)
        session = await service.create_session(app_name="warm", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="hi")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
        await runner.close()

    asyncio.run(run())
