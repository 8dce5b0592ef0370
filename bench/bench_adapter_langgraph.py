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
(a') the framework alone as (a), sent goldfive's own task inputs (the first with the goals, the
    whole plan and the results, each later one what changed since and the task): what the
    adapter's machinery adds beyond a longer input, which the thread keeps and the checkpointer
    copies at every step;
(c) goldfive with ``LangGraphAdapter(graph, memory=False)``: each task on a fresh thread;
(d) the framework alone, an ``InMemorySaver`` and a fresh thread per task, the baseline of (c)
    (``interrupt()`` needs a checkpointer, so a graph that asks a person has one);
(e) for scale: the framework alone without a checkpointer.
Each variant is warmed up, then timed in alternating passes; the figures are medians of this
process's CPU time (``time.process_time``), which other processes on a shared machine do not
inflate the way they inflate wall time (printed beside it). Target
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
from goldfive.adapters.common import task_input  # noqa: E402
from goldfive.adapters.task_prompt import Told  # noqa: E402
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus  # noqa: E402


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


def goldfive_inputs(n: int) -> list[str]:
    """The task input goldfive gives each task of the plan, as the run reaches it."""
    session = Session(run_id="bench", goals=[Goal("g1", "benchmark")], plan=plan(n))
    texts, told = [], Told()  # one conversation: the first input whole, later ones what changed
    assert session.plan is not None
    for task in session.plan.tasks:
        task.status = TaskStatus.RUNNING
        texts.append(task_input(session, task, told))
        task.status = TaskStatus.COMPLETED
        session.completed_results[task.id] = "found K"
    return texts


async def framework_alone(graph: Any, n: int, *, saver: bool, one_thread: bool = True, texts: list[str] | None = None) -> tuple[float, float]:
    g = graph.copy({"checkpointer": InMemorySaver()}) if saver else graph
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        config: Any = {"configurable": {"thread_id": "bench" if one_thread else f"bench-{i}"}}
        text = texts[i] if texts else f"Do the current task (t{i}): Task number {i}"
        out = await g.ainvoke({"messages": [HumanMessage(text)]}, config)
        assert out["messages"][-1].content == "found K"
    return time.perf_counter() - start, time.process_time() - cpu


async def through_goldfive(graph: Any, n: int, *, memory: bool = True) -> tuple[float, float]:
    runner = Runner(agent=LangGraphAdapter(graph, memory=memory), planner=StaticPlanner(plan(n)))
    start, cpu = time.perf_counter(), time.process_time()
    outcome = await runner.run("benchmark")
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    await runner.close()
    if not outcome.success:
        raise SystemExit(f"the goldfive run failed: {outcome.reason}")
    return elapsed


async def measure(n: int, passes: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    graph = make_graph()
    texts = goldfive_inputs(n)
    variants = {
        "(a) framework alone, one thread": lambda: framework_alone(graph, n, saver=True),
        "(b) through goldfive (Runner, no sinks)": lambda: through_goldfive(graph, n),
        "(a') framework alone, one thread, same input": lambda: framework_alone(graph, n, saver=True, texts=texts),
        "(c) through goldfive, memory=False": lambda: through_goldfive(graph, n, memory=False),
        "(d) framework alone, thread per task": lambda: framework_alone(graph, n, saver=True, one_thread=False),
        "(e) framework alone, no checkpointer": lambda: framework_alone(graph, n, saver=False),
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
    base, gold = med[names[0]], med[names[1]]
    print(f"LangGraph adapter: {args.tasks}-task linear plan, median of {args.passes} passes (after a warm-up)")
    for name in names:
        print(f"  {name:46s} cpu {med[name]:9.1f} us/task (ratio {med[name] / base:5.2f})   wall {wall_med[name]:9.1f} us/task")
    pairs = (("b over a", gold, base), ("b over a'", gold, med[names[2]]), ("c over d", med[names[3]], med[names[4]]))
    for label, g, b in pairs:
        over = g - b
        allowed = max(0.10 * b, 100.0)
        verdict = "met" if over <= allowed else "MISSED"
        print(f"  goldfive overhead, {label}: {over:+.1f} us/task ({over / b:+.1%}); target <= {allowed:.0f} us/task: {verdict}")


if __name__ == "__main__":
    main()
