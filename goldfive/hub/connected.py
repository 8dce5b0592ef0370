"""A run executing in someone else's process, served by the hub like a hosted one.

It is a :class:`~goldfive.remote.host.ServedRun` (state, plan, history, live tail, control
route, an explicit origin) holding a :class:`RunnerAttachment`: its events arrive over
``Hub.Connect`` instead of from a Runner in this process, and its controls go down that stream
(a :class:`RunnerRoute`) instead of into a local ControlChannel. Its events are recorded in
the hub's file, so a restarted hub serves its history and the run goes on under the same id
when its runner reconnects. There is no subclass: hub code asks a run for its runner part
with :func:`runner_of`.

``connection`` says where the runner is: "connected", "disconnected" (its stream is gone) or
"interrupted" (gone for longer than the hub's ``interrupt_after``); a run the hub placed on a
cluster (origin PLACED, with a :class:`Placement`) is "pending placement" until its actor
first connects. A run whose runner is connected to another hub of the fleet is FOLLOWED (its
route a :class:`HubRoute`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from goldfive import conv
from goldfive.budget.model import Budget
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.hub.limits import MAX_EVENT_BYTES
from goldfive.hub.trust import stamp_decisions
from goldfive.hub.turns import Turn, loop_turns
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote.host import Origin, ServedRun
from goldfive.remote.route import RUN_NOT_ACTIVE, NotLive
from goldfive.sinks.memory import InMemorySink
from goldfive.store.recorder import HubRecorder, RunRecorder
from goldfive.store.history import RunHistory
from goldfive.store.registry import RoutedControl, RunRegistry

__all__ = [
    "CHUNK_EVENTS",
    "CONNECTED",
    "DEFAULT_BUDGET_AUTHOR",
    "DISCONNECTED",
    "INTERRUPTED",
    "PENDING_PLACEMENT",
    "PLACEMENT_FAILED",
    "HubRoute",
    "Placement",
    "RunnerAttachment",
    "RunnerConnection",
    "RunnerRoute",
    "runner_of",
]

CONNECTED = "connected"
DISCONNECTED = "disconnected"
INTERRUPTED = "interrupted"
#: A placed run's connection until its actor first connects (then it is CONNECTED).
PENDING_PLACEMENT = "pending placement"
PLACEMENT_FAILED = "placement failed"

_TERMINAL = ("run_completed", "run_aborted")
#: The author of the BUDGET a hub sends a connected run that has no budget (``serve --budget``).
DEFAULT_BUDGET_AUTHOR = "hub default"
#: Events of a batch recorded, folded and served between two looks at the clock (well under
#: a millisecond of the hub's work): a runner's batch of 500 lets the loop turn between them.
CHUNK_EVENTS = 16

log = logging.getLogger("goldfive.hub")


class Receiving(Protocol):
    """A runner's stream (or lane) as its batches are stored: ``closed`` once it ended or its
    run was taken over; ``received``, the last sequence stored from it."""

    closed: bool
    received: int


class RunnerConnection(Protocol):
    """What a RunnerAttachment needs of the stream its runner is on."""

    host: str
    pid: int

    def send(self, msg: service_pb2.HubMessage) -> None: ...

    def goodbye(self, why: str) -> None: ...

    def end(self) -> None: ...


#: Sends a control to the hub another runner of the fleet is connected to (Fleet.route).
Forward = Callable[[str, ControlMessage, float], Awaitable[ControlAck]]


class RunnerRoute:
    """The run's runner is connected to this hub: a control goes down its stream, recorded as
    routed (with its author) first, and the runner's ack comes back up (``RunnerAttachment.acked``)."""

    live = True

    def __init__(self, run: RunnerAttachment, conn: RunnerConnection) -> None:
        self.run, self.conn = run, conn

    async def send(self, msg: ControlMessage, timeout: float) -> ControlAck:
        run = self.run
        if msg.id in run._waiting:
            raise ValueError(f"control id {msg.id!r} is already waiting for its ack")
        if not msg.issued_at_ms:
            msg.issued_at_ms = int(time.time() * 1000)
        await run._record_routed(msg)
        fut: asyncio.Future[ControlAck] = asyncio.get_running_loop().create_future()
        run._waiting[msg.id] = fut
        try:
            with loop_turns().hurry():  # the hub's ingest takes short turns until the ack is in
                self.conn.send(service_pb2.HubMessage(control=conv.to_pb_control_event(msg)))
                return await asyncio.wait_for(fut, timeout)
        finally:
            run._waiting.pop(msg.id, None)


class HubRoute:
    """The run's runner is connected to another hub of the fleet: controls are forwarded
    there (goldfive.hub.fleet), which sends them down the runner's stream."""

    live = True

    def __init__(self, forward: Forward, run_id: str) -> None:
        self.forward, self.run_id = forward, run_id

    async def send(self, msg: ControlMessage, timeout: float) -> ControlAck:
        return await self.forward(self.run_id, msg, timeout)


class Placement:
    """Where a run this hub placed on a cluster stands (goldfive.placement): until its actor
    first connects it is pending placement (the summary's state PENDING_PLACEMENT, the cluster's
    reason in its connection), or PLACEMENT_FAILED if the actor's process ended first."""

    def __init__(self) -> None:
        #: Whether an actor ever connected as this run.
        self.placed = False
        #: Why the cluster has not placed it yet ("" before anyone asked the cluster).
        self.pending_reason = ""
        #: The placed process's id on the cluster (Ray's actor id), for an operator's tools.
        self.actor_id = ""


class RunnerAttachment:
    """What a :class:`~goldfive.remote.host.ServedRun` executing in another process holds as
    its ``attachment``: its runner's stream (``conn``), where that runner is (``connection``,
    ``host``, ``pid``, ``hub``), the controls routed to it and their acks, its takeover and
    reconnect state, and (a run this hub placed on a cluster, origin PLACED) its
    :class:`Placement`. It sets the run's route as its runner comes and goes: a
    :class:`RunnerRoute` while connected here, a :class:`HubRoute` while connected to another
    hub of the fleet (origin FOLLOWED), else NotLive. Build one with :meth:`new`,
    :meth:`placed_run` or :meth:`from_recorded`; find a served run's with :func:`runner_of`."""

    def __init__(self, run: ServedRun, recorder: HubRecorder, *, placement: Placement | None = None) -> None:
        self.run = run
        #: This hub placed it on a cluster: where that stands (None for a runner's own run).
        self.placement = placement
        #: The runner's machine and process, from its hello.
        self.host = ""
        self.pid = 0
        self.connection = PENDING_PLACEMENT if placement is not None else DISCONNECTED
        #: When the runner's stream went away (time.monotonic), or None while connected.
        self.disconnected_at: float | None = None
        self.conn: RunnerConnection | None = None
        self._waiting: dict[str, asyncio.Future[ControlAck]] = {}
        self._interrupt: asyncio.TimerHandle | None = None
        #: Several hubs (goldfive.hub.fleet): the address of the other hub its runner is
        #: connected to ("" when none or this one), and how a control is sent there.
        self.hub = ""
        self.forward: Forward | None = None
        #: The hub's records (set when a runner claims the run): the controls this hub sent
        #: to it are recorded there, and a reported decision is checked against them.
        self.registry: RunRegistry | None = None
        self.routed: dict[str, RoutedControl] = {}
        #: The largest event (serialized bytes) a runner may send for this run.
        self.max_event_bytes = MAX_EVENT_BYTES
        #: ``serve --budget``: sent to the run as a BUDGET control when it has none of its own.
        self.default_budget: Budget | None = None
        self._start_sequence: int | None = None
        self._budget_task: asyncio.Task[None] | None = None
        run.origin = Origin.PLACED if placement is not None else Origin.CONNECTED
        run.recorder = recorder  # the hub's one recording, shared by every connected run
        run.memory = InMemorySink()
        run.route = NotLive(self._not_delivered())
        run.attachment = self

    @classmethod
    def new(
        cls,
        run_id: str,
        recorder: HubRecorder,
        *,
        history: RunHistory | None = None,
        placement: Placement | None = None,
        followed: bool = False,
    ) -> RunnerAttachment:
        """A new served run ``run_id`` whose runner connects over Hub.Connect, and its
        attachment; ``followed``: a run whose runner is on another hub of the fleet."""
        att = cls(ServedRun(run_id, history=history), recorder, placement=placement)
        if followed and placement is None:
            att.run.origin = Origin.FOLLOWED
        return att

    @classmethod
    def placed_run(cls, run_id: str, recorder: HubRecorder, *, goal_summary: str = "") -> RunnerAttachment:
        """A run this hub places on a cluster, shown from the moment it is asked for."""
        att = cls.new(run_id, recorder, placement=Placement())
        if goal_summary:
            att.run.state.goal_summary = goal_summary
        return att

    @classmethod
    def from_recorded(cls, old: ServedRun, recorder: HubRecorder, *, placed: bool = False) -> RunnerAttachment:
        """A run the hub recorded before a restart, going on live as its runner reconnects
        (``placed``: as a new actor this hub places continues it): the whole recorded history
        folded, new events served after it."""
        att = cls.new(old.run_id, recorder, history=old.history, placement=Placement() if placed else None)
        run = att.run
        if old.history is not None:
            run.fold_history()
        else:
            for ev in old.events_after(-1):
                run.fold(ev)
        return att

    @property
    def run_id(self) -> str:
        return self.run.run_id

    #: What the summary's origin says: the origin's own value.
    source = ""

    @property
    def ingest_refusal(self) -> str:
        return f"run {self.run.run_id!r} is connected over Hub.Connect; its events cannot also be pushed"

    @property
    def started_by_hub(self) -> bool:
        """Started by its hub (a placed run): kept even before its first event, and (several
        hubs on one database) placed again by another hub when this one is gone."""
        return self.placement is not None

    @property
    def label(self) -> str:
        """A placed run: PENDING_PLACEMENT until the first actor connects (PLACEMENT_FAILED if
        its process ended first), then the run's own phase."""
        placement = self.placement
        if placement is None or placement.placed or self.run.state.finished:
            return ""
        return "PLACEMENT_FAILED" if self.connection.startswith(PLACEMENT_FAILED) else "PENDING_PLACEMENT"

    def placement_failed(self, reason: str) -> None:
        """The placed process ended before the run ever connected (e.g. the agent's module
        could not be imported on the node)."""
        placement = self.placement
        if placement is not None and not placement.placed:
            placement.pending_reason = reason
            self.connection = f"{PLACEMENT_FAILED}: {reason}"

    def placement_waiting(self, reason: str) -> None:
        """The cluster's latest word on why the run is not placed (ignored once it is)."""
        placement = self.placement
        if placement is not None and not placement.placed:
            placement.pending_reason = reason
            self.connection = f"{PENDING_PLACEMENT}: {reason}" if reason else PENDING_PLACEMENT

    @property
    def stored_through(self) -> int:
        """The last sequence this hub holds (in the recording or about to be written)."""
        return self.run.state.last_sequence

    # -- the runner's stream -------------------------------------------------------------
    def attach(self, conn: RunnerConnection, goal_summary: str = "") -> None:
        """``conn`` is now this run's runner; a previous one is told it was taken over."""
        if self.placement is not None:
            self.placement.placed, self.placement.pending_reason = True, ""
        old, self.conn = self.conn, conn
        if old is not None:
            old.goodbye(
                f"another runner (host {conn.host}, pid {conn.pid}) connected as run {self.run.run_id} and took it over"
            )
        self.host, self.pid = conn.host, conn.pid
        self.hub = ""  # here, not on another hub
        if self.placement is None:
            self.run.origin = Origin.CONNECTED
        self.connection = CONNECTED
        self.disconnected_at = None
        self.run.route = RunnerRoute(self, conn)
        if self._interrupt is not None:
            self._interrupt.cancel()
            self._interrupt = None
        if goal_summary and not self.run.state.goal_summary:
            self.run.state.goal_summary = goal_summary

    def detach(self, conn: RunnerConnection, interrupt_after: float) -> None:
        """``conn``'s stream ended: the run is disconnected now, and interrupted after
        ``interrupt_after`` seconds unless a runner comes back (a finished run stays as it is)."""
        if self.conn is not conn:
            return  # taken over: the new runner's connection stands
        self.conn = None
        self.connection = DISCONNECTED
        self.disconnected_at = time.monotonic()
        self.run.route = NotLive(self._not_delivered())
        if not self.run.state.finished:
            loop = asyncio.get_running_loop()
            self._interrupt = loop.call_later(interrupt_after, self._interrupted)

    def elsewhere(self, hub: str, host: str, pid: int) -> None:
        """Its runner is connected to another hub (at address ``hub``): a runner still here is
        told it was taken over, as when two runners connect to one hub."""
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.goodbye(f"run {self.run.run_id}'s runner (host {host}, pid {pid}) connected to hub {hub} and took it over")
        self.hub, self.host, self.pid = hub, host, pid
        if self.placement is None:  # (a run this hub placed stays PLACED wherever its actor connects)
            self.run.origin = Origin.FOLLOWED
        self.connection = CONNECTED
        self.disconnected_at = None
        self.run.route = HubRoute(self.forward, self.run.run_id) if self.forward is not None else NotLive(self._not_delivered())
        if self._interrupt is not None:
            self._interrupt.cancel()
            self._interrupt = None

    def released(self, interrupt_after: float) -> None:
        """No hub has its runner (the other hub lost it, or stopped answering): disconnected,
        then interrupted after ``interrupt_after`` seconds."""
        if self.conn is not None or self.connection == INTERRUPTED:
            return
        self.hub = ""
        if self.connection != DISCONNECTED or self.disconnected_at is None:
            self.connection = DISCONNECTED
            self.disconnected_at = time.monotonic()
        self.run.route = NotLive(self._not_delivered())
        if not self.run.state.finished and self._interrupt is None:
            self._interrupt = asyncio.get_running_loop().call_later(interrupt_after, self._interrupted)

    def _interrupted(self) -> None:
        self._interrupt = None
        if self.conn is None and not self.run.state.finished:
            self.connection = INTERRUPTED
            self.run.route = NotLive(self._not_delivered())

    # -- events --------------------------------------------------------------------------
    def check_batch(self, events: Sequence[Event], after: int, size: int = 0) -> str:
        """Why this batch (following sequence ``after``; ``size``: its serialized bytes, if
        known) cannot be stored, or "". A batch that can be stored has its reported decisions
        stamped (``hub_check``, goldfive.hub.trust) before anything records it."""
        if self.run.state.finished and events:
            return f"run {self.run.run_id} already ended; event {events[0].sequence} is late"
        limit = self.max_event_bytes
        if not size or size > limit:  # a batch under the limit holds no event over it
            for ev in events:
                n = ev.ByteSize()
                if n > limit:
                    return f"event {ev.sequence} is {n:,} bytes; this hub takes at most {limit:,} bytes per event"
        expect = after + 1
        for ev in events:
            if ev.run_id != self.run.run_id:
                shown = ev.run_id if len(ev.run_id) <= 64 else ev.run_id[:63] + "…"
                return f"event {ev.sequence} belongs to run {shown!r}, not to this stream's run {self.run.run_id}"
            if ev.sequence < expect:
                return f"sequence goes backwards: event {ev.sequence} after {expect - 1}"
            if ev.sequence > expect:
                missing = f"event {expect}" if ev.sequence == expect + 1 else f"events {expect}..{ev.sequence - 1}"
                return f"sequence gap: event {ev.sequence} after {expect - 1} ({missing} missing)"
            if ev.WhichOneof("payload") is None:
                return f"event {ev.sequence} has no payload"
            expect += 1
        if stamp_decisions(events, self.routed):
            log.warning("hub: run %s reports a person's decision the hub did not route; stored as reported, not verified", self.run.run_id)
        return ""

    async def ingest_batch(self, events: Sequence[Event], *, record: bool = True) -> None:
        """Store and serve a checked batch: recorded (unless the caller recorded it already,
        ``record=False``: a shared stream records a whole frame at once), folded, told to the
        hooks and served live, each step once for the whole batch (in the batch's order)."""
        memory = self.run.memory
        assert memory is not None and self.run.recorder is not None
        emit_many = getattr(self.run.recorder, "emit_many", None)
        if not record:
            pass
        elif emit_many is not None:
            await emit_many(events)
        else:  # a recorder without a bulk path (several hubs: goldfive.hub.fleet's)
            for ev in events:
                await self.run.recorder.emit(ev)
        fold = self.run.fold
        hooks = self.run.hooks  # notifications (serve --notify-cmd), as for hosted runs
        for ev in events:
            fold(ev)
            for hook in hooks:
                hook(ev)
        if not memory.closed:
            await memory.emit_many(events)
        if events and events[-1].WhichOneof("payload") in _TERMINAL:
            await memory.close()  # watchers' streams end with the run, as for a hosted run
        if self.default_budget is not None and self._budget_task is None:
            self._offer_budget(events)

    async def ingest_in_turns(self, events: Sequence[Event], conn: Receiving, turn: Turn) -> None:
        """:meth:`ingest_batch` of a checked batch from ``conn`` in chunks of
        :data:`CHUNK_EVENTS`, letting the hub's loop turn between two chunks once ``turn`` is
        used up (goldfive.hub.turns: a control waits for at most that). ``conn.received``
        follows each chunk; if ``conn`` closed meanwhile (another runner took the run over, and
        was told what is stored), nothing more of the batch is stored."""
        n = len(events)
        if n <= CHUNK_EVENTS:
            await self.ingest_batch(events)
            conn.received = events[-1].sequence
            return
        for start in range(0, n, CHUNK_EVENTS):
            if start and await turn.check() and conn.closed:
                return
            chunk = events[start : start + CHUNK_EVENTS]
            await self.ingest_batch(chunk)
            conn.received = chunk[-1].sequence

    def _offer_budget(self, events: Sequence[Event]) -> None:
        """``serve --budget`` for a run that has none of its own: once an event past its
        run_started is in (a Runner records its own budget right after run_started) and no
        budget_changed was ever recorded, the hub sends BUDGET, author "hub default"."""
        for ev in events:
            if ev.WhichOneof("payload") == "run_started":
                self._start_sequence = ev.sequence
        state = self.run.state
        if not state.started_ms or state.finished or state.kind_counts.get("budget_changed", 0):
            return
        if any(sent.kind == "BUDGET" for sent in self.routed.values()):
            return  # a person's BUDGET went to it already (ctl start --budget): that one is its budget
        if self._start_sequence is not None and state.last_sequence <= self._start_sequence:
            return  # the event after run_started says whether it brought its own budget
        budget = self.default_budget
        if budget is None or budget.empty:
            return
        msg = ControlMessage(ControlKind.BUDGET, payload={**budget.to_payload(), "author": DEFAULT_BUDGET_AUTHOR, "client": "hub"})
        self._budget_task = asyncio.get_running_loop().create_task(self._send_budget(msg))

    async def _send_budget(self, msg: ControlMessage) -> None:
        try:
            ack = await self.run.control(msg, 30.0)
        except Exception as exc:  # isolation boundary: the run goes on without the default
            log.warning("hub: could not give run %s the hub's default budget: %s", self.run.run_id, exc)
            return
        if ack.result is not AckResult.SUCCESS:
            log.warning("hub: run %s refused the hub's default budget: %s", self.run.run_id, ack.detail)

    def committed(self, sequence: int, keep: int) -> None:
        """The hub's recording holds this run through ``sequence`` (committed): past ``keep``
        events in memory, forget the committed ones before the last ``keep``; they are served
        from the recording from now on, as a resumed run's history is. Bounds the memory (and
        garbage-collector work) of many long runs: each event held is an object the collector
        walks, and one held past a young collection makes the older ones longer."""
        memory = self.run.memory
        if memory is None or len(memory.events) <= keep or not isinstance(self.run.recorder, RunRecorder):
            return
        through = min(sequence, self.run.state.last_sequence - keep)
        if through <= self.run.resumed_after:
            return
        if self.run.history is None:
            sink = self.run.recorder.sink
            if sink is None:
                return  # nothing is recorded: what is in memory is all there is
            self.run.history = sink.log.history(self.run.run_id, kept=True)  # a SQLite recording
        memory.trim_through(through)
        self.run.resumed_after = through

    def load(self, ev: Event) -> None:
        """An event another hub stored, read back when this hub first serves the run: folded,
        not kept (``archive`` serves the history)."""
        if ev.sequence == self.run.state.last_sequence + 1:
            self.run.fold(ev)
            self.run.archived_through = ev.sequence

    async def follow(self, ev: Event) -> None:
        """A new event another hub stored for this run: served live here too."""
        if ev.sequence != self.run.state.last_sequence + 1:
            return  # already have it (or not the next: the caller reads in sequence order)
        self.run.fold(ev)
        memory = self.run.memory
        if memory is not None and not memory.closed:
            await memory.emit(ev)
            if ev.WhichOneof("payload") in _TERMINAL:
                await memory.close()

    # -- controls ------------------------------------------------------------------------
    def _not_delivered(self) -> str:
        return f"{RUN_NOT_ACTIVE} now: its runner is {self.connection}; not delivered"

    @property
    def interrupted(self) -> bool:
        return self.connection == INTERRUPTED and not self.run.state.finished

    async def control_here(self, msg: ControlMessage, timeout: float) -> ControlAck:
        """``control`` for a runner connected to this hub, never forwarded to another (a
        control another hub routed here)."""
        if self.run.state.finished:
            return ControlAck(msg.id, AckResult.FAILURE, f"{RUN_NOT_ACTIVE}: it ended")
        route = self.run.route
        if not isinstance(route, RunnerRoute):
            return ControlAck(msg.id, AckResult.FAILURE, self._not_delivered())
        return await route.send(msg, timeout)

    async def _record_routed(self, msg: ControlMessage) -> None:
        """Remember (and record) that this hub sent ``msg`` to the run, with its author: what
        the run later reports about a decision is checked against it."""
        kind = msg.kind.value if isinstance(msg.kind, ControlKind) else str(msg.kind)
        sent = RoutedControl(
            msg.id, kind, str(msg.payload.get("author", "") or ""), str(msg.payload.get("target_id", "") or ""), msg.issued_at_ms
        )
        self.routed[msg.id] = sent
        if self.registry is not None:
            try:
                await self.registry.routed(self.run.run_id, sent)
            except Exception as exc:  # the database is away: kept in memory, said in the log
                log.warning("hub: could not record control %s routed to run %s: %s", msg.id, self.run.run_id, exc)

    def acked(self, pb: Any) -> None:
        """The runner's ack of a control: returned to whoever is waiting for it (if anyone)."""
        fut = self._waiting.pop(pb.control_id, None)
        if fut is not None and not fut.done():
            fut.set_result(conv.from_pb_control_ack(pb))

    @property
    def live(self) -> bool:
        return self.run.route.live

    async def close(self) -> None:
        """The hub is stopping: the runner's stream ends (not a goodbye), the run's watchers' too."""
        if self._interrupt is not None:
            self._interrupt.cancel()
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.end()  # not a goodbye: the runner reconnects when a hub is back
        if self.run.memory is not None:
            await self.run.memory.close()
        self.run.route = NotLive()


def runner_of(run: ServedRun | None) -> RunnerAttachment | None:
    """The runner part of ``run`` (a connected, followed or placed run), or None for a run
    hosted here, pushed, recorded or hooked."""
    att = run.attachment if run is not None else None
    return att if isinstance(att, RunnerAttachment) else None
