"""The control audit trail: a control received, and its ack."""

from __future__ import annotations

from goldfive import conv
from goldfive.clean import clean_ack, clean_control, clean_text
from goldfive.control import ControlAck, ControlKind, ControlMessage, kind_name
from goldfive.events._envelope import _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import Session

# kind_name() of each known kind, computed once: reading an enum member's value is slow.
_KIND_NAMES: dict[ControlKind | str, str] = {k: kind_name(k) for k in ControlKind}


def control_received(session: Session, msg: ControlMessage) -> pb.Event:
    ev = pb.Event()
    r = ev.control_received
    # Written into the event's own field (built once, not built and copied); text that
    # cannot be encoded is cleaned and the field written again.
    target = r.control
    try:
        conv.fill_pb_control_event(target, msg)
    except UnicodeEncodeError:
        target.Clear()
        conv.fill_pb_control_event(target, clean_control(msg))
    r.kind = _KIND_NAMES.get(msg.kind) or clean_text(kind_name(msg.kind))
    payload = msg.payload
    author = payload.get("author") if payload and isinstance(payload, dict) else None
    if author:
        r.author = clean_text(str(author))
    return _stamp(session, ev)


def control_acked(session: Session, ack: ControlAck, kind: str) -> pb.Event:
    ev = pb.Event()
    p = ev.control_acked
    target = p.ack
    try:
        conv.fill_pb_control_ack(target, ack)
    except UnicodeEncodeError:
        target.Clear()
        conv.fill_pb_control_ack(target, clean_ack(ack))
    p.kind = kind if kind.__class__ is str and kind.isascii() else clean_text(kind)
    return _stamp(session, ev)
