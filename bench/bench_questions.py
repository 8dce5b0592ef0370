"""A question's round trip against an approval's, in one run on the in-process ControlChannel.

    python bench/bench_questions.py [--asks N] [--passes N]

(a) approval: the agent calls ``report_awaiting_approval``; a person task sends APPROVE as soon
    as ``approval_requested`` is on the stream; the call returns.
(b) question: the agent calls ``ask_person`` with two options; the person sends ANSWER (an
    option) as soon as ``question_asked`` is on the stream; the call returns with the answer.
Both include the events written (a question writes two more: question_asked and
question_answered) and the control's checks. Each figure is the median of --passes runs of
--asks round trips, in microseconds per round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from goldfive import ControlChannel, ControlKind, ControlMessage, InMemorySink
from goldfive.adapters.callable import CallableAdapter
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.types import Plan, Session, Task


async def one_pass(asks: int, question: bool) -> float:
    channel, sink = ControlChannel(), InMemorySink()
    times: list[int] = []

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for _ in range(asks):
            t0 = time.perf_counter_ns()
            if question:
                got = await tools["ask_person"](prompt="Which region?", options=["eu", "us"])
                assert got["answer"] == "eu"
            else:
                got = await tools["report_awaiting_approval"](prompt="ok?")
                assert got["decision"] == "approve"
            times.append(time.perf_counter_ns() - t0)
        return "done"

    async def person() -> None:
        wanted = "question_asked" if question else "approval_requested"
        async for ev in sink.subscribe():
            kind = ev.WhichOneof("payload")
            if kind == wanted:
                target = getattr(ev, kind).target_id
                payload = {"target_id": target, "option": "eu"} if question else {"target_id": target}
                channel.send_nowait(ControlMessage(ControlKind.ANSWER if question else ControlKind.APPROVE, payload=payload))
            elif kind in ("run_completed", "run_aborted"):
                return

    plan = Plan([Task("t", "ask")], [])
    runner = Runner(agent=CallableAdapter(agent), planner=StaticPlanner(plan), sinks=[sink], control=channel)
    helper = asyncio.create_task(person())
    out = await runner.run("ask")
    await helper
    await runner.close()
    assert out.success, out.reason
    return statistics.median(times) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--asks", type=int, default=200)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    for label, question in (("(a) approval: report_awaiting_approval + APPROVE", False), ("(b) question: ask_person + ANSWER", True)):
        asyncio.run(one_pass(20, question))  # warm-up
        figures = [asyncio.run(one_pass(args.asks, question)) for _ in range(args.passes)]
        print(f"{label}: {statistics.median(figures):.0f} µs per round trip (median of {args.passes} passes of {args.asks})")


if __name__ == "__main__":
    main()
