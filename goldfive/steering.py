"""Steering that waits or sticks (docs/protocol.md#steer-later-and-standing): the run's queue of
STEERs sent "after this task", and its standing guidance.

``SteeringNotes`` is a fold of the events that change them (``steer_queued``,
``steer_queue_changed``, ``guidance_added``, ``guidance_removed``) and of the STEERs the run
received (so an earlier steer can be made standing after the fact). The live run folds its own
events with it as it emits them (``RunContext.emit``), the views fold the stream with it
(``RunState``) and resume folds the recording with it (``goldfive.durable.recover``): the
queue and the guidance are what the events say, in every one of them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from goldfive import conv
from goldfive.control import ControlKind
from goldfive.controls.payloads import Steer, decode
from goldfive.errors import GoldfiveError
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import Session

__all__ = ["NOTES_KEY", "NOTE_EVENT_KINDS", "QueueOp", "SteeringNote", "SteeringNotes", "notes_of", "note_from_pb", "note_to_pb"]

#: session.state key of the run's ``SteeringNotes``.
NOTES_KEY = "goldfive.steering_notes"
#: The event kinds ``SteeringNotes.apply`` folds.
NOTE_EVENT_KINDS = frozenset({"steer_queued", "steer_queue_changed", "guidance_added", "guidance_removed", "control_received"})
#: STEERs remembered for ``make_standing`` (the most recent ones).
_STEER_MEMORY = 256
_STEER = ControlKind.STEER.value


class QueueOp(StrEnum):
    """What a ``steer_queue_changed`` event did to a queued note."""

    EDITED = "edited"
    WITHDRAWN = "withdrawn"
    UP = "up"
    DOWN = "down"
    HELD = "held"
    RELEASED = "released"
    #: The next task is starting: the note is applied as a STEER now.
    DELIVERED = "delivered"
    #: Moved to the standing guidance (a GUIDANCE make_standing).
    MADE_STANDING = "made_standing"


#: Ops after which the note is no longer in the queue.
_LEAVES = frozenset({QueueOp.WITHDRAWN, QueueOp.DELIVERED, QueueOp.MADE_STANDING})


@dataclass(frozen=True, slots=True)
class SteeringNote:
    """A person's note: queued ("q1", delivered when the next task starts) or standing ("g1",
    in every later task's input until removed)."""

    id: str
    text: str
    author: str = ""
    client: str = ""
    #: The control that made it.
    control_id: str = ""
    #: A held queued note is not delivered until released.
    held: bool = False
    added_ms: int = 0

    def line(self) -> str:
        """One line for a list: id, held, author, text."""
        held = " [held]" if self.held else ""
        by = f" (by {self.author})" if self.author else ""
        return f"{self.id}{held}{by}: {self.text}"


def note_to_pb(note: SteeringNote) -> pb.SteeringNote:
    out = pb.SteeringNote(
        id=note.id, text=note.text, author=note.author, client=note.client, control_id=note.control_id, held=note.held
    )
    if note.added_ms:
        out.added_at.FromMilliseconds(note.added_ms)
    return out


def note_from_pb(p: pb.SteeringNote) -> SteeringNote:
    added = p.added_at.seconds * 1000 + p.added_at.nanos // 1_000_000
    return SteeringNote(p.id, p.text, p.author, p.client, p.control_id, p.held, added)


@dataclass
class SteeringNotes:
    """The queue (in delivery order) and the standing guidance (in the order added)."""

    queue: list[SteeringNote] = field(default_factory=list)
    standing: list[SteeringNote] = field(default_factory=list)
    #: Recent STEERs by control id (for make_standing), decoded only when asked for.
    _steers: OrderedDict[str, pb.ControlReceived] = field(default_factory=OrderedDict, repr=False)
    _queued_n: int = 0
    _guidance_n: int = 0

    def copy(self) -> SteeringNotes:
        """An independent copy (a replay's checkpoints fork the state they keep)."""
        return SteeringNotes(list(self.queue), list(self.standing), OrderedDict(self._steers), self._queued_n, self._guidance_n)

    # -- reading ----------------------------------------------------------------------
    def queued(self, note_id: str) -> SteeringNote | None:
        return next((n for n in self.queue if n.id == note_id), None)

    def guidance(self, guidance_id: str) -> SteeringNote | None:
        return next((n for n in self.standing if n.id == guidance_id), None)

    def steer(self, control_id: str) -> SteeringNote | None:
        """An earlier STEER the run received, as a note (its id is the control's), or None."""
        received = self._steers.get(control_id)
        if received is None:
            return None
        try:
            payload = decode(conv.from_pb_control_event(received.control)).payload
        except GoldfiveError:
            return None  # its ack was FAILURE: there is no note to keep
        if not isinstance(payload, Steer) or not payload.note.strip():
            return None
        return SteeringNote(control_id, payload.note, payload.author, payload.client, control_id)

    def due(self) -> list[SteeringNote]:
        """The queued notes to deliver when the next task starts: every one not held, in order."""
        return [n for n in self.queue if not n.held]

    def order(self) -> list[str]:
        return [n.id for n in self.queue]

    def order_after(self, note_id: str, op: QueueOp) -> list[str]:
        """The queue's ids once ``op`` is applied to ``note_id``."""
        ids = self.order()
        if note_id not in ids:
            return ids
        i = ids.index(note_id)
        if op in _LEAVES:
            del ids[i]
        elif op is QueueOp.UP and i > 0:
            ids[i - 1], ids[i] = ids[i], ids[i - 1]
        elif op is QueueOp.DOWN and i < len(ids) - 1:
            ids[i + 1], ids[i] = ids[i], ids[i + 1]
        return ids

    def next_queue_id(self) -> str:
        """A fresh id for a queued note (taken: the next call gives another)."""
        self._queued_n += 1
        return f"q{self._queued_n}"

    def next_guidance_id(self) -> str:
        self._guidance_n += 1
        return f"g{self._guidance_n}"

    def describe_queue(self) -> str:
        return "; ".join(n.line() for n in self.queue) or "the steer queue is empty"

    def describe_guidance(self) -> str:
        return "; ".join(n.line() for n in self.standing) or "no standing guidance"

    # -- the fold ---------------------------------------------------------------------
    def apply(self, ev: pb.Event, kind: str | None = None) -> None:
        """Fold one event (kinds outside ``NOTE_EVENT_KINDS`` are ignored); ``kind``: its
        payload's name, when the caller has it already."""
        if kind is None:
            kind = ev.WhichOneof("payload")
        if kind == "control_received":
            self.received(ev.control_received)
        elif kind == "steer_queued":
            self.on_steer_queued(ev.steer_queued)
        elif kind == "steer_queue_changed":
            self.on_steer_queue_changed(ev.steer_queue_changed)
        elif kind == "guidance_added":
            self.on_guidance_added(ev.guidance_added)
        elif kind == "guidance_removed":
            self.on_guidance_removed(ev.guidance_removed)

    def on_steer_queued(self, p: pb.SteerQueued) -> None:
        note = note_from_pb(p.note)
        self._queued_n = max(self._queued_n, _number(note.id))
        if self.queued(note.id) is None:
            self.queue.append(note)

    def on_guidance_added(self, p: pb.GuidanceAdded) -> None:
        note = note_from_pb(p.note)
        self._guidance_n = max(self._guidance_n, _number(note.id))
        if self.guidance(note.id) is None:
            self.standing.append(note)

    def on_guidance_removed(self, p: pb.GuidanceRemoved) -> None:
        self.standing = [n for n in self.standing if n.id != p.guidance_id]

    def apply_all(self, events: Iterable[pb.Event]) -> SteeringNotes:
        for ev in events:
            self.apply(ev)
        return self

    def on_steer_queue_changed(self, p: pb.SteerQueueChanged) -> None:
        try:
            op = QueueOp(p.op)
        except ValueError:
            return  # an op this version does not know: the order below still holds
        note = self.queued(p.note_id)
        if note is not None:
            if op is QueueOp.EDITED:
                note = replace(note, text=p.text)
            elif op in (QueueOp.HELD, QueueOp.RELEASED):
                note = replace(note, held=op is QueueOp.HELD)
            self.queue = [note if n.id == note.id else n for n in self.queue]
        order = list(p.order) if p.order or op in _LEAVES else self.order_after(p.note_id, op)
        by_id = {n.id: n for n in self.queue}
        # The event's order is the truth; a note it does not name has left the queue.
        self.queue = [by_id[i] for i in order if i in by_id]

    def received(self, p: pb.ControlReceived) -> None:
        """A control the run received: a STEER is remembered (for make_standing)."""
        if p.kind != _STEER:
            return
        self._steers[p.control.id] = p  # decoded by ``steer`` when asked: most never are
        if len(self._steers) > _STEER_MEMORY:
            self._steers.popitem(last=False)


def _number(note_id: str) -> int:
    digits = note_id[1:]
    return int(digits) if digits.isdigit() else 0


def has_queued_notes(session: Session) -> bool:
    """Whether the run has queued notes (the check at every task boundary, made without
    creating the run's notes)."""
    notes = session.state.get(NOTES_KEY)
    return isinstance(notes, SteeringNotes) and bool(notes.queue)


def notes_of(session: Session) -> SteeringNotes:
    """The run's queue and standing guidance (made empty on first use)."""
    notes = session.state.get(NOTES_KEY)
    if not isinstance(notes, SteeringNotes):
        notes = session.state[NOTES_KEY] = SteeringNotes()
    return notes
