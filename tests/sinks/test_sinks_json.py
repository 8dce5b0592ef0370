"""The fast protobuf JSON encoder equals json_format's mapping on every event kind."""

from __future__ import annotations

import json
import math

import pytest
from google.protobuf import json_format

from goldfive import events
from goldfive.control import ControlAck, ControlKind, ControlMessage, AckResult
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks._json import message_to_dict, message_to_json
from goldfive.types import DriftEvent, DriftEvidence, DriftKind, DriftSeverity, Goal, Plan, Session, Task, TaskEdge, TaskStatus
from goldfive.usage import ModelUsage, Purpose, RecordedUsage


def _every_kind(s: Session) -> list[Event]:
    plan = Plan(tasks=[Task("a", "A"), Task("b", "B", status=TaskStatus.RUNNING)], edges=[TaskEdge("a", "b")])
    plan2 = Plan(tasks=[Task("b", "B2"), Task("c", "C")], edges=[TaskEdge("b", "c")], revision_index=1)
    msg = ControlMessage(kind=ControlKind.STEER, payload={"note": "focus", "author": "me"})
    return [
        events.run_started(s, goal_summary="g", user_input="héllo ✓"),
        events.goal_derived(s, [Goal("g1", "one"), Goal("g2", "two")]),
        events.plan_submitted(s, plan),
        events.plan_revised(s, plan, plan2, drift_id="d1"),
        events.task_started(s, "a", "agent"),
        events.task_progress(s, "a", detail="x", fraction=0.25),
        events.task_progress(s, "a", fraction=0.0),
        events.task_progress(s, "a", fraction=-0.0),
        events.task_progress(s, "a", fraction=math.inf),
        events.task_progress(s, "a", fraction=math.nan),
        events.task_completed(s, "a", "done"),
        events.task_failed(s, "b", "boom", recoverable=True),
        events.task_blocked(s, "b", "waiting"),
        events.task_cancelled(s, "b", "user"),
        events.task_transitioned(s, "b", TaskStatus.PENDING, TaskStatus.RUNNING, "go"),
        events.drift_detected(s, DriftEvent(DriftKind.USER_STEER, DriftSeverity.WARNING, "steer")),
        events.drift_detected(s, DriftEvent(
            DriftKind.LOOPING_TOOL_CALL, DriftSeverity.WARNING, "looks stuck", "a",
            evidence=(DriftEvidence(1_700_000_000_123, "tool_call", "deploy", "c1", '{"v": 1}', sequence=4),),
        )),
        events.usage_recorded(s, RecordedUsage(ModelUsage("gpt-4o", 10, 5, 2, "openai_compat"), "a", Purpose.TASK, 0.001, "prices")),
        events.usage_recorded(s, RecordedUsage(ModelUsage("mystery", 10, 5), "", Purpose.PLAN, None, "")),
        events.usage_recorded(s, RecordedUsage(ModelUsage("m", 1, 1), "a", Purpose.TASK, 0.0, "reported")),
        events.approval_requested(s, target_id="t", kind="tool", args={"n": 1}, metadata={"k": "v"}),
        events.approval_granted(s, "t", "ok"),
        events.approval_rejected(s, "t", "no"),
        events.conversation_started(s, "main", "hi"),
        events.conversation_ended(s, "main", "done"),
        events.message_parked(s, message_id="m", lane="main", role="user", text="t"),
        events.message_delivered(s, message_id="m", lane="main", via="boundary"),
        events.message_returned(s, message_id="m", lane="main"),
        events.invocation_abandoned(s, "a", 1.5, "timeout"),
        events.recording_failed(s, "writing 1 events failed: disk full", 7),
        events.control_received(s, msg),
        events.control_acked(s, ControlAck(control_id=msg.id, result=AckResult.SUCCESS, detail="d"), "STEER"),
        events.run_completed(s, "ok"),
        events.run_aborted(s, "why"),
    ]


@pytest.mark.parametrize("clock_ms", [0, 1_700_000_000_123, 1_700_000_000_000])
def test_encoder_matches_json_format_on_every_event_kind(clock_ms: int) -> None:
    for ev in _every_kind(Session(run_id="r1", clock=lambda: clock_ms)):
        expected = json_format.MessageToDict(ev)
        assert message_to_dict(ev) == expected, ev.WhichOneof("payload")
        assert json.loads(message_to_json(ev)) == json.loads(json.dumps(expected))


def test_encoder_output_is_one_compact_line() -> None:
    ev = events.task_failed(Session(run_id="r1"), "t", "a\nb")
    line = message_to_json(ev)
    assert "\n" not in line and ", " not in line and ": " not in line


@pytest.mark.parametrize("clock_ms", [0, 1_700_000_000_123])
def test_a_line_is_the_text_json_dumps_makes_for_every_event_kind(clock_ms: int) -> None:
    """message_to_json's encoder (json's C encoder made once) writes what json's own compact,
    non-ASCII encoder writes: strings with quotes, newlines, non-ASCII and control characters,
    floats, nested objects and lists."""
    from goldfive.sinks._json import message_to_json_line

    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for ev in _every_kind(Session(run_id="r1", clock=lambda: clock_ms)):
        obj = message_to_dict(ev)
        assert message_to_json_line(obj) == dumps(obj), ev.WhichOneof("payload")
    odd = {"s": 'a"b\\c\n\u00e9\u2028\x00', "f": [0.1, -0.0, 1e300, 5e-324], "n": {"l": [1, "x", True, None, {}], "e": []}}
    assert message_to_json_line(odd) == dumps(odd)
