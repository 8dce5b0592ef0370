"""The one table of event kinds (goldfive.event_kinds): every kind of the Event payload oneof
has a row, and every text view (ctl tail / demo --headless, the TUI's event log) renders
from it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from goldfive.event_format import format_event
from goldfive.event_kinds import EVENT_KINDS, Tone, render_fields
from goldfive.pb.goldfive.v1 import events_pb2 as pb

ONEOF = [f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["payload"].fields]


def test_every_event_payload_kind_has_one_row_and_every_row_is_a_kind() -> None:
    assert sorted(EVENT_KINDS) == sorted(ONEOF)
    for name, info in EVENT_KINDS.items():
        assert info.name == name and info.description.endswith(".") and info.fields, name
        assert len({f.name for f in info.fields}) == len(info.fields), f"{name}: two fields share a name"


def _filled(msg: Message, depth: int = 0) -> Message:
    """Every scalar field of ``msg`` set to a recognisable value, nested messages too."""
    for f in msg.DESCRIPTOR.fields:
        if f.type == FieldDescriptor.TYPE_MESSAGE:
            if depth >= 3 or f.message_type.GetOptions().map_entry:
                continue
            _filled(getattr(msg, f.name).add() if f.is_repeated else getattr(msg, f.name), depth + 1)
            continue
        value: object
        if f.type == FieldDescriptor.TYPE_STRING:
            value = f"{f.name} one\ttwo\nthree"
        elif f.type == FieldDescriptor.TYPE_BOOL:
            value = True
        elif f.type == FieldDescriptor.TYPE_ENUM:
            value = f.enum_type.values[-1].number
        elif f.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
            value = 0.5
        elif f.type == FieldDescriptor.TYPE_BYTES:
            value = b"x"
        else:
            value = 7
        if f.is_repeated:
            getattr(msg, f.name).append(value)
        else:
            setattr(msg, f.name, value)
    return msg


@pytest.mark.parametrize("kind", ONEOF)
def test_every_kind_renders_empty_and_filled_on_one_line_in_every_view(kind: str) -> None:
    from tui.format import describe

    info = EVENT_KINDS[kind]
    for filled in (False, True):
        ev = pb.Event(sequence=3)
        getattr(ev, kind).SetInParent()
        if filled:
            _filled(getattr(ev, kind))
        payload = getattr(ev, kind)
        brief, whole = render_fields(info, payload), render_fields(info, payload, brief=False)
        assert isinstance(info.tone(payload), Tone)
        assert "\n" not in format_event(ev) and format_event(ev).split()[:2] == ["3", kind]
        label, text, style = describe(ev)
        assert (label, style) == (info.label_text(), info.tone(payload).value) and "\n" not in text
        assert describe(ev, whole=True)[1] == whole
        if filled:
            shown = [" ".join(f.get(payload).split())[:20] for f in info.fields if f.get(payload)]
            assert brief and all(v in whole for v in shown), "the whole line shows every field"
            assert len(brief) <= len(whole)
            assert info.values(payload).keys() == {f.name for f in info.fields}


def test_the_tui_log_line_and_the_terminal_line_say_the_same_for_a_task() -> None:
    from tui.format import describe

    ev = pb.Event(sequence=12)
    ev.task_completed.task_id, ev.task_completed.result_summary = "research", "collected 5 key facts"
    assert describe(ev) == ("task_completed", 'research "collected 5 key facts"', "ok")
    assert format_event(ev) == '  12 task_completed     research "collected 5 key facts"'


def test_the_table_is_importable_without_the_tui() -> None:
    code = "import sys, goldfive.event_kinds, goldfive.event_format; print(any(m.startswith(('textual', 'goldfive_tui')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_a_stream_prints_a_control_and_its_ack_as_one_line_at_the_ack() -> None:
    """Issue 23 (low): headless, resume and ctl tail printed a control as two raw lines; the
    TUI's log shows one. An ack whose control the stream never saw keeps its own line; a
    control still unacked when the stream ends is printed then."""
    from goldfive import events as E
    from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
    from goldfive.event_format import EventLines
    from goldfive.types import Session

    s = Session(run_id="r")
    pause = ControlMessage(ControlKind.PAUSE, id="p1", payload={"author": "ada"})
    stream = [
        E.control_received(s, pause),
        E.task_started(s, "t1"),
        E.control_acked(s, ControlAck("p1", AckResult.SUCCESS, "paused"), "PAUSE"),
        E.control_acked(s, ControlAck("elsewhere", AckResult.FAILURE, "not paused"), "RESUME"),
        E.control_received(s, ControlMessage(ControlKind.CANCEL, id="c1", payload={"author": "bo"})),
    ]
    lines = EventLines()
    out = [line for ev in stream for line in lines.lines(ev)]
    assert [ln.split()[:2] for ln in out] == [["1", "task_started"], ["2", "control"], ["3", "control_acked"]]
    assert out[1].endswith("PAUSE p1 by ada → SUCCESS paused"), out[1]
    assert lines.flush() == ["   4 control            CANCEL c1 by bo received, no ack"] and lines.flush() == []
