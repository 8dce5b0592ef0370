"""The envelope every event carries: ``_stamp`` fills it (event_id, run_id, sequence,
session_id, emitted_at) once the payload is built."""

from __future__ import annotations

from time import time_ns

from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import Session, _wall_ms

Event = pb.Event

# google.protobuf.Timestamp's valid range (0001-01-01 .. 9999-12-31), in milliseconds.
_MIN_MS = -62_135_596_800_000
_MAX_MS = 253_402_300_799_999


def _stamp(session: Session, ev: pb.Event, wall_ms: int | None = None) -> pb.Event:
    """Fill the envelope of a built event. The sequence is taken last, after everything that
    can fail, so an event that fails to build leaves no gap in the stream.

    Two events per task go through here: the usual case (a plain Session on the wall clock)
    reads the clock, the counter and the id suffix directly instead of through three methods;
    anything else (an injected clock, a subclass) goes through them. ``wall_ms``: the wall
    clock read by the caller (``task_event``), for a session on the wall clock only."""
    clock = session.clock
    if clock is _wall_ms:
        # a wall clock reading is inside a Timestamp's range
        ms = time_ns() // 1_000_000 if wall_ms is None else wall_ms
    else:
        ms = clock()
        if not _MIN_MS <= ms <= _MAX_MS:
            raise ValueError(f"clock reading {ms} ms is outside the range of a protobuf Timestamp")
    ts = ev.emitted_at
    ts.seconds = ms // 1000
    ts.nanos = ms % 1000 * 1_000_000
    ev.run_id = run_id = session.run_id
    ev.session_id = session.session_id
    if type(session) is Session:
        ev.sequence = seq = next(session._counter)
        ev.event_id = f"{run_id}:{seq}:{session._id_suffix}"
    else:
        ev.sequence = seq = session.next_sequence()
        ev.event_id = session.event_id(seq)
    return ev


def kind_of(event: pb.Event) -> str:
    """The payload kind of an event (``run_started``, ``task_completed``, ...)."""
    return event.WhichOneof("payload") or ""
