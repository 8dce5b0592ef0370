"""Round trips through goldfive.conv, the one place dataclasses meet the wire."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldfive import conv
from goldfive.control import AckResult, AppliedAs, ControlAck, ControlKind, ControlMessage
from goldfive.errors import ConversionError
from goldfive.pb.goldfive.v1 import control_pb2, types_pb2
from goldfive.types import DriftKind, DriftSeverity, Goal, Plan, Task, TaskEdge, TaskStatus

# Protobuf strings must be valid UTF-8: no lone surrogates.
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)

_TEXT_FIELDS: dict[ControlKind, tuple[str, ...]] = {
    ControlKind.STEER: ("note", "suggested_action", "author", "annotation_id"),
    ControlKind.REWIND_TO: ("task_id",),
    ControlKind.APPROVE: ("target_id", "detail"),
    ControlKind.REJECT: ("target_id", "detail"),
    ControlKind.INJECT_MESSAGE: ("role", "text"),
    ControlKind.CANCEL: ("reason",),
}
_NO_PAYLOAD = (ControlKind.PAUSE, ControlKind.RESUME, ControlKind.STATUS_QUERY)


def _payload_for(kind: ControlKind) -> st.SearchStrategy[dict[str, Any]]:
    if kind in _TEXT_FIELDS:
        return st.fixed_dictionaries({k: TEXT for k in _TEXT_FIELDS[kind]})
    if kind is ControlKind.INTERCEPT_TRANSFER:
        return st.one_of(st.just({}), st.fixed_dictionaries({"enabled": st.booleans()}))
    if kind in _NO_PAYLOAD:
        return st.just({})
    if kind is ControlKind.ANSWER:  # no typed field on the wire: it travels in extra_json
        return st.one_of(st.fixed_dictionaries({"target_id": TEXT, "text": TEXT}), st.fixed_dictionaries({"target_id": TEXT, "option": TEXT}))
    # Ladder kinds and this project's STEER_QUEUE / GUIDANCE / BUDGET have no typed payload
    # message: whatever they carry travels as JSON.
    return st.dictionaries(TEXT, st.one_of(TEXT, st.integers(-(2**53), 2**53), st.booleans()), max_size=4)


MESSAGES = st.sampled_from(list(ControlKind)).flatmap(
    lambda kind: st.builds(
        ControlMessage,
        kind=st.just(kind),
        id=TEXT,
        payload=_payload_for(kind),
        issued_at_ms=st.integers(0, 2**42),
    )
)


def _through_bytes(msg: ControlMessage) -> ControlMessage:
    wire = conv.to_pb_control_event(msg).SerializeToString()
    return conv.from_pb_control_event(control_pb2.ControlEvent.FromString(wire))


def _payload_after_the_wire(msg: ControlMessage) -> dict[str, Any]:
    # An empty CANCEL reason is no reason: the wire cannot tell them apart, v1 decodes it as {}.
    if msg.kind is ControlKind.CANCEL and msg.payload == {"reason": ""}:
        return {}
    return msg.payload


def _same(a: ControlMessage, b: ControlMessage) -> None:
    assert (b.kind, b.id, b.payload, b.issued_at_ms) == (a.kind, a.id, _payload_after_the_wire(a), a.issued_at_ms)


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_every_control_kind_round_trips_with_arbitrary_text(msg: ControlMessage) -> None:
    _same(msg, conv.from_pb_control_event(conv.to_pb_control_event(msg)))
    _same(msg, _through_bytes(msg))


def test_the_property_test_covers_every_control_kind() -> None:
    covered = set(_TEXT_FIELDS) | set(_NO_PAYLOAD) | {ControlKind.INTERCEPT_TRANSFER}
    covered |= {ControlKind.GOLDFIVE_STEER, ControlKind.GOLDFIVE_PAUSE_ESCALATE, ControlKind.ANSWER, ControlKind.STEER_QUEUE, ControlKind.GUIDANCE, ControlKind.BUDGET}
    assert covered == set(ControlKind)


@pytest.mark.parametrize("kind", list(ControlKind))
def test_each_kind_maps_to_its_own_proto_enum_value(kind: ControlKind) -> None:
    ev = conv.to_pb_control_event(ControlMessage(kind))
    assert control_pb2.ControlKind.Name(ev.kind) == "CONTROL_KIND_" + kind.name
    assert ev.custom_kind == ""
    assert conv.from_pb_control_event(ev).kind is kind


@pytest.mark.parametrize("kind", _NO_PAYLOAD)
def test_payload_less_kinds_round_trip_as_an_empty_payload(kind: ControlKind) -> None:
    msg = ControlMessage(kind, id="m")
    ev = conv.to_pb_control_event(msg)
    assert ev.WhichOneof("payload") is None and ev.extra_json == ""
    assert _through_bytes(msg).payload == {}


def test_steer_typed_fields_use_the_steer_oneof() -> None:
    msg = ControlMessage(ControlKind.STEER, payload={"note": "focus", "author": "ana", "annotation_id": "an-1"})
    ev = conv.to_pb_control_event(msg)
    assert ev.WhichOneof("payload") == "steer"
    assert (ev.steer.note, ev.steer.author, ev.steer.annotation_id) == ("focus", "ana", "an-1")
    assert ev.extra_json == ""


def test_steer_without_author_or_annotation_id_comes_back_with_empty_strings() -> None:
    back = _through_bytes(ControlMessage(ControlKind.STEER, payload={"note": "fewer slides"}))
    assert back.payload == {"note": "fewer slides", "suggested_action": "", "author": "", "annotation_id": ""}


def test_steer_extra_keys_survive_next_to_typed_ones() -> None:
    payload = {"note": "n", "priority": 3, "tags": ["a", "é"]}
    back = _through_bytes(ControlMessage(ControlKind.STEER, payload=payload))
    assert back.payload["priority"] == 3 and back.payload["tags"] == ["a", "é"]
    assert back.payload["note"] == "n"


def test_cancel_reason_survives_bytes_serialisation() -> None:
    back = _through_bytes(ControlMessage(ControlKind.CANCEL, payload={"reason": "budget exceeded"}))
    assert back.kind is ControlKind.CANCEL
    assert back.payload == {"reason": "budget exceeded"}


@pytest.mark.parametrize("payload", [{}, {"reason": ""}], ids=["no-reason", "empty-reason"])
def test_cancel_without_a_reason_decodes_as_an_empty_payload_like_goldfive_v1(payload: dict[str, Any]) -> None:
    back = _through_bytes(ControlMessage(ControlKind.CANCEL, payload=payload))
    assert back.kind is ControlKind.CANCEL
    assert back.payload == {}


def test_cancel_with_a_reason_and_extra_keys_keeps_both() -> None:
    back = _through_bytes(ControlMessage(ControlKind.CANCEL, payload={"reason": "stop", "by": "ops"}))
    assert back.payload == {"reason": "stop", "by": "ops"}


@pytest.mark.parametrize("enabled", [True, False])
def test_intercept_transfer_enabled_survives_bytes_serialisation(enabled: bool) -> None:
    back = _through_bytes(ControlMessage(ControlKind.INTERCEPT_TRANSFER, payload={"enabled": enabled}))
    assert back.payload == {"enabled": enabled}
    assert back.payload["enabled"] is enabled


def test_intercept_transfer_without_enabled_stays_absent() -> None:
    msg = ControlMessage(ControlKind.INTERCEPT_TRANSFER)
    assert not conv.to_pb_control_event(msg).HasField("intercept_enabled")
    assert _through_bytes(msg).payload == {}


def test_custom_kind_with_a_json_payload_survives() -> None:
    payload = {"label": "v2", "count": 7, "nested": {"ok": True, "xs": [1, 2.5, None]}}
    msg = ControlMessage("CHECKPOINT", id="c1", payload=payload, issued_at_ms=1_700_000_000_123)
    ev = conv.to_pb_control_event(msg)
    assert ev.kind == control_pb2.CONTROL_KIND_UNSPECIFIED and ev.custom_kind == "CHECKPOINT"
    back = _through_bytes(msg)
    assert back.kind == "CHECKPOINT" and not isinstance(back.kind, ControlKind)
    assert back.payload == payload
    assert back.issued_at_ms == 1_700_000_000_123


def test_a_payload_that_is_not_json_serialisable_raises_conversion_error() -> None:
    with pytest.raises(ConversionError, match="CHECKPOINT"):
        conv.to_pb_control_event(ControlMessage("CHECKPOINT", payload={"x": object()}))


def test_kind_unspecified_without_custom_kind_raises_conversion_error() -> None:
    with pytest.raises(ConversionError, match="bad-1"):
        conv.from_pb_control_event(control_pb2.ControlEvent(id="bad-1"))


def test_unknown_kind_number_raises_conversion_error() -> None:
    with pytest.raises(ConversionError, match="999"):
        conv.from_pb_control_event(control_pb2.ControlEvent(id="x", kind=999))  # type: ignore[arg-type]


@pytest.mark.parametrize("extra", ["{not json", "[1, 2]"])
def test_malformed_extra_json_raises_conversion_error(extra: str) -> None:
    ev = control_pb2.ControlEvent(id="x", kind=control_pb2.CONTROL_KIND_PAUSE, extra_json=extra)
    with pytest.raises(ConversionError):
        conv.from_pb_control_event(ev)


# -- acks ----------------------------------------------------------------------------


@pytest.mark.parametrize("result", list(AckResult))
def test_control_ack_round_trips_for_every_result(result: AckResult) -> None:
    ack = ControlAck("ctl-1", result, detail="run not active ✓", acked_at_ms=1_700_000_000_456)
    pb = conv.to_pb_control_ack(ack)
    assert control_pb2.ControlAckResult.Name(pb.result) == "CONTROL_ACK_RESULT_" + result.name
    back = conv.from_pb_control_ack(control_pb2.ControlAck.FromString(pb.SerializeToString()))
    assert back == ack
    assert back.result is result


@pytest.mark.parametrize("applied", list(AppliedAs))
def test_control_ack_round_trips_what_it_was_applied_as(applied: AppliedAs) -> None:
    ack = ControlAck("ctl-2", AckResult.SUCCESS, "steer accepted", 1_700_000_000_456, applied_as=applied)
    pb = conv.to_pb_control_ack(ack)
    assert control_pb2.ControlAppliedAs.Name(pb.applied_as) == "CONTROL_APPLIED_AS_" + applied.name
    back = conv.from_pb_control_ack(control_pb2.ControlAck.FromString(pb.SerializeToString()))
    assert back == ack and back.applied_as is applied


def test_an_ack_without_applied_as_reads_back_as_not_said() -> None:
    # A goldfive v1 peer (or a recording from before the field) writes no applied_as; a newer
    # peer may write a value this version does not know. Neither is guessed here.
    old = control_pb2.ControlAck(control_id="c", result=control_pb2.CONTROL_ACK_RESULT_SUCCESS, detail="paused")
    assert conv.from_pb_control_ack(old).applied_as is None
    assert conv.to_pb_control_ack(ControlAck("c", AckResult.SUCCESS, "paused")).applied_as == 0
    newer = control_pb2.ControlAck.FromString(old.SerializeToString() + bytes([0xA0, 0x06, 0x63]))  # field 100 = 99
    assert conv.from_pb_control_ack(newer).applied_as is None


def test_control_ack_without_a_result_raises_conversion_error() -> None:
    with pytest.raises(ConversionError, match="ctl-9"):
        conv.from_pb_control_ack(control_pb2.ControlAck(control_id="ctl-9"))


# -- goals, tasks, plans ----------------------------------------------------------------


def test_goal_round_trips_with_metadata() -> None:
    goal = Goal("g1", "ship the deck", metadata={"owner": "ana", "ü": "✓"})
    back = conv.from_pb_goal(types_pb2.Goal.FromString(conv.to_pb_goal(goal).SerializeToString()))
    assert back == goal and back.metadata == goal.metadata


@pytest.mark.parametrize("status", list(TaskStatus))
def test_task_round_trips_with_every_status(status: TaskStatus) -> None:
    task = Task("t1", "Title", "desc", "agent-a", status, predicted_start_ms=5, predicted_duration_ms=1500)
    back = conv.from_pb_task(types_pb2.Task.FromString(conv.to_pb_task(task).SerializeToString()))
    assert back == task
    assert back.status is status


def test_plan_round_trips_with_edges_and_revision_fields() -> None:
    plan = Plan(
        tasks=[Task("a", "A", status=TaskStatus.COMPLETED), Task("b", "B", "more", "agent-b"), Task("c", "C")],
        edges=[TaskEdge("a", "b"), TaskEdge("a", "c"), TaskEdge("b", "c")],
        id="plan-1",
        run_id="run-1",
        goal_ids=["g1", "g2"],
        summary="three steps",
        revision_reason="operator steer",
        revision_kind=DriftKind.USER_STEER,
        revision_severity=DriftSeverity.WARNING,
        revision_index=2,
    )
    pb = types_pb2.Plan.FromString(conv.to_pb_plan(plan).SerializeToString())
    assert pb.revision_kind == types_pb2.DRIFT_KIND_USER_STEER
    assert pb.revision_severity == types_pb2.DRIFT_SEVERITY_WARNING
    back = conv.from_pb_plan(pb)
    assert back == plan
    assert back.revision_kind is DriftKind.USER_STEER
    assert back.revision_severity is DriftSeverity.WARNING
    assert [(e.from_task_id, e.to_task_id) for e in back.edges] == [("a", "b"), ("a", "c"), ("b", "c")]


def test_plan_without_revision_round_trips_with_empty_revision_fields() -> None:
    plan = Plan(tasks=[Task("a", "A")])
    back = conv.from_pb_plan(conv.to_pb_plan(plan))
    assert back == plan
    assert (back.revision_kind, back.revision_severity, back.revision_index) == ("", "", 0)


@pytest.mark.parametrize("kind", list(DriftKind))
def test_every_drift_kind_round_trips(kind: DriftKind) -> None:
    assert conv.drift_kind_from_pb(conv.drift_kind_to_pb(kind)) is kind


def test_unknown_task_status_value_raises_conversion_error() -> None:
    with pytest.raises(ConversionError, match="42"):
        conv.task_status_from_pb(42)


def test_usage_totals_round_trip_and_a_peers_impossible_figures_are_made_consistent() -> None:
    from goldfive.pb.goldfive.v1 import events_pb2
    from goldfive.usage import UsageTotals

    totals = UsageTotals(calls=3, input_tokens=900, output_tokens=120, cached_tokens=300, cost_usd=0.25, unpriced_calls=1)
    assert conv.from_pb_usage_totals(conv.to_pb_usage_totals(totals)) == totals
    odd = events_pb2.UsageTotals(calls=1, input_tokens=5, cached_tokens=50, cost_usd=-1.0, unpriced_calls=7)
    back = conv.from_pb_usage_totals(odd)
    assert (back.cached_tokens, back.cost_usd, back.unpriced_calls) == (5, 0.0, 1)


def test_a_drift_kind_or_severity_given_as_text_maps_as_its_member_and_unknown_text_is_refused() -> None:
    for kind in DriftKind:
        assert conv.drift_kind_to_pb(str(kind.value)) == conv.drift_kind_to_pb(kind) != types_pb2.DRIFT_KIND_UNSPECIFIED
    for sev in DriftSeverity:
        assert conv.drift_severity_to_pb(str(sev.value)) == conv.drift_severity_to_pb(sev)
    with pytest.raises(ValueError, match="nonsense"):
        conv.drift_kind_to_pb("nonsense")
    with pytest.raises(ValueError, match="nonsense"):
        conv.drift_severity_to_pb("nonsense")
