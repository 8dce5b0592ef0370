"""goldfive's overhead per task around a PydanticAI agent, beside the framework alone.

    python bench/bench_adapter_pydantic_ai.py [--tasks N] [--passes N] [--calls] [--one LETTER]

The agent is a plain ``pydantic_ai.Agent`` on PydanticAI's ``TestModel`` (no tool calls, a
fixed text answer), so what is timed is the framework's run loop and what goldfive adds.

(a) baseline: the framework alone, a loop of N ``agent.run`` calls, one per task title, each
    continuing the previous runs' message history (what a person would write by hand);
(b) goldfive: the same N tasks as a linear plan through ``Runner(agent=agent)`` (no sinks, no
    control channel): PydanticAIAdapter with goldfive's task input, its reporting tool, the
    run's output type with ``DeferredToolRequests`` (how approvals are asked), the
    injected-message drain, the visibility events, the task state machine and the executor;
(c) goldfive with ``memory=False``: each task starts from an empty history.
Then the framework alone as (a) plus one of the things goldfive hands it, to show where (b)'s
time goes: (d) the reporting tool (``goldfive_report``) among the agent's own function tools
(``agent.override(tools=...)``: how the adapter offers it); (e) the same tool as a second
toolset, listed once (how it is offered to an agent it cannot join: PydanticAI then runs every
step's toolset listing through an anyio task group); (f) a per-run capability (PydanticAI's
own ``HandleDeferredToolCalls``: how the approvals were asked before, still the way for an
agent with output validators); (g) goldfive's task inputs as the prompts instead of the task
titles (the first with the goals, the whole plan and the results; each later one what changed
since, as the adapter sends them).

Every variant is warmed up, then they are timed in alternating passes; figures are medians of
CPU time (``process_time``: this process's own work, steadier on a shared machine) and wall time.
``--calls`` adds one more pass per variant under cProfile and prints the Python function calls
per task: a count, not a time, so it is the same on a loaded machine (it weighs every call
alike, so it is a guide to where the work is, not a substitute for the times).
``--one LETTER`` runs that variant once, untimed, for an outside counter: under callgrind, the
instructions of ``--tasks 60`` minus those of ``--tasks 20``, over 40, are a variant's
instructions per task, start-up cancelled (docs/adapters/pydantic-ai.md).
Target (issue 27 §4): goldfive adds at most 10% per task over the framework alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from contextlib import nullcontext
from typing import Any, Awaitable, Callable, cast

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import HandleDeferredToolCalls  # noqa: E402
from pydantic_ai.messages import ModelMessage  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402
from pydantic_ai.tools import Tool  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402

from goldfive.adapters.common import task_input  # noqa: E402
from goldfive.adapters.pydantic_ai import REPORT_TOOL, PydanticAIAdapter  # noqa: E402
from goldfive.adapters.task_prompt import Told  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.run.report_tool import REPORTING_TEXT  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus, set_task_status  # noqa: E402

Timing = tuple[float, float]  # (cpu seconds, wall seconds)


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


def reporting_tool() -> FunctionToolset[Any]:
    """``goldfive_report`` as the adapter offers it (its answer is never asked for here)."""
    return FunctionToolset([REPORT_TOOL])


def goldfive_prompts(n: int) -> list[str]:
    """The task inputs goldfive gives the N tasks of one conversation (each with the earlier
    tasks completed)."""
    session = Session("bench", goals=[Goal("g1", "benchmark")], plan=plan(n))
    prompts, told = [], Told(REPORTING_TEXT)
    for task in session.plan.tasks if session.plan else []:
        set_task_status(task, TaskStatus.RUNNING)
        prompts.append(task_input(session, task, told))
        set_task_status(task, TaskStatus.COMPLETED)
        session.completed_results[task.id] = "done"
    return prompts


async def timed(body: Callable[[], Awaitable[None]]) -> Timing:
    cpu, wall = time.process_time(), time.perf_counter()
    await body()
    return time.process_time() - cpu, time.perf_counter() - wall


async def framework_alone(agent: Agent[None, str], prompts: list[str], *, tools: list[Tool[Any]] | None = None, **run_kwargs: Any) -> Timing:
    """``tools``: each run has them among the agent's own function tools."""
    own = list(agent.toolsets[0].tools.values())

    async def body() -> None:
        history: list[ModelMessage] = []
        for prompt in prompts:
            extra = {k: v() if callable(v) else v for k, v in run_kwargs.items()}
            with agent.override(tools=[*own, *tools]) if tools is not None else nullcontext():
                result = await agent.run(prompt, message_history=history, **extra)
            history = history + result.new_messages()

    return await timed(body)


async def through_goldfive(agent: Agent[None, str], n: int, memory: bool = True) -> Timing:
    runner = Runner(agent=PydanticAIAdapter(agent, memory=memory), planner=StaticPlanner(plan(n)))
    outcome: Any = None

    async def body() -> None:
        nonlocal outcome
        outcome = await runner.run("benchmark")

    spent = await timed(body)
    await runner.close()
    if not outcome.success:
        raise SystemExit(f"the goldfive run failed: {outcome.reason}")
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--calls", action="store_true", help="also count Python function calls per task")
    parser.add_argument("--one", metavar="LETTER", help="run only this variant, once, untimed (for callgrind)")
    args = parser.parse_args()
    n, agent, tools = args.tasks, make_agent(), reporting_tool()
    titles = [f"Do the current task (t{i}): Task number {i}" for i in range(n)]
    rich = goldfive_prompts(n)
    variants: dict[str, Callable[[], Awaitable[Timing]]] = {
        "(a) framework alone, history carried": lambda: framework_alone(agent, titles),
        "(b) goldfive Runner + PydanticAIAdapter": lambda: through_goldfive(agent, n),
        "(c) goldfive, memory=False": lambda: through_goldfive(agent, n, memory=False),
        "(d) (a) + the reporting tools among its own": lambda: framework_alone(agent, titles, tools=list(tools.tools.values())),
        "(e) (a) + the reporting tools as a toolset": lambda: framework_alone(agent, titles, toolsets=[tools]),
        "(f) (a) + a per-run capability": lambda: framework_alone(
            agent, titles, capabilities=lambda: [HandleDeferredToolCalls(handler=lambda ctx, requests: None)]
        ),
        "(g) (a) with goldfive's task input as prompt": lambda: framework_alone(agent, rich),
    }
    if args.one:
        [one] = [run for name, run in variants.items() if name.startswith(f"({args.one})")]
        asyncio.run(cast(Any, one()))
        return
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    wall: dict[str, list[float]] = {k: [] for k in variants}

    async def measure() -> None:
        for run in variants.values():  # warm-up
            await run()
        for _ in range(args.passes):
            for name, run in variants.items():
                c, w = await run()
                cpu[name].append(c)
                wall[name].append(w)

    asyncio.run(measure())
    base_name = next(iter(variants))
    per_cpu = {k: statistics.median(v) / n * 1e6 for k, v in cpu.items()}
    per_wall = {k: statistics.median(v) / n * 1e6 for k, v in wall.items()}
    base = per_cpu[base_name]
    print(f"PydanticAI adapter: {n} tasks, median of {args.passes} passes after a warm-up; µs per task")
    print(f"  {'':<46} {'cpu':>9} {'vs (a)':>10} {'ratio':>6}   {'wall':>9}")
    for name in variants:
        extra = f"{per_cpu[name] - base:+10.1f} {per_cpu[name] / base:5.2f}x"
        print(f"  {name:<46} {per_cpu[name]:9.1f} {extra}   {per_wall[name]:9.1f}")
    # (b) offers the tools as (e) does and sends (g)'s prompts; (d) and (f) are other ways.
    parts = sum(per_cpu[k] - base for k in variants if k.startswith(("(e)", "(g)")))
    own = per_cpu["(b) goldfive Runner + PydanticAIAdapter"] - base - parts
    print(f"goldfive's own code (b - a - (e-a) - (g-a)): {own:+.1f} µs/task cpu")
    allowed = 0.10 * base
    over = per_cpu["(b) goldfive Runner + PydanticAIAdapter"] - base
    print(f"target: at most +{allowed:.0f} µs/task (10%): {'within' if over <= allowed else 'over'} (+{over:.0f})")
    if args.calls:
        counted = {name: calls_per_task(run, n) for name, run in variants.items()}
        print("Python function calls per task (cProfile, one pass):")
        for name, count in counted.items():
            print(f"  {name:<46} {count:9.0f} {count / counted[base_name]:5.2f}x")


def calls_per_task(run: Callable[[], Awaitable[Timing]], n: int) -> float:
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    asyncio.run(cast(Any, run()))
    profile.disable()
    total: int = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return total / n


if __name__ == "__main__":
    main()
