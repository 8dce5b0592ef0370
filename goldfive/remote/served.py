"""ServedRun: one run a server serves, whatever its origin (hosted in this process, pushed by
a producer, recorded, or attached: connected over Hub.Connect, placed, followed, hooked), with
its RunState, its history, a live tail and the route its controls take. RunHost
(:mod:`goldfive.remote.host`, which re-exports all of this) holds the runs a server serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import socket
from enum import Enum
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Protocol

from goldfive.aio import cancel_and_wait
from goldfive.approvals.policy import ApprovalReminders
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.view import RunState
from goldfive.sinks.memory import InMemorySink, Missed
from goldfive.store.history import SUMMARY_KINDS, RunHistory
from goldfive.remote.route import RUN_NOT_ACTIVE, ControlRoute, LocalRoute, NotLive
from goldfive.store.fleet import FleetEvents
from goldfive.store.recorder import HubRecorder, RunRecorder
from goldfive.protocols import EventSink
from goldfive.pb.goldfive.v1.types_pb2 import Plan

if TYPE_CHECKING:
    from goldfive.results import ExecutionOutcome
    from goldfive.types import Goal
    from goldfive.runner import Runner

__all__ = ["HUB_OWNER", "Attachment", "HostedRun", "Origin", "RunFactory", "ServedRun"]

log = logging.getLogger("goldfive.remote")

#: The owner and writer of the runs a hub hosts in its own process.
HUB_OWNER = "hub"
_HOSTNAME = socket.gethostname()

#: Builds the Runner of a hosted run: ``factory(sinks=..., control=..., run_id=...)``.
RunFactory = Callable[..., "Runner"]


class _StateSink:
    """Folds every event into a RunState and keeps the latest plan message."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.plan: Plan | None = None
        #: Told of every live event (RunHost.event_hooks: notifications).
        self.hooks: list[Callable[[Event], None]] = []

    async def emit(self, event: Event) -> None:
        self.state.apply(event)
        for hook in self.hooks:
            hook(event)
        kind = event.WhichOneof("payload")
        if kind == "plan_submitted":
            self.plan = event.plan_submitted.plan
        elif kind == "plan_revised":
            self.plan = event.plan_revised.plan

    async def close(self) -> None:
        return None


class Origin(str, Enum):
    """How a served run came to be served here, said explicitly (never inferred from which of
    its parts are set). The value is what ``RunSummary.origin`` says on the wire."""

    #: A Runner in this process (``serve TARGET``, ``ctl start``, a run resumed here).
    HOSTED = "hosted"
    #: Fed by a GoldfiveIngress producer: its events pushed, no controls.
    PUSHED = "pushed"
    #: Executed by nothing here: read from the database (finished, or interrupted).
    RECORDED = "recorded"
    #: A runner in another process connected over Hub.Connect to this hub (its route a
    #: RunnerRoute while it is connected).
    CONNECTED = "connected"
    #: A runner connected to another hub of the fleet (several hubs on one database): its
    #: events followed through the database, its controls forwarded there (a HubRoute).
    FOLLOWED = "followed"
    #: Started by this hub on a cluster (Ray): pending placement until its actor connects.
    PLACED = "ray"
    #: An agent session (Claude Code...) reported through the hub's hooks.
    HOOKED = "hooked"


class Attachment(Protocol):
    """What a run executing outside this process adds to its :class:`ServedRun` (held as
    ``run.attachment``): a runner's stream (goldfive.hub.connected.RunnerAttachment, also a
    placed run's) or an agent's hooks (goldfive.hub.hooked.HookAttachment). It says where the
    run executes and how it is connected, and it provides the run's route (it sets
    ``run.route`` as its runner comes and goes)."""

    #: The machine and process the run executes in (from its runner's hello or reports).
    host: str
    pid: int
    #: How its runner is connected ("connected", "disconnected", ...; "" once over).
    connection: str
    #: Several hubs: the address of the other hub its runner is connected to, or "".
    hub: str

    @property
    def source(self) -> str:
        """What the summary's origin says instead of the origin's value ("" for that)."""
        ...

    @property
    def label(self) -> str:
        """A state word overriding the run's phase in its summary, or ""."""
        ...

    @property
    def interrupted(self) -> bool: ...

    @property
    def live(self) -> bool: ...

    @property
    def ingest_refusal(self) -> str:
        """Why a producer cannot push this run's events (GoldfiveIngress)."""
        ...

    async def close(self) -> None: ...


class ServedRun:
    """One run the server can stream, snapshot and (while live) control: its state (folded as
    its events arrive), its history (``history``, read from the recording on demand), its live
    tail (``memory``), and the :class:`~goldfive.remote.route.ControlRoute` its controls take
    now (LocalRoute, a runner's stream, another hub, or NotLive). ``origin`` (an
    :class:`Origin`) says how it is served; it changes only when the run does (a recorded run
    started here is HOSTED, a pushed run whose producer ended is RECORDED). A hub's connected,
    placed and hooked runs hold what they add (the runner's stream, the hooks' session) as
    their ``attachment``, which provides their route: there are no subclasses."""

    def __init__(self, run_id: str, *, events: list[Event] | None = None, history: RunHistory | None = None) -> None:
        self.run_id = run_id
        #: How the run is served (see :class:`Origin`).
        self.origin = Origin.RECORDED
        #: Where its controls go now.
        self.route: ControlRoute = NotLive()
        self._state_sink = _StateSink(RunState())
        self.memory: InMemorySink | None = None
        self.channel: ControlChannel | None = None
        self.runner: Runner | None = None
        self.task: asyncio.Task[ExecutionOutcome | None] | None = None
        self._history: list[Event] = list(events or [])
        #: The recorded history in the database, read on demand (a run served after a restart).
        self.history = history
        #: The live run's recording (None for a recorded run).
        self.recorder: HubRecorder | None = None
        #: Its events up to this sequence are served from ``history``, the later ones from
        #: ``memory`` (a recorded run resumed here, a connected run whose older events a hub
        #: no longer keeps in memory).
        self.resumed_after = -1
        #: Set while the run is fed by a remote producer (GRPCSink -> ingest).
        self.ingest_sinks: list[EventSink] | None = None
        #: The recorder's ``dropped`` as the last ``ingest`` read it.
        self._ingest_dropped = 0
        #: Several hubs on one database: the run's events through ``archived_through`` are
        #: read from there (``archive.events(run_id, after)``, async), the rest from ``memory``.
        self.archive: FleetEvents | None = None
        self.archived_through = -1
        #: The credential the run belongs to on this hub (its registration's owner).
        self.owner = ""
        #: A run executing outside this process: its runner's stream or its hooks (see
        #: :class:`Attachment`); None for a run hosted here, pushed or recorded.
        self.attachment: Attachment | None = None
        for ev in self._history:
            self.fold(ev)

    @property
    def origin_label(self) -> str:
        """What ``RunSummary.origin`` says (the origin's value; a hooked run names its source)."""
        source = self.attachment.source if self.attachment is not None else ""
        return source or self.origin.value

    @property
    def hooks(self) -> list[Callable[[Event], None]]:
        """Told of every live event of the run (the host's ``event_hooks``: notifications)."""
        return self._state_sink.hooks

    @hooks.setter
    def hooks(self, hooks: list[Callable[[Event], None]]) -> None:
        self._state_sink.hooks = hooks

    def fold_history(self) -> None:
        """The whole recorded history folded, for a recorded run about to go on live."""
        assert self.history is not None
        self._state_sink.state = RunState()  # the same sink object: the runner already holds it
        events = self.history.events(-1)
        try:
            for ev in events:
                self.fold(ev)
        finally:
            events.close()
        self.resumed_after = self.state.last_sequence

    def fold(self, ev: Event) -> None:
        """``ev`` into the run's state and plan (not served: ``memory`` serves the live tail)."""
        self._state_sink.state.apply(ev)
        kind = ev.WhichOneof("payload")
        if kind in ("plan_submitted", "plan_revised"):
            self._state_sink.plan = getattr(ev, kind).plan

    @classmethod
    def recorded(cls, history: RunHistory, event_count: int, last_sequence: int) -> ServedRun:
        """A run served from the database: its summary folded from the few events that
        shape it, its history left on disk."""
        run = cls(history.run_id, history=history)
        for ev in history.events(kinds=SUMMARY_KINDS):
            run.fold(ev)
        state = run.state
        state.events = event_count
        state.last_sequence = max(state.last_sequence, last_sequence)
        return run

    # -- where it runs (the hub's RunSummary.origin, host, pid) ---------------------------
    @property
    def host(self) -> str:
        """The machine the run executes on: this one for a run hosted here, its runner's."""
        if self.attachment is not None:
            return self.attachment.host
        return _HOSTNAME if self.runner is not None else ""

    @property
    def pid(self) -> int:
        if self.attachment is not None:
            return self.attachment.pid
        return os.getpid() if self.runner is not None else 0

    @property
    def connection(self) -> str:
        """How its runner is connected (only a run with an attachment has one to report)."""
        return self.attachment.connection if self.attachment is not None else ""

    @property
    def hub(self) -> str:
        """Several hubs: the other hub its runner is connected to, or ""."""
        return self.attachment.hub if self.attachment is not None else ""

    @property
    def label(self) -> str:
        """A state word that overrides the run's phase in its summary ("" for none): a placed
        run's PENDING_PLACEMENT, say."""
        return self.attachment.label if self.attachment is not None else ""

    # -- health of the recording ---------------------------------------------------------
    @property
    def damaged(self) -> int:
        """Stored events skipped as unreadable (found so far)."""
        return self.history.damaged if self.history is not None else 0

    @property
    def history_error(self) -> str:
        return self.history.history_error if self.history is not None else ""

    @property
    def write_error(self) -> str:
        return self.recorder.write_error if self.recorder is not None else ""

    @property
    def unwritten(self) -> int:
        return self.recorder.unwritten if self.recorder is not None else 0

    @property
    def dropped(self) -> int:
        return self.recorder.dropped if self.recorder is not None else 0

    # -- views ---------------------------------------------------------------------------
    @property
    def state(self) -> RunState:
        return self._state_sink.state

    @property
    def plan(self) -> Plan | None:
        return self._state_sink.plan

    @property
    def interrupted(self) -> bool:
        """Recorded without a terminal event and executed by nothing here: the process that
        ran it went away mid-run (or, attached, its runner is gone for good)."""
        if self.attachment is not None:
            return self.attachment.interrupted
        return self.origin is Origin.RECORDED and not self.state.finished

    @property
    def live(self) -> bool:
        """Hosted by this process with its runner still running (attached: as its attachment says)."""
        if self.attachment is not None:
            return self.attachment.live
        return self.task is not None and not self.task.done()

    def events_after(self, sequence: int) -> list[Event]:
        if self.memory is not None and self.history is not None:  # resumed: recorded, then live
            older: list[Event] = []
            if sequence < self.resumed_after:
                stored = self.history.events(sequence)
                try:
                    for e in stored:
                        if e.sequence > self.resumed_after:
                            break
                        older.append(e)
                finally:
                    stored.close()
            return older + self.memory.events_after(max(sequence, self.resumed_after))
        if self.memory is not None:
            return self.memory.events_after(sequence)
        if self.history is not None:
            return list(self.history.events(sequence))
        return [e for e in self._history if e.sequence > sequence]

    async def stream(self, after_sequence: int) -> AsyncGenerator[Event, None]:
        """Events with sequence > ``after_sequence``: history, then live until the run's
        stream ends. Each sequence once, in order, with no gap: a ``Missed`` (this reader fell
        behind) is refilled from the recorded events. Closing the generator unsubscribes."""
        last = after_sequence
        if self.archive is not None and last < self.archived_through:
            async with contextlib.aclosing(self.archive.events(self.run_id, last)) as stored:
                async for ev in stored:
                    if ev.sequence > self.archived_through:
                        break
                    last = ev.sequence
                    yield ev
            last = max(last, self.archived_through)
        # A resumed run (or a connected run whose older events left memory): its recorded
        # part first. The boundary moves while this reader is slow (the hub commits and trims
        # memory), so read the recording again until it is reached, never jump to it: the
        # events between were not read yet.
        while self.memory is not None and self.history is not None and last < self.resumed_after:
            older = self.history.events(last)
            before = last
            try:
                for ev in older:
                    if ev.sequence > self.resumed_after:
                        break
                    last = ev.sequence
                    yield ev
            finally:
                older.close()
            if last == before:
                break  # nothing more recorded: the rest is in memory (a Missed refills any gap)
        if self.memory is None:
            if self.history is not None:
                events = self.history.events(last)
                try:
                    for ev in events:
                        yield ev
                finally:
                    events.close()  # now, not when the generator is collected
                return
            for ev in self.events_after(last):
                yield ev
            return
        sub = self.memory.subscribe(after_sequence=last)
        try:
            async for item in sub:
                if isinstance(item, Missed):
                    # Refilled from memory, or from the recording for events a hub no longer
                    # keeps in memory (RunnerAttachment.committed).
                    for ev in self.events_after(last):
                        if ev.sequence > item.last_sequence:
                            break
                        last = ev.sequence
                        yield ev
                    continue
                if item.sequence <= last:
                    continue
                last = item.sequence
                yield item
        finally:
            sub.close()

    # -- controls ------------------------------------------------------------------------
    async def control(self, msg: ControlMessage, timeout: float) -> ControlAck:
        """Send ``msg`` by the run's route and return its ack (see goldfive.remote.route).

        Raises TimeoutError when no ack came within ``timeout`` seconds. A run nothing
        executes answers FAILURE with the reason itself, as does an attached run that ended
        (its runner may still be connected)."""
        if self.attachment is not None and self.state.finished:
            return ControlAck(msg.id, AckResult.FAILURE, f"{RUN_NOT_ACTIVE}: it ended")
        return await self.route.send(msg, timeout)

    # -- lifecycle -----------------------------------------------------------------------
    def start(
        self,
        factory: RunFactory,
        user_input: str | list[Goal] | None,
        db_path: str,
        *,
        resume: bool = False,
        recorder: HubRecorder | None = None,
        history: list[Event] | None = None,
        reminders: ApprovalReminders | None = None,
    ) -> None:
        """Run it here. With ``resume``, a recorded run goes on from its recording
        (``Runner.continue_from``); a refusal raises and leaves it recorded. ``recorder``: the
        sink that records it (default a RunRecorder on ``db_path``). With ``history`` (its
        recorded events, held by ``recorder`` already: a hub on PostgreSQL), the run goes on
        from those (``Runner.continue_from_events``). ``reminders``: the hub's reminders and
        escalation for a run whose own config sets none."""
        from goldfive.runner import Runner

        memory, channel = InMemorySink(), ControlChannel()
        recorder = recorder if recorder is not None else RunRecorder(db_path)
        sinks = [memory, self._state_sink, recorder]
        runner = factory(sinks=sinks, control=channel, run_id=self.run_id)
        if reminders is not None and isinstance(runner, Runner) and runner.config.approval_reminders is None:
            runner.config = dataclasses.replace(runner.config, approval_reminders=reminders)
        if history is not None:
            runner.continue_from_events(self.run_id, history, holder=recorder)  # refusal: raises, nothing kept
            self._state_sink.state = RunState()  # the same sink object: the runner already holds it
            for ev in history:
                self.fold(ev)
        if resume:
            try:
                runner.continue_from(db_path, self.run_id)
            except BaseException:
                asyncio.get_running_loop().create_task(recorder.close())
                raise
            self.fold_history()
        self.memory, self.channel, self.recorder, self.runner = memory, channel, recorder, runner
        self.origin, self.route = Origin.HOSTED, LocalRoute(channel)
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(self._run(runner, user_input), name=f"run-{self.run_id}")

    async def _run(self, runner: Runner, user_input: str | list[Goal] | None) -> ExecutionOutcome | None:
        try:
            return await runner.run(user_input)
        except asyncio.CancelledError:
            raise
        except Exception:  # isolation boundary: the run's failure is in its RunAborted event
            log.exception("hosted run %s raised", self.run_id)
            return None

    # -- fed by a remote producer ------------------------------------------------------
    async def begin_ingest(self, db_path: str) -> None:
        """Serve this run live from events a producer pushes (after any recorded history).
        ValueError for a run whose events come from its runner or its hooks."""
        if self.attachment is not None:
            raise ValueError(self.attachment.ingest_refusal)
        self.memory = InMemorySink()
        for ev in self.events_after(-1):  # the state already holds them: only the stream needs them
            await self.memory.emit(ev)
        self._history = []
        self.recorder = RunRecorder(db_path)
        self._ingest_dropped = 0
        self.ingest_sinks = [self.memory, self._state_sink, self.recorder]
        self.origin = Origin.PUSHED
        self.route = NotLive(f"{RUN_NOT_ACTIVE} here: its events are pushed by a remote producer")

    async def ingest(self, event: Event) -> int:
        """``event`` pushed by the run's producer: served, folded and recorded. Returns how
        many events the recording dropped since the last ``ingest`` (its bound reached while
        writes fail; 0 while writing works)."""
        assert self.ingest_sinks is not None
        for sink in self.ingest_sinks:
            await sink.emit(event)
        if event.WhichOneof("payload") in ("run_completed", "run_aborted"):
            await self.end_ingest()
        # (on every pushed event's path: one read of the count, compared with the last one)
        recorder = self.recorder
        dropped = recorder.dropped if recorder is not None else 0
        if dropped == self._ingest_dropped:
            return 0
        new, self._ingest_dropped = dropped - self._ingest_dropped, dropped
        return new

    async def end_ingest(self) -> None:
        self.origin, self.route = Origin.RECORDED, NotLive()  # its producer is done: served as recorded
        sinks, self.ingest_sinks = self.ingest_sinks, None
        for sink in sinks or ():
            await sink.close()

    async def close(self, *, suspend: bool = False) -> None:
        """Cancel the run if still going, stop answering controls, close its sinks. With
        ``suspend`` (the server is stopping, not the run), a live run is left interrupted in
        its recording, to be continued by the next start (Runner.suspend). An attached run's
        attachment closes it (its runner reconnects when a hub is back)."""
        if self.attachment is not None:
            await self.attachment.close()
            return
        if self.ingest_sinks is not None:
            await self.end_ingest()
        if self.task is not None:
            if suspend and self.runner is not None and not self.task.done():
                self.runner.suspend()
            await cancel_and_wait([self.task])  # _run already logged a failure
        if self.runner is not None:
            try:
                await self.runner.close()
            except Exception:  # isolation boundary: one run's teardown must not stop the others'
                log.exception("closing hosted run %s failed", self.run_id)
        if self.channel is not None:
            self.channel.close()
            await self.channel.refuse_pending(RUN_NOT_ACTIVE)  # nobody reads it any more


#: The name ServedRun had before it served every kind of run (kept for code importing it).
HostedRun = ServedRun
