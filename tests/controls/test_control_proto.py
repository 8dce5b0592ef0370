"""Tripwires: the Python enums and the proto enums stay in lockstep, and field numbers match
the goldfive v1 wire format of DESIGN section 3 (never renumber)."""

from __future__ import annotations

from enum import Enum
from typing import Any

import pytest

from goldfive.control import AckResult, AppliedAs, ControlKind
from goldfive.pb.goldfive.v1 import control_pb2, events_pb2, types_pb2
from goldfive.types import DriftKind, DriftSeverity, TaskStatus

ENUM_PAIRS = [
    (ControlKind, control_pb2.ControlKind, "CONTROL_KIND_"),
    (AckResult, control_pb2.ControlAckResult, "CONTROL_ACK_RESULT_"),
    (AppliedAs, control_pb2.ControlAppliedAs, "CONTROL_APPLIED_AS_"),
    (TaskStatus, types_pb2.TaskStatus, "TASK_STATUS_"),
    (DriftKind, types_pb2.DriftKind, "DRIFT_KIND_"),
    (DriftSeverity, types_pb2.DriftSeverity, "DRIFT_SEVERITY_"),
]


@pytest.mark.parametrize(("py_enum", "pb_enum", "prefix"), ENUM_PAIRS, ids=lambda p: getattr(p, "__name__", p))
def test_every_python_member_has_a_proto_value(py_enum: type[Enum], pb_enum: Any, prefix: str) -> None:
    proto_names = set(pb_enum.keys())
    missing = [m.name for m in py_enum if prefix + m.name not in proto_names]
    assert not missing, f"{py_enum.__name__} members without a {prefix}<NAME> proto value: {missing}"


@pytest.mark.parametrize(("py_enum", "pb_enum", "prefix"), ENUM_PAIRS, ids=lambda p: getattr(p, "__name__", p))
def test_every_proto_value_but_unspecified_has_a_python_member(
    py_enum: type[Enum], pb_enum: Any, prefix: str
) -> None:
    extra = [
        name
        for name in pb_enum.keys()
        if name != prefix + "UNSPECIFIED" and name.removeprefix(prefix) not in py_enum.__members__
    ]
    assert not extra, f"proto values without a {py_enum.__name__} member: {extra}"
    assert pb_enum.Value(prefix + "UNSPECIFIED") == 0


@pytest.mark.parametrize(("py_enum", "pb_enum", "prefix"), ENUM_PAIRS, ids=lambda p: getattr(p, "__name__", p))
def test_python_member_values_are_their_names(py_enum: type[Enum], pb_enum: Any, prefix: str) -> None:
    assert all(m.value == m.name for m in py_enum)


def test_control_kind_wire_numbers() -> None:
    expected = {
        "PAUSE": 1, "RESUME": 2, "CANCEL": 3, "REWIND_TO": 4, "STEER": 5, "APPROVE": 6,
        "REJECT": 7, "STATUS_QUERY": 8, "INTERCEPT_TRANSFER": 9, "INJECT_MESSAGE": 10,
        "GOLDFIVE_STEER": 11, "GOLDFIVE_PAUSE_ESCALATE": 12,
        "ANSWER": 100, "STEER_QUEUE": 102, "GUIDANCE": 103, "BUDGET": 101,  # this project's
    }  # fmt: skip
    assert {k: control_pb2.ControlKind.Value("CONTROL_KIND_" + k) for k in expected} == expected
    assert [m.name for m in ControlKind] == list(expected)


def test_ack_result_wire_numbers() -> None:
    v = control_pb2.ControlAckResult.Value
    assert [v("CONTROL_ACK_RESULT_" + r.name) for r in AckResult] == [1, 2, 3]


def test_task_status_wire_numbers_follow_the_design_order() -> None:
    names = ["PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "BLOCKED", "NOT_NEEDED"]
    assert [m.name for m in TaskStatus] == names
    assert [types_pb2.TaskStatus.Value("TASK_STATUS_" + n) for n in names] == list(range(1, 8))


def test_drift_severity_and_kind_wire_numbers() -> None:
    sev = types_pb2.DriftSeverity.Value
    assert [sev("DRIFT_SEVERITY_" + s.name) for s in DriftSeverity] == [1, 2, 3]
    kind = types_pb2.DriftKind.Value
    assert kind("DRIFT_KIND_TOOL_ERROR") == 1
    assert kind("DRIFT_KIND_USER_STEER") == 5
    assert kind("DRIFT_KIND_CUSTOM") == 25
    assert kind("DRIFT_KIND_GOAL_DRIFT") == 38
    assert kind("DRIFT_KIND_USER_PAUSE") == 100
    # 1..38 are the goldfive v1 kinds in the Python enum's declaration order.
    v1_members = [m for m in DriftKind if m is not DriftKind.USER_PAUSE]
    assert [kind("DRIFT_KIND_" + m.name) for m in v1_members] == list(range(1, 39))


def _numbers(message: Any, names: list[str]) -> list[int]:
    return [message.DESCRIPTOR.fields_by_name[n].number for n in names]


def test_control_event_field_numbers() -> None:
    ce = control_pb2.ControlEvent
    assert _numbers(ce, ["id", "issued_at", "target", "kind"]) == [1, 2, 3, 4]
    assert _numbers(ce, ["steer", "rewind", "approve", "reject", "inject_message"]) == [10, 11, 12, 13, 14]
    assert {f.name for f in ce.DESCRIPTOR.oneofs_by_name["payload"].fields} == {
        "steer", "rewind", "approve", "reject", "inject_message",
    }  # fmt: skip
    # This project's extensions live at 100 and up.
    assert min(_numbers(ce, ["cancel_reason", "intercept_enabled", "custom_kind", "extra_json"])) >= 100


def test_control_payload_and_target_field_numbers() -> None:
    assert _numbers(control_pb2.ControlTarget, ["agent_id", "task_id", "tool_call_id"]) == [1, 2, 3]
    steer = ["note", "suggested_action", "author", "annotation_id"]
    assert _numbers(control_pb2.SteerPayload, steer) == [1, 2, 3, 4]
    assert _numbers(control_pb2.RewindPayload, ["task_id"]) == [1]
    assert _numbers(control_pb2.ApprovePayload, ["target_id", "detail"]) == [1, 2]
    assert _numbers(control_pb2.RejectPayload, ["target_id", "detail"]) == [1, 2]
    assert _numbers(control_pb2.InjectMessagePayload, ["role", "text"]) == [1, 2]


def test_control_ack_field_numbers() -> None:
    names = ["control_id", "result", "detail", "acked_at"]
    assert _numbers(control_pb2.ControlAck, names) == [1, 2, 3, 4]
    # This project's addition, from 100 up so goldfive v1 readers skip it.
    assert _numbers(control_pb2.ControlAck, ["applied_as"]) == [100]


def test_event_envelope_and_payload_field_numbers() -> None:
    ev = events_pb2.Event
    assert _numbers(ev, ["event_id", "run_id", "sequence", "emitted_at", "session_id"]) == [1, 2, 3, 4, 5]
    payload = [
        "run_started", "goal_derived", "plan_submitted", "plan_revised", "task_started",
        "task_progress", "task_completed", "task_failed", "task_blocked", "task_cancelled",
        "drift_detected", "run_completed", "run_aborted", "conversation_started",
        "conversation_ended", "approval_requested", "approval_granted", "approval_rejected",
    ]  # fmt: skip
    assert _numbers(ev, payload) == list(range(10, 28))
    assert _numbers(ev, ["task_transitioned"]) == [35]
    oneof = {f.name for f in ev.DESCRIPTOR.oneofs_by_name["payload"].fields}
    assert set(payload) | {"task_transitioned"} <= oneof
    # Extensions of this project: 100 and up, never inside the v1 range.
    ours = oneof - set(payload) - {"task_transitioned"}
    assert all(ev.DESCRIPTOR.fields_by_name[name].number >= 100 for name in ours)
    sequence = ev.DESCRIPTOR.fields_by_name["sequence"]
    assert sequence.type == sequence.TYPE_UINT64


def test_plan_task_goal_edge_field_numbers() -> None:
    plan = [
        "id", "run_id", "goal_ids", "summary", "tasks", "edges", "revision_reason",
        "revision_kind", "revision_severity", "revision_index", "created_at",
    ]  # fmt: skip
    assert _numbers(types_pb2.Plan, plan) == list(range(1, 12))
    task = [
        "id", "title", "description", "assignee_agent_id", "status",
        "predicted_start_ms", "predicted_duration_ms",
    ]  # fmt: skip
    assert _numbers(types_pb2.Task, task) == list(range(1, 8))
    assert _numbers(types_pb2.Goal, ["id", "summary", "metadata"]) == [1, 2, 3]
    assert _numbers(types_pb2.TaskEdge, ["from_task_id", "to_task_id"]) == [1, 2]


def test_proto_package_is_goldfive_v1() -> None:
    for mod in (control_pb2, events_pb2, types_pb2):
        assert mod.DESCRIPTOR.package == "goldfive.v1"
