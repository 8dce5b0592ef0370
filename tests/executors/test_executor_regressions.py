"""Regressions found reviewing the runtime against the control contract
(docs/protocol.md#the-control-contract).

Each test pins one bug that was fixed: cancellation that must propagate, a late control that
must still get its one ack, an injected message that must reach the turn still running.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from goldfive import conv, events
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.executors._control import ControlOutcome, dispatch_control
from goldfive.executors.parallel import ParallelDAGExecutor
from goldfive.ladder import InterventionLevel
from goldfive.executors.sequential import SequentialExecutor
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.run import read_injected
from goldfive.steerer import DefaultSteerer
from goldfive.types import DriftEvent, DriftKind, Plan, Session, Task, TaskStatus
from tests.runtime_kit import Harness, ReplanningPlanner, ScriptedAgent, executor, linear_plan, static  # noqa: F401


class _OnTerminal:
    """A sink that runs ``action`` when the terminal event reaches it (then yields ``yields`` times)."""

    def __init__(self, action: Any = None, yields: int = 0) -> None:
        self.action = action
        self.yields = yields
        self.kinds: list[str] = []

    async def emit(self, ev: Event) -> None:
        self.kinds.append(events.kind_of(ev))
        if events.kind_of(ev) in ("run_completed", "run_aborted") and self.action is not None:
            self.action()
            for _ in range(self.yields):
                await asyncio.sleep(0)

    async def close(self) -> None:
        return None


async def _done(task: Task, session: Session) -> str:
    return f"done {task.id}"


async def test_cancelling_runner_close_while_it_stops_the_late_control_responder_propagates() -> None:
    runner = Runner(agent=_done, planner=static("a"), sinks=[], control=ControlChannel())
    assert (await runner.run("go")).success
    close_task = asyncio.get_running_loop().create_task(runner.close())
    await asyncio.sleep(0)  # close() has cancelled the responder and waits for it to stop
    close_task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await close_task
    assert close_task.cancelled()


async def test_a_control_sent_as_a_directly_driven_executor_ends_is_acked_not_lost() -> None:
    # Without a Runner there is no late-control responder: the executor itself must answer a
    # message sent while the run was ending.
    channel = ControlChannel()
    late = ControlMessage(ControlKind.STATUS_QUERY)
    sink = _OnTerminal(action=lambda: channel.send_nowait(late), yields=2)
    plan = linear_plan("a")
    session = Session(run_id="r1")
    from goldfive.adapters.callable import CallableAdapter

    out = await SequentialExecutor().run(
        plan=plan,
        session=session,
        adapter=CallableAdapter(_done),
        steerer=DefaultSteerer(),
        planner=static("a"),
        sinks=[sink],
        control=channel,
    )
    assert out.success and sink.kinds[-1] == "run_completed"
    channel.close()
    async def collect() -> list[ControlAck]:
        return [a async for a in channel.acks()]

    done, _ = await asyncio.wait({asyncio.ensure_future(collect())}, timeout=2)
    assert done, "the acks stream never ended: a received control was never acked"
    acks = done.pop().result()
    assert [(a.control_id, a.result) for a in acks] == [(late.id, AckResult.FAILURE)]
    assert acks[0].detail.startswith("run not active")


async def test_parallel_inject_after_a_batch_mate_finished_reaches_the_turn_still_running() -> None:
    # a and b run in one batch; a ends first. Its turn is over, so a message injected now
    # belongs to b's running turn (as in SequentialExecutor), not to a's finished one.
    agent = ScriptedAgent(hold=["b"])
    read: list[str] = []

    async def reader(task: Task, session: Session, tools: dict[str, Any]) -> str:
        read.extend(await read_injected(session, task.id))
        return "ok"

    agent.on("b", reader)
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[], id="p1")
    h = Harness(agent, ParallelDAGExecutor(max_concurrency=4), StaticPlanner(plan))
    h.start()
    await h.wait_event("task_completed", lambda p: p.task_id == "a")
    ack = await h.control(ControlKind.INJECT_MESSAGE, text="use metric units")
    agent.release("b")
    out = await h.finish()
    assert out.success
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, "parked on the running turn b")
    assert read == ["[user_steering]use metric units[/user_steering]"]
    assert h.of("message_parked")[0].lane == "b" and h.of("message_delivered")[0].via == "boundary"
    assert "message_returned" not in h.kinds()


async def test_a_batch_mate_that_finished_while_a_steer_was_handled_keeps_its_result() -> None:
    # a ends on its own while the STEER that cancels the batch is being recorded (a sink that
    # awaits): a was no longer in flight, so its result stands and the replan keeps it.
    agent = ScriptedAgent(hold=["a", "b"])
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[], id="p1")
    h = Harness(agent, ParallelDAGExecutor(max_concurrency=4), ReplanningPlanner(plan))

    def release_a() -> None:
        agent.release("a")

    class _ReleaseOnControl(_OnTerminal):
        async def emit(self, ev: Event) -> None:
            if events.kind_of(ev) == "control_received":
                release_a()
                await agent.finished_event("a")
                for _ in range(3):
                    await asyncio.sleep(0)

    h.runner.sinks.append(_ReleaseOnControl())
    h.start()
    await agent.started()
    await agent.started()
    ack = await h.control(ControlKind.STEER, note="shorter")
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS and out.success
    assert agent.finished == ["a", "r1_1"]
    assert [c.task_id for c in h.of("task_cancelled")] == ["b"]
    assert [c.task_id for c in h.of("task_completed")] == ["a", "r1_1"]
    assert h.statuses() == {"a": TaskStatus.COMPLETED, "r1_1": TaskStatus.COMPLETED}


class _EscalatingSteerer(DefaultSteerer):
    """Retuned ladder (the documented override point): a recoverable failure goes to ``level``."""

    level: InterventionLevel = InterventionLevel.PAUSE_ESCALATE

    def ladder_level_for(self, drift: DriftEvent, occurrences: int) -> InterventionLevel:
        if drift.kind == DriftKind.TASK_FAILED_RECOVERABLE:
            return self.level
        return super().ladder_level_for(drift, occurrences)


@pytest.mark.parametrize("level", [InterventionLevel.PAUSE_ESCALATE, InterventionLevel.CANCEL_REINVOKE])
async def test_a_ladder_intervention_after_the_ui_closed_the_channel_does_not_crash_the_run(
    executor: Any, level: InterventionLevel
) -> None:
    agent = ScriptedAgent()
    steerer = _EscalatingSteerer()
    steerer.level = level
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a")), extra={"steerer": steerer})

    async def fail_after_detach(task: Task, session: Session, tools: dict[str, Any]) -> str:
        assert h.channel is not None
        h.channel.close()  # the UI went away mid-task
        await tools["report_task_failed"](reason="flaky upstream", recoverable=True)
        return "gave up"

    agent.on("a", fail_after_detach)
    h.start()
    out = await h.finish()
    assert h.kinds()[-1] == ("run_aborted" if level == InterventionLevel.PAUSE_ESCALATE else "run_completed")
    kinds_seen = [conv.drift_kind_from_pb(d.kind) for d in h.of("drift_detected")]
    if level == InterventionLevel.PAUSE_ESCALATE:
        assert not out.success and DriftKind.HUMAN_INTERVENTION_REQUIRED in kinds_seen
    else:  # the refine happened, and the restart went to the run loop, not the closed channel
        assert out.success and len(h.of("plan_revised")) == 1


class _NotAPlanPlanner(ReplanningPlanner):
    async def generate(self, **kw: Any) -> Any:  # type: ignore[override]
        return {"tasks": [{"id": "a"}]}  # a planner bug: JSON instead of a Plan


async def test_a_planner_returning_something_other_than_a_plan_aborts_the_run_with_a_reason() -> None:
    # As with refine (where it becomes a drift), a planner's bad answer ends the run with a
    # reason on the stream instead of raising AttributeError out of run().
    h = Harness(ScriptedAgent(), SequentialExecutor(), _NotAPlanPlanner(linear_plan("a")))
    h.start()
    out = await h.finish()
    assert not out.success and out.reason == "planner returned dict, not a Plan"
    assert h.kinds() == ["run_started", "goal_derived", "run_aborted"]


async def test_an_effect_that_raises_after_its_ack_becomes_an_event_and_the_run_goes_on(executor: Any) -> None:
    # docs/protocol.md#acks: errors after the ack surface as events, not late acks (nor a crashed run).
    class Checkpointing(type(executor)):  # type: ignore[misc]
        async def _handle_custom(self, msg: Any, *, session: Session, **kw: Any) -> ControlOutcome:
            if msg.kind == "CHECKPOINT":

                async def effect() -> None:
                    raise ValueError("disk full")

                return ControlOutcome(ack=ControlAck(msg.id, AckResult.SUCCESS, "checkpointing"), effect=effect)
            return await dispatch_control(msg, session=session, **kw)

    executor.__class__ = Checkpointing
    h = Harness(ScriptedAgent(), executor, static("a", "b"))
    msg = await h.send("CHECKPOINT")
    h.start()
    out = await h.finish()
    assert out.success and [a.result for a in h.acks[msg.id]] == [AckResult.SUCCESS]
    failed = [d for d in h.of("drift_detected") if "disk full" in d.detail]
    assert len(failed) == 1 and msg.id in failed[0].detail and "CHECKPOINT" in failed[0].detail
    assert h.kinds()[-1] == "run_completed"


async def test_controls_queued_behind_a_cancel_at_a_boundary_are_not_applied_to_the_ending_run(executor: Any) -> None:
    # As mid-task, where the CANCEL ends the run at once: a STEER queued after it must not
    # make the planner replan (and revise the plan of) a run that is being aborted.
    planner = ReplanningPlanner(linear_plan("a"))
    h = Harness(ScriptedAgent(), executor, planner)
    cancel = await h.send(ControlKind.CANCEL, reason="stop")
    steer = await h.send(ControlKind.STEER, note="do something else")
    h.start()
    out = await h.finish()
    assert not out.success and out.reason == "stop"
    assert planner.refine_calls == [] and "plan_revised" not in h.kinds()
    assert h.acks[cancel.id][0].result == AckResult.SUCCESS
    assert [(a.result, a.detail) for a in h.acks[steer.id]] == [(AckResult.FAILURE, "run not active")]
    assert h.kinds()[-1] == "run_aborted"


async def test_a_run_without_an_agent_adapter_fails_its_task_saying_so() -> None:
    # RunContext.adapter is AgentAdapter | None: an executor driven with no adapter fails the
    # task with a clear reason, not "'NoneType' object has no attribute 'invoke'".
    sink = _Kept()
    session = Session(run_id="r-no-adapter")
    out = await SequentialExecutor().run(
        plan=linear_plan("a"), session=session, steerer=DefaultSteerer(), planner=static("a"), sinks=[sink]
    )
    assert not out.success
    failed = [ev for ev in sink.events if events.kind_of(ev) == "task_failed"]
    assert len(failed) == 1 and "this run has no agent adapter to invoke" in str(failed[0])


class _Kept:
    def __init__(self) -> None:
        self.events: list[Event] = []

    async def emit(self, ev: Event) -> None:
        self.events.append(ev)

    async def close(self) -> None:
        return None
