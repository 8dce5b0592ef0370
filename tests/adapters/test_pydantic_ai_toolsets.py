"""goldfive's reporting tool beside the agent's own tools and toolsets: among the agent's function
tools for the task's run (``agent.override(tools=...)``), or a toolset of its own when the
agent's function toolset carries instructions; the user's agent as it was for every other run,
and what that costs. The agents are real PydanticAI agents on its FunctionModel/TestModel."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, RetryPromptPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.toolsets import FunctionToolset

from goldfive.adapters.pydantic_ai import PydanticAIAdapter
from goldfive.control import ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.types import Plan, Task, TaskEdge
from tests.adapters.pydantic_ai_kit import Script, calls, make_agent, text, tool_returns
from tests.runtime_kit import Harness, executor, static  # noqa: F401
from tests.test_core_calls import _per_unit

REPORTING = {"goldfive_report"}


def own(names: list[str]) -> set[str]:
    """The agent's tools among ``names`` (without the tool goldfive offers)."""
    return {n for n in names if n not in REPORTING}


def search(query: str) -> str:
    """Search the notes."""
    return f"found {query}"


async def test_an_agent_with_its_own_tools_and_an_extra_toolset_gets_all_of_them_with_the_reporting_tools(executor: Any) -> None:
    script = Script(
        {
            "a": [
                calls(("lookup", {"key": "k"}, "c1"), ("search", {"query": "q"}, "c2")),
                calls(("report_task_completed", {"result": "k and q"}, "c3")),
            ]
        }
    )
    agent, ran = make_agent(script, toolsets=[FunctionToolset([search])])
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results == {"a": "k and q", "b": "done b"}
    assert sorted(script.tool_names[0]) == ["goldfive_report", "lookup", "publish", "search"]
    assert ran == [{"tool": "lookup", "key": "k"}]
    returns = {r.tool_call_id: r.content for r in tool_returns(script.of("a")[1])}
    assert returns == {"c1": "value of k", "c2": "found q"}


async def test_a_users_override_of_the_agents_tools_holds_in_the_run_and_after_it() -> None:
    script = Script({"a": [calls(("search", {"query": "q"}, "c1")), text("searched")]})
    agent, _ = make_agent(script)
    with agent.override(tools=[search]):
        h = Harness(agent, SequentialExecutor(), static("a"))
        h.start()
        out = await h.finish()
        assert out.success, out.reason
        assert sorted(script.tool_names[0]) == ["goldfive_report", "search"]
        assert list(agent.toolsets[0].tools) == ["search"]
        await agent.run("plain run inside the user's override")
        assert script.tool_names[-1] == ["search"]
    assert sorted(agent.toolsets[0].tools) == ["lookup", "publish"]


async def test_a_plain_run_beside_a_running_task_sees_only_the_agents_own_tools() -> None:
    script = Script()
    gate = script.hold("a")
    agent, _ = make_agent(script)
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    assert await script.next_request() == "a"
    # The task's run is in the middle of its model request, its tools set for its own context.
    await agent.run("a plain run of the same agent, meanwhile")
    assert sorted(script.tool_names[-1]) == ["lookup", "publish"]
    gate.set()
    out = await h.finish()
    assert out.success, out.reason
    assert REPORTING <= set(script.tool_names[0])


async def test_a_users_override_of_the_agents_toolsets_still_leaves_goldfive_report_offered() -> None:
    # override(toolsets=...) replaces the toolsets a run passes; goldfive_report is among the
    # agent's function tools instead.
    script = Script({"a": [calls(("goldfive_report", {"kind": "progress", "detail": "half"}, "p1")), text("searched")]})
    agent, _ = make_agent(script)
    with agent.override(toolsets=[FunctionToolset([search])]):
        h = Harness(agent, SequentialExecutor(), static("a"))
        h.start()
        out = await h.finish()
    assert out.success, out.reason
    assert sorted(script.tool_names[0]) == ["goldfive_report", "lookup", "publish", "search"]
    assert [p.detail for p in h.of("task_progress")] == ["half"]


async def test_an_agents_tool_timeout_does_not_cut_short_a_wait_for_a_person() -> None:
    # The agent's tool_timeout applies to its function tools, goldfive_report among them for the
    # run, but not to a wait for a person.
    script = Script({"a": [calls(("goldfive_report", {"kind": "approval", "detail": "go on?"}, "w1")), text("went on")]})
    agent = Agent(FunctionModel(script), tool_timeout=0.01)
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    await h.wait_event("approval_requested")
    await asyncio.sleep(0.05)  # longer than the agent's tool timeout
    await h.control(ControlKind.APPROVE, target_id="a")
    out = await h.finish()
    assert out.success, out.reason
    [after] = script.of("a")[1:]
    assert not [p for m in after for p in getattr(m, "parts", []) if isinstance(p, RetryPromptPart)]
    [returned] = tool_returns(after)
    assert returned.outcome == "success" and returned.content["decision"] == "approve"


async def test_instructions_the_agents_function_toolset_carries_still_reach_the_model() -> None:
    # A function toolset rebuilt to hold goldfive_report (override(tools=...)) would lose them:
    # the tool goes as a toolset of its own then.
    script = Script({"a": [calls(("goldfive_report", {"kind": "progress", "detail": "half"}, "p1")), text("fini")]})
    agent, _ = make_agent(script)
    own_toolset = agent.toolsets[0]
    assert isinstance(own_toolset, FunctionToolset)
    own_toolset.instructions(lambda: "Always answer in French.")
    h = Harness(agent, SequentialExecutor(), static("a"))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    [request] = [m for m in script.of("a")[0] if isinstance(m, ModelRequest)][-1:]
    assert "Always answer in French." in (request.instructions or "")
    assert sorted(script.tool_names[0]) == ["goldfive_report", "lookup", "publish"]
    assert [p.detail for p in h.of("task_progress")] == ["half"]


# -- cost ----------------------------------------------------------------------------------

#: Python calls goldfive adds per task to a PydanticAI run without history (cProfile): about
#: 940 with goldfive_report among the agent's own tools (2,580 with seven reporting tools as a
#: second toolset, where PydanticAI's CombinedToolset goes through an anyio task group at every
#: step; docs/adapters/pydantic-ai.md).
CALLS_ADDED_PER_TASK = 1_050


def _agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(TestModel(call_tools=[], custom_output_text="done"))
    agent.tool_plain(search)
    return agent


async def test_goldfive_adds_at_most_its_budget_of_calls_per_task_to_a_pydantic_ai_run() -> None:
    agent = _agent()

    def alone(n: int) -> Callable[[], Awaitable[Any]]:
        async def work() -> None:
            for i in range(n):
                await agent.run(f"task {i}")

        return work

    def through_goldfive(n: int) -> Callable[[], Awaitable[Any]]:
        tasks = [Task(f"t{i}", f"task {i}") for i in range(n)]
        plan = Plan(tasks=tasks, edges=[TaskEdge(a.id, b.id) for a, b in zip(tasks, tasks[1:])], id="p")

        async def work() -> None:
            # memory=False: every task's run starts from an empty history, as alone's do.
            runner = Runner(agent=PydanticAIAdapter(agent, memory=False), planner=StaticPlanner(plan))
            assert (await runner.run("go")).success
            await runner.close()

        return work

    added = await _per_unit(through_goldfive, 5, 25) - await _per_unit(alone, 5, 25)
    assert added <= CALLS_ADDED_PER_TASK, f"{added:.0f} calls per task over PydanticAI alone"
