"""Recorded events across payload numberings: the one place a stored event is decoded.

The payload messages took goldfive v1's field numbers (proto/goldfive/v1/events.proto says,
per message, which fields moved). Bytes written before that use the old numbers, and nothing
in a payload says which numbering it has, so the recorders say it: every stored event carries
``Event.recording_schema`` (``RECORDING_SCHEMA``), written as the event is stored and removed
when it is read back. An event without it was recorded before (schema 1) and is translated
here, field by field on the wire, into the current numbering. A per-event mark, rather than one
per file, keeps a recording that old and new code both appended to readable, and reads the
same in SQLite, PostgreSQL and JSONL.

Every reader of stored events goes through :func:`decode_recorded` (bytes) or
:func:`decode_recorded_dict` (a JSONL line); every writer through :func:`recorded_bytes` (or
its body, the serialized event and ``RECORDING_MARK``, on a per-event path) or
:func:`recorded_dict`.

:func:`fill_v1_fields` sets the fields goldfive v1 readers look for that only repeat what an
event already says (RunStarted.run_id, PlanRevised's copy of the plan's revision metadata,
...); the event factories call it, and so does the translation, so an old event reads back as
it would be recorded today.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from google.protobuf.message import DecodeError

from goldfive.pb.goldfive.v1 import types_pb2
from goldfive.pb.goldfive.v1.events_pb2 import ApprovalRequested, Event

__all__ = [
    "RECORDING_MARK",
    "RECORDING_SCHEMA",
    "decode_recorded",
    "decode_recorded_dict",
    "fill_v1_approval",
    "fill_v1_fields",
    "recorded_bytes",
    "recorded_dict",
    "upgrade_schema1",
    "varint",
]

#: The numbering recorders write: 2 is goldfive v1's. 1 (no mark) is the numbering before it.
RECORDING_SCHEMA = 2

_SCHEMA_FIELD = Event.DESCRIPTOR.fields_by_name["recording_schema"]
_SCHEMA_JSON = _SCHEMA_FIELD.json_name


def varint(n: int) -> bytes:
    """``n`` as a protobuf varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


#: Appended to a serialized Event: protobuf merges concatenated messages, so the stored bytes
#: are the event plus this one field (three bytes), with no re-serialization. A writer on a
#: per-event path (``goldfive.store.sqlite_log.row_of``) appends it itself, saving a call:
#: what it stores is ``recorded_bytes`` all the same.
RECORDING_MARK = varint(_SCHEMA_FIELD.number << 3) + varint(RECORDING_SCHEMA)
_MARK = RECORDING_MARK


# -- writing ----------------------------------------------------------------------------


def recorded_bytes(event: Event) -> bytes:
    """The bytes a recorder stores for ``event``: the event, marked with RECORDING_SCHEMA."""
    return event.SerializeToString() + _MARK


def recorded_dict(obj: dict[str, Any]) -> dict[str, Any]:
    """A JSON-mapped event (``message_to_dict``) marked for a JSONL recording, in place."""
    obj[_SCHEMA_JSON] = RECORDING_SCHEMA
    return obj


# -- reading ----------------------------------------------------------------------------


def decode_recorded(payload: bytes) -> Event:
    """A stored event, in the current numbering, whichever numbering it was recorded in.
    Raises DecodeError for bytes that are not an Event in either."""
    try:
        ev = Event.FromString(payload)
    except DecodeError:
        # Schema-1 bytes can fail to parse with today's schema (a string where a message now
        # is); translated, they parse.
        ev = None
    if ev is not None and ev.recording_schema:
        ev.ClearField("recording_schema")
        return ev
    ev = Event.FromString(upgrade_schema1(payload))
    fill_v1_fields(ev)
    return ev


def decode_recorded_dict(obj: dict[str, Any], parse: Callable[[dict[str, Any]], Event]) -> Event:
    """A JSONL line's object as an Event in the current numbering; ``parse`` maps a JSON
    object to an Event (``sinks._json_decode.parse_dict``). JSON names fields, so only
    meanings that changed are translated: a schema-1 TaskProgress fraction was negative when
    none was reported and 0.0 when omitted."""
    schema = obj.get(_SCHEMA_JSON, obj.get(_SCHEMA_FIELD.name))
    if schema:
        ev = parse(obj)
        ev.ClearField("recording_schema")
        return ev
    progress_key = "taskProgress" if "taskProgress" in obj else "task_progress"
    progress = obj.get(progress_key)
    if isinstance(progress, dict):
        progress = dict(progress)
        fraction = progress.get("fraction")
        if fraction is None:
            progress["fraction"] = 0.0
        elif isinstance(fraction, (int, float)) and not fraction >= 0:
            del progress["fraction"]
        obj = {**obj, progress_key: progress}
    ev = parse(obj)
    fill_v1_fields(ev)
    return ev


# -- schema 1 -> 2 on the wire ----------------------------------------------------------

# Per Event payload field: the schema-1 field numbers that moved (old -> new), as listed in
# events.proto above each message.
_RENUMBERED: dict[int, dict[int, int]] = {
    10: {1: 2, 2: 101},  # run_started: goal_summary, user_input
    13: {2: 6, 3: 7},  # plan_revised: diff, drift_id
    14: {2: 100},  # task_started: assignee_agent_id
    20: {1: 7, 2: 1, 3: 2, 4: 3, 5: 4},  # drift_detected: id, kind, severity, detail, current_task_id
    23: {2: 100},  # conversation_started: input
    24: {2: 3},  # conversation_ended: reason
    25: {5: 103, 6: 104, 7: 105, 8: 5},  # approval_requested: tool_name, args_json, timeout_ms, metadata
    35: {2: 100, 3: 101, 4: 102},  # task_transitioned: from_status, to_status, reason
}
_TASK_PROGRESS = 15
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise DecodeError("truncated or overlong varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int, int, int]]:
    """(number, wire type, start, end) of each field; buf[start:end] is the value as encoded
    (a length-delimited value includes its length)."""
    out: list[tuple[int, int, int, int]] = []
    pos = 0
    while pos < len(buf):
        tag, start = _read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise DecodeError("field number 0")
        if wire == _VARINT:
            _, end = _read_varint(buf, start)
        elif wire == _I64:
            end = start + 8
        elif wire == _I32:
            end = start + 4
        elif wire == _LEN:
            size, body = _read_varint(buf, start)
            end = body + size
        else:  # groups: never written by goldfive
            raise DecodeError(f"unsupported wire type {wire}")
        if end > len(buf):
            raise DecodeError("truncated field")
        out.append((number, wire, start, end))
        pos = end
    return out


def _len_field(number: int, body: bytes) -> bytes:
    return varint(number << 3 | _LEN) + varint(len(body)) + body


def _renumber(body: bytes, moves: dict[int, int]) -> bytes:
    return b"".join(
        varint(moves.get(n, n) << 3 | w) + body[s:e] for n, w, s, e in _fields(body)
    )


def _task_progress(body: bytes) -> bytes:
    """fraction was a double (negative: none reported; absent: 0.0); it is a float, absent
    when none was reported."""
    out: list[bytes] = []
    fraction = 0.0
    for n, w, s, e in _fields(body):
        if n == 2 and w == _I64:
            (fraction,) = struct.unpack("<d", body[s:e])
            continue
        out.append(varint(n << 3 | w) + body[s:e])
    if fraction >= 0:  # NaN too is "none reported"
        out.append(varint(2 << 3 | _I32) + struct.pack("<f", min(fraction, 3.4e38)))
    return b"".join(out)


def upgrade_schema1(payload: bytes) -> bytes:
    """A schema-1 serialized Event, renumbered to the current schema (still serialized)."""
    out: list[bytes] = []
    for n, w, s, e in _fields(payload):
        if w == _LEN and (n in _RENUMBERED or n == _TASK_PROGRESS):
            _, body_start = _read_varint(payload, s)
            body = payload[body_start:e]
            new = _task_progress(body) if n == _TASK_PROGRESS else _renumber(body, _RENUMBERED[n])
            out.append(_len_field(n, new))
        else:
            out.append(varint(n << 3 | w) + payload[s:e])
    return b"".join(out)


# -- the fields v1 readers look for -----------------------------------------------------


def _status_name(value: int) -> str:
    """v1's string form of a TaskStatus: the bare name ("PENDING"); "" when unset or unknown."""
    if not value:
        return ""
    try:
        return types_pb2.TaskStatus.Name(value).removeprefix("TASK_STATUS_")
    except ValueError:
        return ""


def fill_v1_fields(ev: Event) -> Event:
    """Set the fields of ``ev`` that v1 readers read and that repeat what it already says
    (only those still unset). Returns ``ev``."""
    kind = ev.WhichOneof("payload")
    if kind == "run_started":
        rs = ev.run_started
        rs.run_id = rs.run_id or ev.run_id
        if not rs.HasField("started_at") and ev.HasField("emitted_at"):
            rs.started_at.CopyFrom(ev.emitted_at)
    elif kind == "plan_revised":
        pr, plan = ev.plan_revised, ev.plan_revised.plan
        pr.drift_kind = pr.drift_kind or plan.revision_kind
        pr.severity = pr.severity or plan.revision_severity
        pr.reason = pr.reason or plan.revision_reason
        pr.revision_index = pr.revision_index or plan.revision_index
    elif kind == "task_transitioned":
        tt = ev.task_transitioned
        tt.from_status_name = tt.from_status_name or _status_name(tt.from_status)
        tt.to_status_name = tt.to_status_name or _status_name(tt.to_status)
    elif kind == "conversation_started":
        cs = ev.conversation_started
        if not cs.HasField("started_at") and ev.HasField("emitted_at"):
            cs.started_at.CopyFrom(ev.emitted_at)
    elif kind == "approval_requested":
        fill_v1_approval(ev.approval_requested)
    return ev


def fill_v1_approval(ar: ApprovalRequested) -> None:
    """``fill_v1_fields`` of an ApprovalRequested event, for its factory, which knows its kind
    (one of every approved tool call's events: no lookup of the kind, no chain of tests)."""
    if ar.kind == "tool":
        for key, value in (("tool_name", ar.tool_name), ("args_json", ar.args_json)):
            if value and key not in ar.metadata:
                ar.metadata[key] = value
