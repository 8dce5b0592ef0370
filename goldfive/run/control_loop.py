"""ControlLoop: the only reader and the only acker of a run's ControlChannel.

One message's life: ``handle`` records it (ControlReceived), checks it and decodes its payload
once (``accept``: a malformed payload is acked FAILURE naming the field), decides its ack
through the handler table (``goldfive.run.handlers``) or an executor's ``_handle_custom`` hook
(docs/protocol.md#custom-controls), publishes the ack (to the sender and as ControlAcked), then applies the effect. Interventions of the ladder come in through
``submit`` instead of the person's channel, and go through the same steps; their ack goes on
the event stream only.

The executor keeps the scheduling: it races ``arm()`` against the running agents, calls
``drain()`` at task boundaries and ``receive_while_paused()`` while paused, and acts on the
outcome (cancel the invocations, abort the run).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from goldfive import events
from goldfive.aio import cancel_and_wait, first_done, start_eagerly
from goldfive.control import AckResult, AppliedAs, ControlAck, ControlKind, ControlMessage, kind_name
from goldfive.controls.payloads import Control, ControlPayload, Steer
from goldfive.errors import ControlPayloadError
from goldfive.inbox import InjectedMessage
from goldfive.run.handlers import handler_for
from goldfive.run.outcome import ControlOutcome, RunCancelled, refused, unsupported
from goldfive.run.validate import accept
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, _wall_ms

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.parts import Run

__all__ = ["ControlLoop", "CustomHandler", "RunCancelled"]

log = logging.getLogger("goldfive.run.control")

T = TypeVar("T")

#: An executor's custom (docs/protocol.md#custom-controls) hook: ``async def _handle_custom(msg, *, session, **kw)``.
CustomHandler = Callable[..., Awaitable[ControlOutcome]]

#: Kinds answered in the sender's call while the executor waits parked on a running batch
#: (``ControlChannel.answer_directly``): their outcome never asks the executor for anything
#: (no cancel, no replan), so nothing is lost by the executor not seeing it.
DIRECT_KINDS = frozenset({ControlKind.STATUS_QUERY, ControlKind.APPROVE, ControlKind.REJECT, ControlKind.ANSWER})


class ControlLoop:
    def __init__(self, ctx: Run) -> None:
        self.ctx = ctx
        self.channel = ctx.control
        #: Set by an executor that overrides ``_handle_custom``.
        self.custom: CustomHandler | None = None
        self._interventions: deque[ControlMessage] = deque()
        #: What the run is busy with outside a task ("planning", "replanning"), while
        #: ``responsive`` runs it; handlers word their acks by it.
        self.busy_with = ""
        #: STEERs acked while planning: applied to the plan once it exists.
        self._deferred_steers: list[Control[Steer]] = []
        self._wake: asyncio.Future[None] | None = None
        #: The executor's context (the run bound in it), taken at its first wait on a batch:
        #: a control answered in its sender's call runs in it, as it would in the executor.
        self._context: contextvars.Context | None = None
        #: A control answered directly that had to wait (for the emit lock, a sink): the next
        #: ``handle`` or boundary awaits it first, so controls stay handled one at a time.
        self._direct: asyncio.Future[Any] | None = None
        if self.channel is not None:
            self.channel.answer_directly(self._answer_directly)

    def let_go(self) -> None:
        """The run is over: no control is answered in its sender's call from here on (the
        channel's hook is taken back when it is still this loop's), and the executor's context
        is dropped. That context binds the run, and this loop is the run's: kept, it was a
        cycle that held a finished run until the collector's next full collection."""
        self._context = None
        ch = self.channel
        if ch is not None and ch.direct_answerer() == self._answer_directly:
            ch.answer_directly(None)

    # -- reading the channel ---------------------------------------------------------
    def usable(self) -> bool:
        ch = self.channel
        return ch is not None and not (ch.closed and ch.pending() == 0)

    def arm(self) -> asyncio.Future[None] | None:
        """A future done once a control is queued, to race against the running agents; None
        when the channel can give nothing. It consumes nothing: ``take`` reads the message."""
        if not self.usable():
            return None
        assert self.channel is not None
        return self.channel.ready()

    def take(self) -> ControlMessage | None:
        """The next queued control, if any, in send order."""
        return None if self.channel is None else self.channel.receive_nowait()

    async def responsive(self, work: Awaitable[T], busy_with: str) -> T:
        """Await ``work`` (a goal derivation, a plan, a replan) while controls keep being
        handled: a CANCEL cancels the work and raises RunCancelled; PAUSE takes effect when
        the work ends; a STEER is acked at once and applied to the plan once the work ends
        (``apply_deferred_steers``). Nested calls just await the work: the outer one handles."""
        if self.busy_with or not self.usable():
            return await work
        job: asyncio.Future[T] = asyncio.ensure_future(work)
        # The work gets the first turn: a planner that answers at once (a static plan) is done
        # before any control is looked at, so queued controls meet the first task boundary.
        await asyncio.sleep(0)
        if job.done():
            return job.result()
        self.busy_with = busy_with
        try:
            while not job.done():
                ready = self.arm()
                await first_done({job} if ready is None else {job, ready})
                while not job.done() and (msg := self.take()) is not None:
                    out = await self.handle(msg, mid_task=True)
                    if out.cancel_run:
                        await cancel_and_wait([job])
                        raise RunCancelled(out.cancel_reason)
                    if out.steer is not None:
                        self._deferred_steers.append(out.steer)
        finally:
            self.busy_with = ""
            if not job.done():  # the caller itself was cancelled
                await cancel_and_wait([job])
        return job.result()

    async def apply_deferred_steers(self) -> None:
        """The STEERs acked while the plan was being made, applied to it in order."""
        while self._deferred_steers and self.ctx.session.plan is not None:
            await self.apply_steer(self._deferred_steers.pop(0), interrupted=[])

    def submit(self, intervention: ControlMessage) -> None:
        """The ladder's intervention: handled at the next boundary, after what is queued, or
        mid-task by an executor that races ``interventions_ready`` (the watchdog's pause)."""
        self._interventions.append(intervention)
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def interventions_ready(self) -> asyncio.Future[None]:
        """A future done once the ladder has submitted an intervention; ``take_intervention``
        reads it."""
        if self._wake is None or self._wake.done():
            self._wake = asyncio.get_running_loop().create_future()
            if self._interventions:
                self._wake.set_result(None)
        return self._wake

    def wake(self, fut: asyncio.Future[None]) -> bool:
        """Have ``fut`` set once a control is queued (when the channel can give one) or the
        ladder submits an intervention; at once when either is waiting. The executor hands
        the same future to its batch's completions and awaits it alone: woken one loop
        iteration after the event, not two (``first_done``'s callbacks). Returns whether the
        channel can give a control (``arm()`` is not None)."""
        self._wake = fut
        if self._interventions and not fut.done():
            fut.set_result(None)
        if not self.usable():
            return False
        if self._context is None:
            self._context = contextvars.copy_context()
        assert self.channel is not None
        self.channel.wake_on_send(fut)
        return True

    def has_intervention(self) -> bool:
        return bool(self._interventions)

    def take_intervention(self) -> ControlMessage | None:
        return self._interventions.popleft() if self._interventions else None

    # -- one message -------------------------------------------------------------------
    def _answer_directly(self, msg: ControlMessage) -> bool:
        """The channel's direct hook: called in the sender's ``send`` while the executor waits
        parked on a running batch with nothing queued. A kind of ``DIRECT_KINDS`` is handled
        here and now, in the executor's context, as the executor would handle it mid-task
        (recorded, acked, its effect applied) minus the two task switches; anything else, or
        while an earlier one is still in flight, is left to the queue (False)."""
        if self._direct is not None or self.custom is not None or self._context is None or msg.kind not in DIRECT_KINDS:
            return False
        self._direct = start_eagerly(self.handle(msg, mid_task=True), self._context)
        return True

    async def _settle_direct(self) -> None:
        """Await the control answered directly that is still in flight (its failure is raised
        here, in the executor, as it would have been had the executor handled it)."""
        job = self._direct
        if job is not None:
            try:
                await job
            finally:
                self._direct = None

    async def handle(self, msg: ControlMessage, *, mid_task: bool, from_ladder: bool = False) -> ControlOutcome:
        """Record, check and decode, decide, ack, then apply the effect. Exactly one ack per
        message. A control that only reads (``reads_only``) is answered without a record.

        Every control passes here, a STATUS_QUERY or an APPROVE in its sender's call: the
        steps are written out in this one coroutine rather than one coroutine each."""
        if self._direct is not None:
            await self._settle_direct()
        ctx = self.ctx
        control: Control[ControlPayload] | None = None
        try:
            control = accept(msg, ctx.config.limits)
            problem = ""
        except ControlPayloadError as exc:
            problem = str(exc)
        if control is not None and control.payload.reads_only and not from_ladder:
            # A question (listing rules): answered to whoever asked, kept out of the run's
            # history, which records what was changed and by whom.
            outcome = await self._decide(control, mid_task)
            if self.channel is not None:
                self.channel.ack_nowait(outcome.ack)
            return outcome
        try:
            await ctx.emit(events.control_received, msg)
        except (TypeError, ValueError) as exc:
            if not problem:
                raise
            await self._record_without_payload(msg, exc)
        if control is None:
            outcome = refused(msg.id, AckResult.FAILURE, problem)
        else:
            outcome = await self._decide(control, mid_task)
        # The ack goes onto the event stream (the audit trail, committed by a durable store),
        # then to the sender: an ack a person saw is never undone by a crash. It is timed
        # before it is recorded, on the run's clock as its events are, so the record and the
        # sender's ack carry the same acked_at (the channel times only an ack that has none).
        ack = outcome.ack
        if not ack.acked_at_ms:
            clock = ctx.session.clock
            ack.acked_at_ms = time.time_ns() // 1_000_000 if clock is _wall_ms else clock()
        await ctx.emit(events.control_acked, ack, kind_name(msg.kind))
        if not from_ladder and self.channel is not None:
            self.channel.ack_nowait(ack)
        effect = outcome.effect
        if effect is not None:
            try:
                await effect()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: the ack is out, so the failure is an event
                log.exception("control effect failed")
                detail = f"effect of {kind_name(msg.kind)} {msg.id} failed after its ack: {type(exc).__name__}: {exc}"
                drift = DriftEvent(DriftKind.CUSTOM, DriftSeverity.WARNING, detail, ctx.session.current_task_id)
                await ctx.emit(events.drift_detected, drift)
        if outcome.steer is not None and not outcome.cancel_invocation:
            await self.apply_steer(outcome.steer, interrupted=[])
        return outcome

    async def _decide(self, control: Control[ControlPayload], mid_task: bool) -> ControlOutcome:
        try:
            if self.custom is not None:
                # Spec 7.b: the hook takes the message; falling back to dispatch_control with
                # its keywords hands the decoded control on, so it is not decoded again.
                msg = control.message
                return await self.custom(msg, session=self.ctx.session, mid_task=mid_task, ctx=self.ctx, control=control)
            handler = handler_for(control.message.kind)
            if handler is None:
                return unsupported(control)
            return await handler(self.ctx, control, mid_task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: a broken handler still acks
            log.exception("control handler failed")
            return refused(control.id, AckResult.FAILURE, f"handler error: {exc}")

    async def _record_without_payload(self, msg: ControlMessage, exc: Exception) -> None:
        """A payload that cannot be recorded is recorded without it: its kind and id, and the
        FAILURE ack that follows says what was wrong."""
        log.info("recording control %s without its payload: %s", msg.id, exc)
        await self.ctx.emit(events.control_received, ControlMessage(msg.kind, id=msg.id))

    # -- boundaries --------------------------------------------------------------------
    async def drain(self) -> list[ControlOutcome]:
        """Handle every message already queued, then the ladder's interventions, without
        waiting. Stops at a CANCEL: what is queued behind it is not applied to the run."""
        outcomes: list[ControlOutcome] = []
        if self._direct is not None:
            await self._settle_direct()
        await self.apply_deferred_steers()
        if self._idle():
            return outcomes
        while True:
            msg = self.take()
            from_ladder = False
            if msg is None and self._interventions:
                msg, from_ladder = self._interventions.popleft(), True
            if msg is None:
                return outcomes
            outcomes.append(await self.handle(msg, mid_task=False, from_ladder=from_ladder))
            if outcomes[-1].cancel_run:
                return outcomes

    def has_work(self) -> bool:
        """Whether ``drain`` has anything to do (deferred steers, a queued control, an
        intervention): the executor asks at every boundary without an await."""
        return bool(self._deferred_steers) or self._direct is not None or not self._idle()

    def _idle(self) -> bool:
        """Nothing to handle: the common case at a boundary, answered without an await."""
        ch = self.channel
        return not self._interventions and (ch is None or ch.pending() == 0)

    async def receive_while_paused(self) -> ControlMessage | None:
        """The next message while the run is paused, or None (the pause may have ended).
        Raises RunCancelled when an escalation's deadline passes or nobody can answer it."""
        ctx = self.ctx
        if not self.usable():
            if ctx.pause_deadline is not None:
                raise RunCancelled("escalated for a human decision, but the control channel is closed")
            if ctx.budget.reached is not None:  # nobody can raise it, and it must not go on over it
                raise RunCancelled(f"{ctx.budget.reached.reason}; the run stopped (no control channel to raise the budget)")
            if ctx.recording_error:  # nobody can RESUME it, and it must not go on unrecorded
                raise RunCancelled(f"recording failed: {ctx.recording_error}; the run stopped (no control channel to resume it)")
            # Nobody can resume a run whose channel is gone: carry on rather than wedge, and say so.
            ctx.unpause()
            drift = DriftEvent(DriftKind.CUSTOM, DriftSeverity.INFO, "control channel closed while paused; resuming")
            await ctx.steerer.report_drift(ctx.session, drift)
            return None
        timeout = None
        if ctx.pause_deadline is not None:
            timeout = ctx.pause_deadline - time.monotonic()
            if timeout <= 0:
                raise RunCancelled("escalation deadline expired without a human decision")
        recv = self.arm()
        if recv is not None:
            await asyncio.wait({recv}, timeout=timeout)
        msg = self.take()
        if msg is None and ctx.pause_deadline is not None and time.monotonic() >= ctx.pause_deadline:
            raise RunCancelled("escalation deadline expired without a human decision")
        return msg

    async def run_ladder(self) -> None:
        """Drifts reported mid-task go through the ladder now, at the boundary."""
        ctx = self.ctx
        while ctx.deferred_drifts:
            drift = ctx.deferred_drifts.pop(0)
            outcome = await ctx.steerer.handle_drift(ctx.session, drift, emit=False)
            self._take_intervention(outcome)

    def _take_intervention(self, outcome: Any) -> None:
        intervention = getattr(outcome, "intervention", None)
        if intervention is not None:
            self.submit(intervention)

    async def apply_steer(self, steer: Control[Steer], interrupted: list[str]) -> bool:
        """USER_STEER: drift, then delete-and-replan. If the planner fails, the interrupted
        tasks run again and the note reaches their agent as an injected message. A paused
        run stays paused. Returns True when the plan was revised."""
        ctx = self.ctx
        session = ctx.session
        ctx.pause_deadline = None  # a person decided: an escalation's deadline no longer runs
        drift = await ctx.steerer.observe(steer, session)
        if drift is None:
            return False
        if interrupted and not drift.task_id:
            drift = DriftEvent(drift.kind, drift.severity, drift.detail, interrupted[0], drift.annotation_id, drift.id, drift.metadata)
        outcome = await ctx.steerer.handle_drift(session, drift)
        self._take_intervention(outcome)
        if outcome.revised:
            return True
        for tid in interrupted:
            if session.plan is not None and session.plan.has_task(tid):
                ctx.pending_rewinds.append(tid)
        await ctx.messages.inject(InjectedMessage(text=steer.payload.note, role="user", control_id=steer.id))
        return False

    # -- after the run -----------------------------------------------------------------
    async def answer_queued(self) -> None:
        """Ack what is queued now FAILURE "run not active": for an executor driven without a
        Runner, which has no responder to answer controls after the run."""
        while (msg := self.take()) is not None:
            assert self.channel is not None
            detail = f"run not active: {kind_name(msg.kind)} arrived as the run ended"
            self.channel.ack_nowait(ControlAck(msg.id, AckResult.FAILURE, detail, applied_as=AppliedAs.REFUSED))

    async def answer_after_end(self) -> None:
        """Controls that arrive after the run ended still get their one ack (FAILURE).
        Runs until the channel closes or the task is cancelled (``Runner.close``)."""
        ch = self.channel
        if ch is None:
            return
        if self._direct is not None:
            await self._settle_direct()
        while True:
            msg = await ch.receive()
            if msg is None:
                return
            ch.ack_nowait(ControlAck(msg.id, AckResult.FAILURE, "run not active", applied_as=AppliedAs.REFUSED))
