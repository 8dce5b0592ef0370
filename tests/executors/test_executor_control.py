"""Every control kind, live, in both executors (docs/protocol.md#the-controls, docs/protocol.md#acks).

"Mid-task" is exact: the ScriptedAgent holds a task on an asyncio.Event until the test
releases it, and the test waits for the control's ack before releasing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

import goldfive
from goldfive import conv
from goldfive.adapters.callable import CallableAdapter
from goldfive.control import AckResult, ControlKind
from goldfive.executors._control import ControlOutcome, dispatch_control
from goldfive.control import ControlAck
from goldfive.run import ControlLimits, read_injected
from goldfive.run.user_tools import UserTool
from goldfive.types import DriftKind, DriftSeverity, Session, Task, TaskStatus
from tests.runtime_kit import (  # noqa: F401
    Harness,
    ReplanningPlanner,
    ScriptedAgent,
    executor,
    is_subsequence,
    kinds,
    linear_plan,
    static,
)

S = TaskStatus


def drifts(h: Harness, kind: DriftKind | None = None) -> list[Any]:
    out = h.of("drift_detected")
    return [d for d in out if kind is None or conv.drift_kind_from_pb(d.kind) == kind]


def after(h: Harness, kind: str, pred: Any = lambda p: True) -> list[str]:
    """The event kinds after the first ``kind`` event whose payload satisfies ``pred``."""
    ks = h.kinds()
    for i, e in enumerate(h.events):
        if ks[i] == kind and pred(getattr(e, kind)):
            return ks[i + 1 :]
    raise AssertionError(f"no {kind} event")


def acked(control_id: str) -> Any:
    return lambda p: p.ack.control_id == control_id


# -- PAUSE / RESUME ---------------------------------------------------------------------


async def test_pause_between_tasks_blocks_until_resume(executor: Any) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a", "b"))
    pause = await h.send(ControlKind.PAUSE)
    h.start()
    ack = await h.ack(pause)
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, "paused")
    # A control handled while paused proves the executor is parked at the boundary.
    again = await h.control(ControlKind.PAUSE)
    assert again.detail == "already paused"
    assert agent.runs == [] and "task_started" not in h.kinds()
    resume = await h.control(ControlKind.RESUME)
    assert (resume.result, resume.detail) == (AckResult.SUCCESS, "resumed")
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b"]
    (d,) = drifts(h, DriftKind.USER_PAUSE)
    assert conv.drift_severity_from_pb(d.severity) == DriftSeverity.INFO
    assert h.kinds()[3:] == [
        "control_received", "control_acked", "drift_detected",  # PAUSE
        "control_received", "control_acked",  # PAUSE again
        "control_received", "control_acked",  # RESUME
        "task_started", "task_completed", "task_started", "task_completed", "run_completed",
    ]


async def test_pause_mid_task_lets_the_task_finish_and_starts_nothing_until_resume(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    await agent.started()
    ack = await h.control(ControlKind.PAUSE)
    assert ack.detail == "pausing: the running task finishes, no new task starts"
    agent.release("a")
    await h.wait_event("task_completed", lambda p: p.task_id == "a")
    status = await h.control(ControlKind.STATUS_QUERY)
    assert "completed=1/3" in status.detail
    assert agent.runs == ["a"] and agent.cancelled == []
    await h.control(ControlKind.RESUME)
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b", "c"]
    tail = after(h, "control_acked", lambda p: p.ack.detail.startswith("pausing"))
    assert tail[:2] == ["drift_detected", "task_completed"]
    assert tail.index("task_started") > tail.index("control_acked")  # nothing before RESUME's ack
    assert [k for k in tail[: tail.index("task_started")] if k == "control_acked"] == ["control_acked"] * 2


async def test_resume_when_not_paused_is_a_successful_no_op(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    msg = await h.send(ControlKind.RESUME)
    h.start()
    out = await h.finish()
    assert out.success
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.SUCCESS, "not paused; nothing to resume")
    assert drifts(h) == []


# -- CANCEL ---------------------------------------------------------------------------


async def test_cancel_between_tasks_aborts_with_its_reason_and_cancels_every_task(executor: Any) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a", "b"))
    msg = await h.send(ControlKind.CANCEL, reason="operator stop")
    h.start()
    out = await h.finish()
    assert not out.success and out.reason == "operator stop"
    assert h.acks[msg.id][0].detail == "cancelling: operator stop"
    assert agent.runs == []
    assert h.kinds()[3:] == [
        "control_received", "control_acked", "drift_detected",
        "task_cancelled", "task_cancelled", "run_aborted",
    ]
    assert h.of("run_aborted")[0].reason == "operator stop"
    assert conv.drift_kind_from_pb(drifts(h)[0].kind) == DriftKind.USER_CANCEL
    assert h.statuses() == {"a": S.CANCELLED, "b": S.CANCELLED}


async def test_cancel_mid_task_cancels_the_running_task_and_everything_downstream(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    h = Harness(agent, executor, static("a", "b", "c", "d"))
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    ack = await h.control(ControlKind.CANCEL)
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS
    assert not out.success and out.reason == "cancelled by control"
    assert agent.cancelled == ["b"]
    assert after(h, "control_acked", acked(ack.control_id)) == [
        "drift_detected", "task_cancelled", "task_cancelled", "task_cancelled", "run_aborted",
    ]
    assert [p.task_id for p in h.of("task_cancelled")] == ["b", "c", "d"]
    assert h.statuses() == {"a": S.COMPLETED, "b": S.CANCELLED, "c": S.CANCELLED, "d": S.CANCELLED}


# -- STEER ----------------------------------------------------------------------------


async def test_steer_mid_task_cancels_drifts_then_revises_the_plan(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    planner = ReplanningPlanner(linear_plan("a", "b", "c"))
    h = Harness(agent, executor, planner)
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    ack = await h.control(ControlKind.STEER, note="focus", author="alice", annotation_id="ann-1")
    out = await h.finish()
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, "steer accepted: delete-and-replan after cancelling the running task")
    assert agent.cancelled == ["b"]
    assert after(h, "control_acked", acked(ack.control_id))[:3] == ["task_cancelled", "drift_detected", "plan_revised"]
    (d,) = drifts(h, DriftKind.USER_STEER)
    assert conv.drift_severity_from_pb(d.severity) == DriftSeverity.WARNING
    assert (d.detail, d.current_task_id, d.annotation_id) == ("by alice: focus", "b", "ann-1")
    (rev,) = h.of("plan_revised")
    plan = conv.from_pb_plan(rev.plan)
    assert (plan.revision_index, plan.revision_kind, plan.revision_severity) == (1, "USER_STEER", "WARNING")
    assert plan.revision_reason == "by alice: focus"
    assert rev.drift_id == d.id
    assert list(rev.diff.added_task_ids) == ["r1_1"] and list(rev.diff.removed_task_ids) == ["b", "c"]
    assert out.success and agent.runs == ["a", "b", "r1_1"]
    assert out.session.plan is not None and "focus" in out.session.plan.task("r1_1").title
    assert out.session.completed_results["a"] == "done a"  # completed work preserved, not redone
    assert planner.refine_calls[0]["drift"].metadata["completed_results"] == {"a": "done a"}


async def test_steer_between_tasks_revises_without_cancelling_anything(executor: Any) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b"), per_steer=2))
    msg = await h.send(ControlKind.STEER, note="do it differently")
    h.start()
    out = await h.finish()
    assert h.acks[msg.id][0].detail == "steer accepted: delete-and-replan"
    assert h.kinds()[3:7] == ["control_received", "control_acked", "drift_detected", "plan_revised"]
    assert "task_cancelled" not in h.kinds()
    assert drifts(h)[0].detail == "do it differently"  # no author: the note alone
    assert out.success and agent.runs == ["r1_1", "r1_2"]


class EditingPlanner(ReplanningPlanner):
    """Replans by listing the old plan again: completed tasks as they are, the rest PENDING."""

    async def refine(self, *, plan: Any, drift: Any, goals: Any) -> Any:
        self.refine_calls.append({"plan": plan, "drift": drift, "goals": goals})
        tasks = [t if t.status == S.COMPLETED else replace(t, status=S.PENDING) for t in plan.tasks]
        return goldfive.Plan(tasks=[replace(t) for t in tasks], edges=list(plan.edges), id="p2")


async def test_a_replan_that_lists_the_cancelled_task_again_runs_it_again(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    h = Harness(agent, executor, EditingPlanner(linear_plan("a", "b", "c")))
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    await h.control(ControlKind.STEER, note="same tasks, more care")
    await h.wait_event("plan_revised")
    agent.release("b")
    out = await h.finish()
    assert out.success, out.reason
    assert agent.runs == ["a", "b", "b", "c"] and agent.cancelled == ["b"]
    rev = conv.from_pb_plan(h.of("plan_revised")[0].plan)
    assert [(t.id, t.status) for t in rev.tasks] == [("a", S.COMPLETED), ("b", S.PENDING), ("c", S.PENDING)]
    assert out.session.completed_results["a"] == "done a" and agent.runs.count("a") == 1


async def test_a_steer_whose_replan_fails_reruns_the_interrupted_task_with_the_note(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    read: list[str] = []

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        read.extend(await read_injected(session, task.id))
        return "ok"

    agent.on("b", body)
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b", "c"), fail_refines=True))
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    ack = await h.control(ControlKind.STEER, note="be careful")
    await h.wait_event("message_parked")
    agent.release("b")
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b", "b", "c"] and read == ["[user_steering]be careful[/user_steering]"]
    assert [conv.drift_kind_from_pb(d.kind) for d in drifts(h)] == [DriftKind.USER_STEER, DriftKind.REFINE_VALIDATION_FAILED]
    assert is_subsequence(
        ["task_cancelled", "drift_detected", "drift_detected", "message_parked", "task_transitioned", "task_started",
         "message_delivered", "task_completed"],
        after(h, "control_acked", acked(ack.control_id)),
    )
    assert "plan_revised" not in h.kinds()


async def test_two_steers_increment_the_revision_index_each_time(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a")))
    agent.hold("r1_1")
    h.start()
    await agent.started()
    await h.control(ControlKind.STEER, note="one")
    assert await agent.started() == "r1_1"
    await h.control(ControlKind.STEER, note="two")
    out = await h.finish()
    assert [p.plan.revision_index for p in h.of("plan_revised")] == [1, 2]
    assert out.success and agent.runs == ["a", "r1_1", "r2_1"]


async def test_steer_with_a_planner_that_cannot_replan_injects_the_note(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    read: list[str] = []

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        read.extend(await read_injected(session, task.id))
        return "ok"

    agent.on("a", body)
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    await agent.started()
    ack = await h.control(ControlKind.STEER, note="be brief", author="bob")
    agent.release("a")
    out = await h.finish()
    assert ack.detail == "steer accepted: the planner cannot replan; note injected into the running task a"
    assert read == ["[user_steering]be brief[/user_steering]"]
    assert out.success and agent.cancelled == [] and "plan_revised" not in h.kinds()
    assert after(h, "control_acked", acked(ack.control_id))[:2] == ["drift_detected", "message_parked"]
    assert drifts(h, DriftKind.USER_STEER)[0].detail == "by bob: be brief"
    (parked,) = h.of("message_parked")
    assert (parked.lane, parked.text, parked.control_id) == ("a", "be brief", ack.control_id)
    assert h.of("message_delivered")[0].via == "boundary"


async def test_the_same_steer_twice_drifts_once_and_acks_both(executor: Any) -> None:
    planner = ReplanningPlanner(linear_plan("a"))
    h = Harness(ScriptedAgent(), executor, planner)
    first = await h.send(ControlKind.STEER, note="n", annotation_id="ann-7")
    second = await h.send(ControlKind.STEER, note="n", annotation_id="ann-7")
    h.start()
    out = await h.finish()
    assert out.success
    assert [h.acks[m.id][0].result for m in (first, second)] == [AckResult.SUCCESS] * 2
    assert h.acks[second.id][0].detail == "duplicate steer ann-7 ignored (already applied)"
    assert len(drifts(h, DriftKind.USER_STEER)) == 1 and len(planner.refine_calls) == 1
    assert len(h.of("plan_revised")) == 1


async def test_the_same_steer_message_resent_is_acked_twice_and_applied_once(executor: Any) -> None:
    planner = ReplanningPlanner(linear_plan("a"))
    h = Harness(ScriptedAgent(), executor, planner)
    msg = await h.send(ControlKind.STEER, note="again")
    await h.channel.send(msg)  # type: ignore[union-attr]  # a transport retry: same id
    h.start()
    await h.finish()
    assert [a.result for a in h.acks[msg.id]] == [AckResult.SUCCESS, AckResult.SUCCESS]
    assert len(planner.refine_calls) == 1 and len(drifts(h, DriftKind.USER_STEER)) == 1


async def test_the_same_steer_twice_with_a_static_planner_injects_once(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    first = await h.send(ControlKind.STEER, note="n", annotation_id="x")
    second = await h.send(ControlKind.STEER, note="n", annotation_id="x")
    h.start()
    await h.finish()
    assert [h.acks[m.id][0].result for m in (first, second)] == [AckResult.SUCCESS] * 2
    assert len(h.of("message_parked")) == 1 and len(drifts(h, DriftKind.USER_STEER)) == 1


async def test_a_steer_with_an_empty_note_fails(executor: Any) -> None:
    planner = ReplanningPlanner(linear_plan("a"))
    h = Harness(ScriptedAgent(), executor, planner)
    msg = await h.send(ControlKind.STEER, note="  ")
    h.start()
    await h.finish()
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.FAILURE, "steer note is empty")
    assert planner.refine_calls == []


# -- REWIND_TO --------------------------------------------------------------------------


async def test_rewind_between_tasks_resets_the_target_and_downstream_and_reruns_them(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    await h.control(ControlKind.PAUSE)
    agent.release("b")
    await h.wait_event("task_completed", lambda p: p.task_id == "b")
    await h.control(ControlKind.STATUS_QUERY)  # handled at the paused boundary
    agent.hold("a")
    ack = await h.control(ControlKind.REWIND_TO, task_id="a")
    assert (ack.result, ack.detail) == (
        AckResult.SUCCESS,
        "rewinding a and 2 downstream task(s) now; the run stays paused until RESUME",
    )
    await h.control(ControlKind.STATUS_QUERY)  # the rewind is applied; the run stays paused
    session = h.runner.session
    assert session is not None and session.completed_results == {}
    assert h.statuses() == {"a": S.PENDING, "b": S.PENDING, "c": S.PENDING}
    assert after(h, "control_acked", acked(ack.control_id))[:2] == ["task_transitioned", "task_transitioned"]
    await h.control(ControlKind.RESUME)
    assert await agent.started() == "a"
    agent.release("a")
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b", "a", "b", "c"]
    moves = [(p.task_id, p.reason) for p in h.of("task_transitioned")]
    assert moves == [("a", "rewind"), ("b", "rewind")]


async def test_rewind_to_a_task_that_has_not_run_yet_fails_and_changes_nothing(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    await agent.started()
    ack = await h.control(ControlKind.REWIND_TO, task_id="c")
    assert (ack.result, ack.detail) == (AckResult.FAILURE, "task 'c' has not run yet; there is nothing to rewind")
    agent.release("a")
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b", "c"] and h.of("task_transitioned") == []


async def test_rewind_mid_task_applies_at_the_boundary_after_the_running_task_ends(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    ack = await h.control(ControlKind.REWIND_TO, task_id="a")
    assert ack.detail == "rewinding a and 2 downstream task(s) at the next task boundary"
    assert h.statuses()["b"] == S.RUNNING and agent.cancelled == []
    agent.release("b")
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b", "a", "b", "c"] and agent.cancelled == []
    assert after(h, "control_acked", acked(ack.control_id))[:4] == [
        "task_completed", "task_transitioned", "task_transitioned", "task_started",
    ]


@pytest.mark.parametrize(
    ("payload", "detail"),
    [({"task_id": "zz"}, "unknown task id 'zz'"), ({}, "REWIND_TO needs payload.task_id")],
)
async def test_rewind_to_an_unknown_or_missing_task_fails(executor: Any, payload: dict[str, str], detail: str) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a"))
    msg = await h.send(ControlKind.REWIND_TO, **payload)
    h.start()
    out = await h.finish()
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.FAILURE, detail)
    assert out.success and agent.runs == ["a"] and "task_transitioned" not in h.kinds()


# -- STATUS_QUERY / INTERCEPT_TRANSFER ------------------------------------------------------


async def test_status_query_acks_the_snapshot_and_records_it_as_custom_info_drift(executor: Any) -> None:
    agent = ScriptedAgent(hold=["b"])
    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    assert [await agent.started(), await agent.started()] == ["a", "b"]
    ack = await h.control(ControlKind.STATUS_QUERY)
    agent.release("b")
    await h.finish()
    expected = f"status_query control_id={ack.control_id} current_task=b completed=1/3 pending=c state=RUNNING"
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, expected)
    assert after(h, "control_acked", acked(ack.control_id))[0] == "drift_detected"
    (d,) = drifts(h, DriftKind.CUSTOM)
    assert d.detail == expected and conv.drift_severity_from_pb(d.severity) == DriftSeverity.INFO
    assert h.of("plan_revised") == []


@pytest.mark.parametrize(("payload", "flag", "detail"), [({}, True, "on"), ({"enabled": False}, False, "off")])
async def test_intercept_transfer_sets_the_flag_when_the_adapter_can_honour_it(
    executor: Any, payload: dict[str, bool], flag: bool, detail: str
) -> None:
    adapter = goldfive.CallableAdapter(ScriptedAgent())
    adapter.supports_intercept_transfer = True  # type: ignore[attr-defined]  # an adapter that hands work between agents
    h = Harness(adapter, executor, static("a"))
    msg = await h.send(ControlKind.INTERCEPT_TRANSFER, **payload)
    h.start()
    out = await h.finish()
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.SUCCESS, f"intercept_transfer={detail}")
    assert h.runner.context is not None and h.runner.context.intercept_transfer is flag


async def test_intercept_transfer_is_unsupported_when_no_adapter_reads_it(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    msg = await h.send(ControlKind.INTERCEPT_TRANSFER, enabled=False)
    h.start()
    out = await h.finish()
    assert h.acks[msg.id][0].result == AckResult.UNSUPPORTED and "does not hand work" in h.acks[msg.id][0].detail
    assert out.success and h.runner.context is not None and h.runner.context.intercept_transfer is True


# -- APPROVE / REJECT: flow A ----------------------------------------------------------------


def _flow_a(executor: Any, timeout_ms: int = 60_000, with_control: bool = True) -> tuple[Harness, list[Any]]:
    """Task a asks for approval; ``seen`` gets the decision, then the event kinds recorded
    at the moment the waiter woke."""
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a", "b"), with_control=with_control)
    seen: list[Any] = []

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        decision = await tools["report_awaiting_approval"](prompt="charge $500?", timeout_ms=timeout_ms)
        seen.extend([decision, h.kinds()])
        return decision["decision"]

    agent.on("a", body)
    return h, seen


@pytest.mark.parametrize(
    ("kind", "decision", "event"),
    [(ControlKind.APPROVE, "approve", "approval_granted"), (ControlKind.REJECT, "reject", "approval_rejected")],
)
async def test_flow_a_blocks_the_task_until_the_decision(executor: Any, kind: ControlKind, decision: str, event: str) -> None:
    h, seen = _flow_a(executor)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.target_id, req.kind, req.prompt, req.task_id, req.timeout_ms) == ("a", "task", "charge $500?", "a", 60_000)
    assert h.statuses()["a"] == S.BLOCKED
    assert h.runner.session is not None and "a" in h.runner.session.pending_approvals
    ack = await h.control(kind, target_id="a", detail="by carol")
    out = await h.finish()
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, f"{decision}d a".replace("rejectd", "rejected"))
    assert seen[0] == {"decision": decision, "detail": "by carol"}
    assert event in seen[1]  # the decision event was recorded before the waiter woke
    assert getattr(h.of(event)[0], "target_id") == "a"
    assert is_subsequence(
        ["task_started", "task_blocked", "approval_requested", "control_received", "control_acked", event,
         "task_transitioned", "task_completed"],
        h.kinds(),
    )
    assert out.success and out.session.completed_results["a"] == decision
    assert out.session.pending_approvals == {}


async def test_flow_a_times_out_with_a_timeout_decision(executor: Any) -> None:
    h, seen = _flow_a(executor, timeout_ms=1)
    h.start()
    out = await h.finish()
    assert seen[0] == {"decision": "timeout", "detail": "no decision within 1 ms"}
    assert h.of("approval_rejected")[0].detail == "timeout"
    assert out.success and out.session.pending_approvals == {}


async def test_flow_a_without_a_channel_is_unavailable_at_once(executor: Any) -> None:
    h, seen = _flow_a(executor, with_control=False)
    h.start()
    out = await h.finish()
    assert seen[0]["decision"] == "unavailable"
    assert "approval_requested" not in h.kinds() and "task_blocked" not in h.kinds()
    assert out.success


@pytest.mark.parametrize(
    ("payload", "detail"),
    [({"target_id": "nope"}, "no pending approval for 'nope'"), ({}, "APPROVE needs payload.target_id")],
)
async def test_approve_for_an_unknown_or_missing_target_fails(executor: Any, payload: dict[str, str], detail: str) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    msg = await h.send(ControlKind.APPROVE, **payload)
    h.start()
    await h.finish()
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.FAILURE, detail)
    assert "approval_granted" not in h.kinds()


# -- APPROVE / REJECT: flow B ----------------------------------------------------------------


def _flow_b(executor: Any, requires: Any = True, amount: int = 500) -> tuple[Harness, list[dict[str, Any]], list[Any]]:
    published: list[dict[str, Any]] = []
    results: list[Any] = []

    async def publish(channel: str, amount: int) -> dict[str, Any]:
        """Publish the report."""
        published.append({"channel": channel, "amount": amount})
        return {"ok": True, "published": channel}

    async def fn(task: Task, session: Session, tools: dict[str, Any]) -> str:
        results.append(await tools["publish"](channel="news", amount=amount))
        return "ok"

    adapter = CallableAdapter(fn, tools=[UserTool(publish, requires_approval=requires)])
    return Harness(adapter, executor, static("a")), published, results


async def test_flow_b_approve_runs_the_tool(executor: Any) -> None:
    h, published, results = _flow_b(executor)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert req.kind == "tool" and req.tool_name == "publish" and req.task_id == "a"
    assert json.loads(req.args_json) == {"amount": 500, "channel": "news"}
    assert req.target_id.startswith("call-") and published == []
    ack = await h.control(ControlKind.APPROVE, target_id=req.target_id)
    out = await h.finish()
    assert ack.result == AckResult.SUCCESS
    assert published == [{"channel": "news", "amount": 500}] and results == [{"ok": True, "published": "news"}]
    assert out.success and "task_blocked" not in h.kinds()
    assert is_subsequence(["approval_requested", "control_acked", "approval_granted", "task_completed"], h.kinds())


async def test_flow_b_reject_skips_the_tool(executor: Any) -> None:
    h, published, results = _flow_b(executor)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.REJECT, target_id=req.target_id, detail="not today")
    out = await h.finish()
    assert published == []
    assert results[0]["skipped"] is True and results[0]["reason"] == "user_rejected"
    assert h.of("approval_rejected")[0].detail == "not today"
    assert out.success


async def test_flow_b_predicate_lets_small_calls_through_without_approval(executor: Any) -> None:
    h, published, results = _flow_b(executor, requires=lambda args: args["amount"] > 100, amount=5)
    h.start()
    out = await h.finish()
    assert out.success and published == [{"channel": "news", "amount": 5}]
    assert "approval_requested" not in h.kinds()


# -- INJECT_MESSAGE ------------------------------------------------------------------------


def _reader(agent: ScriptedAgent, task_id: str, into: list[str]) -> None:
    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        into.extend(await read_injected(session, task.id))
        return "ok"

    agent.on(task_id, body)


async def test_inject_message_mid_task_is_read_by_the_running_turn(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    read: list[str] = []
    _reader(agent, "a", read)
    h = Harness(agent, executor, static("a"))
    h.start()
    await agent.started()
    ack = await h.control(ControlKind.INJECT_MESSAGE, text="use metric units")
    agent.release("a")
    await h.finish()
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, "parked on the running turn a")
    assert read == ["[user_steering]use metric units[/user_steering]"]
    assert after(h, "control_acked", acked(ack.control_id))[:3] == ["message_parked", "message_delivered", "task_completed"]
    parked, delivered = h.of("message_parked")[0], h.of("message_delivered")[0]
    assert (parked.lane, parked.role, parked.control_id) == ("a", "user", ack.control_id)
    assert (delivered.message_id, delivered.lane, delivered.via) == (parked.message_id, "a", "boundary")
    assert "message_returned" not in h.kinds()


async def test_a_message_not_drained_is_returned_and_delivered_on_the_next_turn(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    read: list[str] = []
    _reader(agent, "b", read)
    h = Harness(agent, executor, static("a", "b"))
    h.start()
    await agent.started()
    await h.control(ControlKind.INJECT_MESSAGE, text="later", role="user")
    agent.release("a")
    out = await h.finish()
    assert out.success and read == ["[user_steering]later[/user_steering]"]
    parked, returned, delivered = h.of("message_parked")[0], h.of("message_returned")[0], h.of("message_delivered")[0]
    assert returned.message_id == parked.message_id == delivered.message_id
    assert (returned.lane, delivered.lane, delivered.via) == ("a", "b", "next_turn")
    assert is_subsequence(
        ["message_parked", "task_completed", "message_returned", "task_started", "message_delivered"], h.kinds()
    )


async def test_inject_message_between_tasks_waits_for_the_next_turn(executor: Any) -> None:
    agent = ScriptedAgent()
    read: list[str] = []
    _reader(agent, "a", read)
    h = Harness(agent, executor, static("a"))
    msg = await h.send(ControlKind.INJECT_MESSAGE, text="hello")
    h.start()
    await h.finish()
    assert h.acks[msg.id][0].detail == "queued for the next turn"
    assert read == ["[user_steering]hello[/user_steering]"]
    assert h.of("message_parked")[0].lane == "" and h.of("message_delivered")[0].via == "next_turn"


async def test_a_message_never_read_is_reported_at_the_end_not_dropped(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    await h.send(ControlKind.INJECT_MESSAGE, text="unread")
    h.start()
    await h.finish()
    assert h.kinds()[-2:] == ["message_returned", "run_completed"]


async def test_an_empty_injected_message_fails(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    msg = await h.send(ControlKind.INJECT_MESSAGE, text="")
    h.start()
    await h.finish()
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.FAILURE, "message is empty")


# -- unknown, custom, late ---------------------------------------------------------------


async def test_an_unknown_kind_is_acked_unsupported_and_audited(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    msg = await h.send("CHECKPOINT", label="x", author="dan")
    h.start()
    out = await h.finish()
    ack = h.acks[msg.id][0]
    assert (ack.result, ack.detail) == (AckResult.UNSUPPORTED, "unsupported control kind CHECKPOINT")
    rec, acked_ev = h.of("control_received")[0], h.of("control_acked")[0]
    assert (rec.kind, rec.author) == ("CHECKPOINT", "dan")
    assert acked_ev.kind == "CHECKPOINT" and conv.from_pb_control_ack(acked_ev.ack).result == AckResult.UNSUPPORTED
    assert out.success


class CheckpointMixin:
    async def _handle_custom(self, msg: Any, *, session: Session, **kw: Any) -> ControlOutcome:
        kind = str(getattr(msg.kind, "value", msg.kind)).upper()
        if kind == "CHECKPOINT":
            label = str(msg.payload.get("label", ""))
            session.agent_notes.setdefault("_checkpoints", []).append(label)
            return ControlOutcome(ack=ControlAck(control_id=msg.id, result=AckResult.SUCCESS, detail=f"checkpointed at {label}"))
        return await dispatch_control(msg, session=session, **kw)


async def test_a_custom_verb_works_through_the_executor_subclass_hook(executor: Any) -> None:
    executor.__class__ = type(f"Checkpointing{type(executor).__name__}", (CheckpointMixin, type(executor)), {})
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a"))
    h.start()
    await agent.started()
    ack = await h.control("CHECKPOINT", label="pre-refine")
    status = await h.control(ControlKind.STATUS_QUERY)  # known kinds still reach dispatch_control
    agent.release("a")
    out = await h.finish()
    assert (ack.result, ack.detail) == (AckResult.SUCCESS, "checkpointed at pre-refine")
    assert status.detail.startswith("status_query")
    assert out.session.agent_notes["_checkpoints"] == ["pre-refine"]


async def test_controls_after_the_run_ended_fail_and_stay_out_of_the_stream(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    h.start()
    await h.outcome()
    n = len(h.events)
    acks = [await h.control(k) for k in (ControlKind.PAUSE, ControlKind.STEER, "CHECKPOINT")]
    await h.shutdown()
    assert [(a.result, a.detail) for a in acks] == [(AckResult.FAILURE, "run not active")] * 3
    assert len(h.events) == n and h.kinds()[-1] == "run_completed"


async def test_every_control_is_recorded_with_its_ack_on_the_stream(executor: Any) -> None:
    h = Harness(ScriptedAgent(), executor, static("a"))
    sent = [await h.send(ControlKind.STATUS_QUERY, author="eve"), await h.send(ControlKind.REWIND_TO, task_id="q")]
    h.start()
    await h.finish()
    rec = h.of("control_received")
    assert [r.control.id for r in rec] == [m.id for m in sent] and rec[0].author == "eve"
    results = [conv.from_pb_control_ack(a.ack) for a in h.of("control_acked")]
    assert [(r.control_id, r.result) for r in results] == [(sent[0].id, AckResult.SUCCESS), (sent[1].id, AckResult.FAILURE)]


# -- the ladder's own kinds ----------------------------------------------------------------


async def test_an_escalation_pause_with_a_deadline_aborts_when_nobody_answers(executor: Any) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a"))
    msg = await h.send(ControlKind.GOLDFIVE_PAUSE_ESCALATE, deadline_s=0.05, reason="stuck")
    h.start()
    out = await h.finish()
    assert h.acks[msg.id][0].detail == "paused for human intervention"
    assert not out.success and out.reason == "escalation deadline expired without a human decision"
    assert agent.runs == [] and h.kinds()[-2:] == ["task_cancelled", "run_aborted"]


async def test_an_escalation_pause_is_lifted_by_resume(executor: Any) -> None:
    agent = ScriptedAgent()
    h = Harness(agent, executor, static("a"))
    await h.send(ControlKind.GOLDFIVE_PAUSE_ESCALATE, deadline_s=60)
    h.start()
    await h.control(ControlKind.STATUS_QUERY)
    assert agent.runs == []
    await h.control(ControlKind.RESUME)
    out = await h.finish()
    assert out.success and agent.runs == ["a"]


async def test_a_handler_that_raises_still_acks_failure_and_the_run_goes_on(executor: Any) -> None:
    class Broken(type(executor)):  # type: ignore[misc]
        async def _handle_custom(self, msg: Any, *, session: Session, **kw: Any) -> ControlOutcome:
            if msg.kind == "EXPLODE":
                raise ValueError("handler bug")
            return await dispatch_control(msg, session=session, **kw)

    executor.__class__ = Broken
    h = Harness(ScriptedAgent(), executor, static("a"))
    msg = await h.send("EXPLODE")
    h.start()
    out = await h.finish()
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.FAILURE, "handler error: handler bug")
    assert out.success


async def test_an_oversized_steer_note_fails_with_the_limit(executor: Any) -> None:
    planner = ReplanningPlanner(linear_plan("a"))
    h = Harness(ScriptedAgent(), executor, planner, config=goldfive.RuntimeConfig(limits=ControlLimits(max_note_bytes=10)))
    msg = await h.send(ControlKind.STEER, note="é" * 6)
    h.start()
    await h.finish()
    assert (h.acks[msg.id][0].result, h.acks[msg.id][0].detail) == (AckResult.FAILURE, "steer note is 12 bytes; the limit is 10 bytes")
    assert planner.refine_calls == []
