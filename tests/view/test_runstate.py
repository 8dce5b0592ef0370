"""RunState: the reducer folding a run's events into its state, built from the real factories."""

from __future__ import annotations

import json

import pytest

from goldfive import events as E
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.view import RunPhase, RunState
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Session, Task, TaskEdge, TaskStatus

T0 = 1_767_225_600_000


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def session(clock: Clock) -> Session:
    return Session(run_id="run1", clock=clock)


def plan(rev: int = 0, statuses: dict[str, TaskStatus] | None = None, extra: tuple[str, ...] = ()) -> Plan:
    st = statuses or {}
    ids = ("a", "b", "c") + extra
    tasks = [Task(id=i, title=f"task {i}", description=f"do {i}", status=st.get(i, TaskStatus.PENDING)) for i in ids]
    edges = [TaskEdge("a", "b"), TaskEdge("b", "c")] + [TaskEdge("b", x) for x in extra]
    kind = DriftKind.USER_STEER if rev else ""
    return Plan(tasks=tasks, edges=edges, id="p", run_id="run1", revision_index=rev, revision_kind=kind)


def started(session: Session) -> RunState:
    return RunState.from_events(
        [E.run_started(session, goal_summary="write a deck"), E.plan_submitted(session, plan())]
    )


def test_a_fresh_state_is_pending_and_run_started_makes_it_running(session: Session) -> None:
    state = RunState()
    assert state.phase == RunPhase.PENDING
    state.apply(E.run_started(session, goal_summary="write a deck"))
    assert (state.phase, state.run_id, state.goal_summary) == (RunPhase.RUNNING, "run1", "write a deck")


def test_plan_submitted_lists_tasks_in_order_with_deps(session: Session) -> None:
    state = started(session)
    assert [t.id for t in state.ordered_tasks()] == ["a", "b", "c"]
    assert state.tasks["c"].deps == ("b",)
    assert state.tasks["a"].description == "do a"
    assert state.revision == 0


def test_task_lifecycle_records_times_progress_and_result(session: Session, clock: Clock) -> None:
    state = started(session)
    clock.now = T0 + 1000
    state.apply(E.task_started(session, "a"))
    state.apply(E.task_progress(session, "a", detail="halfway", fraction=0.5))
    assert state.tasks["a"].status == TaskStatus.RUNNING
    assert (state.tasks["a"].progress, state.tasks["a"].fraction) == ("halfway", 0.5)
    clock.now = T0 + 3500
    state.apply(E.task_completed(session, "a", "done well"))
    a = state.tasks["a"]
    assert (a.status, a.result, a.duration_ms) == (TaskStatus.COMPLETED, "done well", 2500)


@pytest.mark.parametrize(
    ("make", "status", "reason"),
    [
        (lambda s: E.task_failed(s, "b", "tool broke"), TaskStatus.FAILED, "tool broke"),
        (lambda s: E.task_cancelled(s, "b", "user_steer"), TaskStatus.CANCELLED, "user_steer"),
        (lambda s: E.task_blocked(s, "b", "awaiting approval"), TaskStatus.BLOCKED, "awaiting approval"),
        (
            lambda s: E.task_transitioned(s, "b", TaskStatus.PENDING, TaskStatus.NOT_NEEDED, "skipped"),
            TaskStatus.NOT_NEEDED,
            "skipped",
        ),
    ],
)
def test_failure_cancel_block_and_transitions_keep_their_reason(session, make, status, reason) -> None:  # type: ignore[no-untyped-def]
    state = started(session)
    state.apply(E.task_started(session, "b"))
    state.apply(make(session))
    assert (state.tasks["b"].status, state.tasks["b"].reason) == (status, reason)


def test_a_rewind_to_pending_clears_the_earlier_run(session: Session) -> None:
    state = started(session)
    state.apply(E.task_started(session, "a"))
    state.apply(E.task_completed(session, "a", "first try"))
    state.apply(E.task_transitioned(session, "a", TaskStatus.COMPLETED, TaskStatus.PENDING, "rewind"))
    a = state.tasks["a"]
    assert (a.status, a.result, a.started_ms, a.duration_ms) == (TaskStatus.PENDING, "", 0, None)


def test_events_for_unknown_tasks_are_counted_but_change_nothing(session: Session) -> None:
    state = started(session)
    state.apply(E.task_started(session, "ghost"))
    assert "ghost" not in state.tasks
    assert state.kind_counts["task_started"] == 1


def test_plan_revised_keeps_task_history_and_marks_new_tasks_with_their_revision(session: Session) -> None:
    state = started(session)
    state.apply(E.task_started(session, "a"))
    state.apply(E.task_completed(session, "a", "kept"))
    old = plan(0, {"a": TaskStatus.COMPLETED})
    new = plan(1, {"a": TaskStatus.COMPLETED, "c": TaskStatus.NOT_NEEDED}, extra=("d",))
    state.apply(E.plan_revised(session, old, new))
    assert state.revision == 1
    assert [t.id for t in state.ordered_tasks()] == ["a", "b", "c", "d"]
    assert state.tasks["a"].result == "kept"
    assert state.tasks["c"].status == TaskStatus.NOT_NEEDED
    assert (state.tasks["d"].added_revision, state.tasks["a"].added_revision) == (1, 0)
    assert state.tasks["d"].deps == ("b",)


def test_a_steer_is_credited_with_the_revision_its_drift_produced(session: Session) -> None:
    state = started(session)
    msg = ControlMessage(kind=ControlKind.STEER, id="ctl-1", payload={"note": "fewer slides", "author": "you"})
    state.apply(E.control_received(session, msg))
    state.apply(
        E.drift_detected(
            session,
            DriftEvent(DriftKind.USER_STEER, DriftSeverity.WARNING, "by you: fewer", annotation_id="ctl-1", id="d9"),
        )
    )
    state.apply(E.plan_revised(session, plan(0), plan(1, extra=("d",)), drift_id="d9"))
    state.apply(E.control_acked(session, ControlAck("ctl-1", AckResult.SUCCESS), "STEER"))
    ctl = state.controls["ctl-1"]
    assert (ctl.kind, ctl.summary, ctl.author, ctl.revision, ctl.ack_result) == (
        "STEER",
        "fewer slides",
        "you",
        1,
        "SUCCESS",
    )


def test_a_user_steer_revision_without_a_drift_link_goes_to_the_oldest_open_steer(session: Session) -> None:
    state = started(session)
    state.control_sent(ControlMessage(kind=ControlKind.STEER, id="s1", payload={"note": "x"}), T0)
    state.apply(E.plan_revised(session, plan(0), plan(1)))
    assert state.controls["s1"].revision == 1


def test_pause_ack_sets_paused_and_only_resume_or_cancel_clear_it(session: Session) -> None:
    state = started(session)
    for kind in ("STEER", "REWIND_TO"):  # applied while paused: the run stays paused
        pause = ControlMessage(kind=ControlKind.PAUSE)
        state.apply(E.control_acked(session, ControlAck(pause.id, AckResult.SUCCESS), "PAUSE"))
        other = ControlMessage(kind=kind)
        state.apply(E.control_acked(session, ControlAck(other.id, AckResult.SUCCESS), kind))
        assert state.phase == RunPhase.PAUSED, kind
    for kind in ("RESUME", "CANCEL"):
        pause = ControlMessage(kind=ControlKind.PAUSE)
        state.apply(E.control_received(session, pause))
        state.apply(E.control_acked(session, ControlAck(pause.id, AckResult.SUCCESS), "PAUSE"))
        assert state.phase == RunPhase.PAUSED
        other = ControlMessage(kind=kind)
        state.apply(E.control_received(session, other))
        state.apply(E.control_acked(session, ControlAck(other.id, AckResult.SUCCESS), kind))
        assert state.phase == RunPhase.RUNNING, kind


def test_a_failed_pause_does_not_pause(session: Session) -> None:
    state = started(session)
    pause = ControlMessage(kind=ControlKind.PAUSE)
    state.control_sent(pause, T0)
    view = state.control_ack(ControlAck(pause.id, AckResult.FAILURE, "not running"), "PAUSE")
    assert (state.paused, view.ack_result, view.ack_detail) == (False, "FAILURE", "not running")


def test_local_send_and_the_received_event_merge_into_one_control(session: Session) -> None:
    state = started(session)
    msg = ControlMessage(kind=ControlKind.APPROVE, payload={"target_id": "t1", "detail": "ok"})
    state.control_sent(msg, T0 + 5)
    state.apply(E.control_received(session, msg))
    assert list(state.controls) == [msg.id]
    assert state.controls[msg.id].summary == "t1: ok"


def test_approvals_are_pending_until_granted_rejected_or_timed_out(session: Session, clock: Clock) -> None:
    state = started(session)
    clock.now = T0 + 42
    for target in ("t1", "t2", "t3"):
        state.apply(
            E.approval_requested(
                session, target_id=target, kind="tool", prompt="ok?", task_id="b",
                tool_name="publish", args={"n": 1}, timeout_ms=9000,
            )
        )
    a = state.approvals["t1"]
    assert (a.kind, a.tool_name, a.args, a.requested_ms, a.timeout_ms) == ("tool", "publish", {"n": 1}, T0 + 42, 9000)
    assert json.loads(a.args_json) == {"n": 1}
    state.apply(E.approval_granted(session, "t1"))
    state.apply(E.approval_rejected(session, "t2", "no"))
    state.apply(E.approval_rejected(session, "t3", "timeout"))
    assert state.approvals == {}


def test_args_that_are_not_json_are_kept_verbatim(session: Session) -> None:
    state = started(session)
    ev = E.approval_requested(session, target_id="t", kind="tool")
    ev.approval_requested.args_json = "{not json"
    state.apply(ev)
    assert state.approvals["t"].args == "{not json"


def test_run_completed_and_aborted_are_final_and_clear_approvals(session: Session, clock: Clock) -> None:
    state = started(session)
    state.apply(E.approval_requested(session, target_id="t", kind="task"))
    clock.now = T0 + 65_000
    state.apply(E.run_aborted(session, "cancelled from the TUI"))
    assert (state.phase, state.abort_reason, state.approvals) == (RunPhase.ABORTED, "cancelled from the TUI", {})
    assert state.elapsed_ms(T0 + 999_999) == 65_000
    done = RunState.from_events([E.run_started(session, goal_summary="g"), E.run_completed(session, "all good")])
    assert (done.phase, done.outcome) == (RunPhase.COMPLETED, "all good")


def test_counters_track_events_sequence_kinds_missed_and_rate(session: Session, clock: Clock) -> None:
    state = started(session)
    for i in range(10):
        clock.now = T0 + 4000 + i
        state.apply(E.task_progress(session, "a", detail=str(i)))
    state.apply_missed(3)
    assert (state.events, state.last_sequence, state.missed) == (12, 11, 3)
    assert state.kind_counts == {"run_started": 1, "plan_submitted": 1, "task_progress": 10}
    assert state.events_per_second(T0 + 4010) == pytest.approx(12 / 5)
    assert state.events_per_second(T0 + 60_000) == 0
    clock.now = T0 + 1000  # an event stamped earlier (another clock): the latest time stays
    state.apply(E.task_progress(session, "a", detail="late"))
    assert state.last_event_ms == T0 + 4009 and state.events_per_second(T0 + 4010) == pytest.approx(13 / 5)


def test_drifts_keep_the_most_recent_ones(session: Session) -> None:
    state = started(session)
    for i in range(60):
        state.apply(E.drift_detected(session, DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.CRITICAL, f"d{i}")))
    assert len(state.drifts) == 50
    assert (state.drifts[-1].detail, state.drifts[-1].severity, state.drifts[-1].kind) == (
        "d59",
        "CRITICAL",
        "TOOL_ERROR",
    )


def test_the_core_reducer_does_not_import_textual() -> None:
    import subprocess
    import sys

    code = "import sys, goldfive.view; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_pause_acked_while_a_task_runs_reads_pausing_until_the_task_ends(session: Session) -> None:
    state = started(session)
    state.apply(E.task_started(session, "a"))
    pause = ControlMessage(kind=ControlKind.PAUSE)
    state.apply(E.control_acked(session, ControlAck(pause.id, AckResult.SUCCESS), "PAUSE"))
    assert state.phase == RunPhase.PAUSING
    state.apply(E.task_completed(session, "a", "done"))
    assert state.phase == RunPhase.PAUSED


def test_an_event_whose_payload_does_not_fit_is_counted_and_the_fold_goes_on() -> None:
    from goldfive.pb.goldfive.v1.events_pb2 import Event

    state = RunState()
    bad = Event(run_id="r", sequence=0)
    bad.control_acked.SetInParent()  # an ack with no result: a peer's malformed event
    state.apply(bad)
    good = Event(run_id="r", sequence=1)
    good.run_started.goal_summary = "after it"
    state.apply(good)
    assert (state.malformed, state.last_sequence, state.goal_summary) == (1, 1, "after it")
