"""Messages to a hub built from events already serialized (the runner's held bytes).

A runner holds each event it has not had confirmed as bytes (:class:`EventBuffer`): ``bytes``
are not tracked by the garbage collector, and an event is serialized once, when it is
emitted, instead of copied into every message that carries it and serialized there again.
Protobuf's wire format makes a message of such bytes a concatenation: a ``repeated Event
events = 1`` field is each event's tag, length and bytes one after the other, and a
submessage field is its tag, length and bytes. So an :data:`entry` (one element of
``EventBatch.events``, exactly as protobuf writes it) is kept per event, and a
``RunnerMessage{events}`` or a ``RunnerPart`` carrying one is put together around joined
entries. What goes on the wire is byte for byte what protobuf writes for the same messages:
the hub parses the same ``RunnerMessage`` and ``RunnerFrame``.

The calls that carry these bytes (``Hub.Connect``, ``Hub.ConnectShared``) are made by
:func:`hub_stub` with a request serializer that passes bytes through and serializes a message
(a hello, an ack, a frame without events) as the generated stub does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc

__all__ = ["HEADS", "HEADS_UPTO", "entry", "entry_event_size", "events_message", "events_part", "hub_stub", "lane_prefix", "varint"]

# Tags (field number << 3 | wire type; 2 = length-delimited, 0 = varint) of the fields built here.
_EVENTS_OF_BATCH = b"\x0a"  # EventBatch.events = 1
_EVENTS_OF_MESSAGE = b"\x12"  # RunnerMessage.events = 2
_LANE_OF_PART = b"\x08"  # RunnerPart.lane = 1
_MESSAGE_OF_PART = b"\x12"  # RunnerPart.message = 2
_PARTS_OF_FRAME = b"\x0a"  # RunnerFrame.parts = 1


def varint(n: int) -> bytes:
    """``n`` (>= 0) as a protobuf varint."""
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


#: Heads (a tag and a length) for the common lengths, made once: a message is put together
#: with lookups, not calls. ``HEADS[n]`` is an ``EventBatch.events`` entry's head (and a
#: ``RunnerFrame.parts`` element's: the same tag) for an n-byte event, ``_HEADS_2`` the head
#: of ``RunnerMessage.events`` (and of ``RunnerPart.message``).
HEADS_UPTO = 2048
HEADS = [_EVENTS_OF_BATCH + varint(n) for n in range(HEADS_UPTO)]
_HEADS_2 = [_EVENTS_OF_MESSAGE + varint(n) for n in range(HEADS_UPTO)]


def entry(data: bytes) -> bytes:
    """A serialized event as one element of ``EventBatch.events``: its tag, length, bytes."""
    n = len(data)
    return (HEADS[n] if n < HEADS_UPTO else _EVENTS_OF_BATCH + varint(n)) + data


def entry_event_size(held: bytes) -> int:
    """The serialized event's own size inside an :func:`entry`."""
    i = 1
    while held[i] & 0x80:
        i += 1
    return len(held) - i - 1


def events_message(entries: Sequence[bytes]) -> bytes:
    """``RunnerMessage(events=EventBatch(events=...))`` serialized, from the events' entries."""
    batch = b"".join(entries)
    n = len(batch)
    return (_HEADS_2[n] if n < HEADS_UPTO else _EVENTS_OF_MESSAGE + varint(n)) + batch


def lane_prefix(lane: int) -> bytes:
    """``RunnerPart.lane`` serialized (nothing for 0, protobuf's default), made once per lane."""
    return _LANE_OF_PART + varint(lane) if lane else b""


def events_part(prefix: bytes, entries: Sequence[bytes]) -> bytes:
    """One ``RunnerFrame.parts`` element with its tag and length, serialized:
    ``RunnerPart(lane=..., message=RunnerMessage(events=EventBatch(events=...)))`` from the
    lane's :func:`lane_prefix` and the events' entries."""
    batch = b"".join(entries)
    n = len(batch)
    head = _HEADS_2[n] if n < HEADS_UPTO else _EVENTS_OF_MESSAGE + varint(n)  # RunnerMessage.events
    m = len(head) + n
    outer = _HEADS_2[m] if m < HEADS_UPTO else _MESSAGE_OF_PART + varint(m)  # RunnerPart.message
    p = len(prefix) + len(outer) + m
    return b"".join((HEADS[p] if p < HEADS_UPTO else _PARTS_OF_FRAME + varint(p), prefix, outer, head, batch))


def _serialize(message: Any) -> bytes:
    """A request already serialized goes as it is; a message is serialized."""
    if isinstance(message, bytes):
        return message
    data: bytes = message.SerializeToString()
    return data


def hub_stub(channel: grpc.aio.Channel) -> Any:
    """The generated ``Hub`` stub on ``channel``, but its ``Connect`` and ``ConnectShared``
    also take requests already serialized (same methods, same responses)."""
    stub = service_pb2_grpc.HubStub(channel)
    stub.Connect = channel.stream_stream(
        "/goldfive.v1.Hub/Connect", request_serializer=_serialize, response_deserializer=service_pb2.HubMessage.FromString
    )
    stub.ConnectShared = channel.stream_stream(
        "/goldfive.v1.Hub/ConnectShared", request_serializer=_serialize, response_deserializer=service_pb2.HubFrame.FromString
    )
    return stub
