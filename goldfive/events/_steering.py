"""Steering that waits or sticks (goldfive.steering): a queued note and the queue's changes,
standing guidance added and removed."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from goldfive.clean import clean_text
from goldfive.events._envelope import _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.steering import SteeringNote, note_to_pb
from goldfive.types import Session


def _note(target: pb.SteeringNote, note: SteeringNote) -> None:
    target.CopyFrom(note_to_pb(replace(note, text=clean_text(note.text), author=clean_text(note.author), client=clean_text(note.client))))


def steer_queued(session: Session, note: SteeringNote) -> pb.Event:
    """A STEER sent "after this task" waits in the queue as ``note``."""
    ev = pb.Event()
    _note(ev.steer_queued.note, note)
    return _stamp(session, ev)


def steer_queue_changed(
    session: Session, note_id: str, op: str, *, order: Iterable[str], text: str = "", author: str = "", control_id: str = ""
) -> pb.Event:
    """A queued note was edited, withdrawn, moved, held, released, delivered or made standing;
    ``order`` is the queue's ids after the change."""
    ev = pb.Event()
    p = ev.steer_queue_changed
    p.note_id = clean_text(note_id)
    p.op = clean_text(op)
    p.text = clean_text(text)
    p.author = clean_text(author)
    p.control_id = clean_text(control_id)
    p.order.extend(clean_text(i) for i in order)
    return _stamp(session, ev)


def guidance_added(session: Session, note: SteeringNote, *, made_from: str = "") -> pb.Event:
    """``note`` is standing guidance: every later task's input carries it until it is removed."""
    ev = pb.Event()
    _note(ev.guidance_added.note, note)
    ev.guidance_added.made_from = clean_text(made_from)
    return _stamp(session, ev)


def guidance_removed(session: Session, guidance_id: str, *, author: str = "", control_id: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.guidance_removed
    p.guidance_id = clean_text(guidance_id)
    p.author = clean_text(author)
    p.control_id = clean_text(control_id)
    return _stamp(session, ev)
