"""LLMAgentAdapter loop overhead per model call, beside the raw HTTP round trip to the same server.

    python bench/bench_agent_loop.py [--steps N] [--repeats N]

One task runs under a Runner (InMemorySink, control channel) against the local
chat-completions server of tests/fake_openai_server.py, which answers ``steps - 1``
``report_task_progress`` tool calls and then ``report_task_completed``. The server records
every request body; then:
(a) baseline: the same request bodies POSTed with a bare httpx.AsyncClient (same server,
    same answers, keep-alive), the raw round trip with no goldfive code around it.
(b) agent loop: the whole invocation (prompt, tool schemas, injected-message drain, the
    OpenAICompatClient call and parse, tool execution, events) divided by the model calls.
Figures are milliseconds per model call (median of repeats) and (b)'s overhead over (a).
Issue 4 target: at most 20% above the raw round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from typing import Any

import httpx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from goldfive.adapters.llm_agent import LLMAgentAdapter  # noqa: E402
from goldfive.control import ControlChannel  # noqa: E402
from goldfive.llm.openai_compat import OpenAICompatClient  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.sinks.memory import InMemorySink  # noqa: E402
from goldfive.types import Plan, Task  # noqa: E402
from tests.fake_openai_server import FakeChatServer, Reply, chat_answer, tool_call  # noqa: E402


def _replies(steps: int) -> list[Reply]:
    out = [
        Reply(body=chat_answer(None, tool_calls=[tool_call(f"c{i}", "report_task_progress", {"detail": f"step {i}", "fraction": i / steps})], finish_reason="tool_calls"))
        for i in range(steps - 1)
    ]
    done = tool_call("cdone", "report_task_completed", {"result": "done"})
    out.append(Reply(body=chat_answer(None, tool_calls=[done], finish_reason="tool_calls")))
    return out


async def _agent_run(server: FakeChatServer, steps: int) -> float:
    client = OpenAICompatClient(base_url=server.base_url, model="bench", max_retries=0)
    runner = Runner(
        agent=LLMAgentAdapter(client, model_name="bench", max_steps=steps + 1),
        planner=StaticPlanner(Plan(tasks=[Task("t1", "Benchmark task", "Report progress, then complete.")])),
        sinks=[InMemorySink()],
        control=ControlChannel(),
    )
    await client.chat([{"role": "user", "content": "warm up the connection"}])
    start = time.perf_counter()
    outcome = await runner.run("bench")
    elapsed = time.perf_counter() - start
    await runner.close()
    await client.aclose()
    assert outcome.success, outcome.reason
    return elapsed


async def _raw_run(server: FakeChatServer, bodies: list[dict[str, Any]]) -> float:
    url = f"{server.base_url}/chat/completions"
    async with httpx.AsyncClient() as http:
        await http.post(url, json={"model": "bench", "messages": [{"role": "user", "content": "warm up"}]})
        start = time.perf_counter()
        for body in bodies:
            response = await http.post(url, json=body)
            response.json()
        return time.perf_counter() - start


async def main(steps: int, repeats: int) -> None:
    agent_ms: list[float] = []
    raw_ms: list[float] = []
    for _ in range(repeats):
        with FakeChatServer([Reply(), *_replies(steps)]) as server:
            elapsed = await _agent_run(server, steps)
            bodies = [r.body for r in server.requests[1:]]
        assert len(bodies) == steps, len(bodies)
        agent_ms.append(elapsed / steps * 1000)
        with FakeChatServer([Reply(), *_replies(steps)]) as server:
            raw_ms.append(await _raw_run(server, bodies) / steps * 1000)
    print(f"model calls per run: {steps}, repeats: {repeats} (median; best in brackets, less exposed to a busy machine)")
    a, b = statistics.median(raw_ms), statistics.median(agent_ms)
    a_min, b_min = min(raw_ms), min(agent_ms)
    print(f"(a) raw HTTP round trip (httpx, same bodies): {a:8.3f} ms/call  1.00x   [{a_min:.3f} ms]")
    print(
        f"(b) agent loop per model call:               {b:8.3f} ms/call  {b / a:.2f}x   [{b_min:.3f} ms, {b_min / a_min:.2f}x]"
        f"  overhead {100 * (b - a) / a:+.0f}% [{100 * (b_min - a_min) / a_min:+.0f}%], target <= +20%"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(main(args.steps, args.repeats))
