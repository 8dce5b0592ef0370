"""goldfive's overhead per task around a LangChain v1 agent, beside the framework alone.

    python bench/bench_adapter_langchain.py [--tasks N] [--passes N]

The agent is built the documented way and run as it is: ``create_agent`` with LangChain's
``HumanInTheLoopMiddleware`` gating a ``deploy`` tool the model never calls, on a scripted fake
chat model that answers each task with one ``lookup`` call and then a text (two model calls,
one tool step and the middleware's hooks per task).
(a) baseline: the framework alone, N ``agent.ainvoke`` calls on one thread of an InMemorySaver;
(b) goldfive: the same N tasks as a linear plan through ``Runner(agent=agent)`` (no sinks, no
    control channel): the task input, ``astream`` with updates, reading each interrupt-free
    step, the visibility events, the state machine and the executor;
(a') the framework alone as (a), sent goldfive's task inputs (the first with the goals, the plan,
    the results; later ones what changed since): what the adapter adds beyond a longer input,
    which the thread keeps and copies each step.
Each variant is warmed up, then timed in alternating passes; medians of this process's CPU time
(``time.process_time``; wall time beside it). The ratio is to (a) in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from bench.bench_adapter_langgraph import _NoList, answer, goldfive_inputs, lookup, plan  # noqa: E402
from examples.langgraph_agent import ScriptedChatModel  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.runner import Runner  # noqa: E402


@tool
def deploy(service: str) -> str:
    """Deploy a service."""
    return service


def make_agent() -> Any:
    model = ScriptedChatModel(respond=answer)
    model.seen = _NoList()  # keep nothing: a bench of 100s of runs
    return create_agent(model, [lookup, deploy], middleware=[HumanInTheLoopMiddleware(interrupt_on={"deploy": True})])


async def framework_alone(agent: Any, n: int, texts: list[str] | None = None) -> tuple[float, float]:
    g = agent.copy({"checkpointer": InMemorySaver()})
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        text = texts[i] if texts else f"Do the current task (t{i}): Task number {i}"
        out = await g.ainvoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "bench"}})
        assert out["messages"][-1].content == "found K"
    return time.perf_counter() - start, time.process_time() - cpu


async def through_goldfive(agent: Any, n: int) -> tuple[float, float]:
    runner = Runner(agent=agent, planner=StaticPlanner(plan(n)))
    start, cpu = time.perf_counter(), time.process_time()
    outcome = await runner.run("benchmark")
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    await runner.close()
    if not outcome.success:
        raise SystemExit(f"the goldfive run failed: {outcome.reason}")
    return elapsed


async def measure(n: int, passes: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    agent = make_agent()
    texts = goldfive_inputs(n)
    variants = {
        "(a) framework alone, one thread": lambda: framework_alone(agent, n),
        "(b) through goldfive (Runner, no sinks)": lambda: through_goldfive(agent, n),
        "(a') framework alone, same input": lambda: framework_alone(agent, n, texts),
    }
    for run in variants.values():  # warm-up
        await run()
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    wall: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(passes):
        for name, run in variants.items():
            w, c = await run()
            wall[name].append(w / n * 1e6)
            cpu[name].append(c / n * 1e6)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    cpu, wall = asyncio.run(measure(args.tasks, args.passes))
    med = {name: statistics.median(xs) for name, xs in cpu.items()}
    wall_med = {name: statistics.median(xs) for name, xs in wall.items()}
    names = list(med)
    base = med[names[0]]
    print(f"LangChain v1 agent (create_agent + HumanInTheLoopMiddleware): {args.tasks}-task linear plan, median of {args.passes} passes (after a warm-up)")
    for name in names:
        print(f"  {name:42s} cpu {med[name]:9.1f} us/task (ratio {med[name] / base:5.2f})   wall {wall_med[name]:9.1f} us/task")
    for label, other in (("b over a", names[0]), ("b over a'", names[2])):
        over = med[names[1]] - med[other]
        print(f"  goldfive overhead, {label}: {over:+.1f} us/task ({over / med[other]:+.1%})")


if __name__ == "__main__":
    main()
