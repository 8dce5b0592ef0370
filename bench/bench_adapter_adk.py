"""Google ADK adapter overhead per task: the same 100 tasks through goldfive and through ADK alone.

    python bench/bench_adapter_adk.py [--tasks N] [--repeats N]

The model is a scripted ADK ``BaseLlm`` (tests/adapters/adk_kit.py style, no network): each
task is two model calls, a call to the user tool ``lookup`` and then a final text.
(a) baseline: ADK alone, one ``Runner`` + ``InMemorySessionService`` session, a loop of N
    ``run_async`` invocations whose user messages are exactly the task inputs goldfive sent.
(b) goldfive: a Runner (no sinks) over a plan of N tasks with the ADK agent as it is (the
    adapter: clone with reporting tools, plugin, per-run session, event-log records).
Each pass builds everything afresh; one warm-up pass of each, then the median of ``repeats``
passes, alternating. Times are this process's CPU time (``time.process_time``): the machine
is shared, and wall time there measures the neighbours as much as us; everything here runs on
one event loop with no I/O, so CPU time is the work done. Figures: µs per task, goldfive's
overhead in µs and as a ratio.
Issue 14 target: at most +10% or +100 µs per task, whichever is larger.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import time
from collections.abc import AsyncGenerator
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner as ADKRunner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

from goldfive.executors.sequential import SequentialExecutor  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.types import Plan, Task  # noqa: E402

USAGE = types.GenerateContentResponseUsageMetadata(prompt_token_count=1, candidates_token_count=1, total_token_count=2)


class BenchLlm(BaseLlm):
    """Calls ``lookup`` once, then answers; records the task messages it was started with."""

    model: str = "bench"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts or []
        if any(p.function_response is not None for p in last):
            part = types.Part(text="the answer")
        else:
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"q": "x"}))
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=USAGE)


def lookup(q: str) -> dict[str, Any]:
    """Look something up."""
    return {"q": q, "found": True}


def make_agent() -> LlmAgent:
    return LlmAgent(name="bench", model=BenchLlm(), instruction="answer", tools=[lookup])


async def goldfive_pass(n: int, inputs: list[str] | None = None) -> float:
    plan = Plan(tasks=[Task(f"t{i}", f"Task {i}", "answer it") for i in range(n)])
    runner = Runner(agent=make_agent(), planner=StaticPlanner(plan), executor=SequentialExecutor(), sinks=[])
    start = time.process_time()
    outcome = await runner.run("bench")
    elapsed = time.process_time() - start
    assert outcome.success, outcome.reason
    if inputs is not None:  # the task inputs goldfive sent, for the baseline
        adapter: Any = runner.adapter
        [sid] = (await adapter.session_service.list_sessions(app_name=adapter.app_name, user_id=adapter.user_id)).sessions
        adk_session = await adapter.session_service.get_session(app_name=adapter.app_name, user_id=adapter.user_id, session_id=sid.id)
        for ev in adk_session.events:
            if ev.author == "user" and ev.content and ev.content.parts and ev.content.parts[0].text:
                inputs.append(ev.content.parts[0].text)
    await runner.close()
    return elapsed


async def adk_pass(inputs: list[str]) -> float:
    service = InMemorySessionService()
    runner = ADKRunner(agent=make_agent(), app_name="bench", session_service=service)
    session = await service.create_session(app_name="bench", user_id="u")
    start = time.process_time()
    for text in inputs:
        final = ""
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            if event.content and event.content.parts and event.content.parts[0].text:
                final = event.content.parts[0].text
        assert final == "the answer"
    elapsed = time.process_time() - start
    await runner.close()
    return elapsed


async def main(n: int, repeats: int) -> None:
    logging.disable(logging.WARNING)
    inputs: list[str] = []
    await goldfive_pass(n, inputs)  # warm-up, and the inputs the baseline replays
    assert len(inputs) == n, len(inputs)
    await adk_pass(inputs)  # warm-up
    base: list[float] = []
    ours: list[float] = []
    for _ in range(repeats):
        base.append(await adk_pass(inputs))
        ours.append(await goldfive_pass(n))
    b = statistics.median(base) / n * 1e6
    g = statistics.median(ours) / n * 1e6
    target = max(0.10 * b, 100.0)
    print(f"tasks per pass: {n}, passes: {repeats} (median), 2 model calls + 1 tool call per task")
    print(f"ADK alone (baseline):  {b:9.0f} µs/task")
    print(f"through goldfive:      {g:9.0f} µs/task")
    print(f"goldfive overhead:     {g - b:+9.0f} µs/task  ratio {g / b:.3f}  (target <= {target:.0f} µs: {'met' if g - b <= target else 'NOT met'})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.tasks, args.repeats))
