"""A finished run's objects are freed by reference counting once the caller drops them: the
run's parts (control loop, watchdog, budget, ledger, messages) stop holding it strongly when it
ends (RunContext.let_go), so nothing waits for the garbage collector's next full collection."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest

from goldfive import events
from goldfive.budget.model import Budget
from goldfive.control import AckResult, ControlChannel, ControlKind, ControlMessage
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.run.context import RunContext
from goldfive.runner import Runner
from goldfive.sinks import InMemorySink, JSONLPersistenceSink, SQLitePersistenceSink
from goldfive.steerer import DefaultSteerer
from goldfive.types import Goal, Plan, Session, Task, TaskEdge


def _plan(n: int = 3) -> Plan:
    tasks = [Task(id=f"t{i}", title=f"task {i}") for i in range(n)]
    return Plan(tasks=tasks, edges=[TaskEdge(f"t{i}", f"t{i + 1}") for i in range(n - 1)], id="p")


async def _ok(task: Task, session: Session) -> str:
    return "ok"


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


SINKS: dict[str, Callable[[Path], list[Any]]] = {
    "no sink": lambda tmp: [],
    "InMemorySink": lambda tmp: [InMemorySink()],
    "SQLite": lambda tmp: [SQLitePersistenceSink(str(tmp / "run.db"))],
    # A flush timer armed by the run's last events and cancelled by close: asyncio keeps it
    # (with the context it was armed in) until its time, an hour away here.
    "JSONL, flush in an hour": lambda tmp: [JSONLPersistenceSink(str(tmp / "run.jsonl"), flush_interval=3600)],
}


@pytest.mark.parametrize("sinks", list(SINKS))
@pytest.mark.parametrize("channel", [False, True], ids=["no channel", "channel"])
async def test_a_finished_run_is_freed_without_a_collection(sinks: str, channel: bool, tmp_path: Path, no_collector: None) -> None:
    runner = Runner(agent=_ok, planner=StaticPlanner(_plan()), sinks=SINKS[sinks](tmp_path),
                    control=ControlChannel() if channel else None)  # fmt: skip
    out = await runner.run([Goal("g1", "freed")])
    await runner.close()
    assert out.success, out.reason
    session, plan, ctx = weakref.ref(out.session), weakref.ref(out.session.plan), weakref.ref(runner.context)
    del out, runner
    assert (session(), plan(), ctx()) == (None, None, None)


@pytest.mark.parametrize("timer", ["budget seconds", "watchdog timeout"])
async def test_a_finished_run_with_a_timer_far_off_is_freed_without_a_collection(timer: str, no_collector: None) -> None:
    """A budget's seconds limit and the watchdog's task timeout are loop timers due in an hour:
    cancelled when the run (or its task) ends, asyncio keeps each until its time comes, and
    with it the context it was armed in (the run's context variable: the run itself)."""
    plan = _plan()
    budget = None
    if timer == "budget seconds":
        budget = Budget(seconds=3600)
    else:
        plan = Plan(tasks=[replace(t, predicted_duration_ms=3_600_000) for t in plan.tasks], edges=plan.edges, id="p")
    runner = Runner(agent=_ok, planner=StaticPlanner(plan), budget=budget)
    out = await runner.run([Goal("g1", "freed")])
    await runner.close()
    assert out.success, out.reason
    session, ctx = weakref.ref(out.session), weakref.ref(runner.context)
    del out, runner
    assert (session(), ctx()) == (None, None)


async def test_an_executor_driven_without_a_runner_frees_its_run(no_collector: None) -> None:
    session = Session(run_id="direct")
    out = await SequentialExecutor().run(plan=_plan(), session=session, adapter=_ok_adapter(), steerer=DefaultSteerer(),
                                         planner=StaticPlanner(_plan()), sinks=[InMemorySink()])  # fmt: skip
    assert out.success, out.reason
    ref = weakref.ref(session)
    del out, session
    assert ref() is None


async def test_the_ended_run_still_answers_whoever_holds_it() -> None:
    sink = InMemorySink()
    runner = Runner(agent=_ok, planner=StaticPlanner(_plan()), sinks=[sink])
    assert (await runner.run([Goal("g1", "freed")])).success
    ctx = runner.context
    assert isinstance(ctx, RunContext)
    # Its parts reach it through a weak reference now: still the same run while it is held.
    assert ctx.controls.ctx.session is ctx.session
    assert ctx.budget.ctx.ended and ctx.watchdog is not None and ctx.watchdog.ctx.ended
    # Nothing is written into the ended run, through its parts or directly.
    assert await ctx.messages._emit(events.run_completed, "again") is None
    assert await ctx.emit(events.run_completed, "again") is None
    assert events.kind_of(sink.events[-1]) == "run_completed" and len([e for e in sink.events if events.kind_of(e) == "run_completed"]) == 1
    await runner.close()


def _ok_adapter() -> Any:
    from goldfive.adapters.callable import CallableAdapter

    return CallableAdapter(_ok)


async def test_a_finished_run_is_freed_while_its_caller_keeps_the_channel_open() -> None:
    """The caller keeps the ControlChannel and never closes it (nor the Runner, which would
    close it): what answers late controls waits in the channel's queue, and the finished run
    must not wait there with it."""
    channel = ControlChannel()
    runner = Runner(agent=_ok, planner=StaticPlanner(_plan()), sinks=[InMemorySink()], control=channel)
    out = await runner.run([Goal("g1", "freed")])
    assert out.success, out.reason
    session, ctx = weakref.ref(out.session), weakref.ref(runner.context)
    del out, runner
    gc.collect()
    assert (session(), ctx()) == (None, None)
    # The channel still answers a late control (FAILURE: the run is over).
    ack = await channel.request(ControlMessage(ControlKind.STATUS_QUERY), timeout=5)
    assert (ack.result, ack.detail) == (AckResult.FAILURE, "run not active")
