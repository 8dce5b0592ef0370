"""Behaviours goldfive v1's own tests expect of the public API, run against this project."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import goldfive
from goldfive import events
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.protocols import Steerer
from goldfive.runner import Runner
from goldfive.sinks.jsonl import JSONLPersistenceSink, replay_from_jsonl
from goldfive.sinks.memory import InMemorySink
from goldfive.steerer import DefaultSteerer
from goldfive.types import Goal, Plan, Session, Task, TaskEdge, TaskStatus
from tests.runtime_kit import ScriptedAgent, kinds


def _wide_plan(n: int) -> Plan:
    return Plan(tasks=[Task(f"t{i}", f"T{i}") for i in range(n)], edges=[], id="wide")


async def test_parallel_max_concurrency_0_means_no_cap() -> None:
    n = 7  # more than any default a cap could have
    agent = ScriptedAgent(hold=[f"t{i}" for i in range(n)])
    runner = Runner(agent=agent, planner=StaticPlanner(_wide_plan(n)), executor=ParallelDAGExecutor(max_concurrency=0))
    run = asyncio.create_task(runner.run("all at once"))
    started = {await agent.started() for _ in range(n)}  # every task runs before any is released
    assert started == {f"t{i}" for i in range(n)} and len(agent.waiting) == n
    agent.release(*started)
    assert (await asyncio.wait_for(run, 10)).success
    assert ParallelDAGExecutor(max_concurrency=0).max_concurrency is None
    with pytest.raises(ValueError):
        ParallelDAGExecutor(max_concurrency=-1)


async def test_a_positive_max_concurrency_still_caps() -> None:
    agent = ScriptedAgent(hold=["t0", "t1", "t2"])
    runner = Runner(agent=agent, planner=StaticPlanner(_wide_plan(3)), executor=ParallelDAGExecutor(max_concurrency=2))
    run = asyncio.create_task(runner.run("two at a time"))
    first = {await agent.started(), await agent.started()}
    await asyncio.sleep(0)
    assert agent.starts.empty() and len(agent.waiting) == 2  # the third waits for a slot
    agent.release(*first)
    agent.release(await agent.started())
    assert (await asyncio.wait_for(run, 10)).success
