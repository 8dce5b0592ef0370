"""Runner lifecycle (docs/protocol.md#the-runs-lifecycle) and the goldfive v1 shapes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import goldfive
from goldfive import events
from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.results import ExecutionOutcome, InvocationResult
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.steerer import DefaultSteerer
from goldfive.types import Goal, Plan, Task, TaskEdge, TaskStatus
from tests.runtime_kit import Harness, ReplanningPlanner, ScriptedAgent, executor, kinds, linear_plan, static  # noqa: F401


class KeywordOnlyPlanner:
    """A user's planner with exactly the protocol's keyword-only signatures."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def generate(self, *, goals, available_agents, context=None):  # type: ignore[no-untyped-def]
        self.calls.append(("generate", {"goals": goals, "available_agents": available_agents, "context": context}))
        return self.plan

    async def refine(self, *, plan, drift, goals):  # type: ignore[no-untyped-def]
        self.calls.append(("refine", {"plan": plan, "drift": drift, "goals": goals}))
        return Plan(tasks=[Task("n1", f"new: {drift.detail}")], id="p2")


class ClosingSink(InMemorySink):
    def __init__(self) -> None:
        super().__init__()
        self.close_calls = 0
        self.kinds_at_close: list[str] = []

    async def close(self) -> None:
        self.close_calls += 1
        self.kinds_at_close = kinds(self.events)
        await super().close()


async def test_a_run_emits_started_goal_plan_tasks_then_completed_last(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a", "b", "c"))
    h.start("build it")
    out = await h.finish()
    assert out.success and out.reason == "3/3 tasks completed"
    assert h.kinds() == [
        "run_started",
        "goal_derived",
        "plan_submitted",
        "task_started",
        "task_completed",
        "task_started",
        "task_completed",
        "task_started",
        "task_completed",
        "run_completed",
    ]
    assert [p.task_id for p in h.of("task_completed")] == ["a", "b", "c"]
    assert [e.sequence for e in h.events] == list(range(len(h.events)))
    assert h.of("run_started")[0].user_input == "build it"
    assert out.session.completed_results == {"a": "done a", "b": "done b", "c": "done c"}


class _NonePlanner(ReplanningPlanner):
    async def generate(self, **kw: Any) -> Plan | None:
        return None


class _RaisingPlanner(ReplanningPlanner):
    async def generate(self, **kw: Any) -> Plan | None:
        raise RuntimeError("model down")


class _CyclePlanner(ReplanningPlanner):
    async def generate(self, **kw: Any) -> Plan | None:
        return Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[TaskEdge("a", "b"), TaskEdge("b", "a")])


@pytest.mark.parametrize(
    ("planner_cls", "reason_part"),
    [
        (_NonePlanner, "planner returned no plan"),
        (_RaisingPlanner, "planner failed: model down"),
        (_CyclePlanner, "planner returned an invalid plan: cycle"),
    ],
)
async def test_a_setup_failure_in_the_planner_aborts_with_its_reason(planner_cls: type, reason_part: str) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, goldfive.SequentialExecutor(), planner_cls(linear_plan("a")))
    h.start()
    out = await h.finish()
    assert not out.success and reason_part in out.reason
    assert h.kinds() == ["run_started", "goal_derived", "run_aborted"]
    assert reason_part in h.of("run_aborted")[0].reason
    assert agent.runs == []


async def test_a_raising_goal_deriver_aborts_before_goal_derived() -> None:
    class Boom:
        async def derive(self, user_input: str, *, context: dict[str, Any] | None = None) -> list[Goal]:
            raise ValueError("cannot read that")

    h = Harness(ScriptedAgent(), goldfive.SequentialExecutor(), static("a"), extra={"goal_deriver": Boom()})
    h.start()
    out = await h.finish()
    assert not out.success
    assert h.kinds() == ["run_started", "run_aborted"]
    assert h.of("run_aborted")[0].reason == "goal derivation failed: ValueError: cannot read that"


async def test_an_exception_escaping_the_executor_reaches_the_sinks_as_run_aborted_then_propagates() -> None:
    class BrokenExecutor:
        async def run(self, **kw: Any) -> ExecutionOutcome:
            raise RuntimeError("executor bug")

    sink = ClosingSink()
    runner = Runner(agent=ScriptedAgent(), planner=static("a"), executor=BrokenExecutor(), sinks=[sink])
    with pytest.raises(RuntimeError, match="executor bug"):
        await runner.run("x")
    assert kinds(sink.events)[-1] == "run_aborted"
    assert sink.events[-1].run_aborted.reason == "RuntimeError: executor bug"
    assert sink.close_calls == 1 and sink.kinds_at_close[-1] == "run_aborted"
    await runner.close()
    assert sink.close_calls == 1


async def test_cancelling_the_run_reaches_the_sinks_as_run_aborted_then_propagates(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a", "b"))
    task = h.start()
    await agent.started()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert h.kinds()[-1] == "run_aborted" and h.of("run_aborted")[0].reason == "run cancelled"
    assert agent.cancelled == ["a"]
    assert h.sink.closed
    await h.shutdown()


async def test_omitted_goal_deriver_steerer_and_sinks_get_the_spec_defaults() -> None:
    async def agent(task: Task, session: goldfive.Session) -> str:
        return "ok"

    runner = Runner(agent=agent, planner=static("a"), executor=goldfive.SequentialExecutor())
    assert isinstance(runner.steerer, DefaultSteerer)
    assert runner.sinks == []
    out = await runner.run("ignored input")
    assert out.success
    assert out.session.goals == [Goal("g1", "run")]
    assert out.session.completed_results == {"a": "ok"}
    await runner.close()


async def test_a_runner_with_only_an_agent_runs_one_task_per_goal() -> None:
    seen: list[str] = []

    async def agent(task: Task, session: goldfive.Session) -> str:
        seen.append(task.title)
        return "ok"

    runner = Runner(agent)
    out = await runner.run([Goal("g1", "first"), Goal("g2", "second")])
    assert out.success and seen == ["first", "second"]
    await runner.close()


async def test_tools_are_the_third_agent_argument_and_invocation_result_is_honoured(executor: Any) -> None:
    got: dict[str, Any] = {}

    async def agent(task: Task, session: goldfive.Session, tools: dict[str, Any]) -> InvocationResult:
        got[task.id] = sorted(tools)
        await tools["report_task_progress"](detail=f"half of {task.id}", fraction=0.5)
        if task.id == "b":
            return InvocationResult(task_id=task.id, text="", error="disk full")
        return InvocationResult(task_id=task.id, text=f"result {task.id}", stop_reason="end_turn")

    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    out = await h.finish()
    assert got["a"] == sorted(goldfive.run.tools.REPORTING_TOOL_NAMES)
    assert not out.success and out.reason.startswith("task(s) failed: b")
    assert out.session.completed_results == {"a": "result a"}
    assert h.of("task_failed")[0].reason == "disk full"
    assert [p.task_id for p in h.of("task_cancelled")] == ["c"]
    assert h.of("task_progress")[0].fraction == 0.5
    assert h.kinds()[-1] == "run_aborted"


async def test_an_agent_exception_fails_its_task_and_cancels_downstream(executor: Any) -> None:
    async def agent(task: Task, session: goldfive.Session) -> str:
        if task.id == "a":
            raise KeyError("nope")
        return "ok"

    h = Harness(agent, executor, static("a", "b"))
    h.start()
    out = await h.finish()
    assert not out.success
    k = h.kinds()
    assert k[3:] == ["task_started", "task_failed", "drift_detected", "task_cancelled", "run_aborted"]
    assert "agent raised KeyError" in h.of("task_failed")[0].reason


async def test_the_planner_is_called_with_exactly_the_protocol_keywords(executor: Any) -> None:
    planner = KeywordOnlyPlanner(linear_plan("a", "b"))
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, planner)
    h.start("hello")
    await agent.started()
    ack = await h.control(ControlKind.STEER, note="shorter")
    agent.release("a")
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS and out.success
    (gen_name, gen), (ref_name, ref) = planner.calls
    assert gen_name == "generate" and set(gen) == {"goals", "available_agents", "context"}
    assert gen["available_agents"] == ["agent"] and gen["context"]["user_input"] == "hello"
    assert ref_name == "refine" and set(ref) == {"plan", "drift", "goals"}
    assert ref["drift"].detail == "shorter" and ref["goals"] == [Goal("g1", "run")]
    assert out.session.plan is not None and [t.id for t in out.session.plan.tasks] == ["n1"]


async def test_close_closes_every_sink_once_and_the_run_already_closed_them() -> None:
    sinks = [ClosingSink(), ClosingSink()]
    runner = Runner(agent=ScriptedAgent(), planner=static("a"), sinks=sinks)
    await runner.run("x")
    assert [s.close_calls for s in sinks] == [1, 1]
    assert all(s.kinds_at_close[-1] == "run_completed" for s in sinks)
    await runner.close()
    await runner.close()
    assert [s.close_calls for s in sinks] == [1, 1]


async def test_close_stops_answering_late_controls() -> None:
    h = Harness(ScriptedAgent(), goldfive.SequentialExecutor(), static("a"))
    h.start()
    await h.outcome()
    late = await h.control(ControlKind.PAUSE)
    assert late.result == AckResult.FAILURE and late.detail == "run not active"
    await h.runner.close()
    assert h.runner._responder is None
    assert h.kinds()[-1] == "run_completed"
    h.channel.close()  # type: ignore[union-attr]


async def test_wrap_turns_each_input_line_into_a_goal_and_a_task() -> None:
    titles: list[str] = []

    async def agent(task: Task, session: goldfive.Session) -> str:
        titles.append(task.title)
        return task.title.upper()

    sink = InMemorySink()
    runner = goldfive.wrap(agent, sinks=[sink])
    out = await runner.run("fetch data\nwrite report\n")
    assert out.success and titles == ["fetch data", "write report"]
    assert [g.summary for g in out.session.goals] == ["fetch data", "write report"]
    assert kinds(sink.events)[-1] == "run_completed"
    await runner.close()


async def test_quickstart_runs_one_static_task_per_goal_into_its_memory_sink() -> None:
    async def agent(task: Task, session: goldfive.Session) -> str:
        return f"did {task.title}"

    runner = goldfive.quickstart(agent, ["alpha", "beta"])
    out = await runner.run(runner.goals)  # type: ignore[attr-defined]
    sink = runner.sinks[0]
    assert isinstance(sink, InMemorySink)
    assert out.success and out.session.completed_results == {"t1": "did alpha", "t2": "did beta"}
    assert kinds(sink.events)[:3] == ["run_started", "goal_derived", "plan_submitted"]
    assert kinds(sink.events)[-1] == "run_completed" and sink.closed
    await runner.close()


async def test_an_unmet_goal_predicate_fails_the_run() -> None:
    goal = Goal("g1", "all done", success_predicate=lambda s: "zzz" in s.completed_results)
    runner = Runner(agent=ScriptedAgent(), planner=static("a"))
    out = await runner.run([goal])
    assert not out.success and out.reason == "goal g1 predicate not met"
    assert out.session.plan is not None and out.session.plan.task("a").status == TaskStatus.COMPLETED
    await runner.close()


async def test_no_control_channel_runs_end_to_end(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a", "b"), with_control=False)
    h.start()
    out = await h.finish()
    assert out.success and "control_received" not in h.kinds()


def test_control_message_constructor_keeps_the_v1_shape() -> None:
    msg = ControlMessage(kind="steer", payload={"note": "x"})
    assert msg.kind is ControlKind.STEER and msg.id and msg.payload == {"note": "x"}


async def test_a_control_queued_before_a_failed_setup_is_acked_run_not_active() -> None:
    h = Harness(ScriptedAgent(), goldfive.SequentialExecutor(), _NonePlanner(linear_plan("a")))
    msg = await h.send(ControlKind.STATUS_QUERY)
    h.start()
    out = await h.finish()
    assert not out.success
    assert [(a.result, a.detail) for a in h.acks[msg.id]] == [(AckResult.FAILURE, "run not active")]
    assert "control_received" not in h.kinds()


async def test_max_task_invocations_aborts_with_tasks_still_pending(executor: Any) -> None:
    executor.max_task_invocations = 1
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    out = await h.finish()
    assert not out.success and out.reason == "hit max_task_invocations=1 with tasks still PENDING"
    assert agent.runs == ["a"] and h.kinds()[-1] == "run_aborted"


def test_max_plan_reinvocations_is_an_alias() -> None:
    assert goldfive.SequentialExecutor(max_plan_reinvocations=3).max_task_invocations == 3


async def test_a_failing_sink_is_counted_and_never_starves_the_others(executor: Any) -> None:
    class Broken:
        async def emit(self, event: Any) -> None:
            raise OSError("disk gone")

        async def close(self) -> None:
            pass

    good = InMemorySink()
    runner = Runner(agent=ScriptedAgent(), planner=static("a"), executor=executor, sinks=[Broken(), good])
    out = await runner.run("x")
    assert out.success and kinds(good.events)[-1] == "run_completed"
    assert runner.context is not None
    fanout = runner.context.fanout
    assert fanout.failures == {"Broken": len(good.events)}
    await runner.close()
