"""A run in its own process, registered with a hub: ``python -m tests.hub.runner_proc ADDR RUN N TASK_S``.

Tasks ``t1``..``tN`` each take TASK_S seconds; ``t2`` calls ``publish``, a tool that needs a
person's approval. Prints ``started``, ``task <id>``, then ``outcome <success>`` and exits 0
when the run completed (1 otherwise). Events go to the hub only (``Runner(hub=ADDR)``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from goldfive.adapters.callable import CallableAdapter
from goldfive.planners.static import StaticPlanner
from goldfive.run.user_tools import UserTool
from goldfive.runner import Runner
from goldfive.types import Plan, Session, Task, TaskEdge


def publish(target: str) -> dict[str, Any]:
    return {"published": target}


async def main(addr: str, run_id: str, n: int, task_s: float) -> int:
    ids = [f"t{i}" for i in range(1, n + 1)]
    plan = Plan([Task(t, f"task {t}") for t in ids], [TaskEdge(a, b) for a, b in zip(ids, ids[1:])], id="p")

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        print(f"task {task.id}", flush=True)
        if task.id == "t2":
            await tools["publish"](target=task.id)
        await asyncio.sleep(task_s)
        return f"{task.id} done"

    adapter = CallableAdapter(agent, tools=[UserTool(publish, requires_approval=True)])
    runner = Runner(agent=adapter, planner=StaticPlanner(plan), run_id=run_id, hub=addr)
    link = runner.sinks[-1]
    link.close_timeout = 60.0  # a loaded machine may take long to bring a killed hub back
    print("started", flush=True)
    try:
        outcome = await runner.run(f"{n} tasks")
    finally:
        await runner.close()
    print(f"outcome {outcome.success}", flush=True)
    return 0 if outcome.success else 1


if __name__ == "__main__":
    addr, run_id, n, task_s = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    sys.exit(asyncio.run(main(addr, run_id, n, task_s)))
