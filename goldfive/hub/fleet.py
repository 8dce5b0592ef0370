"""Fleet: several hubs serving one fleet of runs from one PostgreSQL database.

A hub started with ``goldfive serve --db postgresql://...`` joins the fleet of every hub on that
database:

- **Events.** The events of the runs connected to (or hosted by) this hub are written to the
  shared ``goldfive_events`` table; the same transaction NOTIFYs ``goldfive_events`` with how far
  each run is now stored ("HUB<TAB>RUN<TAB>SEQUENCE"). Every hub LISTENs and *follows*: a run
  whose runner is connected to another hub is served here too, its summary folded, its history
  read from the database (``HostedRun.archive``) and its new events fetched as they are
  announced. Any hub lists every run and streams any of them.
- **Which hub has a run.** ``goldfive_run_owners`` says which hub each run's runner is connected
  to; a hub that takes a run (a runner connects, or reconnects after its hub died) writes itself
  there and NOTIFYs ``goldfive_owners``, and the hub that had it says goodbye to a runner still
  on its stream. Hubs write a heartbeat into ``goldfive_hubs``; a hub not seen for
  ``dead_after`` seconds is taken as gone and its runs show DISCONNECTED (then INTERRUPTED)
  until their runners reconnect elsewhere.
- **Controls.** A control for a run connected to another hub is a row in ``goldfive_controls``
  plus a NOTIFY on the owning hub's own channel (``goldfive_hub_<id>``); the owning hub sends it
  down the runner's stream, writes the run's ack into the row and NOTIFYs the asking hub's
  channel. A table and not only NOTIFY: a control (a steer note) can be longer than NOTIFY's
  8,000-byte payload, and the row is a record of who routed what, answered or not. NOTIFY and
  not polling: a routed control costs four round trips to the database, not a poll interval.

When the database cannot be reached the hub is *degraded*: it keeps serving its live runs from
memory, keeps their events (its runners keep everything the hub has not confirmed), writes them
when the database is back, and says so (``ListRuns.hub_warning``: ``ctl runs``, the runs screen).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any


from goldfive import conv
from goldfive.control import AckResult, ControlAck, ControlMessage
from goldfive.errors import SinkError
from goldfive.hub.connected import ConnectedRun
from goldfive.pb.goldfive.v1 import control_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote.host import RUN_NOT_ACTIVE, RunHost
from goldfive.store.postgres import EVENTS_CHANNEL, PostgresSink, PostgresStore, redact
from goldfive.store.postgres_fleet import OWNERS_CHANNEL, RELEASED, FleetTables, Owner, hub_channel
from goldfive.store.postgres_registry import PostgresRegistry
from goldfive.store.recorder import HUB_WRITER
from goldfive.store.registry import LaunchSpec

__all__ = ["Fleet", "FleetRecorder", "OWNERS_CHANNEL"]

log = logging.getLogger("goldfive.hub")



def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class FleetRecorder:
    """What a hub on PostgreSQL records with: one PostgresSink (a RecordingSink over the
    store) for every run of this hub, announcing each write to the other hubs. The shape of
    RunRecorder (emit, commit, health),
    so HubService and HostedRun use either."""

    def __init__(self, store: PostgresStore, hub_id: str) -> None:
        store.writer = HUB_WRITER  # this hub's own runs; write_as names a runner's credential
        # No bound: every event held here is also held by its runner until confirmed.
        self.sink = PostgresSink(store, batch_size=1000, flush_interval=0.02, max_pending=None, notify=hub_id)

    @property
    def write_error(self) -> str:
        return self.sink.error

    @property
    def unwritten(self) -> int:
        return self.sink.unwritten

    @property
    def dropped(self) -> int:
        return self.sink.dropped

    async def emit(self, event: Event) -> None:
        try:
            await self.sink.emit(event)
        except SinkError:
            pass  # the events are held; writes are retried by the timer and by commit (write_error says why)

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """The run's events from ``from_sequence`` on are recorded as ``writer``'s (provenance)."""
        self.sink.store.write_as(run_id, writer, from_sequence)

    async def sync(self) -> None:
        await self.commit()

    async def commit(self) -> bool:
        try:
            await self.sink.sync()
        except SinkError:
            return False
        return self.sink.unwritten == 0 and not self.sink.error

    async def close(self) -> None:
        """A run's end: write what is held, but the recorder stays open for the other runs."""
        await self.commit()

    async def shutdown(self) -> None:
        await self.commit()


class Fleet:
    """This hub's part in the fleet on ``store``. ``await start()`` once the gRPC server is
    up, ``await stop()`` when it stops."""

    def __init__(
        self,
        store: PostgresStore,
        host: RunHost,
        *,
        address: str,
        interrupt_after: float,
        heartbeat: float = 1.0,
        dead_after: float = 5.0,
        control_timeout: float = 30.0,
        resume_with: Callable[[LaunchSpec], Any] | None = None,
        placer: Any = None,
    ) -> None:
        self.store = store
        self.host = host
        self.address = address
        self.interrupt_after = interrupt_after
        self.heartbeat = heartbeat
        self.dead_after = dead_after
        self.control_timeout = control_timeout
        #: Builds a run a hub hosted again from the launch that hub recorded in the shared
        #: registry (goldfive.remote.launch.resume_with); with it, the hosted runs of a hub
        #: gone for ``interrupt_after`` seconds go on here. None: they stay INTERRUPTED.
        self.resume_with = resume_with
        #: serve --ray: the runs of a gone hub are placed on the cluster again instead.
        self.placer = placer
        self._adopting: asyncio.Task[None] | None = None
        self._refused: set[str] = set()
        self.hub_id = uuid.uuid4().hex[:16]
        self.channel = hub_channel(self.hub_id)
        #: The fleet's rows (hubs, owners, routed controls): all its SQL.
        self.tables = FleetTables(store, self.hub_id, address)
        self.recorder = FleetRecorder(store, self.hub_id)
        #: Every hub's records of the fleet's runs, in the shared database.
        self.registry = PostgresRegistry(store)
        #: run id -> the hub its runner is connected to (every hub, this one included).
        self._owners: dict[str, Owner] = {}
        #: hub id -> address, for the hubs seen alive at the last heartbeat.
        self._alive: dict[str, str] = {}
        self._acks: dict[int, asyncio.Future[ControlAck]] = {}
        self._want: dict[str, int] = {}  # run -> the sequence another hub said it stored
        self._wake = asyncio.Event()
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._handlers: set[asyncio.Task[None]] = set()
        self._listening = False
        self._listen_error = ""
        self._owner_changes = 0  # notifications seen: a full read of the owners older than one is stale
        self.stopped = False

    # -- health --------------------------------------------------------------------------
    @property
    def health(self) -> str:
        """What a person should know about this hub's storage ("" when nothing): degraded,
        and events refused as conflicting with stored ones."""
        parts = [self.degraded]
        if self.store.conflicts:
            parts.append(
                f"{self.store.conflicts} event(s) refused: a different event was already stored at the same run and "
                f"sequence (last: {self.store.last_conflict}); see the hub's log"
            )
        return "; ".join(p for p in parts if p)

    @property
    def degraded(self) -> str:
        """Why this hub cannot use its database now, or ""."""
        if self.recorder.write_error:
            held = self.recorder.unwritten
            return f"database unreachable: {held} event(s) held in memory until it is back ({self.recorder.write_error})"
        if self._listen_error:
            return f"database unreachable: other hubs' runs are not followed ({self._listen_error})"
        return ""

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        self.tables.address = self.address  # the bound one, known now
        await self.tables.join()
        await self._refresh()
        await self._load_all()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen(), name="fleet-listen"),
            loop.create_task(self._beat(), name="fleet-heartbeat"),
            loop.create_task(self._follow_loop(), name="fleet-follow"),
        ]
        for _ in range(200):  # LISTEN in place before serving: no announcement is missed
            if self._listening or self._listen_error:
                break
            await asyncio.sleep(0.01)
        self._adopt_soon()  # runs a hub hosted before it stopped (this one's previous life, say)

    async def stop(self) -> None:
        self.stopped = True
        for task in [*self._tasks, *self._handlers, *([self._adopting] if self._adopting else [])]:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._handlers, *([self._adopting] if self._adopting else []), return_exceptions=True)
        await self.recorder.shutdown()
        with contextlib.suppress(Exception):  # leaving is a courtesy: the heartbeat says it anyway
            await self.tables.leave()

    # -- runs of this hub ----------------------------------------------------------------
    def adopt(self, run: ConnectedRun) -> None:
        run.forward = self.route
        run.archive = self.store

    async def catch_up(self, run: ConnectedRun) -> None:
        """Fold what the database holds of ``run`` beyond what this hub has (a runner that
        was on another hub is connecting here: its welcome must say all that is stored)."""
        async with self._lock(run.run_id):
            async with contextlib.aclosing(self.store.events(run.run_id, run.state.last_sequence)) as stored:
                async for ev in stored:
                    await run.follow(ev)

    async def claim(self, run_id: str, host: str, pid: int, *, hosted: bool = False) -> None:
        """Say in the database that ``run_id``'s runner is connected here (``hosted``: runs
        in this hub's process, and holds the run's lock so only one hub ever runs it)."""
        self._owners[run_id] = Owner(self.hub_id, host, pid, hosted)
        if hosted:
            await self.store.take_lock_from_gone(run_id, self.hub_id, self.interrupt_after)
        await self.tables.claim(run_id, host, pid, hosted)

    async def release(self, run_id: str) -> None:
        """``run_id``'s runner left this hub (unless another hub has it by now)."""
        if (owner := self._owners.get(run_id)) is not None and owner.hub_id == self.hub_id:
            del self._owners[run_id]
        try:
            await self.tables.release(run_id)
        except Exception as exc:  # the heartbeat tells the other hubs when this one is gone for good
            log.warning("hub: could not record that run %s left this hub: %s", run_id, _one_line(exc))

    # -- the hosted runs of a hub that is gone -------------------------------------------
    def _adopt_soon(self) -> None:
        if (self.resume_with is None and self.placer is None) or self.stopped or (self._adopting is not None and not self._adopting.done()):
            return
        self._adopting = asyncio.get_running_loop().create_task(self._adopt_orphans(), name="fleet-adopt")

    async def _adopt_orphans(self) -> None:
        """Continue here the runs hosted by a hub not seen for ``interrupt_after`` seconds (or
        stopped): each taken under its lock, so exactly one hub continues it."""
        try:
            for run_id in await self.tables.orphans(self.interrupt_after):
                run = self.host.get(run_id)
                if run_id in self._refused or not isinstance(run, ConnectedRun) or run.conn is not None or run.state.finished:
                    continue
                if not await self.store.take_lock_from_gone(run_id, self.hub_id, self.interrupt_after):
                    continue  # another hub took it first
                try:
                    await self._continue_here(run)
                except Exception as exc:  # isolation boundary: one run that cannot go on must not stop the others
                    self._refused.add(run_id)
                    await self.store.drop_lock(run_id, self.hub_id)
                    log.warning("hub: run %s (its hub is gone) stays interrupted: %s", run_id, _one_line(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("hub: looking for runs a gone hub hosted failed: %s", _one_line(exc))

    async def _continue_here(self, old: ConnectedRun) -> None:
        from goldfive.remote.host import HostedRun

        async with self._lock(old.run_id):
            reg = await self.registry.get(old.run_id)
            if reg is None or not reg.started_by_hub or reg.launch is None:
                raise ValueError("no hub of this fleet started it (ctl start or serve TARGET): nothing here can build it again")
            launch = reg.launch  # what the starting hub recorded, never what the run's events say
            history = [ev async for ev in self.store.events(old.run_id)]
            if self.placer is not None:  # on the cluster, as the gone hub had it
                from goldfive.placement.pending import PlacedRun

                placed = PlacedRun(old.run_id, self.recorder, goal_summary=old.state.goal_summary)  # type: ignore[arg-type]
                for ev in history:
                    placed.load(ev)
                self.adopt(placed)
                self.placer.place_again(placed, launch)  # serves it (host.adopt) and starts its actor
                # The run is this hub's now, before its new actor connects (which takes seconds):
                # left owned by the gone hub, the next sweep found it an orphan again, its actor
                # not yet connected, and placed it a second time (the run then resumed twice).
                await self.claim(old.run_id, socket.gethostname(), os.getpid(), hosted=True)
                where = "is placed on the cluster again"
            else:
                assert self.resume_with is not None
                factory = self.resume_with(launch)
                if factory is None:
                    raise ValueError("this hub cannot build it again")
                run = HostedRun(old.run_id)
                run.start(factory, None, ":memory:", recorder=self.recorder, history=history)
                self.host.adopt(run)
                await self.claim(run.run_id, socket.gethostname(), os.getpid(), hosted=True)
                where = "goes on here"
            if old.memory is not None:
                await old.memory.close()  # its watchers' streams end here; they find the run going on
        log.warning("hub: run %s, started by a hub that is gone, %s", old.run_id, where)

    # -- controls ------------------------------------------------------------------------
    async def route(self, run_id: str, msg: ControlMessage, timeout: float) -> ControlAck:
        """Send ``msg`` to the hub ``run_id``'s runner is connected to; its ack, or
        TimeoutError after ``timeout`` s (the control may still reach the run)."""
        owner = self._owners.get(run_id)
        if owner is None or owner.hub_id not in self._alive:
            why = "its runner is not connected to any hub" if owner is None else f"its hub {owner.hub_id} stopped answering"
            return ControlAck(msg.id, AckResult.FAILURE, f"{RUN_NOT_ACTIVE} now: {why}; not delivered")
        if not msg.issued_at_ms:
            msg.issued_at_ms = int(time.time() * 1000)
        payload = conv.to_pb_control_event(msg).SerializeToString()
        fut: asyncio.Future[ControlAck] = asyncio.get_running_loop().create_future()
        control_row = await self.tables.route(run_id, owner.hub_id, payload, lambda row: self._acks.__setitem__(row, fut))
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._acks.pop(control_row, None)

    async def _deliver(self, control_row: int) -> None:
        """A control another hub routed here: send it to the run, write back its ack."""
        routed = await self.tables.routed(control_row)
        if routed is None:
            return
        run_id, from_hub, payload = routed
        pb = control_pb2.ControlEvent()
        pb.ParseFromString(payload)
        run = self.host.get(run_id)
        try:
            msg = conv.from_pb_control_event(pb)
        except Exception as exc:
            ack = ControlAck(pb.id, AckResult.FAILURE, f"malformed control: {_one_line(exc)}")
        else:
            if isinstance(run, ConnectedRun):
                ack = await run.control_here(msg, self.control_timeout)
            elif run is not None and run.live:
                ack = await run.control(msg, self.control_timeout)
            else:
                ack = ControlAck(msg.id, AckResult.FAILURE, f"{RUN_NOT_ACTIVE} on hub {self.address}")
        await self.tables.answer(control_row, from_hub, conv.to_pb_control_ack(ack).SerializeToString())

    async def _acked(self, control_row: int) -> None:
        fut = self._acks.get(control_row)
        if fut is None or fut.done():
            return
        answer = await self.tables.ack_of(control_row)
        if answer is None:
            return
        pb = control_pb2.ControlAck()
        pb.ParseFromString(answer)
        if not fut.done():
            fut.set_result(conv.from_pb_control_ack(pb))

    # -- following the other hubs' runs ---------------------------------------------------
    def _lock(self, run_id: str) -> asyncio.Lock:
        lock = self._locks.get(run_id)
        if lock is None:
            lock = self._locks[run_id] = asyncio.Lock()
        return lock

    async def _load_all(self) -> None:
        """Serve every run the database holds (at start, and after the database was lost)."""
        for info in await self.store.list_runs():
            self._want[info.run_id] = max(self._want.get(info.run_id, -1), info.last_sequence)
        self._wake.set()
        await self._drain()

    async def _drain(self) -> None:
        while self._want:
            want, self._want = self._want, {}
            for run_id, through in want.items():
                try:
                    await self._follow(run_id, through)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the database went away: try again when it is back
                    self._want[run_id] = max(self._want.get(run_id, -1), through)
                    raise _Unreachable(_one_line(exc)) from exc

    async def _follow(self, run_id: str, through: int) -> None:
        async with self._lock(run_id):
            run = self.host.get(run_id)
            fresh = run is None
            if run is None:
                run = ConnectedRun(run_id, self.recorder)  # type: ignore[arg-type]
                self.adopt(run)
            elif not isinstance(run, ConnectedRun) or run.conn is not None:
                return  # hosted here, or its runner is on this hub: its events come from it
            if run.state.last_sequence >= through:
                return
            async with contextlib.aclosing(self.store.events(run_id, run.state.last_sequence)) as stored:
                async for ev in stored:
                    if fresh:
                        run.load(ev)  # its history stays in the database
                    else:
                        await run.follow(ev)
            if fresh:
                if run.state.finished and run.memory is not None:
                    await run.memory.close()
                self._show_owner(run)
                self.host.adopt(run)

    async def _follow_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._drain()
            except _Unreachable:
                await asyncio.sleep(1.0)
                self._wake.set()

    def _announced(self, payload: str) -> None:
        hub_id, run_id, seq = payload.split("\t")
        if hub_id == self.hub_id:
            return
        self._want[run_id] = max(self._want.get(run_id, -1), int(seq))
        self._wake.set()

    def _show_owner(self, run: ConnectedRun) -> None:
        """Show ``run`` (not connected here) as the database says: connected to another
        hub that is alive, or disconnected (then interrupted)."""
        if run.conn is not None or run.state.finished:
            return
        owner = self._owners.get(run.run_id)
        if owner is not None and owner.hub_id != self.hub_id and owner.hub_id in self._alive:
            run.elsewhere(self._alive[owner.hub_id], owner.host, owner.pid)
        else:
            run.released(self.interrupt_after)

    def _owner_changed(self, payload: str) -> None:
        hub_id, run_id, host, pid, address, hosted = payload.split("\t")
        if hub_id == self.hub_id:
            return
        self._owner_changes += 1
        if host == RELEASED:
            owner = self._owners.get(run_id)
            if owner is not None and owner.hub_id == hub_id:
                del self._owners[run_id]
        else:
            self._owners[run_id] = Owner(hub_id, host, int(pid), hosted == "1")
            self._alive[hub_id] = address
        run = self.host.get(run_id)
        if isinstance(run, ConnectedRun):
            self._show_owner(run)
        elif run is None:
            self._want.setdefault(run_id, -1)
            self._wake.set()

    # -- the database's side: heartbeat and notifications ---------------------------------
    async def _refresh(self, *, owners: bool = True) -> None:
        """Heartbeat: say this hub is up and read which hubs are; with ``owners`` (at start,
        when a hub came or went, and every 30 s as a repair) also read which hub has each run.
        Between those, owner changes come as notifications."""
        changes = self._owner_changes
        alive, rows = await self.tables.heartbeat(self.dead_after, with_owners=owners)
        if rows is None and alive.keys() != self._alive.keys():  # a hub came or went: read the owners too
            rows = await self.tables.owners()
        self._alive = alive
        if rows is None:
            return
        if changes == self._owner_changes:  # else a notification came meanwhile: newer than this read
            self._owners = rows
        for run in self.host.runs():
            if isinstance(run, ConnectedRun) and run.conn is None:
                self._show_owner(run)
        self._adopt_soon()

    async def _beat(self) -> None:
        beats = 0
        while True:
            await asyncio.sleep(self.heartbeat)
            beats += 1
            try:
                await self._refresh(owners=beats % 30 == 0)
                if beats % 5 == 0:
                    self._adopt_soon()
                if beats % 600 == 1:
                    await self._tidy()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("hub heartbeat failed: %s", _one_line(exc))

    async def _tidy(self) -> None:
        """Forget routed controls and stopped hubs older than a day (the run's own history
        keeps every control and ack)."""
        await self.tables.tidy()

    async def _listen(self) -> None:
        import psycopg  # the [postgres] extra, as the store that opened this fleet already needed

        delay = 0.2
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.store.dsn, autocommit=True, connect_timeout=5)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._lost(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            try:
                async with conn:
                    for channel in (EVENTS_CHANNEL, OWNERS_CHANNEL, self.channel):
                        await conn.execute(f'LISTEN "{channel}"')
                    back = bool(self._listen_error)
                    self._listening, self._listen_error, delay = True, "", 0.2
                    if back:  # announcements were missed: read again what the database holds
                        log.warning("hub: the database is reachable again; catching up with the other hubs")
                        await self._refresh()
                        await self._load_all()
                        for row in list(self._acks):
                            self._handle("ack\t" + str(row))
                    async for note in conn.notifies():
                        self._dispatch(note.channel, note.payload)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._lost(exc)
                await asyncio.sleep(delay)

    def _lost(self, exc: BaseException) -> None:
        if not self._listen_error:
            log.warning("hub: lost the database at %s: %s; serving live runs from memory", redact(self.store.dsn), _one_line(exc))
        self._listening = False
        self._listen_error = _one_line(exc)[:300]

    def _dispatch(self, channel: str, payload: str) -> None:
        try:
            if channel == EVENTS_CHANNEL:
                self._announced(payload)
            elif channel == OWNERS_CHANNEL:
                self._owner_changed(payload)
            else:
                self._handle(payload)
        except ValueError:
            log.warning("hub: ignored a malformed notification on %s: %.200r", channel, payload)

    def _handle(self, payload: str) -> None:
        what, row = payload.split("\t")
        work: Callable[[int], Awaitable[None]] = self._deliver if what == "control" else self._acked
        task = asyncio.get_running_loop().create_task(self._guarded(work, int(row)))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _guarded(self, work: Callable[[int], Awaitable[None]], row: int) -> None:
        try:
            await work(row)
        except asyncio.CancelledError:
            raise
        except Exception:  # isolation boundary: one routed control must not stop the listener
            log.exception("hub: handling routed control %d failed", row)


class _Unreachable(Exception):
    pass
