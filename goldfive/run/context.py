"""RunContext: everything one run holds while it runs, declared in one place.

The Runner (or an executor driven directly) builds it and binds it as the current run
(``goldfive.run.current_run.running``) for the run's life; the executor, the ControlLoop, the
steerer, the tools and the adapters reach it through ``goldfive.run.current()``
(``goldfive.run.current_run``). Events go out through ``emit`` only, which builds and fans out each
event under one lock, so every sink sees sequences in order even when tasks run concurrently.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from goldfive import events
from goldfive.aio import FifoLock
from goldfive.approvals.desk import ApprovalDesk
from goldfive.budget.guard import BudgetGuard
from goldfive.errors import RecordingConflictError, SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.run.config import RuntimeConfig
from goldfive.run.control_loop import ControlLoop
from goldfive.run._current_var import bound_to
from goldfive.run.defaults import run_defaults
from goldfive.inbox import InjectedMessage
from goldfive.run.messages import EndTurn, InjectedMessages
from goldfive.run.parts import PauseState
from goldfive.run.tool_spec import ReportingToolSpec
from goldfive.run.tools import build_tools
from goldfive.run.user_tools import UserTool
from goldfive.steering import notes_of
from goldfive.types import DriftEvent, Session, _wall_ms
from goldfive.usage.ledger import UsageLedger
from goldfive.watchdog.watchdog import Watchdog

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.control import ControlChannel
    from goldfive.protocols import AgentAdapter, EventSink, Planner, Steerer
    from goldfive.sinks.fanout import FanOut

#: PauseState lives in goldfive.run.parts (the parts read it); still importable from here.
__all__ = ["STATE_CHANGES", "PauseState", "RunContext"]

log = logging.getLogger("goldfive.run")


#: The events committed by durable sinks before the run goes on (durable runs, ``goldfive
#: resume``). A task's end is not on the list: it is committed with the next task's start, which
#: is before the next task runs, so one commit per task keeps "a state change is on disk before
#: the next task starts" (a stop in between runs that task again, its attempt saying so).
STATE_CHANGES = frozenset(
    {
        events.plan_submitted,
        events.plan_revised,
        events.task_started,
        events.approval_requested,
        events.approval_granted,
        events.approval_rejected,
        events.approval_decided,
        events.control_acked,
        events.message_parked,
        events.run_resumed,
        events.run_completed,
        events.run_aborted,
        # Money spent is on disk before the run goes on: a resumed run's totals include it.
        events.usage_recorded,
        # A queued or standing note that was acked is on disk: a resumed run still has it.
        events.steer_queued,
        events.steer_queue_changed,
        events.guidance_added,
        events.guidance_removed,
        # A budget's pause and its changes hold across a crash.
        events.budget_reached,
        events.budget_changed,
    }
)

#: The events ``goldfive.steering.SteeringNotes`` folds: the live run folds its own as it emits them.
_NOTE_FACTORIES = frozenset(
    {events.steer_queued, events.steer_queue_changed, events.guidance_added, events.guidance_removed, events.control_received}
)

#: Of the controls received, only a STEER is folded (``SteeringNotes.received``): the rest
#: (every STATUS_QUERY, APPROVE, ...) skip the fold.
_STEER_KIND = "STEER"

#: Events of kinds the watchdog ignores (``Watchdog.observe`` returns no finding for them),
#: emitted on every control and approval: not handed to it (tests/run pin the list against
#: the watchdog's own).
UNWATCHED = frozenset(
    {
        events.control_received,
        events.control_acked,
        events.approval_requested,
        events.approval_granted,
        events.approval_rejected,
        events.approval_decided,
        events.drift_detected,
    }
)


#: The run's start and end (True: the run ends), looked up once per event: a control's and an
#: approval's events are none of them, and two identity checks each cost them more.
_LIFECYCLE: dict[Callable[..., Event], bool] = {
    events.run_completed: True, events.run_aborted: True, events.run_started: False, events.run_resumed: False,
}

#: The events the budget is shown once they are out (``BudgetGuard.after_event``).
_SPENDING: frozenset[Callable[..., Event]] = frozenset({events.usage_recorded, events.agent_step})


class RunContext:
    session: Session
    fanout: FanOut
    steerer: Steerer
    planner: Planner
    #: The agent's adapter; None for a run driven without one (an executor's own agents).
    adapter: AgentAdapter | None
    control: ControlChannel | None
    config: RuntimeConfig
    messages: InjectedMessages
    controls: ControlLoop
    #: The adapter's own tools (UserTool), offered to every turn.
    user_tools: list[UserTool]
    #: True once the terminal event (RunCompleted / RunAborted) was emitted.
    ended: bool
    #: Drifts reported mid-task; the executor hands them to the ladder at the next boundary,
    #: so a plan is never swapped under a running invocation.
    deferred_drifts: list[DriftEvent]
    #: Tasks to reset to PENDING at the next boundary (REWIND_TO, a ladder re-invoke).
    pending_rewinds: list[str]
    paused: bool
    #: monotonic() deadline of an escalation pause (TERMINATE); None when it has none.
    pause_deadline: float | None
    #: Whether the agent may hand work to another agent (INTERCEPT_TRANSFER).
    intercept_transfer: bool
    #: Rules, timeout policy and the calls rejected in each open turn (goldfive.approvals).
    approval_desk: ApprovalDesk
    #: Set when a durable sink found another process writing this run: the run stops.
    recording_conflict: RecordingConflictError | None
    #: Why the last durable commit failed, "" while commits work. The run is paused from the
    #: failure (no task starts) until a RESUME finds that a commit works again.
    recording_error: str
    #: Durable commits that failed in this run (an exit after one is not a success).
    recording_failures: int
    #: The run's model calls: ``report_usage`` records into it, a budget reads its totals.
    usage: UsageLedger
    #: The stall and loop detectors (None when ``config.watchdog`` turns them off).
    watchdog: Watchdog | None
    #: The run's budget, enforced (goldfive.budget): read by the gates before model calls.
    budget: BudgetGuard

    def __init__(
        self,
        session: Session,
        *,
        sinks: Sequence[EventSink],
        steerer: Steerer,
        planner: Planner,
        adapter: AgentAdapter | None = None,
        control: ControlChannel | None = None,
        config: RuntimeConfig | None = None,
    ) -> None:
        from goldfive.sinks.fanout import FanOut

        self.session = session
        self.fanout = FanOut(list(sinks))
        self.steerer = steerer
        self.planner = planner
        self.adapter = adapter
        self.control = control
        self.config = config or RuntimeConfig()
        self.messages = InjectedMessages(self.emit)
        self.user_tools = list(getattr(adapter, "user_tools", []) or [])
        self.ended = False
        self.deferred_drifts = []
        self.pending_rewinds = []
        self.paused = False
        self.pause_deadline = None
        self.intercept_transfer = True
        self.approval_desk = ApprovalDesk(
            policy=self.config.approval_policy,
            run_rules=self.config.approval_rules,
            machine_rules_path=self.config.machine_rules_path,
            use_machine_rules=self.config.use_machine_rules,
        )
        self.recording_conflict = None
        self.recording_error = ""
        self.recording_failures = 0
        defaults = run_defaults()
        self.usage = UsageLedger(self.emit, self.config.prices or defaults.prices)
        watch = self.config.watchdog or defaults.watchdog
        self.watchdog = Watchdog(self, watch) if watch.enabled else None
        self.budget = BudgetGuard(self, self.config.budget or defaults.budget)
        self._emit_lock = FifoLock()
        #: Durable sinks' commit, awaited after each state change (``STATE_CHANGES``).
        #: (``sync`` is the optional part of an EventSink: a durable recorder has it.)
        self._syncs: list[Callable[[], Awaitable[Any]]] = [
            sync for sink in sinks if callable(sync := getattr(sink, "sync", None))
        ]
        self._tools: dict[str, dict[str, ReportingToolSpec]] = {}
        #: What adapters keep for the run's life (a framework's client, a subprocess), closed
        #: when the run ends (``release``), last registered first.
        self._at_end: list[Callable[[], Awaitable[None]]] = []
        self.controls = ControlLoop(self)

    # -- events ------------------------------------------------------------------
    async def emit(self, factory: Callable[..., Event], *args: Any, **kwargs: Any) -> Event | None:
        """Build the event (stamping the next sequence) and hand it to every sink, in order.

        After the terminal event nothing more is written into the run. The watchdog sees
        every event; what it finds goes through the ladder once the event is out."""
        lock = self._emit_lock
        # FifoLock.try_acquire and release, written out: every event takes the lock (two calls
        # fewer per event). Uncontended (the common case): taken without an await.
        if lock._locked or lock._waiters:
            await lock.acquire()
        else:
            lock._locked = True
        try:
            if self.ended:
                # Guarantee: nothing is written into an ended run. Say so, never silently.
                log.warning("not recording %s: the run already ended", getattr(factory, "__name__", factory))
                return None
            if factory is events.plan_submitted and not self.fanout.sinks and not self._syncs:
                # A whole plan in protobuf that no sink would read: its sequence is drawn.
                self.session.next_sequence()
                return None
            ev = factory(self.session, *args, **kwargs)
            if factory in _LIFECYCLE:
                if _LIFECYCLE[factory]:
                    self.ended = True
                    self.budget.disarm()
                else:
                    self.budget.arm()  # a seconds limit is timed from here
            if self.fanout.sinks:
                await self.fanout.emit(ev)
            if factory in _NOTE_FACTORIES:  # the queue and guidance are what their events say
                if factory is not events.control_received or ev.control_received.kind == _STEER_KIND:
                    notes_of(self.session).apply(ev)
            if self._syncs and factory in STATE_CHANGES:
                await self._sync(ev)
            findings = self.watchdog.observe(ev) if self.watchdog is not None and factory not in UNWATCHED else None
        finally:
            if lock._waiters:
                lock.release()  # handed to the first waiter
            else:
                lock._locked = False
        if findings:
            assert self.watchdog is not None
            await self.watchdog.act(findings)
        if factory in _SPENDING:
            await self.budget.after_event(ev)
        return ev

    async def emit_task(self, factory: Callable[[Session, str, str], Event], task_id: str, text: str) -> None:
        """``emit`` for the two events of every task, ``events.task_started`` (``text``: the
        assignee) and ``events.task_completed`` (``text``: the result), by a shorter way.

        Neither is a note, a budget's or a terminal event, and the watchdog needs only the task
        id and the time from them, so it is told directly. A run with no sink builds neither
        event (nobody would read it): the sequence is still drawn, so the run's sequences stay
        the same with and without sinks. A durable sink commits a task's start before the task
        runs, as ``emit`` does (``STATE_CHANGES``). Anything unusual (the lock held, the run
        ended, an injected clock or Session subclass) goes the whole way through ``emit``."""
        lock, session, watchdog, syncs = self._emit_lock, self.session, self.watchdog, self._syncs
        if self.ended:
            await self.emit(factory, task_id, text)
            return
        if not syncs and not self.fanout.sinks and session.clock is _wall_ms and type(session) is Session and not lock.locked():
            # Nothing here awaits, so nothing can come in between: the lock is not taken.
            next(session._counter)  # this event's sequence, as _stamp draws it
            if watchdog is not None:
                if factory is events.task_started:
                    watchdog.task_started(task_id, time.time_ns() // 1_000_000)
                else:
                    watchdog.task_ended(task_id)
            return
        if not lock.try_acquire():
            await self.emit(factory, task_id, text)
            return
        try:
            started = factory is events.task_started
            if session.clock is _wall_ms:
                # The clock read once, here: the event's time is what the watchdog is told,
                # not read back out of the event (a Timestamp message, two fields).
                ms = time.time_ns() // 1_000_000
                ev = events.task_event(session, started, task_id, text, ms)
            else:
                ev = factory(session, task_id, text)
                ts = ev.emitted_at
                ms = ts.seconds * 1000 + ts.nanos // 1_000_000
            if self.fanout.sinks:
                await self.fanout.emit(ev)
            if syncs and started:  # a task's end is committed with the next start
                await self._sync(ev)
            if watchdog is not None:
                if started:
                    watchdog.task_started(task_id, ms)
                else:
                    watchdog.task_ended(task_id)
        finally:
            lock.release()

    async def _sync(self, ev: Event) -> None:
        """A state change is on disk before the run goes on (the next task, the ack).

        Another process writing this run (RecordingConflictError naming it) stops the run at
        once: raised from here, and again at the next task boundary should an isolation
        boundary on the way have caught it."""
        for sync in self._syncs:
            try:
                await sync()
            except RecordingConflictError as exc:
                if self.session.run_id not in exc.run_ids or self.recording_conflict is not None:
                    continue  # another run of a shared sink, or already stopping
                self.recording_conflict = exc
                raise
            except Exception as exc:  # isolation boundary: the failure pauses the run, reported
                await self._commit_failed(ev, exc)

    async def _commit_failed(self, ev: Event, exc: Exception) -> None:
        """A state change is not on disk: the run must not go on as if it were. It pauses
        (no task starts; the person is told, RecordingFailed) until a RESUME commits."""
        detail = _one_line(exc)
        if isinstance(exc, SinkError):  # a storage failure, said in one line
            log.error("could not commit %s (sequence %d) durably: %s", events.kind_of(ev), ev.sequence, detail)
        else:  # a sink's bug
            log.exception("could not commit %s (sequence %d) durably", events.kind_of(ev), ev.sequence)
        self.recording_failures += 1
        first = not self.recording_error
        self.recording_error = detail
        if self.ended or not first:
            return  # the run is over, or already paused for this
        self.pause()
        # Inside emit's lock (this is its commit): straight to the sinks, not through emit.
        await self.fanout.emit(events.recording_failed(self.session, detail, ev.sequence))

    async def retry_recording(self) -> str:
        """Commit what the durable sinks hold now (a RESUME after a recording failure): ""
        when every commit worked (the failure is over), else why not, in one line."""
        async with self._emit_lock:
            for sync in self._syncs:
                try:
                    await sync()
                except RecordingConflictError as exc:
                    if self.session.run_id in exc.run_ids:
                        return _one_line(exc)
                except Exception as exc:  # isolation boundary: the answer to the RESUME says it
                    return _one_line(exc)
            self.recording_error = ""
            return ""
    def raise_if_conflicted(self) -> None:
        """At a task boundary: another process writes this run, so it goes no further."""
        if self.recording_conflict is not None:
            raise self.recording_conflict

    # -- what lives as long as the run ----------------------------------------------
    def at_end(self, close: Callable[[], Awaitable[None]]) -> None:
        """Have ``close`` awaited when the run ends, however it ends (an adapter's session)."""
        self._at_end.append(close)

    async def release(self) -> None:
        """Close what ``at_end`` registered (each once, last first). A closer that fails is
        logged and the others still run; cancellation propagates after they all ran."""
        closers, self._at_end = self._at_end, []
        cancelled: asyncio.CancelledError | None = None
        for close in reversed(closers):
            try:
                await close()
            except asyncio.CancelledError as exc:
                cancelled = exc
            except Exception:  # isolation boundary: one adapter's cleanup must not stop the others
                log.exception("closing what run %s kept failed", self.session.run_id)
        if cancelled is not None:
            raise cancelled

    def let_go(self) -> None:
        """The run is over: its parts hold it weakly from here on. They held it strongly, a
        cycle (the run, its control loop, its watchdog, its budget, its ledger and messages'
        ``emit`` each pointing back), so a finished run's objects (session, plan, sinks) waited
        for the garbage collector's next full collection; now reference counting frees them as
        soon as the caller drops the run (the Runner, the outcome). What still holds the run
        (``Runner.context``, a hub reading its status) uses it as before."""
        run: RunContext = weakref.proxy(self)

        async def emit(factory: Callable[..., Event], *args: Any, **kwargs: Any) -> Event | None:
            return await run.emit(factory, *args, **kwargs)

        self.controls.ctx = run
        self.controls.let_go()
        self.budget.ctx = run
        if self.watchdog is not None:
            self.watchdog.ctx = run
        self.messages.rebind(emit)
        self.usage.rebind(emit)

    # -- pause -------------------------------------------------------------------
    @property
    def pause_state(self) -> PauseState:
        if not self.paused:
            return PauseState.RUNNING
        return PauseState.PAUSING if self.messages.running() else PauseState.PAUSED

    def own_context(self) -> contextvars.Context:
        """A fresh context in which this is the current run: what the run's timers (armed in an
        empty context, goldfive.aio.detached_timer) start runs as the run's own code does."""
        return bound_to(self)

    def pause(self, deadline_s: float | None = None) -> None:
        self.paused = True
        self.pause_deadline = time.monotonic() + deadline_s if deadline_s else None

    def unpause(self) -> None:
        self.paused = False
        self.pause_deadline = None
        self.budget.release()

    # -- tools -------------------------------------------------------------------
    def tools_for(self, task_id: str) -> dict[str, ReportingToolSpec]:
        """The reporting tools (plus the adapter's user tools) bound to ``task_id``; built
        once per turn and dropped when the turn ends."""
        tools = self._tools.get(task_id)
        if tools is None:
            tools = build_tools(self, task_id)
            self._tools[task_id] = tools
        return tools

    def open_turn(self, task_id: str) -> None:
        """Open the turn of ``task_id`` for injected messages (``close_turn`` ends it)."""
        self.messages.open_turn(task_id)

    def close_turn(self, task_id: str) -> list[InjectedMessage]:
        """End the turn of ``task_id``: its tools are dropped (a long run must not keep them
        all); returns what was parked for it and never read, for ``messages.hand_back``."""
        self._tools.pop(task_id, None)
        self.approval_desk.end_turn(task_id)
        return self.messages.close_turn(task_id)

    async def end_turn(self, task_id: str) -> None:
        """``close_turn``, and what was never read handed back (recorded, kept for the next turn)."""
        leftover = self.close_turn(task_id)
        if leftover:
            await self.messages.hand_back(task_id, leftover)

    async def begin_turn(self, task_id: str) -> EndTurn:
        """Open the turn of ``task_id`` for injected messages; the returned coroutine function
        ends it (``end_turn``)."""
        self.open_turn(task_id)

        async def end() -> None:
            await self.end_turn(task_id)

        return end


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"
