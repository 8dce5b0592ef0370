"""goldfive's overhead per task around the Claude Agent SDK, beside the SDK alone.

    python bench/bench_adapter_claude_agent_sdk.py [--tasks N] [--passes N]

Claude Code for real: the CLI bundled in the claude-agent-sdk wheel, offline, against the
scripted Messages API of the tests (tests/adapters/claude_kit.py) on loopback. Each task is one
query: the model runs ``echo`` with Bash (read-only, so no permission is asked), then answers,
so two model calls, one tool call and its hooks per task.
(a) baseline: the SDK alone, one ``ClaudeSDKClient`` (connected, N queries on one session,
    disconnected), each query's messages read to its ``ResultMessage``;
(b) goldfive: the same N tasks as a linear plan through ``Runner(agent=options)`` (no sinks, no
    control channel): goldfive's task input, its hooks, ``can_use_tool``, the reporting tools'
    MCP server, the visibility and usage events, the state machine and the executor;
(a') the SDK alone as (a), sent goldfive's task input texts (the first whole, later ones what
    changed since): what the adapter adds beyond a longer prompt.
Each variant is warmed up, then timed in alternating passes; the figures are medians per task
of wall time and of CPU time in three places, counted apart: Claude Code's (the CLI, a node
process: its rusage once it has exited, each variant ends its client), the scripted Messages
API's (handler threads in this process: what a real API would spend, not goldfive), and this
process's own less the API's (the SDK and goldfive). The ratios are to (a) in the same run; on
a shared machine the CPU times are the steadier figures (wall time waits for a core).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from claude_agent_sdk import ClaudeSDKClient, ResultMessage  # noqa: E402

from goldfive.adapters.common import task_input  # noqa: E402
from goldfive.adapters.task_prompt import Told  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus  # noqa: E402
from tests.adapters.claude_kit import MessagesServer, options, tool_results  # noqa: E402


_answered: set[str] = set()


def answer(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A tool result not answered yet: the final text; otherwise (a new prompt): the Bash call."""
    fresh = set(tool_results(body)) - _answered
    if fresh:
        _answered.update(fresh)
        return [("text", "found it")]
    return [("tool_use", "Bash", {"command": "echo hi", "description": "look"}, f"echo-{time.monotonic_ns()}")]


def plan(n: int) -> Plan:
    tasks = [Task(f"t{i}", f"Task number {i}", f"do step {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="bench")


def goldfive_inputs(n: int) -> list[str]:
    session = Session(run_id="bench", goals=[Goal("g1", "benchmark")], plan=plan(n))
    texts, told = [], Told()  # one conversation: the first input whole, later ones what changed
    assert session.plan is not None
    for task in session.plan.tasks:
        task.status = TaskStatus.RUNNING
        texts.append(task_input(session, task, told))
        task.status = TaskStatus.COMPLETED
        session.completed_results[task.id] = "found it"
    return texts


Figures = tuple[float, float, float, float]  # seconds: wall, this process's cpu, the API's cpu, the CLI's cpu


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


async def sdk_alone(opts: Any, n: int, texts: list[str] | None = None) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    client = ClaudeSDKClient(opts)
    await client.connect()
    try:
        for i in range(n):
            await client.query(texts[i] if texts else f"Do the current task (t{i}): Task number {i}")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    assert not message.is_error, message
    finally:
        await client.disconnect()
    return time.perf_counter() - start, time.process_time() - cpu


async def through_goldfive(opts: Any, n: int) -> tuple[float, float]:
    runner = Runner(agent=opts, planner=StaticPlanner(plan(n)))
    start, cpu = time.perf_counter(), time.process_time()
    outcome = await runner.run("benchmark")
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    await runner.close()
    if not outcome.success:
        raise SystemExit(f"the goldfive run failed: {outcome.reason}")
    return elapsed


async def counted(server: MessagesServer, run: Any) -> Figures:
    api, cli = server.cpu_s, _children_cpu()
    wall, cpu = await run()
    api = server.cpu_s - api
    return wall, cpu - api, api, _children_cpu() - cli


async def measure(n: int, passes: int, home: Path) -> dict[str, list[Figures]]:
    server = MessagesServer(answer)
    try:
        opts = options(server, home)
        texts = goldfive_inputs(n)
        variants = {
            "(a) the SDK alone, one session": lambda: sdk_alone(opts, n),
            "(b) through goldfive (Runner, no sinks)": lambda: through_goldfive(opts, n),
            "(a') the SDK alone, goldfive's task input": lambda: sdk_alone(opts, n, texts),
        }
        for run in variants.values():  # warm-up
            await run()
        figures: dict[str, list[Figures]] = {name: [] for name in variants}
        for _ in range(passes):
            for name, run in variants.items():
                figures[name].append(await counted(server, run))
        return figures
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        figures = asyncio.run(measure(args.tasks, args.passes, Path(home)))
    names = list(figures)
    med = {name: [statistics.median(f[k] for f in fs) / args.tasks * 1e3 for k in range(4)] for name, fs in figures.items()}
    base = med[names[0]]
    print(f"Claude Agent SDK adapter: {args.tasks}-task linear plan, median of {args.passes} passes (after a warm-up); ms per task")
    print(f"  {'':44s} {'wall':>8} {'ratio':>6}   {'CLI cpu':>8} {'ratio':>6}   {'SDK+goldfive cpu':>16}   {'API cpu':>7}")
    for name in names:
        w, own, api, cli = med[name]
        print(f"  {name:44s} {w:8.1f} {w / base[0]:6.2f}   {cli:8.1f} {cli / base[3]:6.2f}   {own:16.2f}   {api:7.2f}")
    for label, other in (("b over a", names[0]), ("b over a'", names[2])):
        b, o = med[names[1]], med[other]
        print(
            f"  goldfive overhead, {label}: wall {b[0] - o[0]:+.1f} ms/task ({(b[0] - o[0]) / o[0]:+.1%}), "
            f"CLI cpu {b[3] - o[3]:+.1f} ms ({(b[3] - o[3]) / o[3]:+.1%}), this process {b[1] - o[1]:+.2f} ms"
        )


if __name__ == "__main__":
    main()
