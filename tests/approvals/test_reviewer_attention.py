"""An approval the run's reviewer has does not need a person (issue 26 leftover): "needs
you", the runs screen's row and count, the waiting queue, ``ctl runs`` and the run screen's
header and toasts say the reviewer has it, until its verdict is "ask"; then a person has it,
with the reviewer's reason."""

from __future__ import annotations

from goldfive import events
from goldfive.cli.ctl.hub import run_line
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.types import Session
from goldfive.view.attention import attention, reviewer_has, reviewer_holds
from goldfive.view.state import RunState
from tui.run.feed import RunFeed
from tui.runs.model import row_from_state, waiting_from_state
from tui.runs.remote import row_from_summary
from tui.runs.table import needs_text

S = Session(run_id="rev-att")


def _requested(target: str = "c1", under_review: bool = True) -> object:
    return events.approval_requested(S, target_id=target, kind="tool", tool_name="deploy", args={"service": "prod"}, under_review=under_review)


def _state(*evs: object) -> RunState:
    state = RunState()
    state.apply(events.run_started(S, goal_summary="goal"))
    for ev in evs:
        state.apply(ev)  # type: ignore[arg-type]
    return state


def test_an_approval_under_review_needs_nobody_the_reviewer_has_it() -> None:
    state = _state(_requested())
    assert attention(state) is None
    assert reviewer_has(state) == "reviewer has deploy"
    row = row_from_state(state, "rev-att", "local")
    assert (row.needs_kind, row.reviewing) == ("", "reviewer has deploy")
    assert needs_text(row, 0).plain.strip() == "reviewer has deploy"
    assert waiting_from_state(state, "rev-att") == []


def test_in_its_grace_the_reviewer_still_has_it() -> None:
    state = _state(_requested(), events.approval_reviewed(S, "c1", decision="approve", reason="routine", grace_ms=5000))
    assert attention(state) is None and reviewer_has(state) == "reviewer has deploy"


def test_when_the_reviewer_asks_a_person_has_it_with_the_reviewers_reason() -> None:
    asked = events.approval_reviewed(S, "c1", decision="ask", reason="prod is not routine")
    state = _state(_requested(), asked)
    need = attention(state)
    assert need is not None and need.kind == "approval"
    assert need.reason == "approval: deploy (the reviewer asks you: prod is not routine)"
    assert need.since_ms == asked.emitted_at.ToMilliseconds()  # since it asked, not since the call
    assert reviewer_has(state) == ""
    assert [w.target_id for w in waiting_from_state(state, "rev-att")] == ["c1"]
    failed = _state(_requested(), events.approval_reviewed(S, "c1", decision="ask", reason="", error="model timed out"))
    need = attention(failed)
    assert need is not None and "the reviewer asks you: the reviewer could not decide: model timed out" in need.reason


def test_an_approval_nobody_reviews_needs_a_person_as_before_and_counts_alone() -> None:
    state = _state(_requested("c1"), _requested("c2", under_review=False))
    need = attention(state)
    assert need is not None and need.reason == "approval: deploy"  # c2 alone: no "(+1 more)"
    assert [w.target_id for w in waiting_from_state(state, "rev-att")] == ["c2"]
    row = row_from_state(state, "rev-att", "local")
    assert row.needs_kind == "approval" and row.reviewing == ""


def test_a_hubs_summary_says_the_reviewer_has_it_in_ctl_runs_and_the_runs_screen() -> None:
    s = service_pb2.RunSummary(run_id="rev-att", state="RUNNING", waiting_approvals=2, origin="hosted")
    assert reviewer_holds(s) == "reviewer has 2 approvals"
    line = run_line(s, now=0)
    assert "reviewer has 2 approvals" in line and "NEEDS YOU" not in line
    row = row_from_summary(s, [])
    assert (row.needs_kind, row.reviewing) == ("", "reviewer has 2 approvals")
    needing = service_pb2.RunSummary(run_id="rev-att", state="RUNNING", waiting_approvals=1, needs_you="approval: deploy")
    assert reviewer_holds(needing) == "" and row_from_summary(needing, []).needs_kind == "approval"
    ended = service_pb2.RunSummary(run_id="rev-att", state="COMPLETED", waiting_approvals=1)
    assert reviewer_holds(ended) == ""


def test_the_run_screen_tells_a_person_only_when_the_reviewer_asks() -> None:
    feed = RunFeed()
    feed.apply(events.run_started(S, goal_summary="goal"))
    feed.apply(_requested())  # type: ignore[arg-type]
    assert feed.take_alerts() == ([], False)
    feed.apply(events.approval_reviewed(S, "c1", decision="ask", reason="prod is not routine"))
    alerts, bell = feed.take_alerts()
    assert [a.title for a in alerts] == ["Approval needed"] and bell
    assert alerts[0].message.endswith("(the reviewer asks you: prod is not routine)")


def test_no_reminder_notice_while_the_reviewer_has_it() -> None:
    from goldfive.notify import NoticeTracker

    tracker = NoticeTracker()
    tracker.feed(events.run_started(S, goal_summary="goal"))
    assert tracker.feed(_requested()) == []  # type: ignore[arg-type]
    assert tracker.feed(events.approval_reminded(S, "c1", waited_ms=60_000, reminder=1)) == []
    escalated = tracker.feed(events.approval_escalated(S, "c1", waited_ms=120_000, why="not decided"))
    assert [n.escalated for n in escalated] == [True]  # sent once: it still goes out, lest it never does
    assert [n.kind for n in tracker.feed(events.approval_reviewed(S, "c1", decision="ask", reason="prod"))] == ["approval"]
    reminded = tracker.feed(events.approval_reminded(S, "c1", waited_ms=180_000, reminder=2))
    assert [n.reminder for n in reminded] == [2]  # a person has it now: reminded
