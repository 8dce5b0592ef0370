"""Event factories: the right oneof, an envelope stamped from the Session, and plan diffs."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

import pytest

from goldfive import events
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1 import control_pb2, types_pb2
from goldfive.types import DriftEvent, DriftEvidence, DriftKind, DriftSeverity, Goal, Plan, Session, Task, TaskEdge, TaskStatus
from goldfive.usage import ModelUsage, Purpose, RecordedUsage

NOW_MS = 1_700_000_000_000

PLAN = Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[TaskEdge("a", "b")], id="p1")
PLAN2 = Plan(tasks=[Task("a", "A"), Task("c", "C")], edges=[TaskEdge("a", "c")], id="p1", revision_index=1)


def _session() -> Session:
    return Session(run_id="run-1", session_id="sess-1", clock=lambda: NOW_MS)


def _check_run_started(p: Any) -> None:
    assert (p.goal_summary, p.user_input) == ("deck", "make a deck")


def _check_plan_revised(p: Any) -> None:
    assert p.plan.revision_index == 1 and p.drift_id == "d1"
    assert list(p.diff.added_task_ids) == ["c"] and list(p.diff.removed_task_ids) == ["b"]


def _check_drift(p: Any) -> None:
    assert p.kind == types_pb2.DRIFT_KIND_USER_STEER
    assert p.severity == types_pb2.DRIFT_SEVERITY_WARNING
    assert (p.id, p.detail, p.current_task_id, p.annotation_id) == ("d1", "by ana: x", "a", "an-1")


def _check_approval_requested(p: Any) -> None:
    assert (p.target_id, p.kind, p.prompt, p.tool_name, p.timeout_ms) == ("tc-1", "tool", "ok?", "pay", 60000)
    assert json.loads(p.args_json) == {"amount": 500}
    # v1 readers find a tool approval's tool and arguments in metadata: they are repeated there.
    assert dict(p.metadata) == {"k": "v", "tool_name": "pay", "args_json": p.args_json}


def _check_control_received(p: Any) -> None:
    assert p.kind == "STEER" and p.author == "ana"
    assert p.control.id == "ctl-1" and p.control.kind == control_pb2.CONTROL_KIND_STEER


def _check_control_acked(p: Any) -> None:
    assert p.kind == "PAUSE"
    assert (p.ack.control_id, p.ack.result) == ("ctl-2", control_pb2.CONTROL_ACK_RESULT_FAILURE)


Factory = Callable[[Session], Any]
CASES: list[tuple[str, Factory, Callable[[Any], None]]] = [
    ("run_started", lambda s: events.run_started(s, goal_summary="deck", user_input="make a deck"),
     _check_run_started),
    ("goal_derived", lambda s: events.goal_derived(s, [Goal("g1", "one"), Goal("g2", "two")]),
     lambda p: [g.id for g in p.goals] == ["g1", "g2"] or pytest.fail("goals")),
    ("plan_submitted", lambda s: events.plan_submitted(s, PLAN),
     lambda p: [t.id for t in p.plan.tasks] == ["a", "b"] or pytest.fail("plan")),
    ("plan_revised", lambda s: events.plan_revised(s, PLAN, PLAN2, drift_id="d1"), _check_plan_revised),
    ("run_completed", lambda s: events.run_completed(s, "done"),
     lambda p: p.outcome_summary == "done" or pytest.fail("summary")),
    ("run_aborted", lambda s: events.run_aborted(s, "cancelled"),
     lambda p: p.reason == "cancelled" or pytest.fail("reason")),
    ("task_started", lambda s: events.task_started(s, "a", "agent-1"),
     lambda p: (p.task_id, p.assignee_agent_id) == ("a", "agent-1") or pytest.fail("started")),
    ("task_progress", lambda s: events.task_progress(s, "a", detail="half", fraction=0.5),
     lambda p: (p.task_id, p.detail, p.fraction) == ("a", "half", 0.5) or pytest.fail("progress")),
    ("task_completed", lambda s: events.task_completed(s, "a", "ok"),
     lambda p: (p.task_id, p.result_summary) == ("a", "ok") or pytest.fail("completed")),
    ("task_failed", lambda s: events.task_failed(s, "a", "boom", recoverable=True),
     lambda p: (p.task_id, p.reason, p.recoverable) == ("a", "boom", True) or pytest.fail("failed")),
    ("task_blocked", lambda s: events.task_blocked(s, "a", "needs approval"),
     lambda p: (p.task_id, p.blocker) == ("a", "needs approval") or pytest.fail("blocked")),
    ("task_cancelled", lambda s: events.task_cancelled(s, "a", "user_steer"),
     lambda p: (p.task_id, p.reason) == ("a", "user_steer") or pytest.fail("cancelled")),
    ("task_transitioned",
     lambda s: events.task_transitioned(s, "a", TaskStatus.RUNNING, TaskStatus.COMPLETED, "done"),
     lambda p: (p.task_id, p.from_status, p.to_status, p.reason)
     == ("a", types_pb2.TASK_STATUS_RUNNING, types_pb2.TASK_STATUS_COMPLETED, "done") or pytest.fail("tr")),
    ("drift_detected",
     lambda s: events.drift_detected(
         s, DriftEvent(DriftKind.USER_STEER, DriftSeverity.WARNING, "by ana: x", "a", "an-1", id="d1")),
     _check_drift),
    ("approval_requested",
     lambda s: events.approval_requested(
         s, target_id="tc-1", kind="tool", prompt="ok?", task_id="a", tool_name="pay",
         args={"amount": 500}, timeout_ms=60000, metadata={"k": "v"}),
     _check_approval_requested),
    ("approval_granted", lambda s: events.approval_granted(s, "tc-1", "yes"),
     lambda p: (p.target_id, p.detail) == ("tc-1", "yes") or pytest.fail("granted")),
    ("approval_rejected", lambda s: events.approval_rejected(s, "tc-1", "no"),
     lambda p: (p.target_id, p.detail) == ("tc-1", "no") or pytest.fail("rejected")),
    ("conversation_started", lambda s: events.conversation_started(s, "a", "hello"),
     lambda p: (p.lane, p.input) == ("a", "hello") or pytest.fail("conv started")),
    ("conversation_ended", lambda s: events.conversation_ended(s, "a", "closed"),
     lambda p: (p.lane, p.reason) == ("a", "closed") or pytest.fail("conv ended")),
    ("message_parked",
     lambda s: events.message_parked(s, message_id="m1", lane="a", role="user", text="hi", control_id="c1"),
     lambda p: (p.message_id, p.lane, p.role, p.text, p.control_id) == ("m1", "a", "user", "hi", "c1")
     or pytest.fail("parked")),
    ("message_delivered", lambda s: events.message_delivered(s, message_id="m1", lane="a", via="boundary"),
     lambda p: (p.message_id, p.lane, p.via) == ("m1", "a", "boundary") or pytest.fail("delivered")),
    ("message_returned", lambda s: events.message_returned(s, message_id="m1", lane="a"),
     lambda p: (p.message_id, p.lane) == ("m1", "a") or pytest.fail("returned")),
    ("invocation_abandoned", lambda s: events.invocation_abandoned(s, "a", 2.5, "ignored cancel"),
     lambda p: (p.task_id, p.grace_s, p.reason) == ("a", 2.5, "ignored cancel") or pytest.fail("abandoned")),
    ("recording_failed", lambda s: events.recording_failed(s, "writing 3 events to r.sqlite failed: disk full", 41),
     lambda p: (p.detail, p.failed_at_sequence) == ("writing 3 events to r.sqlite failed: disk full", 41) or pytest.fail("rec")),
    ("usage_recorded",
     lambda s: events.usage_recorded(s, RecordedUsage(
         ModelUsage("gpt-4o-mini", 1200, 300, 200, "pydantic_ai", response_id="r1", duration_ms=40), "a", Purpose.TASK, 0.0004, "prices")),
     lambda p: (p.task_id, p.purpose, p.model, p.input_tokens, p.output_tokens, p.cached_tokens, p.cost_usd, p.source,
                p.cost_source, p.response_id, p.duration_ms)
     == ("a", "task", "gpt-4o-mini", 1200, 300, 200, 0.0004, "pydantic_ai", "prices", "r1", 40) or pytest.fail("usage")),
    ("control_received",
     lambda s: events.control_received(
         s, ControlMessage(ControlKind.STEER, id="ctl-1", payload={"note": "x", "author": "ana"})),
     _check_control_received),
    ("control_acked",
     lambda s: events.control_acked(s, ControlAck("ctl-2", AckResult.FAILURE, "run not active"), "PAUSE"),
     _check_control_acked),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "make", "check"), CASES, ids=[c[0] for c in CASES])
def test_factory_sets_its_oneof_payload(kind: str, make: Factory, check: Callable[[Any], None]) -> None:
    ev = make(_session())
    assert events.kind_of(ev) == kind
    assert ev.WhichOneof("payload") == kind
    check(getattr(ev, kind))


@pytest.mark.parametrize(("kind", "make", "check"), CASES, ids=[c[0] for c in CASES])
def test_factory_stamps_the_envelope_from_the_session(kind: str, make: Factory, check: Any) -> None:
    s = _session()
    s.next_sequence()
    s.next_sequence()  # the factory must take the session's next sequence, not restart at 0
    ev = make(s)
    assert (ev.run_id, ev.session_id, ev.sequence) == ("run-1", "sess-1", 2)
    assert re.fullmatch(r"run-1:2:[0-9a-f]{8}", ev.event_id), ev.event_id
    assert ev.emitted_at.ToMilliseconds() == NOW_MS
    assert s.last_sequence == 2


def test_consecutive_events_get_consecutive_sequences_and_distinct_ids() -> None:
    s = _session()
    evs = [make(s) for _, make, _ in CASES]
    assert [e.sequence for e in evs] == list(range(len(CASES)))
    assert len({e.event_id for e in evs}) == len(evs)


def test_kind_of_an_empty_event_is_empty() -> None:
    assert events.kind_of(events.Event()) == ""


def test_drift_without_task_id_falls_back_to_the_current_task() -> None:
    s = _session()
    s.current_task_id = "running-task"
    ev = events.drift_detected(s, DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.INFO, "x"))
    assert ev.drift_detected.current_task_id == "running-task"


def test_task_progress_without_a_fraction_has_none_so_v1_readers_see_zero() -> None:
    for ev in (events.task_progress(_session(), "a"), events.task_progress(_session(), "a", fraction=-1.0)):
        assert not ev.task_progress.HasField("fraction")
        assert ev.task_progress.fraction == 0.0
    reported_zero = events.task_progress(_session(), "a", fraction=0.0).task_progress
    assert reported_zero.HasField("fraction") and reported_zero.fraction == 0.0


# -- plan_diff ----------------------------------------------------------------------------


def test_plan_diff_lists_added_removed_and_modified_tasks_and_edges() -> None:
    old = Plan(
        tasks=[Task("a", "A"), Task("b", "B"), Task("c", "C"), Task("d", "D")],
        edges=[TaskEdge("a", "b"), TaskEdge("b", "c"), TaskEdge("c", "d")],
    )
    new = Plan(
        tasks=[
            Task("a", "A"),  # unchanged
            Task("b", "B (narrowed)"),  # title changed
            Task("c", "C", assignee_agent_id="agent-2"),  # assignee changed
            Task("e", "E"),  # added
            Task("f", "F"),  # added
        ],  # d removed
        edges=[TaskEdge("a", "b"), TaskEdge("b", "e"), TaskEdge("e", "f")],
        revision_index=1,
    )
    diff = events.plan_diff(old, new)
    assert list(diff.added_task_ids) == ["e", "f"]
    assert list(diff.removed_task_ids) == ["d"]
    assert list(diff.modified_task_ids) == ["b", "c"]
    assert [(e.from_task_id, e.to_task_id) for e in diff.added_edges] == [("b", "e"), ("e", "f")]
    assert [(e.from_task_id, e.to_task_id) for e in diff.removed_edges] == [("b", "c"), ("c", "d")]


def test_plan_diff_counts_description_and_status_changes_as_modified() -> None:
    old = Plan(tasks=[Task("a", "A"), Task("b", "B")])
    new = Plan(tasks=[Task("a", "A", description="more"), Task("b", "B", status=TaskStatus.CANCELLED)])
    assert list(events.plan_diff(old, new).modified_task_ids) == ["a", "b"]


def test_plan_diff_of_identical_plans_is_empty() -> None:
    diff = events.plan_diff(PLAN, Plan(tasks=list(PLAN.tasks), edges=list(PLAN.edges)))
    assert diff == type(diff)()


def test_plan_diff_without_an_old_plan_adds_everything() -> None:
    diff = events.plan_diff(None, PLAN)
    assert list(diff.added_task_ids) == ["a", "b"]
    assert [(e.from_task_id, e.to_task_id) for e in diff.added_edges] == [("a", "b")]
    assert not diff.removed_task_ids and not diff.modified_task_ids and not diff.removed_edges


# -- a failed build leaves no gap -----------------------------------------------------------

FAILING_BUILDS: list[tuple[str, Callable[[Session], Any]]] = [
    ("non-numeric fraction", lambda s: events.task_progress(s, "a", detail="x", fraction="half")),  # type: ignore[arg-type]
    ("non-string result", lambda s: events.task_completed(s, "a", None)),  # type: ignore[arg-type]
    ("unknown status", lambda s: events.task_transitioned(s, "a", "NOPE", TaskStatus.COMPLETED)),  # type: ignore[arg-type]
    ("unsortable args", lambda s: events.approval_requested(s, target_id="t", kind="tool", args={1: "a", "b": 2})),
    ("control payload that is not JSON",
     lambda s: events.control_received(s, ControlMessage(ControlKind.STEER, payload={"x": object()}))),
]  # fmt: skip


@pytest.mark.parametrize("build", [b for _, b in FAILING_BUILDS], ids=[n for n, _ in FAILING_BUILDS])
def test_an_event_that_fails_to_build_consumes_no_sequence(build: Callable[[Session], Any]) -> None:
    s = _session()
    events.run_started(s, goal_summary="g")
    with pytest.raises(Exception):
        build(s)
    assert s.last_sequence == 0
    assert events.task_started(s, "a").sequence == 1  # gap-free: the failed build took no number


def test_a_clock_outside_the_timestamp_range_is_refused_without_consuming_a_sequence() -> None:
    s = Session(run_id="r", clock=lambda: 10**16)  # year ~318857
    with pytest.raises(ValueError, match="Timestamp"):
        events.task_started(s, "a")
    assert s.last_sequence == -1


def test_emitted_at_before_1970_round_trips_to_the_same_milliseconds() -> None:
    ev = events.task_started(Session(run_id="r", clock=lambda: -1_001), "a")
    assert (ev.emitted_at.seconds, ev.emitted_at.nanos) == (-2, 999_000_000)
    assert ev.emitted_at.ToMilliseconds() == -1_001


def test_text_with_a_lone_surrogate_builds_and_leaves_no_gap() -> None:
    s = _session()
    first = events.task_completed(s, "a", "half a pair: \ud800")
    second = events.task_started(s, "b")
    assert [first.sequence, second.sequence] == [0, 1]
    assert first.task_completed.result_summary == "half a pair: \ufffd"


def test_a_plan_whose_later_task_cannot_be_encoded_is_built_once_from_its_cleaned_copy() -> None:
    # The plan is built inside the event: a failure half way must not leave the tasks added
    # before it in the event (each task once, the bad text repaired).
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B \ud800")], edges=[TaskEdge("a", "b")], id="p")
    for ev, built in (
        (events.plan_submitted(_session(), plan), lambda e: e.plan_submitted.plan),
        (events.plan_revised(_session(), None, plan), lambda e: e.plan_revised.plan),
    ):
        out = built(ev)
        assert [(t.id, t.title) for t in out.tasks] == [("a", "A"), ("b", "B \ufffd")]
        assert [(e.from_task_id, e.to_task_id) for e in out.edges] == [("a", "b")]
        assert out.id == "p" and ev.sequence == 0


def test_a_plan_event_holds_every_field_of_every_task_set_or_left_at_its_default() -> None:
    plan = Plan(
        tasks=[Task("a", "A"), Task("b", "B", "does b", "agent-2", TaskStatus.RUNNING, 5, 7)],
        edges=[TaskEdge("a", "b")],
        id="p",
        goal_ids=["g1"],
        summary="two",
    )
    ev = events.plan_submitted(_session(), plan)
    assert ev.plan_submitted.HasField("plan")
    a, b = ev.plan_submitted.plan.tasks
    assert (a.id, a.title, a.description, a.assignee_agent_id, a.status) == ("a", "A", "", "", types_pb2.TASK_STATUS_PENDING)
    assert (b.description, b.assignee_agent_id, b.status, b.predicted_start_ms, b.predicted_duration_ms) == (
        "does b", "agent-2", types_pb2.TASK_STATUS_RUNNING, 5, 7,
    )
    assert list(ev.plan_submitted.plan.goal_ids) == ["g1"] and ev.plan_submitted.plan.summary == "two"
    empty = events.plan_submitted(_session(), Plan(tasks=[]))
    assert empty.plan_submitted.HasField("plan") and not empty.plan_submitted.plan.tasks


# -- text from outside is made encodable ----------------------------------------------------

LONE = "\udc80"  # what surrogateescape makes of a stray 0x80 byte


def _steer(note: str) -> ControlMessage:
    return ControlMessage(ControlKind.STEER, id="ctl-1", payload={"note": note, "author": "ana", "why": note})


DIRTY: list[tuple[str, Callable[[Session], Any], Callable[[Any], str], int]] = [
    ("task result", lambda s: events.task_completed(s, "a", f"ok {LONE}"),
     lambda e: e.task_completed.result_summary, 1),
    ("progress detail", lambda s: events.task_progress(s, "a", detail=f"step {LONE}"),
     lambda e: e.task_progress.detail, 1),
    ("failure reason", lambda s: events.task_failed(s, "a", f"boom {LONE}"), lambda e: e.task_failed.reason, 1),
    ("drift detail", lambda s: events.drift_detected(s, DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.INFO, LONE)),
     lambda e: e.drift_detected.detail, 1),
    ("approval tool name and args",
     lambda s: events.approval_requested(s, target_id="t", kind="tool", tool_name=f"pay{LONE}",
                                         args={"memo": f"a{LONE}b", LONE: [LONE]}),
     lambda e: e.approval_requested.tool_name + e.approval_requested.args_json, 4),
    ("approval metadata", lambda s: events.approval_requested(s, target_id="t", kind="tool", metadata={LONE: LONE}),
     lambda e: "".join(f"{k}{v}" for k, v in e.approval_requested.metadata.items()), 2),
    ("parked message text", lambda s: events.message_parked(s, message_id="m", lane="a", role="user", text=LONE),
     lambda e: e.message_parked.text, 1),
    ("control payload texts", lambda s: events.control_received(s, _steer(f"note {LONE}")),
     lambda e: e.control_received.control.steer.note + e.control_received.control.extra_json, 2),
    ("control ack detail",
     lambda s: events.control_acked(s, ControlAck("c", AckResult.FAILURE, f"no {LONE}"), "PAUSE"),
     lambda e: e.control_acked.ack.detail, 1),
    ("planned task title", lambda s: events.plan_submitted(s, Plan(tasks=[Task("a", f"A {LONE}")])),
     lambda e: e.plan_submitted.plan.tasks[0].title, 1),
    ("revised plan and its diff",
     lambda s: events.plan_revised(s, PLAN, Plan(tasks=[Task(f"c{LONE}", "C")]), drift_id="d"),
     lambda e: e.plan_revised.plan.tasks[0].id + e.plan_revised.diff.added_task_ids[0], 2),
    ("derived goal", lambda s: events.goal_derived(s, [Goal("g", f"sum {LONE}", metadata={"k": LONE})]),
     lambda e: e.goal_derived.goals[0].summary + e.goal_derived.goals[0].metadata["k"], 2),
]  # fmt: skip


@pytest.mark.parametrize(("build", "text", "n"), [d[1:] for d in DIRTY], ids=[d[0] for d in DIRTY])
def test_a_lone_surrogate_from_outside_becomes_a_replacement_character_and_is_counted(
    build: Callable[[Session], Any], text: Callable[[Any], str], n: int
) -> None:
    before = events.text_replacements()
    ev = build(_session())
    ev.SerializeToString()  # the whole event is encodable
    assert LONE not in text(ev)
    assert text(ev).count("\ufffd") == n
    assert events.text_replacements() - before == n


def test_args_with_a_lone_surrogate_are_still_valid_json_with_the_replacement_inside() -> None:
    ev = events.approval_requested(_session(), target_id="t", kind="tool", args={"memo": f"a{LONE}b", LONE: 1})
    assert json.loads(ev.approval_requested.args_json) == {"memo": "a\ufffdb", "\ufffd": 1}
    ev.approval_requested.args_json.encode("utf-8")  # strict: no surrogate escapes left


def test_the_ledger_entry_makes_its_args_json_once_and_it_is_clean_json() -> None:
    args = {"memo": f"a{LONE}b", LONE: 1}
    want = {"memo": "a\ufffdb", "\ufffd": 1}
    d = events.approval_decided(_session(), target_id="t", outcome="approved", requested_args=args, ran_args=args).approval_decided
    assert json.loads(d.requested_args_json) == json.loads(d.ran_args_json) == want
    # The request's JSON handed in (the run makes it once per approval) is cleaned as well.
    given = events.approval_decided(
        _session(), target_id="t", outcome="approved", requested_args=args, ran_args=args,
        requested_args_json=json.dumps(args, ensure_ascii=False, sort_keys=True),
    ).approval_decided  # fmt: skip
    assert given.requested_args_json == given.ran_args_json == d.requested_args_json
    edited = events.approval_decided(_session(), target_id="t", outcome="edited", requested_args=args, ran_args={"memo": "x"})
    assert json.loads(edited.approval_decided.ran_args_json) == {"memo": "x"}


def test_clean_text_returns_valid_text_unchanged_and_uncounted() -> None:
    before = events.text_replacements()
    for text in ("plain", "", "résumé — ✓ 🐍", "already \ufffd"):
        assert events.clean_text(text) is text
    assert events.text_replacements() == before


def test_clean_text_joins_a_surrogate_pair_and_replaces_each_lone_one() -> None:
    before = events.text_replacements()
    assert events.clean_text("\ud83d\ude00 \ud83d x\ude00") == "\U0001f600 \ufffd x\ufffd"
    assert events.text_replacements() - before == 2


def test_clean_text_refuses_what_is_not_a_string() -> None:
    with pytest.raises(TypeError, match="expected str, got int"):
        events.clean_text(7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected str, got bytes"):
        events.clean_text("é".encode())  # type: ignore[arg-type]


def test_an_unknown_cost_is_left_unset_not_zero() -> None:
    ev = events.usage_recorded(_session(), RecordedUsage(ModelUsage("mystery-model", 10, 5), "a", Purpose.TASK, None, ""))
    assert not ev.usage_recorded.HasField("cost_usd")
    assert (ev.usage_recorded.input_tokens, ev.usage_recorded.output_tokens) == (10, 5)


def test_a_drift_carries_its_evidence_with_times() -> None:
    evidence = (
        DriftEvidence(NOW_MS - 2000, "tool_call", "deploy", "c1", '{"service": "api"}', sequence=7),
        DriftEvidence(NOW_MS - 1000, "tool_call", "deploy", "c2", '{"service": "api"}', sequence=9),
    )
    drift = DriftEvent(DriftKind.LOOPING_TOOL_CALL, DriftSeverity.WARNING, "looks stuck", "a", evidence=evidence)
    p = events.drift_detected(_session(), drift).drift_detected
    assert [(e.at.ToMilliseconds(), e.tool_name, e.call_id, e.args_json, e.sequence) for e in p.evidence] == [
        (NOW_MS - 2000, "deploy", "c1", '{"service": "api"}', 7),
        (NOW_MS - 1000, "deploy", "c2", '{"service": "api"}', 9),
    ]
