"""The controls of steering that waits or sticks (docs/protocol.md#steer-later-and-standing):
a STEER sent "after this task" or standing, STEER_QUEUE and GUIDANCE, and the delivery of the
queue when the next task starts.

Every change is an event (``goldfive.events.steer_queued`` and the rest) emitted by the
control's effect, after its ack; the run's ``SteeringNotes`` folds it as it is emitted, so the
queue and the guidance are what the recording says (views and resume read the same events).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from goldfive import events
from goldfive.control import AppliedAs, ControlKind, ControlMessage
from goldfive.controls.payloads import Control, Guidance, GuidanceOp, Steer, SteerQueue, SteerQueueOp
from goldfive.run.acks import PROCESSED_STEER_IDS
from goldfive.run.outcome import ControlOutcome, fail, ok
from goldfive.steering import QueueOp, SteeringNote, SteeringNotes, notes_of
if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.parts import Run

__all__ = ["deliver_queued", "guidance_control", "steer_later", "steer_queue_control", "steer_standing"]

_STEER_ID_MEMORY = 512


def _now_ms(ctx: Run) -> int:
    return int(ctx.session.clock())


def _mark_seen(ctx: Run, dedupe: str) -> None:
    """A retry of this STEER (same annotation id) is a DUPLICATE from now on."""
    seen: deque[str] = ctx.session.state.setdefault(PROCESSED_STEER_IDS, deque(maxlen=_STEER_ID_MEMORY))
    if dedupe not in seen:
        seen.append(dedupe)


async def steer_later(ctx: Run, c: Control[Steer]) -> ControlOutcome:
    """STEER ``when="later"``: queued; delivered as a STEER when the next task starts."""
    notes = notes_of(ctx.session)
    p = c.payload
    note = SteeringNote(notes.next_queue_id(), p.note, p.author, p.client, c.id, added_ms=_now_ms(ctx))
    position = len(notes.queue) + 1

    async def queue() -> None:
        _mark_seen(ctx, p.dedupe_id(c.id))
        await ctx.emit(events.steer_queued, note)

    detail = f"queued as {note.id} (#{position} in the queue): delivered as a steer when the next task starts"
    return ok(c, AppliedAs.QUEUED_LATER, detail, effect=queue)


async def steer_standing(ctx: Run, c: Control[Steer]) -> ControlOutcome:
    """STEER ``standing``: added to every later task's input until removed."""
    notes = notes_of(ctx.session)
    p = c.payload
    note = SteeringNote(notes.next_guidance_id(), p.note, p.author, p.client, c.id, added_ms=_now_ms(ctx))

    async def add() -> None:
        _mark_seen(ctx, p.dedupe_id(c.id))
        await ctx.emit(events.guidance_added, note)

    detail = f"standing guidance {note.id}: in every later task's input until removed (GUIDANCE remove {note.id})"
    return ok(c, AppliedAs.STANDING, detail, effect=add)


_QUEUE_OPS = {
    SteerQueueOp.EDIT: QueueOp.EDITED,
    SteerQueueOp.WITHDRAW: QueueOp.WITHDRAWN,
    SteerQueueOp.UP: QueueOp.UP,
    SteerQueueOp.DOWN: QueueOp.DOWN,
    SteerQueueOp.HOLD: QueueOp.HELD,
    SteerQueueOp.RELEASE: QueueOp.RELEASED,
}


def _unknown(notes: SteeringNotes, note_id: str) -> str:
    ids = ", ".join(notes.order()) or "it is empty"
    return f"no queued note {note_id!r} (the queue: {ids}); a delivered or withdrawn note cannot be changed"


async def steer_queue_control(ctx: Run, c: Control[SteerQueue], mid_task: bool) -> ControlOutcome:
    notes = notes_of(ctx.session)
    p = c.payload
    if p.op is SteerQueueOp.LIST:
        return ok(c, AppliedAs.QUEUE_LISTED, notes.describe_queue())
    note = notes.queued(p.note_id)
    if note is None:
        return fail(c, _unknown(notes, p.note_id))
    op = _QUEUE_OPS[p.op]
    ids = notes.order()
    unchanged = ""
    if op is QueueOp.UP and ids[0] == note.id:
        unchanged = f"{note.id} is already first"
    elif op is QueueOp.DOWN and ids[-1] == note.id:
        unchanged = f"{note.id} is already last"
    elif op is QueueOp.HELD and note.held:
        unchanged = f"{note.id} is already held"
    elif op is QueueOp.RELEASED and not note.held:
        unchanged = f"{note.id} is not held"
    elif op is QueueOp.EDITED and p.text == note.text:
        unchanged = f"{note.id} already says that"
    if unchanged:
        return ok(c, AppliedAs.UNCHANGED, unchanged)
    order = notes.order_after(note.id, op)

    async def change() -> None:
        await ctx.emit(events.steer_queue_changed, note.id, op.value, order=order, text=p.text if op is QueueOp.EDITED else "",
                       author=p.author, control_id=c.id)  # fmt: skip

    if op is QueueOp.WITHDRAWN:
        return ok(c, AppliedAs.WITHDRAWN, f"{note.id} withdrawn: it will not be delivered", effect=change)
    what = {
        QueueOp.EDITED: f"{note.id} edited",
        QueueOp.UP: f"{note.id} moved up",
        QueueOp.DOWN: f"{note.id} moved down",
        QueueOp.HELD: f"{note.id} held: not delivered until released",
        QueueOp.RELEASED: f"{note.id} released: delivered when the next task starts",
    }[op]
    return ok(c, AppliedAs.QUEUE_CHANGED, f"{what}; the queue: {', '.join(order)}", effect=change)


async def guidance_control(ctx: Run, c: Control[Guidance], mid_task: bool) -> ControlOutcome:
    notes = notes_of(ctx.session)
    p = c.payload
    if p.op is GuidanceOp.LIST:
        return ok(c, AppliedAs.GUIDANCE_LISTED, notes.describe_guidance())
    if p.op is GuidanceOp.REMOVE:
        if notes.guidance(p.id) is None:
            ids = ", ".join(n.id for n in notes.standing) or "there is none"
            return fail(c, f"no standing guidance {p.id!r} (standing: {ids})")

        async def remove() -> None:
            await ctx.emit(events.guidance_removed, p.id, author=p.author, control_id=c.id)

        return ok(c, AppliedAs.GUIDANCE_REMOVED, f"{p.id} removed: later tasks no longer get it", effect=remove)
    # make_standing: a queued note (its id), or an earlier STEER (its control id).
    if notes.guidance(p.id) is not None:
        return ok(c, AppliedAs.UNCHANGED, f"{p.id} is already standing guidance")
    queued = notes.queued(p.id)
    source = queued or notes.steer(p.id)
    if source is None:
        return fail(c, f"no queued note or earlier steer {p.id!r} to make standing (a steer is named by its control id)")
    gid = notes.next_guidance_id()
    note = SteeringNote(gid, source.text, source.author or p.author, source.client, c.id, added_ms=_now_ms(ctx))

    async def make() -> None:
        if queued is not None:
            order = notes.order_after(queued.id, QueueOp.MADE_STANDING)
            await ctx.emit(events.steer_queue_changed, queued.id, QueueOp.MADE_STANDING.value, order=order, author=p.author, control_id=c.id)
        await ctx.emit(events.guidance_added, note, made_from=p.id)

    where = "; it leaves the queue" if queued is not None else ""
    return ok(c, AppliedAs.MADE_STANDING, f"{p.id} is standing guidance {gid}: in every later task's input until removed{where}", effect=make)


async def deliver_queued(ctx: Run) -> bool:
    """The next task is starting: apply every queued note that is not held, in queue order,
    each as a STEER of its own (``ControlLoop.apply_steer``: a USER_STEER drift, then
    delete-and-replan; with a planner that cannot replan, the note goes to the next task's
    agent as a [user_steering] message). Returns True when one was delivered."""
    notes = notes_of(ctx.session)
    due = notes.due()
    if not due or ctx.session.plan is None:
        return False
    for note in due:
        order = notes.order_after(note.id, QueueOp.DELIVERED)
        await ctx.emit(events.steer_queue_changed, note.id, QueueOp.DELIVERED.value, order=order, control_id=note.control_id)
        payload = Steer(note=note.text, author=note.author, client=note.client)
        # Its own id: the queued STEER's id is already processed (a retry of it is a DUPLICATE).
        msg = ControlMessage(ControlKind.STEER, id=f"{note.control_id or 'steer'}.{note.id}", payload=payload.to_payload())
        await ctx.controls.apply_steer(Control(msg, payload), interrupted=[])
    return True
