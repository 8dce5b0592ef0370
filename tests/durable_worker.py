"""A process for the kill -9 test (tests/durable/test_durable_kill.py): runs or resumes a 30-task run.

``python -m tests.durable_worker DB OUT``: starts run ``RUN`` recorded durably in DB, or
resumes it when DB already holds it. The agent appends ``task_id attempt`` to OUT for each
task it finishes; tasks ``t05`` ``t15`` ``t25`` call a tool that needs approval, which an
operator in this process approves after a pause; the operator also injects messages and
steers now and then. Every step a test may want to kill at is printed on stdout, flushed:
``started``, ``task <id>``, ``approval <target>``, ``acked <KIND> <control id> <RESULT>``.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import sys
from typing import Any

from goldfive.adapters.callable import CallableAdapter
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.planners.static import StaticPlanner
from goldfive.run.user_tools import UserTool
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.sinks.sqlite import SQLitePersistenceSink
from goldfive.types import Plan, Session, Task, TaskEdge

RUN = "kill9-run"
TASKS = [f"t{i:02d}" for i in range(30)]
APPROVAL_TASKS = {"t05", "t15", "t25"}
TASK_S = float(os.environ.get("GOLDFIVE_KILL9_TASK_S", "0.12"))


def plan() -> Plan:
    return Plan([Task(t, f"task {t}") for t in TASKS], [TaskEdge(a, b) for a, b in zip(TASKS, TASKS[1:])], id="p30")


def say(line: str) -> None:
    print(line, flush=True)


def publish(target: str) -> dict[str, Any]:
    return {"published": target}


def make_agent(out: str) -> Any:
    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        say(f"task {task.id}")
        if task.id in APPROVAL_TASKS:
            await tools["publish"](target=task.id)
        await asyncio.sleep(TASK_S)
        with open(out, "a", encoding="utf-8") as f:
            f.write(f"{task.id} {task.attempt}\n")
            f.flush()
            os.fsync(f.fileno())
        return f"{task.id} done"

    return agent


async def operator(sink: InMemorySink, channel: ControlChannel, rng: random.Random) -> None:
    async def send(msg: ControlMessage) -> None:
        ack = await channel.request(msg)
        say(f"acked {msg.kind} {msg.id} {ack.result}")

    async def nudge() -> None:
        while True:
            await asyncio.sleep(rng.uniform(0.2, 0.6))
            if rng.random() < 0.5:
                await send(ControlMessage(ControlKind.INJECT_MESSAGE, payload={"text": f"note {rng.random():.3f}"}))
            else:
                await send(ControlMessage(ControlKind.STEER, payload={"note": f"steer {rng.random():.3f}"}))

    nudger = asyncio.ensure_future(nudge())
    try:
        async for ev in sink.subscribe():
            if getattr(ev, "WhichOneof", None) and ev.WhichOneof("payload") == "approval_requested":
                target = ev.approval_requested.target_id
                say(f"approval {target}")
                await asyncio.sleep(0.3)
                await send(ControlMessage(ControlKind.APPROVE, payload={"target_id": target}))
    finally:
        nudger.cancel()


def recorded(db: str) -> bool:
    if not os.path.exists(db):
        return False
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT 1 FROM events WHERE run_id = ? LIMIT 1", (RUN,)).fetchone() is not None
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


async def main(db: str, out: str) -> int:
    channel, sink = ControlChannel(), InMemorySink()
    adapter = CallableAdapter(make_agent(out), tools=[UserTool(publish, requires_approval=True)])
    kw: dict[str, Any] = {"agent": adapter, "planner": StaticPlanner(plan()), "control": channel}
    if recorded(db):
        runner = Runner.resuming(RUN, store=db, sinks=[sink], **kw)
    else:
        runner = Runner(run_id=RUN, sinks=[SQLitePersistenceSink(db, durability="normal"), sink], **kw)
    op = asyncio.ensure_future(operator(sink, channel, random.Random(os.getpid())))
    say("started")
    out_come = await runner.run() if runner._recovered is not None else await runner.run("thirty tasks")
    op.cancel()
    await runner.close()
    say(f"ended {out_come.success} {out_come.reason}")
    return 0 if out_come.success else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
