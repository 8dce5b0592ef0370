"""goldfive's overhead per task around a PydanticAI agent, beside the framework alone.

    python bench/bench_adapter_pydantic_ai.py [--tasks N] [--passes N]

The agent is a plain ``pydantic_ai.Agent`` on PydanticAI's ``TestModel`` (no tool calls, a
fixed text answer), so what is timed is the framework's run loop and what goldfive adds.
(a) baseline: the framework alone, a loop of N ``agent.run`` calls, one per task title, each
    continuing the previous runs' message history (what a person would write by hand);
(b) goldfive: the same N tasks as a linear plan through ``Runner(agent=agent)`` (no sinks, no
    control channel), i.e. PydanticAIAdapter: goldfive's task input, the 8 reporting tools as a
    per-run toolset, the steering capability (injected-message drain, visibility events, the
    approval handler), the task state machine and the executor.
(c) goldfive with ``memory=False``: each task starts from an empty history.
(d) the framework alone as (a), plus eight tools with the reporting tools' schemas (what offering
    them costs PydanticAI itself, whoever offers them): (b) - (d) is goldfive's own share.
The baseline is measured in the same process with the same agent; every variant is warmed up,
then timed in alternating passes; the figures are medians. Target (issue 14): goldfive adds at
most 10% or 100 µs per task, whichever is larger.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from types import SimpleNamespace
from typing import Any, Awaitable, Callable, cast

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402
from pydantic_ai.tools import Tool  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402

from goldfive.adapters.pydantic_ai import PydanticAIAdapter  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.types import Plan, Task, TaskEdge  # noqa: E402


def make_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(TestModel(call_tools=[], custom_output_text="done"), name="bench")

    @agent.tool_plain
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    return agent


def plan(n: int) -> Plan:
    tasks = [Task(f"t{i}", f"Task number {i}", f"do step {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="bench")


async def framework_alone(agent: Agent[None, str], n: int) -> float:
    history: list[ModelMessage] = []
    start = time.perf_counter()
    for i in range(n):
        result = await agent.run(f"Do the current task (t{i}): Task number {i}", message_history=history)
        history = result.all_messages()
    return time.perf_counter() - start


def eight_tools() -> FunctionToolset[Any]:
    from goldfive.run.tools import build_tools

    async def noop(**kwargs: Any) -> dict[str, Any]:
        return {"ok": True}

    specs = build_tools(cast(Any, SimpleNamespace(session=None, steerer=None, user_tools=[])), "t0")
    return FunctionToolset([Tool.from_schema(noop, s.name, s.description, s.parameters) for s in specs.values()])


async def framework_with_tools(agent: Agent[None, str], n: int, toolset: FunctionToolset[Any]) -> float:
    history: list[ModelMessage] = []
    start = time.perf_counter()
    for i in range(n):
        result = await agent.run(f"Do the current task (t{i}): Task number {i}", message_history=history, toolsets=[toolset])
        history = result.all_messages()
    return time.perf_counter() - start


async def through_goldfive(agent: Agent[None, str], n: int, memory: bool = True) -> float:
    runner = Runner(agent=PydanticAIAdapter(agent, memory=memory), planner=StaticPlanner(plan(n)))
    start = time.perf_counter()
    outcome = await runner.run("benchmark")
    elapsed = time.perf_counter() - start
    await runner.close()
    if not outcome.success:
        raise SystemExit(f"the goldfive run failed: {outcome.reason}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    n, agent, tools = args.tasks, make_agent(), eight_tools()
    variants: dict[str, Callable[[], Awaitable[float]]] = {
        "framework alone (loop of runs, history carried)": lambda: framework_alone(agent, n),
        "goldfive Runner + PydanticAIAdapter": lambda: through_goldfive(agent, n),
        "goldfive, memory=False": lambda: through_goldfive(agent, n, memory=False),
        "framework alone + 8 tools of the same schemas": lambda: framework_with_tools(agent, n, tools),
    }
    times: dict[str, list[float]] = {k: [] for k in variants}

    async def measure() -> None:
        for run in variants.values():  # warm-up
            await run()
        for _ in range(args.passes):
            for name, run in variants.items():
                times[name].append(await run())

    asyncio.run(measure())
    per_task = {k: statistics.median(v) / n * 1e6 for k, v in times.items()}
    base_name = next(iter(per_task))
    base = per_task[base_name]
    print(f"PydanticAI adapter: {n} tasks, median of {args.passes} passes (after a warm-up), µs per task")
    for name, us in per_task.items():
        extra = "" if name == base_name else f"   overhead {us - base:+9.1f} µs/task  ratio {us / base:5.2f}x"
        print(f"  {name:<50} {us:9.1f}{extra}")
    own = per_task["goldfive Runner + PydanticAIAdapter"] - per_task["framework alone + 8 tools of the same schemas"]
    print(f"goldfive's own share (b - d): {own:+.1f} µs/task")
    allowed = max(0.10 * base, 100.0)
    verdict = "within" if per_task["goldfive Runner + PydanticAIAdapter"] - base <= allowed else "over"
    print(f"target: at most +{allowed:.0f} µs/task (max of 10% and 100 µs): {verdict}")


if __name__ == "__main__":
    main()
