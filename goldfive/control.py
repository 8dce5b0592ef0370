"""The ControlChannel: one primitive for every live-steering verb (docs/protocol.md#the-controlchannel).

Two queues. Senders (a UI, a script, a test, a gRPC bridge) ``send`` ControlMessages into the
inbox; the runner ``receive``s them in send order, dispatches, and ``ack``s each one into the
outbox, which senders read with ``acks()``. Both sides await; nothing polls.

``request(msg)`` sends and awaits the ack of that one message (the ack still reaches ``acks()``
too); it is how a front-end waits for the answer to a key it sent.

Closing: ``close()`` is idempotent. After it, ``send`` raises ChannelClosedError; ``receive``
still returns the messages queued before the close, then None (a receive already blocked is
woken). ``acks()`` yields every ack published before the close, and ends once the inbox has
been drained and every message received has been acked.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, AsyncIterator, Callable

from goldfive.errors import ChannelClosedError
from goldfive.ids import random_hex
from goldfive.mailbox import Mailbox


class ControlKind(StrEnum):
    PAUSE = "PAUSE"
    RESUME = "RESUME"
    CANCEL = "CANCEL"
    REWIND_TO = "REWIND_TO"  # payload: {"task_id": "..."}
    STEER = "STEER"  # payload: {"note", "suggested_action", "author", "annotation_id"}
    APPROVE = "APPROVE"  # payload: {"target_id": "...", "detail": "..."}
    REJECT = "REJECT"  # payload: {"target_id": "...", "detail": "..."}
    STATUS_QUERY = "STATUS_QUERY"
    INTERCEPT_TRANSFER = "INTERCEPT_TRANSFER"  # payload: {"enabled": bool}
    INJECT_MESSAGE = "INJECT_MESSAGE"  # payload: {"role": "...", "text": "..."}
    GOLDFIVE_STEER = "GOLDFIVE_STEER"  # intervention ladder only
    GOLDFIVE_PAUSE_ESCALATE = "GOLDFIVE_PAUSE_ESCALATE"  # intervention ladder only
    ANSWER = "ANSWER"  # payload: {"target_id": "...", "text": "..."} or {"target_id", "option"}
    STEER_QUEUE = "STEER_QUEUE"  # payload: {"op": "list"|"edit"|"withdraw"|"up"|"down"|"hold"|"release", "note_id", "text"}
    GUIDANCE = "GUIDANCE"  # payload: {"op": "list"|"remove"|"make_standing", "id"}
    BUDGET = "BUDGET"  # payload: {"tokens": 100000, "usd": 5, ..., "resume": bool}


class AckResult(StrEnum):
    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"
    UNSUPPORTED = "UNSUPPORTED"


class AppliedAs(StrEnum):
    """What an acked control was applied as: the fact a view or a resume reads off the ack,
    where the detail is the same thing in English. ``goldfive.run.acks.ACK_MEANING`` says
    what each implies. A SUCCESS ack without one (a recording from before the field, or a
    custom handler (docs/protocol.md#custom-controls) that did not say) is read by ``legacy_applied_as``."""

    #: The run is paused (now, at the next task boundary, or it already was).
    PAUSED = "PAUSED"
    #: The run is not paused (it was resumed, or was not paused).
    RESUMED = "RESUMED"
    #: The run ends cancelled.
    CANCELLED = "CANCELLED"
    #: STEER: delete-and-replan follows (after cancelling the running task, when mid-task).
    REPLANNED = "REPLANNED"
    #: STEER while the goals or the plan are being made: replanned once the plan exists.
    QUEUED = "QUEUED"
    #: STEER with a planner that cannot replan: the note goes to the agent as a message.
    NOTED = "NOTED"
    #: STEER already applied (spec 1.c): acked, nothing else happens.
    DUPLICATE = "DUPLICATE"
    #: REWIND_TO: the task and everything downstream go back to PENDING at the boundary.
    REWOUND = "REWOUND"
    #: APPROVE / REJECT: the pending approval is decided.
    DECIDED = "DECIDED"
    #: INJECT_MESSAGE: parked on the running turn or queued for the next one.
    INJECTED = "INJECTED"
    #: STATUS_QUERY: a snapshot of the run follows as a drift.
    STATUS = "STATUS"
    #: INTERCEPT_TRANSFER: the flag is set (the payload says which way).
    INTERCEPT_SET = "INTERCEPT_SET"
    #: GOLDFIVE_STEER: the in-flight invocation restarts with a corrective.
    RESTARTED = "RESTARTED"
    #: The approval_rules verb: rules listed, added or removed.
    RULES = "RULES"
    #: Acked SUCCESS with no change to the run (a ladder steer with nothing in flight).
    UNCHANGED = "UNCHANGED"
    #: FAILURE or UNSUPPORTED: nothing was applied.
    REFUSED = "REFUSED"
    #: ANSWER: the pending question is answered.
    ANSWERED = "ANSWERED"
    #: STEER with ``when="later"``: queued; delivered when the next task starts (docs/protocol.md#steer-later-and-standing).
    QUEUED_LATER = "QUEUED_LATER"
    #: STEER with ``standing``: in every later task's input until removed.
    STANDING = "STANDING"
    #: STEER_QUEUE edit / up / down / hold / release: the queue changed.
    QUEUE_CHANGED = "QUEUE_CHANGED"
    #: STEER_QUEUE withdraw: the queued note is gone, never delivered.
    WITHDRAWN = "WITHDRAWN"
    #: STEER_QUEUE list: the queue is in the ack's detail.
    QUEUE_LISTED = "QUEUE_LISTED"
    #: GUIDANCE list: the standing notes are in the ack's detail.
    GUIDANCE_LISTED = "GUIDANCE_LISTED"
    #: GUIDANCE remove: the standing note reaches no later task.
    GUIDANCE_REMOVED = "GUIDANCE_REMOVED"
    #: GUIDANCE make_standing: an earlier STEER (or a queued note) became standing guidance.
    MADE_STANDING = "MADE_STANDING"
    #: BUDGET: the run's limits are changed; a paused run stays paused.
    BUDGET_SET = "BUDGET_SET"
    #: BUDGET with resume: the limits are changed and the run goes on.
    BUDGET_SET_RESUMED = "BUDGET_SET_RESUMED"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def kind_name(kind: ControlKind | str) -> str:
    """The upper-case name of a kind, known or custom."""
    if kind.__class__ is ControlKind:  # every ack names one: its value, read without the enum's property
        return kind._value_
    return str(getattr(kind, "value", kind)).upper()


def normalize_kind(kind: ControlKind | str) -> ControlKind | str:
    """A known kind as ControlKind; an unknown one stays a string (docs/protocol.md#custom-controls)."""
    if isinstance(kind, ControlKind):
        return kind
    try:
        return ControlKind(str(kind).upper())
    except ValueError:
        return str(kind)


@dataclass
class ControlMessage:
    kind: ControlKind | str
    #: 32 hex digits of os.urandom (uuid4().hex's form and randomness), read in batches.
    id: str = field(default_factory=random_hex)
    payload: dict[str, Any] = field(default_factory=dict)
    issued_at_ms: int = 0

    def __post_init__(self) -> None:
        if self.kind.__class__ is not ControlKind:  # a known kind as sent costs no call
            self.kind = normalize_kind(self.kind)
        if self.payload is None:
            self.payload = {}


@dataclass
class ControlAck:
    control_id: str
    result: AckResult
    detail: str = ""
    acked_at_ms: int = 0
    #: What the control was applied as (None: not said; see AppliedAs).
    applied_as: AppliedAs | None = None


class _Closed:
    """Sentinel marking the end of a queue."""


_CLOSED = _Closed()


class ControlChannel:
    def __init__(self) -> None:
        self._inbox: Mailbox[ControlMessage | _Closed] = Mailbox()
        self._outbox: Mailbox[ControlAck | _Closed] = Mailbox()
        self._closed = False
        self._inbox_drained = False
        self._acks_ended = False
        self._received = 0
        self._acked = 0
        #: Done when a message is queued (``ready``).
        self._ready: asyncio.Future[None] | None = None
        #: Set with ``_ready`` (``wake_on_send``): the executor's own wake-up future.
        self._wake: asyncio.Future[None] | None = None
        #: control id -> the future ``request`` awaits; None while its send runs, and then the
        #: ack when the message was answered in the send.
        self._waiters: dict[str, asyncio.Future[ControlAck] | ControlAck | None] = {}
        #: The reader's ``answer_directly`` hook (None: every message is queued).
        self._direct: Callable[[ControlMessage], bool] | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    # -- sender side -------------------------------------------------------------
    async def send(self, msg: ControlMessage) -> None:
        """Queue ``msg`` for the runner. Raises ChannelClosedError after ``close()``."""
        self.send_nowait(msg)

    def send_nowait(self, msg: ControlMessage) -> None:
        if self._closed:
            raise ChannelClosedError(
                f"cannot send {kind_name(msg.kind)} (id {msg.id}): the control channel is closed"
            )
        if not msg.issued_at_ms:
            msg.issued_at_ms = time.time_ns() // 1_000_000  # _now_ms, written out: every control is timed here
        wake = self._wake
        if self._direct is not None and wake is not None and not wake.done() and self._inbox.empty():
            # The reader waits parked on its future, with nothing queued before this message:
            # it may answer it in this call, with no task switch on either side.
            self._received += 1
            if self._direct(msg):
                return
            self._received -= 1
        self._inbox.put_nowait(msg)
        self._wake_reader()

    async def request(self, msg: ControlMessage, timeout: float | None = None) -> ControlAck:
        """Send ``msg`` and return its ack. Raises ChannelClosedError after ``close()``,
        ValueError when a request with the same id is already waiting, and TimeoutError when no
        ack came within ``timeout`` seconds (the message stays sent: its ack may come later and
        is then in ``acks()``). Cancelling the caller stops the wait, not the control."""
        waiters = self._waiters
        if msg.id in waiters:
            raise ValueError(f"control id {msg.id!r} is already waiting for its ack")
        # Waiting before it is sent, with no future yet: a message answered in the send itself
        # (``answer_directly``) leaves its ack here, and the request returns it at once.
        waiters[msg.id] = None
        try:
            self.send_nowait(msg)
        except BaseException:
            waiters.pop(msg.id, None)
            raise
        got = waiters[msg.id]
        if got is not None:
            del waiters[msg.id]
            return got  # type: ignore[return-value]
        fut: asyncio.Future[ControlAck] = asyncio.get_running_loop().create_future()
        waiters[msg.id] = fut
        try:
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        finally:
            waiters.pop(msg.id, None)

    async def acks(self) -> AsyncIterator[ControlAck]:
        """Every ack in publish order; ends after close once all received messages are acked."""
        while True:
            item = await self._outbox.get()
            if isinstance(item, _Closed):
                self._outbox.put_nowait(item)  # later iterators end too
                return
            yield item

    # -- runner side -------------------------------------------------------------
    async def receive(self, timeout: float | None = None) -> ControlMessage | None:
        """The next message in send order; None on timeout or once closed and drained.

        Cancelling the caller leaves the channel unchanged (no message is consumed)."""
        if self._inbox_drained:
            return None
        if timeout is not None and timeout <= 0:
            return self.receive_nowait()
        try:
            if timeout is None:
                item = await self._inbox.get()
            else:
                item = await asyncio.wait_for(self._inbox.get(), timeout)
        except TimeoutError:
            return None
        return self._took(item)

    def receive_nowait(self) -> ControlMessage | None:
        """The next message if one is queued, else None (also once closed and drained)."""
        if self._inbox_drained or self._inbox.empty():
            return None
        return self._took(self._inbox.get_nowait())

    def ready(self) -> asyncio.Future[None]:
        """A future that is done once a message is queued or the channel is closed: a reader
        awaits it among other things and then takes what is there with ``receive_nowait``.
        Unlike a pending ``receive()`` it consumes nothing, so dropping it loses nothing."""
        fut = self._ready
        if fut is None or fut.done():
            fut = self._ready = asyncio.get_running_loop().create_future()
            if not self._inbox.empty():
                fut.set_result(None)
        return fut

    def wake_on_send(self, fut: asyncio.Future[None]) -> None:
        """Have ``fut`` (the reader's own future, which it may also hand to other sources)
        set once a message is queued or the channel is closed; at once when one is queued
        already. One future at a time: a later call replaces it. Unlike ``ready()`` there is
        no future in between, so the reader wakes one loop iteration sooner."""
        if not self._inbox.empty():
            if not fut.done():
                fut.set_result(None)
            return
        self._wake = fut

    def answer_directly(self, answer: Callable[[ControlMessage], bool] | None) -> None:
        """Let the reader answer a message in the sender's own call (None: stop). Tried only
        while the reader waits parked on its ``wake_on_send`` future and nothing is queued, so
        messages are still taken in send order; ``answer(msg)`` returns False to have the
        message queued as usual, True once it took it (it acks it, as for any message)."""
        self._direct = answer

    def direct_answerer(self) -> Callable[[ControlMessage], bool] | None:
        """The hook ``answer_directly`` set (None: every message is queued)."""
        return self._direct

    def _wake_reader(self) -> None:
        fut = self._ready
        if fut is not None and not fut.done():
            fut.set_result(None)
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)

    def _took(self, item: ControlMessage | _Closed) -> ControlMessage | None:
        if isinstance(item, _Closed):
            self._inbox_drained = True
            self._inbox.put_nowait(item)  # wake any other receiver
            self._maybe_end_acks()
            return None
        self._received += 1
        return item

    def pending(self) -> int:
        """Messages sent but not yet received."""
        n = self._inbox.qsize()
        # Once closed, the inbox ends with the one _CLOSED sentinel (put back by every
        # receive that meets it), which is not a message.
        return max(n - 1, 0) if self._closed else n

    async def ack(self, ack: ControlAck) -> None:
        """Publish an ack. Acks published after acks() ended are kept but not yielded."""
        self.ack_nowait(ack)

    def ack_nowait(self, ack: ControlAck) -> None:
        """``ack`` for a caller that is not a coroutine (it never waits): the reader's own
        acks, published in the sender's call when it answers directly."""
        if not ack.acked_at_ms:
            ack.acked_at_ms = _now_ms()
        self._acked += 1
        self._outbox.put_nowait(ack)
        waiters = self._waiters
        if ack.control_id in waiters:
            waiter = waiters[ack.control_id]
            if waiter is None:  # its request is still in its send: it takes the ack from here
                waiters[ack.control_id] = ack
            elif isinstance(waiter, asyncio.Future):
                del waiters[ack.control_id]
                if not waiter.done():
                    waiter.set_result(ack)
        if self._closed:  # the acks can end only once the channel is closed
            self._maybe_end_acks()

    async def refuse_pending(self, detail: str) -> int:
        """Ack every message still queued FAILURE with ``detail``; for the owner of a run that
        ended without reading them, so each still gets its one ack. Returns how many."""
        n = 0
        while (msg := await self.receive(timeout=0)) is not None:
            self.ack_nowait(ControlAck(msg.id, AckResult.FAILURE, detail, applied_as=AppliedAs.REFUSED))
            n += 1
        return n

    # -- lifecycle ---------------------------------------------------------------
    def close(self) -> None:
        """Idempotent. Queued messages stay receivable; a blocked receive() wakes with None."""
        if self._closed:
            return
        self._closed = True
        self._inbox.put_nowait(_CLOSED)
        self._wake_reader()
        if self._inbox.qsize() == 1:
            # Nothing was queued: the inbox is drained already.
            self._inbox_drained = True
        self._maybe_end_acks()

    def _maybe_end_acks(self) -> None:
        if (
            self._closed
            and self._inbox_drained
            and self._acked >= self._received
            and not self._acks_ended
        ):
            self._acks_ended = True
            self._outbox.put_nowait(_CLOSED)
