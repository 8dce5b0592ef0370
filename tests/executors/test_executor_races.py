"""Races between controls and the running agents, in both executors.

A "same tick" race releases a held task and sends a control with no await in between, so
the executor may see the task's end and the message in one ``asyncio.wait`` wake-up.
"""

from __future__ import annotations

from typing import Any

import goldfive
from goldfive.run.approvals import WITHDRAWN
from goldfive.control import AckResult, ControlKind
from goldfive.run import RuntimeConfig
from goldfive.types import Plan, Session, Task, TaskEdge, TaskStatus
from tests.runtime_kit import (  # noqa: F401
    Harness,
    ReplanningPlanner,
    ScriptedAgent,
    executor,
    linear_plan,
    static,
)

S = TaskStatus


def diamond() -> Plan:
    """a and b independent; c after both."""
    return Plan(tasks=[Task("a", "A"), Task("b", "B"), Task("c", "C")], edges=[TaskEdge("a", "c"), TaskEdge("b", "c")])


def starts_between(h: Harness, first_ack: str, second_ack: str) -> list[str]:
    """task_started ids recorded after the ack of ``first_ack`` and before that of ``second_ack``."""
    out: list[str] = []
    inside = False
    for e in h.events:
        kind = e.WhichOneof("payload")
        if kind == "control_acked" and e.control_acked.ack.control_id in (first_ack, second_ack):
            if e.control_acked.ack.control_id == second_ack:
                return out
            inside = True
        elif inside and kind == "task_started":
            out.append(e.task_started.task_id)
    raise AssertionError("acks not found in order")


async def test_pause_in_the_same_tick_as_the_task_ends_still_holds_the_next_boundary(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    await agent.started()
    agent.release("a")
    pause = await h.send(ControlKind.PAUSE)
    await h.ack(pause)
    await h.control(ControlKind.STATUS_QUERY)  # answered while parked at the boundary
    assert agent.runs == ["a"]
    resume = await h.control(ControlKind.RESUME)
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b"]
    assert starts_between(h, pause.id, resume.control_id) == []


async def test_pause_mid_stage_lets_every_running_task_finish_and_starts_none(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a", "b"])
    h = Harness(agent, executor, ReplanningPlanner(diamond()))
    h.start()
    first = await agent.started()
    pause = await h.control(ControlKind.PAUSE)
    agent.release("a", "b")
    await h.wait_event("task_completed", lambda p: p.task_id == first)
    await h.control(ControlKind.STATUS_QUERY)
    started_while_paused = list(agent.runs)
    resume = await h.control(ControlKind.RESUME)
    out = await h.finish()
    assert out.success and sorted(agent.runs) == ["a", "b", "c"] and agent.cancelled == []
    assert starts_between(h, pause.control_id, resume.control_id) == []
    assert "c" not in started_while_paused


async def test_rewind_in_the_same_tick_as_the_task_ends_applies_after_it_completed(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    agent.release("b")
    rewind = await h.send(ControlKind.REWIND_TO, task_id="b")
    out = await h.finish()
    assert h.acks[rewind.id][0].result == AckResult.SUCCESS
    assert out.success and agent.runs == ["a", "b", "b", "c"] and agent.cancelled == []
    ks = h.kinds()
    completed_b = [i for i, e in enumerate(h.events) if ks[i] == "task_completed" and e.task_completed.task_id == "b"]
    rewound = [i for i, e in enumerate(h.events) if ks[i] == "task_transitioned"]
    assert len(completed_b) == 2 and completed_b[0] < rewound[0] < completed_b[1]
    assert out.session.completed_results == {"a": "done a", "b": "done b", "c": "done c"}


async def test_rewind_of_the_running_task_mid_task_reruns_it_once_it_ends(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    await agent.started()
    ack = await h.control(ControlKind.REWIND_TO, task_id="a")
    assert ack.detail == "rewinding a and 1 downstream task(s) at the next task boundary"
    agent.release("a")
    out = await h.finish()
    assert out.success and agent.runs == ["a", "a", "b"]
    assert [(p.task_id, p.reason) for p in h.of("task_transitioned")] == [("a", "rewind")]


async def test_cancel_while_paused_aborts_without_resuming(executor: Any) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a", "b"))
    await h.send(ControlKind.PAUSE)
    h.start()
    await h.control(ControlKind.STATUS_QUERY)
    ack = await h.control(ControlKind.CANCEL, reason="give up")
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS
    assert not out.success and out.reason == "give up" and agent.runs == []
    assert h.kinds()[-3:] == ["task_cancelled", "task_cancelled", "run_aborted"]


async def test_cancel_while_an_approval_is_pending_withdraws_it(executor: Any) -> None:
    agent = ScriptedAgent()
    decisions: list[Any] = []

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        decisions.append(await tools["report_awaiting_approval"](prompt="deploy?"))
        return "deployed"

    agent.on("a", body)
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    await h.wait_event("approval_requested")
    ack = await h.control(ControlKind.CANCEL)
    out = await h.outcome()
    late = await h.control(ControlKind.APPROVE, target_id="a")
    await h.shutdown()
    assert ack.result == AckResult.SUCCESS and (late.result, late.detail) == (AckResult.FAILURE, "run not active")
    assert not out.success and decisions == [] and agent.cancelled == ["a"]
    assert out.session.pending_approvals == {} and out.session.pending_approvals_meta == {}
    assert h.statuses() == {"a": S.CANCELLED, "b": S.CANCELLED}
    assert "approval_granted" not in h.kinds() and h.kinds()[-1] == "run_aborted"
    # The withdrawn request never reports "approval resolved": BLOCKED goes straight to CANCELLED.
    assert "task_transitioned" not in h.kinds()
    assert [(p.target_id, p.detail) for p in h.of("approval_rejected")] == [("a", WITHDRAWN)]


async def test_cancel_while_a_tool_approval_is_pending_never_runs_the_tool(executor: Any) -> None:
    ran: list[str] = []

    def wipe(table: str) -> str:
        ran.append(table)
        return "wiped"

    async def fn(task: Task, session: Session, tools: dict[str, Any]) -> str:
        await tools["wipe"](table="users")
        return "ok"

    adapter = goldfive.CallableAdapter(fn, tools=[goldfive.UserTool(wipe, requires_approval=True)])
    h = Harness(adapter, executor, static("a"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.CANCEL)
    out = await h.outcome()
    late = await h.control(ControlKind.APPROVE, target_id=req.target_id)
    await h.shutdown()
    assert late.result == AckResult.FAILURE and ran == [] and not out.success
    assert out.session.pending_approvals == {}
    assert [(p.target_id, p.detail) for p in h.of("approval_rejected")] == [(req.target_id, WITHDRAWN)]


async def test_steer_while_an_approval_is_pending_withdraws_it_and_replans(executor: Any) -> None:
    agent = ScriptedAgent()
    decisions: list[Any] = []

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        decisions.append(await tools["report_awaiting_approval"](prompt="deploy?"))
        return "deployed"

    agent.on("a", body)
    agent.hold("r1_1")
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b")))
    h.start()
    await h.wait_event("approval_requested")
    ack = await h.control(ControlKind.STEER, note="skip the deploy")
    late = await h.control(ControlKind.APPROVE, target_id="a")
    agent.release("r1_1")
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS and late.result == AckResult.FAILURE
    assert late.detail == "no pending approval for 'a'"
    assert decisions == [] and out.success and agent.runs == ["a", "r1_1"]
    assert [(p.target_id, p.detail) for p in h.of("approval_rejected")] == [("a", WITHDRAWN)]
    assert h.kinds().index("approval_rejected") < h.kinds().index("plan_revised")


async def test_steer_while_paused_replans_and_the_run_stays_paused_until_resume(executor: Any) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b")))
    await h.send(ControlKind.PAUSE)
    h.start()
    await h.control(ControlKind.STATUS_QUERY)
    ack = await h.control(ControlKind.STEER, note="new direction")
    assert ack.result == AckResult.SUCCESS and ack.detail.endswith("the run stays paused until RESUME")
    status = await h.control(ControlKind.STATUS_QUERY)  # handled only after the replan
    assert len(h.of("plan_revised")) == 1 and "state=PAUSED" in status.detail
    assert agent.runs == [] and "task_started" not in h.kinds()
    await h.control(ControlKind.RESUME)
    out = await h.finish()
    assert out.success and agent.runs == ["r1_1"]


async def test_steer_while_paused_with_a_static_planner_injects_into_the_next_task_and_stays_paused(executor: Any) -> None:
    agent = ScriptedAgent()
    read: list[str] = []

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        read.extend(await goldfive.read_injected(session, task.id))
        return "ok"

    agent.on("a", body)
    h = Harness(agent, executor, static("a"))
    await h.send(ControlKind.PAUSE)
    h.start()
    await h.control(ControlKind.STATUS_QUERY)
    ack = await h.control(ControlKind.STEER, note="hurry")
    assert ack.detail == (
        "steer accepted: the planner cannot replan; note injected into the next task a; the run stays paused until RESUME"
    )
    await h.control(ControlKind.STATUS_QUERY)
    assert "task_started" not in h.kinds()
    await h.control(ControlKind.RESUME)
    out = await h.finish()
    assert out.success and read == ["[user_steering]hurry[/user_steering]"]


async def test_the_same_steer_twice_in_one_tick_mid_task_replans_once(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    planner = ReplanningPlanner(linear_plan("a", "b"))
    h = Harness(agent, executor, planner)
    h.start()
    await agent.started()
    one = await h.send(ControlKind.STEER, note="x", annotation_id="same")
    two = await h.send(ControlKind.STEER, note="x", annotation_id="same")
    out = await h.finish()
    assert [h.acks[m.id][0].result for m in (one, two)] == [AckResult.SUCCESS] * 2
    assert len(planner.refine_calls) == 1 and len(h.of("plan_revised")) == 1
    assert out.success and agent.runs == ["a", "r1_1"]


async def test_cancel_then_steer_in_one_tick_aborts_and_still_acks_the_steer(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    planner = ReplanningPlanner(linear_plan("a", "b"))
    h = Harness(agent, executor, planner)
    h.start()
    await agent.started()
    cancel = await h.send(ControlKind.CANCEL, reason="stop")
    steer = await h.send(ControlKind.STEER, note="too late")
    out = await h.finish()
    assert not out.success and out.reason == "stop"
    assert h.acks[cancel.id][0].result == AckResult.SUCCESS
    assert [(a.result, a.detail) for a in h.acks[steer.id]] == [(AckResult.FAILURE, "run not active")]
    assert planner.refine_calls == [] and h.kinds()[-1] == "run_aborted"


async def test_cancel_mid_stage_cancels_every_running_invocation(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a", "b"])
    h = Harness(agent, executor, ReplanningPlanner(diamond()))
    h.start()
    await agent.started()
    await h.control(ControlKind.CANCEL)
    out = await h.finish()
    running = {"a", "b"} if isinstance(executor, goldfive.ParallelDAGExecutor) else {"a"}
    assert set(agent.runs) == running and set(agent.cancelled) == running
    assert not out.success and h.statuses() == {"a": S.CANCELLED, "b": S.CANCELLED, "c": S.CANCELLED}


async def test_an_agent_ignoring_cancellation_is_abandoned_after_the_grace(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    agent.stubborn("a")
    h = Harness(agent, executor, static("a", "b"), config=RuntimeConfig(cancel_grace_s=0.05))
    h.start()
    await agent.started()
    await h.control(ControlKind.CANCEL, reason="stop")
    out = await h.finish()
    assert not out.success and out.reason == "stop"
    (ab,) = h.of("invocation_abandoned")
    assert ab.task_id == "a" and abs(ab.grace_s - 0.05) < 1e-9 and "abandoned" in ab.reason
    assert h.kinds()[-4:] == ["invocation_abandoned", "task_cancelled", "task_cancelled", "run_aborted"]
    agent.release("a")  # the orphan finally returns; nothing changes
    await agent.finished_event("a")
    assert h.statuses() == {"a": S.CANCELLED, "b": S.CANCELLED} and h.kinds()[-1] == "run_aborted"


async def test_a_steer_over_an_agent_ignoring_cancellation_still_replans(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    agent.stubborn("a")
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b")), config=RuntimeConfig(cancel_grace_s=0.05))
    h.start()
    await agent.started()
    await h.control(ControlKind.STEER, note="other way")
    assert await agent.started() == "r1_1"
    out = await h.outcome()
    agent.release("a")
    await agent.finished_event("a")
    await h.shutdown()
    assert out.success and len(h.of("invocation_abandoned")) == 1
    assert h.statuses() == {"r1_1": S.COMPLETED}


async def test_a_message_sent_as_the_run_is_cancelled_still_gets_its_one_ack(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a"))
    run = h.start()
    await agent.started()
    # A PAUSE is queued for the executor (a STATUS_QUERY would be answered in the send itself,
    # the run still running: tests/controls/test_control_direct.py).
    msg = goldfive.ControlMessage(ControlKind.PAUSE)
    h.channel.send_nowait(msg)  # type: ignore[union-attr]
    run.cancel()  # same tick: the receive completes, then the run is torn down
    try:
        await run
    except BaseException as exc:  # noqa: BLE001 - the cancellation is what we expect
        assert type(exc).__name__ == "CancelledError"
    await h.shutdown()
    [ack] = h.acks[msg.id]
    assert ack.result == AckResult.FAILURE and ack.detail.startswith("run not active")
    assert h.kinds()[-1] == "run_aborted"


def test_the_cancel_grace_defaults_to_five_seconds() -> None:
    assert RuntimeConfig().cancel_grace_s == 5.0


async def test_the_executor_cancel_grace_overrides_the_runtime_config(executor: Any) -> None:
    executor.cancel_grace_s = 0.02
    agent = ScriptedAgent(hold=["a"])
    agent.stubborn("a")
    h = Harness(agent, executor, static("a"))
    h.start()
    await agent.started()
    await h.control(ControlKind.CANCEL)
    await h.finish()
    agent.release("a")
    await agent.finished_event("a")
    assert abs(h.of("invocation_abandoned")[0].grace_s - 0.02) < 1e-9
