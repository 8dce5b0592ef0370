"""goldfive's overhead per task around a LangGraph graph, beside the framework alone.

    python bench/bench_adapter_langgraph.py [--tasks N] [--passes N]

The graph is a ``create_react_agent`` graph built as the example builds it (a user tool, the 8
reporting tools, goldfive's pre-model hook, ``ask_first`` on a tool the model never calls) on
a scripted fake chat model that answers each task with one tool call (``lookup``) and then a
text, so each task is two model calls and one ToolNode step.
(a) baseline: the framework alone, a loop of N ``graph.ainvoke`` calls on one thread of an
    ``InMemorySaver`` (the conversation kept across tasks, as goldfive keeps it per run);
(b) goldfive: the same N tasks as a linear plan through ``Runner(agent=graph)`` (no sinks, no
    control channel): the task input, ``astream`` with updates, the visibility events, the
    injected-message drain before each model call, the state machine and the executor.
(c) goldfive with ``LangGraphAdapter(graph, memory=False)``: each task on a fresh thread;
(d) the framework alone without a checkpointer (each task a fresh state), the baseline of (c).
    goldfive needs a checkpointer even then: ``interrupt()`` resumes from one.
Each variant is warmed up, then timed in alternating passes; the figures are medians. Target
(issue 14): goldfive adds at most 10% or 100 µs per task, whichever is larger.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import warnings
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.prebuilt import ToolNode, create_react_agent  # noqa: E402

from examples.langgraph_agent import ScriptedChatModel  # noqa: E402
from goldfive.adapters.langgraph import LangGraphAdapter, ask_first, goldfive_pre_model_hook, goldfive_tools  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.types import Plan, Task, TaskEdge  # noqa: E402


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return path


def answer(messages: list[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(f"found {last.content}")
    return AIMessage("", tool_calls=[{"name": "lookup", "args": {"key": "k"}, "id": f"c{len(messages)}"}])


def make_graph() -> Any:
    model = ScriptedChatModel(respond=answer)
    model.seen = _NoList()  # keep nothing: a bench of 100s of runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(
            model,
            ToolNode([lookup, delete_file, *goldfive_tools()], awrap_tool_call=ask_first("delete_file")),
            pre_model_hook=goldfive_pre_model_hook,
        )


class _NoList(list[Any]):
    def append(self, item: Any) -> None:
        pass


def plan(n: int) -> Plan:
    tasks = [Task(f"t{i}", f"Task number {i}", f"do step {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="bench")


async def framework_alone(graph: Any, n: int, *, memory: bool) -> float:
    g = graph.copy({"checkpointer": InMemorySaver()}) if memory else graph
    config: Any = {"configurable": {"thread_id": "bench"}}
    start = time.perf_counter()
    for i in range(n):
        out = await g.ainvoke({"messages": [HumanMessage(f"Do the current task (t{i}): Task number {i}")]}, config)
        assert out["messages"][-1].content == "found K"
    return time.perf_counter() - start


async def through_goldfive(graph: Any, n: int, *, memory: bool = True) -> float:
    runner = Runner(agent=LangGraphAdapter(graph, memory=memory), planner=StaticPlanner(plan(n)))
    start = time.perf_counter()
    outcome = await runner.run("benchmark")
    elapsed = time.perf_counter() - start
    await runner.close()
    if not outcome.success:
        raise SystemExit(f"the goldfive run failed: {outcome.reason}")
    return elapsed


async def measure(n: int, passes: int) -> dict[str, list[float]]:
    graph = make_graph()
    variants = {
        "framework alone, one thread (baseline)": lambda: framework_alone(graph, n, memory=True),
        "through goldfive (Runner, no sinks)": lambda: through_goldfive(graph, n),
        "through goldfive, memory=False": lambda: through_goldfive(graph, n, memory=False),
        "framework alone, no checkpointer": lambda: framework_alone(graph, n, memory=False),
    }
    for run in variants.values():  # warm-up
        await run()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(passes):
        for name, run in variants.items():
            times[name].append(await run() / n * 1e6)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    times = asyncio.run(measure(args.tasks, args.passes))
    med = {name: statistics.median(xs) for name, xs in times.items()}
    names = list(med)
    base, gold = med[names[0]], med[names[1]]
    print(f"LangGraph adapter: {args.tasks}-task linear plan, median of {args.passes} passes (after a warm-up)")
    for name in names:
        print(f"  {name:42s} {med[name]:9.1f} us/task   ratio {med[name] / base:5.2f}")
    for label, g, b in (("one thread", gold, base), ("no memory", med[names[2]], med[names[3]])):
        over = g - b
        allowed = max(0.10 * b, 100.0)
        verdict = "met" if over <= allowed else "MISSED"
        print(f"  goldfive overhead, {label}: {over:+.1f} us/task ({over / b:+.1%}); target <= {allowed:.0f} us/task: {verdict}")


if __name__ == "__main__":
    main()
