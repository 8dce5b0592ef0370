"""Resume reads what an acked control was applied as (ControlAck.applied_as) through the one
table (goldfive.run.acks.ACK_MEANING); a recording made before the field existed is read by
``legacy_applied_as`` from the ack's English detail, and comes back the same."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from goldfive import conv, events
from goldfive.control import AckResult, AppliedAs, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.durable.recover import Recovered, recover
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.planners.static import StaticPlanner
from goldfive.run.acks import ACK_MEANING, AckMeaning, PauseChange, legacy_applied_as, meaning_of
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session
from goldfive.view import RunState
from tests.runtime_kit import executor  # noqa: F401
from tests.durable.test_durable_resume import RUN, Agent, plan, run_until_held


def _recording(*controls: tuple[ControlMessage, ControlAck], then: list[pb.Event] | None = None) -> list[pb.Event]:
    """A run with a plan, task a running, and each control received and acked; then ``then``."""
    s = Session(run_id="r")
    evs = [events.run_started(s, goal_summary="g"), events.plan_submitted(s, plan("a", "b")), events.task_started(s, "a")]
    for msg, ack in controls:
        evs += [events.control_received(s, msg), events.control_acked(s, ack, str(msg.kind))]
    return evs + [_restamp(s, e) for e in then or []]


def _restamp(s: Session, ev: pb.Event) -> pb.Event:
    ev.sequence = s.next_sequence()
    return ev


def _acked(kind: ControlKind, detail: str, applied_as: AppliedAs | None, **payload: Any) -> tuple[ControlMessage, ControlAck]:
    msg = ControlMessage(kind, payload=payload)
    return msg, ControlAck(msg.id, AckResult.SUCCESS, detail, 1, applied_as=applied_as)


def _fold(*controls: tuple[ControlMessage, ControlAck], then: list[pb.Event] | None = None) -> Recovered:
    return recover("r", _recording(*controls, then=then))


# -- the table and the legacy reading -------------------------------------------------------


def test_every_applied_as_has_a_row_in_the_one_table() -> None:
    assert set(ACK_MEANING) == set(AppliedAs)
    assert ACK_MEANING[AppliedAs.REFUSED] == AckMeaning()


@pytest.mark.parametrize(
    ("kind", "result", "detail", "want"),
    [  # what the handlers of the time wrote, and what it meant
        ("PAUSE", AckResult.SUCCESS, "pausing: the running task finishes, no new task starts", AppliedAs.PAUSED),
        ("PAUSE", AckResult.SUCCESS, "already paused", AppliedAs.PAUSED),
        ("GOLDFIVE_PAUSE_ESCALATE", AckResult.SUCCESS, "paused for human intervention", AppliedAs.PAUSED),
        ("RESUME", AckResult.SUCCESS, "resumed", AppliedAs.RESUMED),
        ("CANCEL", AckResult.SUCCESS, "cancelling: wrong goal", AppliedAs.CANCELLED),
        ("STEER", AckResult.SUCCESS, "steer accepted: delete-and-replan after cancelling the running task", AppliedAs.REPLANNED),
        ("STEER", AckResult.SUCCESS, "steer accepted: applied to the plan once planning ends", AppliedAs.QUEUED),
        ("STEER", AckResult.SUCCESS, "steer accepted: the planner cannot replan; note injected into the running task a", AppliedAs.NOTED),
        ("STEER", AckResult.SUCCESS, "duplicate steer an-1 ignored (already applied)", AppliedAs.DUPLICATE),
        ("REWIND_TO", AckResult.SUCCESS, "rewinding a and 1 downstream task(s) now", AppliedAs.REWOUND),
        ("APPROVE", AckResult.SUCCESS, "approved t1", AppliedAs.DECIDED),
        ("INJECT_MESSAGE", AckResult.SUCCESS, "queued for the next turn", AppliedAs.INJECTED),
        ("GOLDFIVE_STEER", AckResult.SUCCESS, "restarting the in-flight invocation with a corrective", AppliedAs.RESTARTED),
        ("GOLDFIVE_STEER", AckResult.SUCCESS, "no invocation in flight; the revised plan applies next", AppliedAs.UNCHANGED),
        ("approval_rules", AckResult.SUCCESS, "removed R1: lint", AppliedAs.RULES),
        ("STEER", AckResult.FAILURE, "steer note is empty", AppliedAs.REFUSED),
        ("PAUSE", AckResult.UNSUPPORTED, "x", AppliedAs.REFUSED),
        ("CHECKPOINT", AckResult.SUCCESS, "checkpointed at pre-refine", None),
    ],
)
def test_legacy_applied_as_reads_the_details_old_handlers_wrote(kind: str, result: AckResult, detail: str, want: AppliedAs | None) -> None:
    assert legacy_applied_as(kind, result, detail) == want


def test_the_field_wins_over_the_detail() -> None:
    # The detail is for people and may change wording; the field is what is read.
    ack = ControlAck("c", AckResult.SUCCESS, "steer accepted: delete-and-replan", applied_as=AppliedAs.DUPLICATE)
    assert meaning_of(ack, "STEER") == AckMeaning()
    assert meaning_of(ControlAck("c", AckResult.SUCCESS, "angehalten", applied_as=AppliedAs.PAUSED), "PAUSE").pause is PauseChange.PAUSES


# -- the fold, before and after the field ------------------------------------------------------

OLD_AND_NEW = pytest.mark.parametrize("new", [False, True], ids=["recorded-before-applied_as", "with-applied_as"])


def _said(new: bool, applied: AppliedAs) -> AppliedAs | None:
    return applied if new else None


@OLD_AND_NEW
def test_an_acked_steer_not_yet_applied_is_applied_again(new: bool) -> None:
    steer = _acked(ControlKind.STEER, "steer accepted: delete-and-replan", _said(new, AppliedAs.REPLANNED), note="fewer", annotation_id="an-1")
    rec = _fold(steer)
    assert [(c.payload.note, c.id) for c in rec.steers_to_apply] == [("fewer", steer[0].id)]
    assert rec.processed_steer_ids == ["an-1"]
    drift = events.drift_detected(Session(run_id="r"), DriftEvent(DriftKind.USER_STEER, DriftSeverity.WARNING, "fewer"))
    assert _fold(steer, then=[drift]).steers_to_apply == []  # its drift is in the recording: applied


@OLD_AND_NEW
def test_a_duplicate_steer_is_neither_applied_nor_counted(new: bool) -> None:
    rec = _fold(_acked(ControlKind.STEER, "duplicate steer an-1 ignored (already applied)", _said(new, AppliedAs.DUPLICATE), note="x", annotation_id="an-1"))
    assert (rec.steers_to_apply, rec.processed_steer_ids, rec.messages_to_inject) == ([], [], [])


@OLD_AND_NEW
def test_a_noted_steer_and_an_injected_message_not_parked_are_injected_again(new: bool) -> None:
    noted = _acked(
        ControlKind.STEER, "steer accepted: the planner cannot replan; note injected into the running task a",
        _said(new, AppliedAs.NOTED), note="use the canary",
    )  # fmt: skip
    inject = _acked(ControlKind.INJECT_MESSAGE, "parked on the running turn a", _said(new, AppliedAs.INJECTED), text="and the logs", role="system")
    rec = _fold(noted, inject)
    assert [(m.text, m.role, m.control_id) for m in rec.messages_to_inject] == [
        ("use the canary", "user", noted[0].id),
        ("and the logs", "system", inject[0].id),
    ]
    assert rec.steers_to_apply == [] and rec.processed_steer_ids == [noted[0].id]


@OLD_AND_NEW
def test_pause_resume_cancel_and_rewind_come_back(new: bool) -> None:
    pause = _acked(ControlKind.PAUSE, "paused", _said(new, AppliedAs.PAUSED))
    assert _fold(pause).paused
    resume = _acked(ControlKind.RESUME, "resumed", _said(new, AppliedAs.RESUMED))
    assert not _fold(pause, resume).paused
    cancel = _acked(ControlKind.CANCEL, "cancelling: wrong goal", _said(new, AppliedAs.CANCELLED), reason="wrong goal")
    assert _fold(cancel).cancel_reason == "wrong goal"
    rewind = _acked(ControlKind.REWIND_TO, "rewinding a and 1 downstream task(s) now", _said(new, AppliedAs.REWOUND), task_id="a")
    assert _fold(rewind).rewinds_to_apply == ["a"]


def test_a_refused_control_carries_nothing_over() -> None:
    msg = ControlMessage(ControlKind.STEER, payload={"note": "x"})
    rec = _fold((msg, ControlAck(msg.id, AckResult.FAILURE, "handler error", applied_as=AppliedAs.REFUSED)))
    assert (rec.steers_to_apply, rec.processed_steer_ids, rec.paused) == ([], [], False)


def test_the_views_read_the_same_table_old_recording_or_new() -> None:
    for new in (False, True):
        pause = _acked(ControlKind.PAUSE, "paused", _said(new, AppliedAs.PAUSED))
        state = RunState.from_events(_recording(pause))
        assert state.paused and state.pause_kind == "PAUSE"
        assert state.controls[pause[0].id].applied_as is AppliedAs.PAUSED
        resumed = RunState.from_events(_recording(pause, _acked(ControlKind.RESUME, "resumed", _said(new, AppliedAs.RESUMED))))
        assert not resumed.paused


def test_the_views_credit_a_revision_only_to_a_steer_a_replan_follows() -> None:
    dup = _acked(ControlKind.STEER, "duplicate steer x ignored (already applied)", AppliedAs.DUPLICATE, note="x")
    steer = _acked(ControlKind.STEER, "steer accepted: delete-and-replan", AppliedAs.REPLANNED, note="y")
    s = Session(run_id="r")
    p = replace(plan("a", "c"), revision_index=1, revision_kind=DriftKind.USER_STEER)
    state = RunState.from_events(_recording(dup, steer, then=[events.plan_revised(s, plan("a", "b"), p)]))
    assert state.controls[dup[0].id].revision is None and state.controls[steer[0].id].revision == 1


# -- end to end: a crashed recording resumed, made before the field and after ------------------


def _rewrite_acks(db: Path, change: Any) -> int:
    """Rewrite every control_acked row of ``db`` with ``change(ack)``; how many."""
    conn = sqlite3.connect(db)
    n = 0
    for seq, blob in conn.execute("SELECT sequence, payload FROM events WHERE kind = 'control_acked'").fetchall():
        ev = pb.Event.FromString(blob)
        change(ev.control_acked.ack)
        conn.execute("UPDATE events SET payload = ? WHERE run_id = ? AND sequence = ?", (ev.SerializeToString(), RUN, seq))
        n += 1
    conn.commit()
    conn.close()
    return n


@pytest.mark.parametrize(
    ("how", "paused"),
    [("recorded-before-applied_as", True), ("with-applied_as", True), ("applied_as-says-unchanged", False)],
)
async def test_a_crashed_paused_run_comes_back_as_its_recorded_ack_says(tmp_path: Path, executor: Any, how: str, paused: bool) -> None:
    async def pause(channel: ControlChannel) -> None:
        assert (await channel.request(ControlMessage(ControlKind.PAUSE))).applied_as is AppliedAs.PAUSED

    crashed = await run_until_held(tmp_path, executor, ("a", "b", "c"), hold="b", before_crash=pause)
    if how == "recorded-before-applied_as":  # as this project wrote it before the field
        assert _rewrite_acks(crashed, lambda ack: ack.ClearField("applied_as")) == 1
    elif how == "applied_as-says-unchanged":  # the field is what is read, not the English
        assert _rewrite_acks(crashed, lambda ack: setattr(ack, "applied_as", conv_applied(AppliedAs.UNCHANGED))) == 1
    agent, channel, sink = Agent(), ControlChannel(), InMemorySink()
    runner = Runner.resuming(
        RUN, store=crashed, agent=agent, planner=StaticPlanner(plan("a", "b", "c")), executor=type(executor)(),
        control=channel, sinks=[sink],
    )  # fmt: skip
    task = asyncio.ensure_future(runner.run())
    status = await channel.request(ControlMessage(ControlKind.STATUS_QUERY))
    assert ("state=PAUSED" in status.detail) is paused
    if paused:
        assert agent.done == []
        await channel.request(ControlMessage(ControlKind.RESUME))
    out = await task
    await runner.close()
    assert out.success and agent.done == [("b", 2), ("c", 1)]
    (resumed,) = [e.run_resumed for e in sink.events if e.WhichOneof("payload") == "run_resumed"]
    assert resumed.paused is paused
    assert not RunState.from_events(sink.events).paused  # the views fold the same stream


def conv_applied(applied: AppliedAs) -> int:
    return conv.to_pb_control_ack(ControlAck("x", AckResult.SUCCESS, applied_as=applied)).applied_as
