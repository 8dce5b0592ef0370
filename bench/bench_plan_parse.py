"""Parse and validate a model's 100-task plan answer, beside json.loads of the same text.

    python bench/bench_plan_parse.py [--tasks N] [--iterations N]

(a) baseline: json.loads of the answer text (the floor any parser pays).
(b) generate path: extract the JSON (fenced), check the shape, build the Plan, Plan.validate().
(c) refine path: the same answer as a USER_STEER revision of a plan with N/2 completed tasks
    (completed-task preservation, id renaming, edge checks, validate).
Figures are microseconds per answer (median of repeats) and the ratio to (a).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from goldfive.planners.assemble import build_generated_plan, build_refined_plan
from goldfive.planners.parse import parse_plan_answer
from goldfive.types import Goal, Plan, Task, TaskEdge, TaskStatus


def _answer(n: int, prefix: str = "t") -> str:
    tasks = [{"id": f"{prefix}{i}", "title": f"Task {i}", "description": f"Do step {i} of the work."} for i in range(n)]
    # A layered DAG: each task depends on up to two earlier ones.
    edges = [{"from_task_id": f"{prefix}{j}", "to_task_id": f"{prefix}{i}"} for i in range(1, n) for j in {i - 1, i // 2} if j < i]
    return "```json\n" + json.dumps({"summary": "bench", "tasks": tasks, "edges": edges}, indent=1) + "\n```"


def _time_us(fn: Callable[[], object], iterations: int, repeats: int = 5) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        samples.append((time.perf_counter_ns() - start) / iterations / 1_000)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=300)
    args = ap.parse_args()
    n = args.tasks
    text = _answer(n)
    body = text.removeprefix("```json\n").removesuffix("\n```")
    goals = [Goal("g1", "bench")]
    old = Plan(
        tasks=[Task(f"t{i}", f"Task {i}", status=TaskStatus.COMPLETED if i < n // 2 else TaskStatus.PENDING) for i in range(n)],
        edges=[TaskEdge(f"t{i - 1}", f"t{i}") for i in range(1, n)],
    )
    half = n // 2
    # The new work reuses the dropped ids, so renaming and edge rewriting are exercised too.
    new_ids = [f"t{i}" for i in range(half, n)]
    steer_text = json.dumps(
        {
            "summary": "steered",
            "tasks": [{"id": i, "title": f"steered {i}"} for i in new_ids],
            "edges": [{"from_task_id": f"t{half - 1}", "to_task_id": new_ids[0]}]
            + [{"from_task_id": a, "to_task_id": b} for a, b in zip(new_ids, new_ids[1:])],
        }
    )

    def generate() -> object:
        return build_generated_plan(parse_plan_answer(text), goals, [])

    def refine() -> object:
        return build_refined_plan(
            parse_plan_answer(steer_text),
            old,
            rename_reused_ids=True,
            revision_index=1,
            revision_kind="USER_STEER",
            revision_severity="WARNING",
            revision_reason="bench",
        )

    assert len(generate().tasks) == n  # type: ignore[attr-defined]
    assert refine().task(f"t{n - 1}_r1")  # type: ignore[attr-defined]
    floor = _time_us(lambda: json.loads(body), args.iterations)
    gen = _time_us(generate, args.iterations)
    ref = _time_us(refine, args.iterations)
    print(f"plan answer: {n} tasks, {len(text)} chars")
    print(f"  json.loads baseline      {floor:9.1f} us")
    print(f"  generate parse+validate  {gen:9.1f} us   {gen / floor:5.1f}x baseline")
    print(f"  steer refine assemble    {ref:9.1f} us   {ref / floor:5.1f}x baseline")


if __name__ == "__main__":
    main()
