"""The run core's cost in Python function calls (issue 27 part 1), which the machine's load does
not change: per task of a linear plan, per STATUS_QUERY round trip, per APPROVE round trip, per
tool call.

Each figure is a difference (the same workload at two sizes, cProfile's call count), so the
run's set-up and teardown cancel out. The budgets sit a little above what the core costs now:
a change that adds calls to these paths shows here first (bench/bench_core_floor.py --calls
prints the same figures with the functions that cost most)."""

from __future__ import annotations

import asyncio
import cProfile
import pstats
from typing import Any, Awaitable, Callable

from goldfive import events
from goldfive.adapters.callable import CallableAdapter
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.run.user_tools import UserTool
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink
from goldfive.types import Goal, Plan, Session, Task, TaskEdge


def _linear(n: int) -> Plan:
    tasks = [Task(id=f"t{i}", title=f"task {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(f"t{i}", f"t{i + 1}") for i in range(n - 1)], id="p")


async def _calls(work: Callable[[], Awaitable[Any]]) -> int:
    prof = cProfile.Profile()
    prof.enable()
    try:
        await work()
    finally:
        prof.disable()
    return int(pstats.Stats(prof).total_calls)  # type: ignore[attr-defined]


async def _per_unit(make: Callable[[int], Callable[[], Awaitable[Any]]], small: int, big: int) -> float:
    await make(small)()  # warm-up: first-call imports and caches are not the core's cost
    return (await _calls(make(big)) - await _calls(make(small))) / (big - small)


async def _noop(task: Task, session: Session) -> str:
    return "ok"


def _linear_run(sinks: list[Any]) -> Callable[[int], Callable[[], Awaitable[Any]]]:
    return _linear_run_with(lambda: list(sinks))


def _linear_run_with(sinks: Callable[[], list[Any]]) -> Callable[[int], Callable[[], Awaitable[Any]]]:
    """A linear run per call, each with the sinks ``sinks()`` makes for it."""

    def make(n: int) -> Callable[[], Awaitable[Any]]:
        plan = _linear(n)

        async def go() -> None:
            runner = Runner(agent=_noop, planner=StaticPlanner(plan), executor=SequentialExecutor(), sinks=sinks())
            out = await runner.run([Goal("g1", "calls")])
            await runner.close()
            assert out.success, out.reason

        return go

    return make


def _status_trips(n: int) -> Callable[[], Awaitable[Any]]:
    async def go() -> None:
        gate, started = asyncio.Event(), asyncio.Event()

        async def held(task: Task, session: Session) -> str:
            started.set()
            await gate.wait()
            return "ok"

        ch = ControlChannel()
        runner = Runner(agent=held, planner=StaticPlanner(_linear(1)), sinks=[InMemorySink()], control=ch)
        run = asyncio.create_task(runner.run([Goal("g1", "calls")]))
        await started.wait()
        for _ in range(n):
            await ch.request(ControlMessage(ControlKind.STATUS_QUERY))
        gate.set()
        assert (await run).success
        await runner.close()

    return go


def _approve_trips(n: int) -> Callable[[], Awaitable[Any]]:
    async def go() -> None:
        held: asyncio.Queue[int] = asyncio.Queue()

        def publish(i: int) -> dict[str, Any]:
            return {"ok": True}

        async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
            for i in range(n):  # distinct arguments: a call repeated is a looping-tool drift
                await tools["publish"](i=i)
                held.put_nowait(i)
            return "ok"

        ch, sink = ControlChannel(), InMemorySink()
        adapter = CallableAdapter(agent, tools=[UserTool(publish, requires_approval=True)])
        runner = Runner(agent=adapter, planner=StaticPlanner(_linear(1)), sinks=[sink], control=ch)
        run = asyncio.create_task(runner.run([Goal("g1", "calls")]))
        sub = sink.subscribe()
        done = 0
        async for ev in sub:
            if isinstance(ev, events.Event) and ev.WhichOneof("payload") == "approval_requested":
                ch.send_nowait(ControlMessage(ControlKind.APPROVE, payload={"target_id": ev.approval_requested.target_id}))
                await held.get()
                done += 1
                if done == n:
                    break
        sub.close()
        assert (await run).success
        ch.close()
        await runner.close()

    return go


def _tool_calls(n: int) -> Callable[[], Awaitable[Any]]:
    """``n`` calls of a tool without approval in one task, with an in-memory sink (each is an
    AgentStep the watchdog and the budget see)."""

    async def go() -> None:
        def publish(i: int) -> dict[str, Any]:
            return {"ok": True}

        async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
            for i in range(n):  # distinct arguments: a call repeated is a looping-tool drift
                await tools["publish"](i=i)
            return "ok"

        adapter = CallableAdapter(agent, tools=[UserTool(publish)])
        runner = Runner(agent=adapter, planner=StaticPlanner(_linear(1)), sinks=[InMemorySink()])
        assert (await runner.run([Goal("g1", "calls")])).success
        await runner.close()

    return go


async def test_a_task_of_a_linear_plan_without_sinks_costs_at_most_its_budget_of_calls() -> None:
    per_task = await _per_unit(_linear_run([]), 200, 600)
    assert per_task <= 90, per_task


async def test_a_task_of_a_linear_plan_with_an_in_memory_sink_costs_at_most_its_budget_of_calls() -> None:
    per_task = await _per_unit(_linear_run_with(lambda: [InMemorySink()]), 200, 600)
    assert per_task <= 108, per_task


async def test_an_approve_round_trip_costs_at_most_its_budget_of_calls() -> None:
    per_trip = await _per_unit(_approve_trips, 50, 150)
    assert per_trip <= 364, per_trip  # 375 before a control's events cost fewer calls (358; 361 with the watchdog's bounded call memory)


async def test_a_tool_call_costs_at_most_its_budget_of_calls() -> None:
    per_call = await _per_unit(_tool_calls, 200, 600)
    assert per_call <= 58, per_call  # 57 before emit's lock and lookups were written out (55), which the watchdog's bounded call memory (+2) took back


async def test_a_status_query_round_trip_costs_at_most_its_budget_of_calls() -> None:
    per_trip = await _per_unit(_status_trips, 100, 300)
    assert per_trip <= 86, per_trip  # 96 before a control's events cost fewer calls (84)
