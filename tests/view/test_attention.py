"""attention(): which runs need a person, why and since when, from the event stream."""

from __future__ import annotations

from goldfive import events
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.types import Session
from goldfive.view.attention import attention
from goldfive.view.state import RunState


def _session() -> Session:
    clock = iter(range(1_000, 10_000_000, 1_000))
    return Session(run_id="r1", clock=lambda: next(clock))


def test_a_running_run_needs_nobody_and_an_approval_needs_a_person() -> None:
    s, st = _session(), RunState()
    st.apply(events.run_started(s, goal_summary="goal"))
    assert attention(st) is None
    st.apply(events.approval_requested(s, target_id="c1", kind="tool", tool_name="publish", args={}))
    st.apply(events.approval_requested(s, target_id="c2", kind="tool", tool_name="rm", args={}))
    a = attention(st)
    assert a is not None and a.kind == "approval" and a.reason == "approval: publish (+1 more)"
    assert a.since_ms == 2_000
    st.apply(events.approval_granted(s, "c1"))
    st.apply(events.approval_rejected(s, "c2", "no"))
    assert attention(st) is None


def _ack(st: RunState, kind: ControlKind, at: int) -> None:
    msg = ControlMessage(kind=kind)
    st.control_sent(msg)
    st.control_ack(ControlAck(control_id=msg.id, result=AckResult.SUCCESS, acked_at_ms=at))


def test_escalation_outranks_a_pause_and_resume_clears_it() -> None:
    s, st = _session(), RunState()
    st.apply(events.run_started(s, goal_summary="goal"))
    _ack(st, ControlKind.PAUSE, 5_000)
    a = attention(st)
    assert a is not None and (a.kind, a.since_ms) == ("paused", 5_000)
    _ack(st, ControlKind.GOLDFIVE_PAUSE_ESCALATE, 7_000)
    a = attention(st)
    assert a is not None and a.kind == "escalation" and a.since_ms == 7_000
    _ack(st, ControlKind.RESUME, 9_000)
    assert attention(st) is None


def test_failed_needs_a_person_and_completed_does_not() -> None:
    s, st = _session(), RunState()
    st.apply(events.run_started(s, goal_summary="goal"))
    st.apply(events.run_aborted(s, "agent raised RuntimeError: kaboom"))
    a = attention(st)
    assert a is not None and a.kind == "failed" and "kaboom" in a.reason
    s2, done = _session(), RunState()
    done.apply(events.run_started(s2, goal_summary="goal"))
    done.apply(events.run_completed(s2, "all done"))
    assert attention(done) is None


def test_ctl_runs_and_the_runs_screen_list_runs_in_one_order() -> None:
    """Issue 23 item 2: the only live approval came 18th in ``ctl runs``, after 17 failed runs
    that had needed a person for longer; the runs screen put it first."""
    from goldfive.cli.ctl.hub import runs_order
    from goldfive.pb.goldfive.v1 import service_pb2
    from goldfive_tui.runs.remote import row_from_summary
    from goldfive_tui.runs.model import sort_rows

    def summary(run_id: str, state: str, needs: str = "", since: int = 0, started: int = 1) -> service_pb2.RunSummary:
        s = service_pb2.RunSummary(run_id=run_id, state=state, needs_you=needs)
        s.started_at.FromMilliseconds(started)
        if since:
            s.needs_you_since.FromMilliseconds(since)
        return s

    runs = [summary(f"failed{i:02d}", "ABORTED", "failed: boom", since=1_000 + i) for i in range(17)]
    runs += [
        summary("approval", "RUNNING", "approval: publish_deck", since=90_000),
        summary("paused", "PAUSED", "paused", since=500),
        summary("recording", "PAUSED", "recording failed: disk full", since=95_000),
        summary("live", "RUNNING", started=50),
        summary("done", "COMPLETED", started=60),
    ]
    ctl_order = [s.run_id for s in sorted(runs, key=runs_order)]
    screen_order = [r.run_id for r in sort_rows([row_from_summary(s, []) for s in runs])]
    assert ctl_order[:2] == ["approval", "recording"]
    assert ctl_order == screen_order
    assert ctl_order[-3:] == ["paused", "live", "done"]


def test_a_run_its_person_cancelled_needs_nobody_and_is_labelled_cancelled() -> None:
    """Issue 23 item 1: a run cancelled by its own person showed forever as "NEEDS YOU ✗ failed"."""
    from goldfive.types import DriftEvent, DriftKind, DriftSeverity
    from goldfive.view.attention import state_label

    s, st = _session(), RunState()
    st.apply(events.run_started(s, goal_summary="goal"))
    msg = ControlMessage(kind=ControlKind.CANCEL, payload={"reason": "cancelled from the TUI"})
    st.apply(events.control_received(s, msg))
    st.apply(events.control_acked(s, ControlAck(msg.id, AckResult.SUCCESS, "cancelling"), kind=ControlKind.CANCEL))
    st.apply(events.drift_detected(s, DriftEvent(DriftKind.USER_CANCEL, DriftSeverity.CRITICAL, "cancelled from the TUI")))
    st.apply(events.run_aborted(s, "cancelled from the TUI"))
    assert attention(st) is None
    assert state_label(st) == "CANCELLED"

    # Its own process cancelled it (the TUI quit, a closed web tab): the runner's reason.
    s2, quit_ = _session(), RunState()
    quit_.apply(events.run_started(s2, goal_summary="goal"))
    quit_.apply(events.run_aborted(s2, "run cancelled"))
    assert attention(quit_) is None and state_label(quit_) == "CANCELLED"

    # A failure stays a failure until a person acknowledges it.
    s3, failed = _session(), RunState()
    failed.apply(events.run_started(s3, goal_summary="goal"))
    failed.apply(events.run_aborted(s3, "agent raised RuntimeError: kaboom"))
    assert state_label(failed) == "ABORTED"
    assert attention(failed) is not None
    assert attention(failed, acknowledged=True) is None


def test_a_status_query_while_escalated_does_not_replace_why_the_run_waits_for_a_person() -> None:
    from goldfive.remote.summaries import waiting_items
    from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Task

    s, st = _session(), RunState()
    st.apply(events.run_started(s, goal_summary="goal"))
    st.apply(events.plan_submitted(s, Plan(tasks=[Task("t1", "one"), Task("t2", "two")], id="p")))
    st.apply(events.drift_detected(s, DriftEvent(DriftKind.OFF_TOPIC, DriftSeverity.CRITICAL, "wandered off", task_id="t2")))
    _ack(st, ControlKind.GOLDFIVE_PAUSE_ESCALATE, 7_000)
    # The person asks what the run does: the run records its snapshot as a CUSTOM INFO drift
    # (CONTROL.md's STATUS_QUERY), on the task it is at now.
    snapshot = "status_query control_id=q1 current_task=t1 completed=0/2 pending=t1,t2 state=PAUSED"
    st.apply(events.drift_detected(s, DriftEvent(DriftKind.CUSTOM, DriftSeverity.INFO, snapshot, task_id="t1")))
    a = attention(st)
    assert a is not None and a.reason == "escalation: wandered off"

    class _Run:
        run_id, state = "r1", st

    [item] = waiting_items(_Run())  # type: ignore[arg-type]
    assert (item.kind, item.task_id, item.prompt) == ("escalation", "t2", "escalation: wandered off")
