"""The current run is a context variable (goldfive.run.current()), bound by the Runner for
everything the run starts, not a back-pointer on the Session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import goldfive
from goldfive.errors import GoldfiveError
from goldfive.planners.static import StaticPlanner
from goldfive.run import context_of, current, current_or_none
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.types import Plan, Session, Task
from tests.runtime_kit import executor  # noqa: F401


def _plan(*ids: str) -> Plan:
    return Plan([Task(i, i) for i in ids])


async def test_code_a_run_calls_finds_the_run_and_nothing_else_does(executor: Any) -> None:
    seen: list[Any] = []

    async def agent(task: Task, session: Session) -> str:
        await asyncio.sleep(0)
        seen.append((current(), current().session is session, context_of(session)))
        return "ok"

    runner = Runner(agent=agent, planner=StaticPlanner(_plan("a", "b")), executor=executor)
    assert current_or_none() is None
    assert (await runner.run("go")).success
    assert [(ctx is runner.context, same, via) for ctx, same, via in seen] == [(True, True, runner.context)] * 2
    assert current_or_none() is None  # the caller's context is as it was
    with pytest.raises(GoldfiveError, match="no goldfive run"):
        current()
    with pytest.raises(GoldfiveError):
        context_of(runner.session)  # type: ignore[arg-type]
    await runner.close()


async def test_two_runs_at_once_each_see_their_own() -> None:
    async def agent(task: Task, session: Session) -> str:
        await asyncio.sleep(0.01)  # interleaved with the other run
        assert current().session is session
        return current().session.run_id

    runners = [Runner(agent=agent, planner=StaticPlanner(_plan("a", "b")), run_id=f"r{i}") for i in range(2)]
    outs = await asyncio.gather(*(r.run("go") for r in runners))
    assert [o.session.completed_results for o in outs] == [{"a": "r0", "b": "r0"}, {"a": "r1", "b": "r1"}]
    for r in runners:
        await r.close()


async def test_an_executor_driven_without_a_runner_binds_its_run(executor: Any) -> None:
    sink, session = InMemorySink(), Session(run_id="direct")
    inside: list[bool] = []

    async def agent(task: Task, session: Session) -> str:
        inside.append(current().session is session)
        return "ok"

    out = await executor.run(
        plan=_plan("a"), session=session, adapter=goldfive.CallableAdapter(agent), steerer=goldfive.DefaultSteerer(),
        planner=StaticPlanner(_plan("a")), sinks=[sink],
    )  # fmt: skip
    assert out.success and inside == [True] and current_or_none() is None


async def test_session_context_still_answers_with_a_deprecation_warning() -> None:
    got: list[Any] = []

    async def agent(task: Task, session: Session) -> str:
        with pytest.warns(DeprecationWarning, match=r"goldfive\.run\.current\(\)"):
            got.append(session.context)
        return "ok"

    runner = Runner(agent=agent, planner=StaticPlanner(_plan("a")))
    await runner.run("go")
    assert got == [runner.context] and runner.context is not None
    with pytest.warns(DeprecationWarning):
        assert runner.session is not None and runner.session.context is None  # the run is over
    await runner.close()
