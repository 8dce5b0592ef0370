"""What the framework adapters' task input costs to build and how long it is, per task.

    python bench/bench_task_input.py [--passes N]

A linear plan of N tasks, each run in turn (RUNNING, then COMPLETED with a short result):
(fresh) every task's input in a new conversation, the whole prompt each time (``memory=False``,
the OpenAI Agents adapter without a session, goldfive's own LLM agent's system prompt);
(conversation) the inputs of one conversation (``task_prompt.Told``): the whole prompt for the
first task, what changed since for each later one. Figures: CPU µs per task (the minimum over
the passes: this is pure CPU work, and the minimum is what a shared machine inflates least)
and characters per task (what the framework keeps in its conversation, and a model reads).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from goldfive.adapters.common import task_input  # noqa: E402
from goldfive.adapters.task_prompt import Told  # noqa: E402
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus  # noqa: E402


def session_of(n: int) -> Session:
    tasks = [Task(f"t{i}", f"Task number {i}", f"do step {i}") for i in range(n)]
    plan = Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="p")
    return Session("bench", goals=[Goal("g1", "benchmark")], plan=plan)


def one_run(n: int, conversation: bool) -> tuple[float, int]:
    """(CPU µs per task, characters per task) of the inputs of one run of ``n`` tasks."""
    session = session_of(n)
    told = Told() if conversation else None
    chars = 0
    assert session.plan is not None
    start = time.process_time()
    for task in session.plan.tasks:
        task.status = TaskStatus.RUNNING
        chars += len(task_input(session, task, told))
        task.status = TaskStatus.COMPLETED
        session.completed_results[task.id] = "found K"
    return (time.process_time() - start) / n * 1e6, chars // n


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    print("task input per task: CPU µs (minimum of passes) and characters")
    for n in (100, 1000):
        for conversation in (False, True):
            runs = [one_run(n, conversation) for _ in range(args.passes if n <= 100 else max(2, args.passes // 3))]
            label = "conversation" if conversation else "fresh"
            print(f"  N={n:<5} {label:<13} {min(r[0] for r in runs):8.1f} µs   {runs[0][1]:7d} chars")


if __name__ == "__main__":
    main()
