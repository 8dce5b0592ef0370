"""The watchdog in real runs: scripted agents that loop, ping-pong, stall, repeat themselves or
run long are caught with their evidence, and the ladder acts (a warning, a nudge, a pause); a
long run that makes progress is left alone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from goldfive.run.current_run import current
from goldfive import events
from goldfive.adapters.callable import CallableAdapter
from goldfive.adapters.common import record_model_turn
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1 import events_pb2, types_pb2
from goldfive.planners.static import StaticPlanner
from goldfive.run.config import RuntimeConfig
from goldfive.run.user_tools import UserTool
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.types import Plan, Session, Task
from goldfive.usage import ModelUsage, report_usage
from goldfive.view import RunState
from goldfive.view.attention import attention
from goldfive.watchdog import WatchdogConfig

DRIFT = types_pb2.DriftKind
SEV = types_pb2.DriftSeverity


def deploy(service: str, version: str) -> dict[str, Any]:
    """Deploy a service (it never works, in these tests)."""
    return {"ok": False, "error": "deploy failed: registry timeout"}


def status(service: str) -> dict[str, Any]:
    """Check a service."""
    return {"state": "degraded"}


def restart(service: str) -> dict[str, Any]:
    """Restart a service."""
    return {"restarted": service}


class Rig:
    def __init__(self, agent: Any, plan: Plan, *, config: RuntimeConfig | None = None, clock: Callable[[], int] | None = None) -> None:
        self.sink = InMemorySink()
        self.channel = ControlChannel()
        adapter = CallableAdapter(agent, tools=[UserTool(deploy), UserTool(status), UserTool(restart)])
        self.runner = Runner(agent=adapter, planner=StaticPlanner(plan), sinks=[self.sink], control=self.channel,
                             config=config or RuntimeConfig(), clock=clock)  # fmt: skip
        self.task: asyncio.Future[Any] | None = None

    def start(self) -> None:
        self.task = asyncio.ensure_future(self.runner.run("keep the service up"))

    async def until(self, check: Callable[[events_pb2.Event], bool], timeout: float = 20) -> events_pb2.Event:
        async def look() -> events_pb2.Event:
            async with self.sink.subscribe() as sub:
                async for ev in sub:
                    if isinstance(ev, events_pb2.Event) and check(ev):
                        return ev
            raise AssertionError("the run ended first")

        return await asyncio.wait_for(look(), timeout)

    async def run_through(self) -> None:
        """Start the run and wait for it to end by itself."""
        self.start()
        assert self.task is not None
        await asyncio.wait_for(self.task, 20)
        await self.runner.close()

    async def finish(self) -> None:
        assert self.task is not None
        await self.channel.send(ControlMessage(ControlKind.CANCEL, payload={"reason": "test over"}))
        await asyncio.wait_for(self.task, 20)
        await self.runner.close()

    def drifts(self, kind: int) -> list[Any]:
        return [e.drift_detected for e in self.sink.events if events.kind_of(e) == "drift_detected" and e.drift_detected.kind == kind]

    def kinds(self) -> list[str]:
        return [events.kind_of(e) for e in self.sink.events]


def is_escalation(ev: events_pb2.Event) -> bool:
    return events.kind_of(ev) == "control_acked" and ev.control_acked.kind == "GOLDFIVE_PAUSE_ESCALATE"


async def test_a_looping_agent_is_warned_then_nudged_then_paused_with_its_calls_as_evidence() -> None:
    nudges: list[str] = []

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        from goldfive import read_injected

        while True:  # the same failing call, over and over
            await tools["deploy"](service="api", version="1.2")
            nudges.extend(await read_injected(session, task.id))
            await asyncio.sleep(0)

    rig = Rig(agent, Plan([Task("ship", "Ship the release")]))
    rig.start()
    await rig.until(is_escalation)
    state = RunState.from_events(rig.sink.events)
    need = attention(state)
    assert need is not None and need.kind == "escalation"
    await rig.finish()

    loops = rig.drifts(DRIFT.DRIFT_KIND_LOOPING_TOOL_CALL)
    assert [(d.severity, d.detail) for d in loops[:3]] == [
        (SEV.DRIFT_SEVERITY_INFO, "looks stuck: deploy called 5 times with the same arguments"),
        (SEV.DRIFT_SEVERITY_WARNING, "looks stuck: deploy called 10 times with the same arguments"),
        (SEV.DRIFT_SEVERITY_CRITICAL, "looks stuck: deploy called 15 times with the same arguments"),
    ]
    first = loops[0]
    assert first.current_task_id == "ship" and len(first.evidence) == 5
    assert {(e.tool_name, e.args_json) for e in first.evidence} == {("deploy", '{"service": "api", "version": "1.2"}')}
    times = [e.at.ToMilliseconds() for e in first.evidence]
    assert times == sorted(times) and all(e.call_id == "" or e.call_id for e in first.evidence)
    # the nudge reached the agent inside its turn, naming what it keeps doing
    assert any("deploy called 10 times" in n and "[goldfive steering]" in n for n in nudges)
    human = rig.drifts(DRIFT.DRIFT_KIND_HUMAN_INTERVENTION_REQUIRED)
    assert human and "deploy called 15 times" in human[0].detail


async def test_a_ping_pong_is_caught() -> None:
    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for _ in range(3):
            await tools["status"](service="db")
            await tools["restart"](service="db")
        return "gave up"

    rig = Rig(agent, Plan([Task("fix", "Fix the database")]))
    await rig.run_through()
    [pong] = rig.drifts(DRIFT.DRIFT_KIND_LOOPING_TOOL_CALL)
    assert "status and restart called by turns 3 times each (A-B-A-B)" in pong.detail
    assert [e.tool_name for e in pong.evidence] == ["status", "restart"] * 3


class Clock:
    def __init__(self) -> None:
        self.ms = 1_700_000_000_000

    def __call__(self) -> int:
        return self.ms


async def test_model_calls_with_no_tool_call_for_the_stall_time_are_caught_as_a_stall() -> None:
    clock = Clock()

    async def agent(task: Task, session: Session) -> str:
        for _ in range(4):  # a model that keeps answering, a minute apart, and never acts
            clock.ms += 60_000
            await report_usage(ModelUsage("gpt-4o-mini", 3000, 200, source="test"), session=session)
        return "nothing"

    config = RuntimeConfig(watchdog=WatchdogConfig(stall_s=150, stall_model_calls=3))
    rig = Rig(agent, Plan([Task("think", "Think")]), config=config, clock=clock)
    await rig.run_through()
    [stall] = rig.drifts(DRIFT.DRIFT_KIND_UNCERTAIN_PROGRESS)
    assert stall.detail.startswith("looks stalled: 3 model calls in 180s since its start")
    assert [e.what for e in stall.evidence] == ["model_call"] * 3


async def test_the_same_model_answer_repeated_is_caught() -> None:
    async def agent(task: Task, session: Session) -> str:
        ctx = current()
        for _ in range(3):
            await record_model_turn(ctx, task_id=task.id, framework="test", text="Let me check the logs first.")
        return "ok"

    rig = Rig(agent, Plan([Task("debug", "Debug")]))
    await rig.run_through()
    [same] = rig.drifts(DRIFT.DRIFT_KIND_LOOPING_REASONING)
    assert 'the model gave the same answer 3 times: "Let me check the logs first."' in same.detail


async def test_a_task_far_past_its_predicted_duration_is_reported_timed_out() -> None:
    release = asyncio.Event()

    async def agent(task: Task, session: Session) -> str:
        await release.wait()
        return "late"

    config = RuntimeConfig(watchdog=WatchdogConfig(timeout_factor=2))
    rig = Rig(agent, Plan([Task("slow", "Slow", predicted_duration_ms=100)]), config=config)
    rig.start()
    ev = await rig.until(lambda e: events.kind_of(e) == "drift_detected" and e.drift_detected.kind == DRIFT.DRIFT_KIND_TASK_TIMEOUT)
    release.set()
    assert rig.task is not None
    await asyncio.wait_for(rig.task, 20)
    await rig.runner.close()
    d = ev.drift_detected
    assert d.current_task_id == "slow" and "its predicted 0.1s" in d.detail
    assert [e.what for e in d.evidence][0] == "task_started"


async def test_a_long_run_that_makes_progress_never_trips_the_watchdog() -> None:
    clock = Clock()

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        ctx = current()
        for step in range(60):  # 60 steps, 40 s apart: about 40 minutes of steady work
            clock.ms += 40_000
            await report_usage(ModelUsage("gpt-4o-mini", 2000 + step, 150, source="test"), session=session)
            await record_model_turn(ctx, task_id=task.id, framework="test", text=f"step {step}: deploying shard {step}")
            await tools["deploy"](service=f"shard-{step}", version="1.2")
            if step % 5 == 0:
                await tools["status"](service="fleet")  # the same check, now and then, between real work
                await tools["report_task_progress"](detail=f"{step + 1}/60 shards deployed", fraction=(step + 1) / 60)
        return "all shards deployed"

    config = RuntimeConfig(watchdog=WatchdogConfig(stall_s=120))
    plan = Plan([Task("roll", "Roll out", predicted_duration_ms=3_600_000)])
    rig = Rig(agent, plan, config=config, clock=clock)
    rig.start()
    assert rig.task is not None
    out = await asyncio.wait_for(rig.task, 30)
    await rig.runner.close()
    assert out.success
    assert [e for e in rig.sink.events if events.kind_of(e) == "drift_detected"] == []
    assert rig.kinds().count("usage_recorded") == 60 and rig.kinds().count("agent_step") == 60 + 60 + 12


async def test_the_watchdog_can_be_turned_off() -> None:
    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for _ in range(20):
            await tools["deploy"](service="api", version="1")
        return "done"

    rig = Rig(agent, Plan([Task("t", "T")]), config=RuntimeConfig(watchdog=WatchdogConfig(enabled=False)))
    rig.start()
    assert rig.task is not None
    assert (await asyncio.wait_for(rig.task, 20)).success
    await rig.runner.close()
    assert "drift_detected" not in rig.kinds()


async def test_a_tool_calls_result_is_kept_only_as_far_as_its_evidence_shows_it() -> None:
    """A task's tool calls are kept for its life (the repeat detector counts them all): each
    keeps the first 200 characters of its result, which is what its evidence shows, not the
    whole output."""
    page = "".join(f"line {i} of a long page\n" for i in range(2000))  # ~45 KB per call
    held: list[int] = []

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        ctx = current()
        for i in range(20):  # different arguments: no loop
            await ctx.emit(events.agent_step, task_id=task.id, step="tool_call", framework="t", tool_name="read",
                           args={"page": i}, text=page)  # fmt: skip
        for _ in range(5):  # the same call five times: a finding, with its evidence
            await ctx.emit(events.agent_step, task_id=task.id, step="tool_call", framework="t", tool_name="read",
                           args={"page": 0}, text=page)  # fmt: skip
        assert ctx.watchdog is not None
        watch = ctx.watchdog._tasks[task.id]  # what the watchdog holds for this task
        held.extend(len(step.text) for steps in watch._same.values() for step in steps)
        return "ok"

    rig = Rig(agent, Plan([Task("read", "Read the pages")]))
    await rig.run_through()
    assert len(held) == 25 and max(held) == 200, held
    [loop] = rig.drifts(DRIFT.DRIFT_KIND_LOOPING_TOOL_CALL)
    assert [e.text for e in loop.evidence] == [page[:200]] * 5
