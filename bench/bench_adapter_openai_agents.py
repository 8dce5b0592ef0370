"""goldfive's overhead on an OpenAI Agents SDK agent: 100 tasks through goldfive against 100 runs.

Run: python bench/bench_adapter_openai_agents.py [--tasks 100] [--passes 5]

The agent is an ``agents.Agent`` whose model is the SDK's own ``agents.testing.ScriptedModel``
answering each call with one text message (so the SDK's Runner, session handling and item
conversion run as for a real model, without a network). Each pass, after one warm-up pass:

  baseline      ``Runner.run(agent, text)`` 100 times in a loop, the framework alone;
  goldfive      a 100-task linear plan through ``goldfive.Runner`` (no sinks) with
                ``OpenAIAgentsAdapter(agent)``: per task, the task input (with a session: the
                run's context once, then what changed; without: a bounded brief), the agent
                clone with its one reporting tool (goldfive_report), the input filter, the
                hooks recording each step, the status check.

Both are measured with and without an SDK session (goldfive's default keeps one per run, so the
baseline with a session is the like-for-like row: each run sees the conversation before it).
Baseline and goldfive passes alternate, and each pass is timed in CPU time of this process
(``time.process_time``, all its threads: the SDK's SQLite session works in threads), so other
processes on a busy machine do not count. Figures: median over the passes of µs per task,
goldfive's overhead in µs per task and as a ratio. Target: at most +10% or +100 µs per task,
whichever is larger.

A third row prices what the SDK itself charges for the tool goldfive adds to an agent: the
framework alone, its agent given a no-op FunctionTool with goldfive_report's name and schema
(the SDK checks and fingerprints every tool of the agent on each run: the first costs it about
500 Python calls per run, each further one about 380).

``--calls`` adds one pass per row under cProfile and prints the Python function calls per task:
a count, the same on a loaded machine (every call weighs alike: a guide to where the work is).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

from agents import Agent, RunConfig, Runner, SQLiteSession
from agents.testing import ScriptedModel, assistant_message

from goldfive.adapters.openai_agents import OpenAIAgentsAdapter
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner as GoldfiveRunner
from goldfive.types import Goal, Plan, Task, TaskEdge

RUN_CONFIG = RunConfig(tracing_disabled=True)


def make_agent(n: int, tools: list[Any] | None = None) -> Agent[Any]:
    model = ScriptedModel([[assistant_message(f"result {i}")] for i in range(n)])
    return Agent(name="bench", instructions="Answer briefly.", model=model, tools=list(tools or []))


def noop_reporting_tools() -> list[Any]:
    """A FunctionTool shaped like goldfive's reporting tool, doing nothing."""
    from agents import FunctionTool

    from goldfive.run.report_tool import REPORT_TOOL_DESCRIPTION, REPORT_TOOL_NAME, REPORT_TOOL_PARAMETERS

    async def noop(ctx: Any, raw: str) -> str:
        return "{}"

    return [
        FunctionTool(
            name=REPORT_TOOL_NAME, description=REPORT_TOOL_DESCRIPTION, params_json_schema=REPORT_TOOL_PARAMETERS,
            on_invoke_tool=noop, strict_json_schema=False,
        )
    ]  # fmt: skip


def plan_of(n: int) -> Plan:
    tasks = [Task(id=f"t{i}", title=f"task {i}", description=f"do step {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(f"t{i}", f"t{i + 1}") for i in range(n - 1)], id="p")


async def framework_alone(n: int, with_session: bool, tools: list[Any] | None = None) -> float:
    agent = make_agent(n, tools)
    session = SQLiteSession("bench") if with_session else None
    gc.collect()
    t0 = time.process_time()
    for i in range(n):
        result = await Runner.run(agent, f"Do the current task (t{i}): task {i}", run_config=RUN_CONFIG, session=session)
        assert result.final_output == f"result {i}"
    return time.process_time() - t0


async def through_goldfive(n: int, with_session: bool) -> float:
    adapter = OpenAIAgentsAdapter(make_agent(n), session_factory=SQLiteSession if with_session else None)
    runner = GoldfiveRunner(agent=adapter, planner=StaticPlanner(plan_of(n)), executor=SequentialExecutor())
    gc.collect()
    t0 = time.process_time()
    out = await runner.run([Goal("g1", "bench")])
    dt = time.process_time() - t0
    await runner.close()
    assert out.success, out.reason
    return dt


async def medians_us(fns: list[Callable[[], Awaitable[float]]], n: int, passes: int) -> list[float]:
    """Median µs per task of each of ``fns``, their passes alternating, after one warm-up each."""
    for fn in fns:
        await fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(passes):
        for i, fn in enumerate(fns):
            times[i].append(await fn())
    return [statistics.median(t) / n * 1e6 for t in times]


def calls_per_task(fn: Callable[[], Awaitable[float]], n: int) -> float:
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    asyncio.run(cast(Any, fn()))
    profile.disable()
    total: int = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return total / n


def count_calls(n: int) -> None:
    tools = noop_reporting_tools()
    print("Python function calls per task (cProfile, one pass after a warm-up)")
    for with_session in (True, False):
        rows: dict[str, Callable[[], Awaitable[float]]] = {
            "framework alone": lambda: framework_alone(n, with_session),
            "via goldfive": lambda: through_goldfive(n, with_session),
            "the SDK alone, +1 no-op tool": lambda: framework_alone(n, with_session, tools),
        }
        for fn in rows.values():
            asyncio.run(cast(Any, fn()))
        counted = {name: calls_per_task(fn, n) for name, fn in rows.items()}
        base = counted["framework alone"]
        label = "SDK session per run" if with_session else "no SDK session"
        print("  " + label + ": " + ", ".join(f"{name} {c:.0f} ({c / base:.2f}x)" for name, c in counted.items()))


async def main(n: int, passes: int) -> None:
    print(f"OpenAI Agents SDK adapter: {n} tasks, median of {passes} passes after a warm-up (CPU µs per task)")
    print(f"{'':30}{'framework alone':>16}{'via goldfive':>14}{'overhead':>11}{'ratio':>8}   target")
    tools = noop_reporting_tools()
    for with_session in (True, False):
        base, ours, base8 = await medians_us(
            [
                lambda: framework_alone(n, with_session),
                lambda: through_goldfive(n, with_session),
                lambda: framework_alone(n, with_session, tools),
            ],
            n,
            passes,
        )
        over = ours - base
        allowed = max(0.10 * base, 100.0)
        label = "SDK session per run" if with_session else "no SDK session"
        verdict = "met" if over <= allowed else "MISSED"
        print(f"{label:30}{base:16.0f}{ours:14.0f}{over:+11.0f}{ours / base:8.3f}   <= +{allowed:.0f}: {verdict}")
        print(f"{'  the SDK alone, +1 no-op tool':30}{base8:16.0f}{'':14}{base8 - base:+11.0f}{base8 / base:8.3f}"
              f"   (goldfive beyond that: {ours - base8:+.0f} µs, x{ours / base8:.3f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--calls", action="store_true", help="also count Python function calls per task")
    args = parser.parse_args()
    asyncio.run(main(args.tasks, args.passes))
    if args.calls:
        count_calls(args.tasks)
