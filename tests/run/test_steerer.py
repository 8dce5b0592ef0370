"""DefaultSteerer: the task state machine, the reporting tools' argument handling, cascade
cancel, rewind, observe, the intervention ladder and the repeated-failure rule."""

from __future__ import annotations

from typing import Any

import pytest

from goldfive import conv
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.errors import InvalidTransitionError, UnknownTaskError
from goldfive.ladder import LADDER, InterventionLevel, ladder_level
from goldfive.planners.static import PassthroughPlanner
from goldfive.run.context import RunContext
from goldfive.run.current_run import bind
from goldfive.sinks.memory import InMemorySink
from goldfive.steerer import DefaultSteerer
from goldfive.run.tools import OFFERED_TOOL_NAMES, REPORTING_TOOL_NAMES, offered
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Session, Task, TaskEdge, TaskStatus
from tests.runtime_kit import Harness, ReplanningPlanner, ScriptedAgent, executor, kinds, linear_plan, static  # noqa: F401

S = TaskStatus
K = DriftKind
L = InterventionLevel


class Rig:
    """A session with a live RunContext, without an executor."""

    def __init__(self, plan: Plan | None, planner: Any = None, control: ControlChannel | None = None, steerer: Any = None) -> None:
        self.session = Session(run_id="r1", clock=lambda: 1_700_000_000_000)
        self.session.plan = plan
        self.sink = InMemorySink()
        self.steerer = steerer or DefaultSteerer()
        self.ctx = RunContext(
            self.session, sinks=[self.sink], steerer=self.steerer, planner=planner or PassthroughPlanner(), control=control
        )
        bind(self.ctx)  # the steerer reaches the run as goldfive.run.current(), as in a real run

    def kinds(self) -> list[str]:
        return kinds(self.sink.events)

    def status(self, task_id: str) -> TaskStatus:
        assert self.session.plan is not None
        return self.session.plan.task(task_id).status

    def drift_kinds(self) -> list[DriftKind | str]:
        return [conv.drift_kind_from_pb(e.drift_detected.kind) for e in self.sink.events if e.WhichOneof("payload") == "drift_detected"]


# -- the state machine ----------------------------------------------------------------------


async def test_transitions_move_forward_and_emit_one_event_each() -> None:
    rig = Rig(linear_plan("a", "b"))
    st = rig.steerer
    assert await st.transition("a", S.RUNNING, session=rig.session)
    assert rig.session.current_task_id == "a"
    assert await st.transition("a", S.BLOCKED, session=rig.session, detail="waiting")
    assert await st.transition("a", S.RUNNING, session=rig.session, detail="unblocked")
    assert await st.transition("a", S.COMPLETED, session=rig.session, detail="42")
    assert rig.kinds() == ["task_started", "task_blocked", "task_transitioned", "task_completed"]
    assert rig.session.completed_results == {"a": "42"} and rig.session.current_task_id == ""


@pytest.mark.parametrize("terminal", [S.COMPLETED, S.FAILED, S.CANCELLED, S.NOT_NEEDED])
@pytest.mark.parametrize("to", [S.PENDING, S.RUNNING, S.BLOCKED, S.COMPLETED, S.FAILED, S.CANCELLED])
async def test_a_terminal_status_absorbs_every_later_transition(terminal: TaskStatus, to: TaskStatus) -> None:
    rig = Rig(linear_plan("a"))
    await rig.steerer.transition("a", terminal, session=rig.session)
    n = len(rig.sink.events)
    assert await rig.steerer.transition("a", to, session=rig.session) is False
    assert rig.status("a") == terminal and len(rig.sink.events) == n


@pytest.mark.parametrize("status", [S.RUNNING, S.BLOCKED])
async def test_a_transition_to_the_current_status_is_harmless(status: TaskStatus) -> None:
    rig = Rig(linear_plan("a"))
    await rig.steerer.transition("a", status, session=rig.session)
    n = len(rig.sink.events)
    assert await rig.steerer.transition("a", status, session=rig.session) is False
    assert len(rig.sink.events) == n


@pytest.mark.parametrize(("frm", "to"), [(S.RUNNING, S.PENDING), (S.BLOCKED, S.PENDING), (S.RUNNING, S.NOT_NEEDED)])
async def test_a_backward_transition_raises_invalid_transition(frm: TaskStatus, to: TaskStatus) -> None:
    rig = Rig(linear_plan("a"))
    await rig.steerer.transition("a", frm, session=rig.session)
    with pytest.raises(InvalidTransitionError, match=f"task a: {frm} -> {to} is not allowed"):
        await rig.steerer.transition("a", to, session=rig.session)
    assert rig.status("a") == frm


async def test_an_unknown_task_raises_unknown_task() -> None:
    rig = Rig(linear_plan("a"))
    with pytest.raises(UnknownTaskError):
        await rig.steerer.transition("zz", S.RUNNING, session=rig.session)


# -- the reporting tools --------------------------------------------------------------------


async def test_the_eight_reporting_tools_are_offered_with_object_schemas() -> None:
    rig = Rig(linear_plan("a"))
    tools = rig.ctx.tools_for("a")
    assert tuple(tools) == REPORTING_TOOL_NAMES
    assert all(t.parameters["type"] == "object" for t in tools.values())
    assert tools["report_task_completed"].openai_schema()["function"]["parameters"]["required"] == ["result"]
    assert rig.ctx.tools_for("a") is tools


async def test_report_task_started_is_accepted_but_not_offered_and_the_schemas_are_shared_by_tasks() -> None:
    rig = Rig(linear_plan("a", "b"))
    a, b = rig.ctx.tools_for("a"), rig.ctx.tools_for("b")
    assert "report_task_started" in a and tuple(offered(a)) == OFFERED_TOOL_NAMES
    assert "report_task_started" not in OFFERED_TOOL_NAMES
    # Built once per process: a task binds its handlers only, not new schemas.
    assert all(a[name].parameters is b[name].parameters for name in REPORTING_TOOL_NAMES)


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("report_task_completed", {}, "report_task_completed: missing required argument(s): result"),
        ("report_task_completed", {"result": 3}, "report_task_completed: argument 'result' must be string, got int"),
        ("report_task_progress", {"detail": "x", "bogus": 1}, "report_task_progress: unknown argument(s): bogus"),
        ("report_task_progress", {"detail": "x", "fraction": True}, "report_task_progress: argument 'fraction' must be number, got boolean"),
        ("report_awaiting_approval", {"prompt": "?", "timeout_ms": "soon"}, "report_awaiting_approval: argument 'timeout_ms' must be integer, got str"),
        ("report_task_failed", {"reason": "x", "task_id": "zz"}, "report_task_failed: unknown task id: 'zz'"),
        ("report_task_started", {"task_id": "zz"}, "report_task_started: unknown task id: 'zz'"),
    ],
)
async def test_bad_tool_arguments_come_back_as_an_error_dict(tool: str, args: dict[str, Any], error: str) -> None:
    rig = Rig(linear_plan("a"))
    out = await rig.ctx.tools_for("a")[tool](**args)
    assert out == {"ok": False, "error": error}
    assert rig.status("a") == S.PENDING


async def test_a_tool_call_before_there_is_a_plan_returns_an_error_not_an_exception() -> None:
    rig = Rig(None)
    out = await rig.ctx.tools_for("a")["report_task_completed"](result="x")
    assert out == {"ok": False, "error": "report_task_completed: the session has no plan yet"}


async def test_reporting_on_a_terminal_task_is_harmless_and_says_so() -> None:
    rig = Rig(linear_plan("a"))
    tools = rig.ctx.tools_for("a")
    assert (await tools["report_task_completed"](result="r")) == {"ok": True, "task_id": "a", "status": "COMPLETED", "changed": True}
    again = await tools["report_task_started"]()
    assert again == {"ok": True, "task_id": "a", "status": "COMPLETED", "changed": False}
    failed = await tools["report_task_failed"](reason="late")
    assert failed["changed"] is False and rig.status("a") == S.COMPLETED


async def test_report_task_failed_classifies_fatal_and_recoverable() -> None:
    rig = Rig(linear_plan("a", "b"))
    await rig.ctx.tools_for("a")["report_task_failed"](reason="boom")
    await rig.ctx.tools_for("b")["report_task_failed"](reason="retry me", recoverable=True)
    d = [e.drift_detected for e in rig.sink.events if e.WhichOneof("payload") == "drift_detected"]
    assert [(conv.drift_kind_from_pb(x.kind), conv.drift_severity_from_pb(x.severity), x.current_task_id) for x in d] == [
        (K.TASK_FAILED_FATAL, DriftSeverity.CRITICAL, "a"),
        (K.TASK_FAILED_RECOVERABLE, DriftSeverity.WARNING, "b"),
    ]


async def test_new_work_and_divergence_are_reported_and_queued_for_the_next_boundary() -> None:
    rig = Rig(linear_plan("a"))
    tools = rig.ctx.tools_for("a")
    assert await tools["report_new_work_discovered"](title="add tests", description="unit") == {"ok": True, "queued_for_replan": True}
    assert await tools["report_plan_divergence"](detail="wrong order") == {"ok": True, "queued_for_replan": True}
    assert rig.drift_kinds() == [K.NEW_WORK_DISCOVERED, K.PLAN_DIVERGENCE]
    assert [(d.kind, d.detail, d.task_id) for d in rig.ctx.deferred_drifts] == [
        (K.NEW_WORK_DISCOVERED, "add tests: unit", "a"),
        (K.PLAN_DIVERGENCE, "wrong order", "a"),
    ]
    assert "plan_revised" not in rig.kinds()  # never swapped under the running task


async def test_progress_is_recorded_and_clamped() -> None:
    rig = Rig(linear_plan("a"))
    await rig.ctx.tools_for("a")["report_task_progress"](detail="half", fraction=7)
    assert rig.session.task_progress == {"a": ["half"]}
    assert rig.sink.events[-1].task_progress.fraction == 1.0


# -- cascade and rewind ---------------------------------------------------------------------


async def test_cascade_cancel_reaches_every_non_terminal_task_downstream() -> None:
    plan = Plan(
        tasks=[Task(i, i) for i in "abcde"],
        edges=[TaskEdge("a", "b"), TaskEdge("a", "c"), TaskEdge("c", "d")],
    )
    rig = Rig(plan)
    await rig.steerer.transition("c", S.NOT_NEEDED, session=rig.session)
    cancelled = await rig.steerer.cascade_cancel_downstream(rig.session, "a", "upstream a failed")
    assert cancelled == ["b", "d"]
    assert [rig.status(i) for i in "abcde"] == [S.PENDING, S.CANCELLED, S.NOT_NEEDED, S.CANCELLED, S.PENDING]
    assert [e.task_cancelled.reason for e in rig.sink.events if e.WhichOneof("payload") == "task_cancelled"] == ["upstream a failed"] * 2


async def test_rewind_resets_the_task_and_downstream_and_drops_their_results() -> None:
    rig = Rig(linear_plan("a", "b", "c"))
    st, s = rig.steerer, rig.session
    for tid in "ab":
        await st.transition(tid, S.RUNNING, session=s)
        await rig.ctx.tools_for(tid)["report_task_progress"](detail="p")
        await st.transition(tid, S.COMPLETED, session=s, detail=tid)
    reset = await st.rewind(s, "b")
    assert reset == ["b"]  # c was still PENDING: nothing to reset, no event
    assert s.completed_results == {"a": "a"} and s.task_progress == {"a": ["p"]}
    assert [rig.status(i) for i in "abc"] == [S.COMPLETED, S.PENDING, S.PENDING]
    ev = rig.sink.events[-1].task_transitioned
    assert (ev.task_id, ev.reason) == ("b", "rewind")
    assert conv.task_status_from_pb(ev.from_status) == S.COMPLETED and conv.task_status_from_pb(ev.to_status) == S.PENDING


# -- observe --------------------------------------------------------------------------------


async def test_observe_classifies_user_kinds_and_dedupes_steers() -> None:
    rig = Rig(linear_plan("a"))
    st, s = rig.steerer, rig.session
    s.current_task_id = "a"
    steer = ControlMessage(ControlKind.STEER, payload={"note": "n", "author": "al", "annotation_id": "x1"})
    d = await st.observe(steer, s)
    assert d is not None and (d.kind, d.severity, d.detail, d.task_id, d.annotation_id) == (K.USER_STEER, DriftSeverity.WARNING, "by al: n", "a", "x1")
    retry = ControlMessage(ControlKind.STEER, payload={"note": "n", "annotation_id": "x1"})
    assert await st.observe(retry, s) is None
    assert list(s.state["goldfive.processed_steer_ids"]) == ["x1"]
    pause = await st.observe(ControlMessage(ControlKind.PAUSE), s)
    cancel = await st.observe(ControlMessage(ControlKind.CANCEL, payload={"reason": "r"}), s)
    assert (pause.kind, pause.severity) == (K.USER_PAUSE, DriftSeverity.INFO)  # type: ignore[union-attr]
    assert (cancel.kind, cancel.severity, cancel.detail) == (K.USER_CANCEL, DriftSeverity.CRITICAL, "r")  # type: ignore[union-attr]
    assert await st.observe(ControlMessage(ControlKind.STATUS_QUERY), s) is None


# -- the ladder -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "severity", "occurrences", "level"),
    [
        (K.USER_STEER, DriftSeverity.WARNING, 1, L.ABSORB),
        (K.USER_PAUSE, DriftSeverity.INFO, 1, L.OBSERVE),
        (K.USER_CANCEL, DriftSeverity.CRITICAL, 1, L.OBSERVE),
        (K.CUSTOM, DriftSeverity.INFO, 1, L.OBSERVE),
        (K.LOOPING_REASONING, DriftSeverity.CRITICAL, 1, L.NUDGE),
        (K.GOAL_DRIFT, DriftSeverity.WARNING, 1, L.NUDGE),
        (K.TASK_TIMEOUT, DriftSeverity.WARNING, 1, L.NUDGE),
        (K.RUNAWAY_DELEGATION, DriftSeverity.CRITICAL, 1, L.CANCEL_REINVOKE),
        (K.REPEATED_FAILURE, DriftSeverity.CRITICAL, 1, L.PAUSE_ESCALATE),
        (K.REPEATED_FAILURE, DriftSeverity.CRITICAL, 2, L.TERMINATE),
        (K.REFINE_VALIDATION_FAILED, DriftSeverity.CRITICAL, 1, L.OBSERVE),
        (K.NEW_WORK_DISCOVERED, DriftSeverity.WARNING, 1, L.ABSORB),  # default by severity
        (K.TOOL_ERROR, DriftSeverity.INFO, 1, L.OBSERVE),
        (K.SAFETY_CONCERN, DriftSeverity.CRITICAL, 3, L.ABSORB),
    ],
)
def test_the_ladder_table_maps_drift_to_its_level(kind: DriftKind, severity: DriftSeverity, occurrences: int, level: InterventionLevel) -> None:
    assert ladder_level(kind, severity, occurrences) == level


def test_the_ladder_levels_are_numbered_zero_to_five() -> None:
    assert [int(lv) for lv in InterventionLevel] == [0, 1, 2, 3, 4, 5]
    assert all(isinstance(v, InterventionLevel) for v in LADDER.values())


async def test_observe_level_only_records_the_drift() -> None:
    rig = Rig(linear_plan("a"), planner=ReplanningPlanner(linear_plan("a")))
    out = await rig.steerer.handle_drift(rig.session, DriftEvent(K.CUSTOM, DriftSeverity.INFO, "fyi", "a"))
    assert out.level == L.OBSERVE and not out.revised and rig.kinds() == ["drift_detected"]


async def test_absorb_level_refines_and_installs_the_revision() -> None:
    planner = ReplanningPlanner(linear_plan("a"))
    rig = Rig(linear_plan("a"), planner=planner)
    out = await rig.steerer.handle_drift(rig.session, DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "off", "a"))
    assert out.level == L.ABSORB and out.revised
    assert rig.kinds() == ["drift_detected", "plan_revised"]
    assert rig.session.plan is not None and rig.session.plan.revision_index == 1
    assert rig.session.plan.revision_kind == "PLAN_DIVERGENCE" and rig.session.state["goldfive.current_plan_id"] == "p2"


async def test_nudge_level_queues_a_corrective_message() -> None:
    rig = Rig(linear_plan("a"))
    out = await rig.steerer.handle_drift(rig.session, DriftEvent(K.LOOPING_REASONING, DriftSeverity.CRITICAL, "again", "a"))
    assert out.level == L.NUDGE and rig.kinds() == ["drift_detected", "message_parked"]
    assert "LOOPING_REASONING: again" in rig.ctx.messages.carryover[0].text


async def test_cancel_reinvoke_level_refines_and_returns_a_goldfive_steer_without_touching_the_channel() -> None:
    ch = ControlChannel()
    rig = Rig(linear_plan("a"), planner=ReplanningPlanner(linear_plan("a")), control=ch)
    drift = DriftEvent(K.RUNAWAY_DELEGATION, DriftSeverity.CRITICAL, "spawned 40 agents", "a")
    out = await rig.steerer.handle_drift(rig.session, drift)
    assert out.level == L.CANCEL_REINVOKE and out.revised
    msg = out.intervention
    assert msg is not None and msg.kind is ControlKind.GOLDFIVE_STEER and msg.payload["drift_id"] == drift.id
    assert ch.pending() == 0  # the person's channel never carries the ladder's signal


async def test_repeated_escalation_pauses_then_terminates_with_a_deadline() -> None:
    ch = ControlChannel()
    rig = Rig(linear_plan("a"), control=ch)
    drift = DriftEvent(K.REPEATED_FAILURE, DriftSeverity.CRITICAL, "again and again", "a")
    first = await rig.steerer.handle_drift(rig.session, drift)
    second = await rig.steerer.handle_drift(rig.session, drift)
    assert (first.level, second.level) == (L.PAUSE_ESCALATE, L.TERMINATE)
    assert rig.drift_kinds() == [K.REPEATED_FAILURE, K.HUMAN_INTERVENTION_REQUIRED] * 2
    assert ch.pending() == 0
    m1, m2 = first.intervention, second.intervention
    assert m1 is not None and m2 is not None
    assert m1.kind is m2.kind is ControlKind.GOLDFIVE_PAUSE_ESCALATE
    assert "deadline_s" not in m1.payload and m2.payload["deadline_s"] == 600


async def test_the_ladder_is_overridable_in_a_subclass() -> None:
    class Quiet(DefaultSteerer):
        def ladder_level_for(self, drift: DriftEvent, occurrences: int) -> InterventionLevel:
            return L.OBSERVE

    planner = ReplanningPlanner(linear_plan("a"))
    rig = Rig(linear_plan("a"), planner=planner, steerer=Quiet())
    out = await rig.steerer.handle_drift(rig.session, DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "x", "a"))
    assert out.level == L.OBSERVE and planner.refine_calls == []


# -- refine and the repeated-failure rule ----------------------------------------------------


async def test_two_failed_refines_for_one_drift_and_task_fail_the_task() -> None:
    rig = Rig(linear_plan("a", "b", "c"), planner=ReplanningPlanner(linear_plan("a"), fail_refines=True))
    await rig.steerer.transition("a", S.RUNNING, session=rig.session)
    drift = DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "off plan", "a")
    one = await rig.steerer.handle_drift(rig.session, drift)
    assert (one.revised, one.error) == (False, "planner returned no plan") and rig.status("a") == S.RUNNING
    two = await rig.steerer.handle_drift(rig.session, drift)
    assert not two.revised
    assert rig.status("a") == S.FAILED and [rig.status(i) for i in "bc"] == [S.CANCELLED, S.CANCELLED]
    assert rig.drift_kinds() == [
        K.PLAN_DIVERGENCE, K.REFINE_VALIDATION_FAILED,
        K.PLAN_DIVERGENCE, K.REFINE_VALIDATION_FAILED, K.REPEATED_FAILURE,
    ]
    assert "refine failed 2 times for PLAN_DIVERGENCE" in rig.sink.events[
        [k for k in rig.kinds()].index("task_failed")
    ].task_failed.reason


async def test_failed_refines_for_different_tasks_do_not_add_up() -> None:
    rig = Rig(linear_plan("a", "b"), planner=ReplanningPlanner(linear_plan("a"), fail_refines=True))
    await rig.steerer.handle_drift(rig.session, DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "x", "a"))
    await rig.steerer.handle_drift(rig.session, DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "x", "b"))
    assert K.REPEATED_FAILURE not in rig.drift_kinds()
    assert rig.status("a") == rig.status("b") == S.PENDING


async def test_a_successful_refine_resets_the_failure_count() -> None:
    planner = ReplanningPlanner(linear_plan("a"), fail_refines=True)
    rig = Rig(linear_plan("a", "b"), planner=planner)
    drift = DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "x", "a")
    await rig.steerer.handle_drift(rig.session, drift)
    planner.fail_refines = False
    assert (await rig.steerer.handle_drift(rig.session, drift)).revised
    planner.fail_refines = True
    await rig.steerer.handle_drift(rig.session, drift)
    assert K.REPEATED_FAILURE not in rig.drift_kinds()


async def test_a_raising_or_invalid_refine_becomes_a_drift_not_a_crash() -> None:
    class Raising(ReplanningPlanner):
        async def refine(self, **kw: Any) -> Plan | None:
            raise RuntimeError("llm down")

    class Cyclic(ReplanningPlanner):
        async def refine(self, **kw: Any) -> Plan | None:
            return Plan(tasks=[Task("x", "X")], edges=[TaskEdge("x", "x")])

    for planner, error in ((Raising(linear_plan("a")), "planner.refine raised RuntimeError: llm down"), (Cyclic(linear_plan("a")), "revised plan rejected: cycle: x -> x")):
        rig = Rig(linear_plan("a"), planner=planner)
        out = await rig.steerer.handle_drift(rig.session, DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "x", "a"))
        assert (out.revised, out.error) == (False, error)
        assert rig.drift_kinds() == [K.PLAN_DIVERGENCE, K.REFINE_VALIDATION_FAILED]
        assert rig.session.plan is not None and rig.session.plan.task("a").id == "a"


async def test_a_revision_never_redoes_completed_work() -> None:
    class Resets(ReplanningPlanner):
        async def refine(self, *, plan: Plan, drift: DriftEvent, goals: Any) -> Plan | None:
            return Plan(tasks=[Task(t.id, t.title + "!") for t in plan.tasks] + [Task("z", "Z")], id="p9", revision_index=0)

    rig = Rig(linear_plan("a", "b"), planner=Resets(linear_plan("a")))
    await rig.steerer.transition("a", S.COMPLETED, session=rig.session, detail="kept")
    await rig.steerer.transition("b", S.FAILED, session=rig.session)
    assert (await rig.steerer.handle_drift(rig.session, DriftEvent(K.PLAN_DIVERGENCE, DriftSeverity.WARNING, "x", "a"))).revised
    plan = rig.session.plan
    assert plan is not None
    assert [(t.id, t.title, t.status) for t in plan.tasks] == [("a", "A", S.COMPLETED), ("b", "B!", S.FAILED), ("z", "Z", S.PENDING)]
    assert plan.revision_index == 1 and plan.run_id == "r1"


# -- through the executor -------------------------------------------------------------------


async def test_new_work_reported_mid_task_is_replanned_at_the_boundary(executor: Any) -> None:
    agent = ScriptedAgent()

    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        await tools["report_new_work_discovered"](title="write docs")
        assert session.plan is not None and session.plan.has_task("b")  # not swapped mid-task
        return "ok"

    agent.on("a", body)
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b")))
    h.start()
    out = await h.finish()
    assert out.success and agent.runs == ["a", "r1_1"]
    assert h.kinds()[3:8] == ["task_started", "drift_detected", "task_completed", "plan_revised", "task_started"]
    assert out.session.plan is not None and out.session.plan.task("r1_1").title == "write docs #1"


async def test_a_task_reported_completed_by_the_agent_keeps_the_reported_result(executor: Any) -> None:
    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        await tools["report_task_completed"](result=f"reported {task.id}")
        return "returned"

    h = Harness(agent, executor, static("a"))
    h.start()
    out = await h.finish()
    assert out.session.completed_results == {"a": "reported a"} and h.kinds().count("task_completed") == 1


async def test_a_task_reported_failed_by_the_agent_cancels_its_downstream(executor: Any) -> None:
    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        if task.id == "a":
            await tools["report_task_failed"](reason="no access")
        return "returned"

    h = Harness(agent, executor, static("a", "b", "c"))
    h.start()
    out = await h.finish()
    assert not out.success and out.reason.startswith("task(s) failed: a")
    assert h.statuses() == {"a": S.FAILED, "b": S.CANCELLED, "c": S.CANCELLED}
    assert h.kinds()[-3:] == ["task_cancelled", "task_cancelled", "run_aborted"]


async def test_failed_refines_after_the_task_completed_do_not_cancel_valid_work(executor: Any) -> None:
    async def body(task: Task, session: Session, tools: dict[str, Any]) -> str:
        await tools["report_plan_divergence"](detail="hmm")
        await tools["report_plan_divergence"](detail="hmm again")
        return "ok"

    agent = ScriptedAgent()
    agent.on("a", body)
    h = Harness(agent, executor, ReplanningPlanner(linear_plan("a", "b"), fail_refines=True))
    h.start()
    out = await h.finish()
    assert out.success and agent.runs == ["a", "b"]
    assert h.statuses() == {"a": S.COMPLETED, "b": S.COMPLETED}
