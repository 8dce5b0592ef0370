"""A budget pauses a run before its next model call and asks: BUDGET raises it, RESUME goes on
(and alone, over budget, is refused); between tasks for agents goldfive cannot act inside."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from goldfive import Budget
from goldfive.adapters.llm_agent import LLMAgentAdapter
from goldfive.control import AckResult, AppliedAs, ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.llm.base import ChatResult, ToolCall
from goldfive.notify import NoticeTracker
from goldfive.run import RuntimeConfig
from goldfive.types import Session, Task
from goldfive.usage import ModelUsage, report_usage
from goldfive.view import RunState
from goldfive.view.attention import attention
from tests.runtime_kit import Harness, static


class SpendingModel:
    """A ChatModel: each answer costs 1,000 tokens (reported as a real client does) and calls
    the ``step`` tool, until ``steps`` answers have; then it reports the task completed."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.calls = 0
        self.called = asyncio.Event()

    async def chat(self, messages: list[dict[str, Any]], *, tools: Any = None, model: str = "", **_: Any) -> ChatResult:
        self.calls += 1
        self.called.set()
        await asyncio.sleep(0)  # the call is in flight
        await report_usage(ModelUsage("gpt-4o-mini", 900, 100, source="test"))
        if self.calls <= self.steps:
            call = ToolCall(f"c{self.calls}", "step", json.dumps({"n": self.calls}))
        else:
            call = ToolCall(f"c{self.calls}", "report_task_completed", json.dumps({"result": "done"}))
        return ChatResult("", (call,), finish_reason="tool_calls")


def step(n: int) -> dict[str, Any]:
    """One step of the work."""
    return {"ok": True, "n": n}


def _harness(model: SpendingModel, budget: Budget, *, with_control: bool = True, ids: tuple[str, ...] = ("t1",)) -> Harness:
    agent = LLMAgentAdapter(model, model_name="gpt-4o-mini", tools=[step], max_steps=20)
    return Harness(agent, SequentialExecutor(), static(*ids), config=RuntimeConfig(budget=budget), with_control=with_control)


async def test_a_run_over_its_tokens_pauses_before_its_next_model_call_and_goes_on_once_raised() -> None:
    model = SpendingModel(steps=4)
    h = _harness(model, Budget(tokens=2_500))
    h.start()
    reached = await h.wait_event("budget_reached")
    assert reached.budget_reached.limit == "tokens"
    assert reached.budget_reached.detail == "tokens 3,000 of 2,500"  # the call in flight finished
    for _ in range(20):
        await asyncio.sleep(0)
    assert model.calls == 3  # no new model call started
    assert h.of("budget_warning")[0].detail == "tokens 2,000 of 2,500 (80%)"
    # The tool the third answer asked for did not run either.
    assert [s.tool_name for s in h.of("agent_step") if s.step == "tool_call"] == ["step", "step"]

    state = RunState.from_events(h.events)
    need = attention(state)
    assert need is not None and need.kind == "budget"
    assert need.reason == "budget reached, tokens 3,000 of 2,500"
    tracker = NoticeTracker()  # a notification goes out, once
    notices = [n for ev in h.events for n in tracker.feed(ev)]
    assert [(n.kind, n.body) for n in notices] == [("budget", "budget reached, tokens 3,000 of 2,500 (go)")]  # (the goal)

    refused = await h.control(ControlKind.RESUME)
    assert refused.result == AckResult.FAILURE
    assert "budget reached, tokens 3,000 of 2,500" in refused.detail and "BUDGET" in refused.detail
    status = await h.control(ControlKind.STATUS_QUERY)
    assert 'needs_you="budget reached, tokens 3,000 of 2,500"' in status.detail
    assert "state=PAUSING" in status.detail  # its task is held, not ended
    assert model.calls == 3

    raised = await h.control(ControlKind.BUDGET, tokens=100_000)
    assert raised.result == AckResult.SUCCESS and raised.applied_as == AppliedAs.BUDGET_SET
    assert "stays paused" in raised.detail
    assert model.calls == 3  # raising alone does not resume
    resumed = await h.control(ControlKind.RESUME)
    assert resumed.result == AckResult.SUCCESS, resumed.detail
    out = await h.finish()
    assert out.success, out.reason
    assert model.calls == 5
    changed = h.of("budget_changed")
    assert [c.detail for c in changed] == ["tokens 2,500", "tokens 100,000"]
    assert RunState.from_events(h.events).budget == {"tokens": 100_000.0}


async def test_budget_with_resume_goes_on_in_one_step_only_when_the_new_budget_allows_it() -> None:
    model = SpendingModel(steps=3)
    h = _harness(model, Budget(model_calls=2))
    h.start()
    await h.wait_event("budget_reached")
    assert model.calls == 2
    low = await h.control(ControlKind.BUDGET, model_calls=2, resume=True)
    assert low.applied_as == AppliedAs.BUDGET_SET and "still budget reached, model_calls 2 of 2" in low.detail
    both = await h.control(ControlKind.BUDGET, model_calls="none", resume=True)
    assert both.applied_as == AppliedAs.BUDGET_SET_RESUMED, both.detail
    out = await h.finish()
    assert out.success, out.reason
    assert model.calls == 4
    assert attention(RunState.from_events(h.events)) is None


async def test_a_tool_call_over_the_tool_calls_limit_does_not_start() -> None:
    model = SpendingModel(steps=5)
    h = _harness(model, Budget(tool_calls=2))
    h.start()
    reached = await h.wait_event("budget_reached")
    assert reached.budget_reached.detail == "tool_calls 2 of 2"
    for _ in range(20):
        await asyncio.sleep(0)
    ran = [json.loads(a.args_json)["n"] for a in h.of("agent_step") if a.step == "tool_call"]
    assert ran == [1, 2]
    assert model.calls == 2  # the second tool call used the limit up: the next model call waits
    await h.control(ControlKind.BUDGET, tool_calls=10, resume=True)
    assert (await h.finish()).success


class CallableSpender:
    """A plain async agent goldfive cannot act inside: it spends 1,000 tokens per task."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def __call__(self, task: Task, session: Session) -> str:
        self.ran.append(task.id)
        await report_usage(ModelUsage("gpt-4o", 900, 100, source="test"), session=session, task_id=task.id)
        return task.id


async def test_an_agent_goldfive_cannot_act_inside_is_held_between_tasks() -> None:
    agent = CallableSpender()
    h = Harness(agent, SequentialExecutor(), static("a", "b", "c"), config=RuntimeConfig(budget=Budget(tokens=2_000)))
    h.start()
    reached = await h.wait_event("budget_reached")
    assert reached.budget_reached.where == "usage"
    for _ in range(20):
        await asyncio.sleep(0)
    assert agent.ran == ["a", "b"]  # c does not start
    await h.control(ControlKind.BUDGET, tokens=10_000, resume=True)
    assert (await h.finish()).success
    assert agent.ran == ["a", "b", "c"]


async def test_without_a_control_channel_a_run_over_budget_stops_and_says_why() -> None:
    model = SpendingModel(steps=4)
    h = _harness(model, Budget(tokens=1_500), with_control=False)
    h.start()
    out = await h.finish()
    assert not out.success
    assert "budget reached, tokens 2,000 of 1,500" in out.reason and "no control channel" in out.reason
    assert model.calls == 2


async def test_the_runner_takes_a_budget_and_records_it_when_the_run_starts() -> None:
    from goldfive.runner import Runner
    from goldfive.sinks.memory import InMemorySink

    sink = InMemorySink()
    runner = Runner(agent=CallableSpender(), planner=static("a"), sinks=[sink], budget=Budget(usd=2, seconds=600))
    try:
        out = await runner.run("go")
    finally:
        await runner.close()
    assert out.success
    assert RunState.from_events(sink.events).budget == {"usd": 2.0, "seconds": 600.0}


class SlowToolModel:
    """A ChatModel: the first answer calls the ``slow`` tool, the second completes the task."""

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, messages: list[dict[str, Any]], *, tools: Any = None, model: str = "", **_: Any) -> ChatResult:
        self.calls += 1
        if self.calls == 1:
            return ChatResult("", (ToolCall("c1", "slow", "{}"),), finish_reason="tool_calls")
        return ChatResult("", (ToolCall("c2", "report_task_completed", json.dumps({"result": "done"})),), finish_reason="tool_calls")


async def test_a_seconds_limit_pauses_the_run_on_time_while_a_long_tool_call_is_in_flight() -> None:
    model = SlowToolModel()
    release = asyncio.Event()
    finished: list[bool] = []

    async def slow() -> str:
        """One long step."""
        await release.wait()  # in flight until the test lets it finish
        finished.append(True)
        return "done"

    agent = LLMAgentAdapter(model, model_name="gpt-4o-mini", tools=[slow], max_steps=5)
    h = Harness(agent, SequentialExecutor(), static("t1"), config=RuntimeConfig(budget=Budget(seconds=0.1)))
    h.start()
    reached = await h.wait_event("budget_reached")  # no gate was crossed: the clock fired
    assert (reached.budget_reached.limit, reached.budget_reached.where) == ("seconds", "clock")
    assert finished == [] and model.calls == 1  # the call in flight is not cut off
    release.set()
    for _ in range(50):
        await asyncio.sleep(0)
    assert finished == [True] and model.calls == 1  # it finished; nothing new started
    status = await h.control(ControlKind.STATUS_QUERY)
    assert 'needs_you="budget reached, seconds' in status.detail
    raised = await h.control(ControlKind.BUDGET, seconds="none", resume=True)
    assert raised.applied_as == AppliedAs.BUDGET_SET_RESUMED, raised.detail
    out = await h.finish()
    assert out.success, out.reason
    assert model.calls == 2


async def test_a_seconds_limit_raised_before_it_is_reached_is_timed_anew() -> None:
    model = SlowToolModel()
    release = asyncio.Event()

    async def slow() -> str:
        """One long step."""
        await release.wait()
        return "done"

    agent = LLMAgentAdapter(model, model_name="gpt-4o-mini", tools=[slow], max_steps=5)
    h = Harness(agent, SequentialExecutor(), static("t1"), config=RuntimeConfig(budget=Budget(seconds=0.2)))
    h.start()
    await h.wait_event("budget_changed")
    raised = await h.control(ControlKind.BUDGET, seconds=60)
    assert raised.result == AckResult.SUCCESS
    await asyncio.sleep(0.25)  # past the first limit: the timer was moved, nothing fires
    assert h.of("budget_reached") == []
    release.set()
    assert (await h.finish()).success
