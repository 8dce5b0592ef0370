"""HubService: the server end of ``Hub.Connect``, where runs in other processes register.

One stream per connected run. The first message is ``RunnerHello``; the hub answers
``HubWelcome{stored_through}`` (what it already holds of that run id: -1 for a new one, the
recorded history after a hub restart) and then reads batches of events and acks while it sends
controls and ``confirmed_sequence`` down.

Events of one run come gap-free in sequence order after ``stored_through``: a batch with an
event of another run, a sequence that goes backwards or skips ahead is refused whole
(INVALID_ARGUMENT, nothing of it stored, the stream closed). Every connected run is recorded by
one shared recorder; a ticker commits it every ``confirm_interval`` seconds (sooner once
``COMMIT_ROWS`` rows wait) and then tells each runner that sent something how far its run is
stored (group commit: one transaction for the whole fleet, not one per batch). The SQLite
write runs in a worker thread, so a large commit does not hold up controls and live streams.

``ConnectShared`` carries many runs of one process on one stream, a lane per run, each lane
served exactly as a ``Connect`` stream (``goldfive.hub.shared``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol

import grpc

from goldfive.budget.model import Budget
from goldfive.hub.acks import AckKeys
from goldfive.hub.connected import RunnerAttachment, runner_of
from goldfive.hub.hooked import HookAttachment, hook_of, hook_problem, run_id_for
from goldfive.hub.limits import DEFAULT_INTERRUPT_AFTER, MAX_HOST, MAX_RUN_ID, hello_problem
from goldfive.hub.quota import Quotas, RunnerLimits
from goldfive.hub.shared import CallContext, LaneConn, Refused, SharedStream, hand as _hand
from goldfive.hub.trust import connect_refusal, hook_refusal, writer_label
from goldfive.hub.turns import Turns, loop_turns
from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
from goldfive.remote.auth import caller, caller_role
from goldfive.remote.host import Origin, RunHost
from goldfive.store.locks import RunLocked
from goldfive.store.recorder import HubRecorder, RunRecorder
from goldfive.store.registry import CONNECTED, HOOKED, PLACED, PLACED_LOCK_HOLDER, placed_run_locks
from goldfive.errors import one_line

__all__ = ["COMMIT_ROWS", "DEFAULT_INTERRUPT_AFTER", "FleetPart", "HubService", "MAX_RUN_ID"]

#: Rows waiting in the hub's recording that make the ticker commit before its interval.
COMMIT_ROWS = 20_000
#: Batches of a runner's own stream read (its acks handed over) while the batches before
#: them are still being stored; beyond this the stream is not read (gRPC holds the runner back).
_BATCHES_AHEAD = 4
#: Events of a connected run kept in memory past what is committed (the rest is read back
#: from the recording), trimmed to this at every group commit: every event held is an object
#: the garbage collector walks, and a thousand long runs made its pauses last hundreds of
#: milliseconds (16, trimmed past 32, still left ~24,000 events of 1,000 runs in its young
#: generations).
KEEP_IN_MEMORY = 8

log = logging.getLogger("goldfive.hub")


class FleetPart(Protocol):
    """What HubService asks of this hub's part in a fleet of hubs on one database
    (goldfive.hub.fleet.Fleet). Declared here so a hub alone never imports the fleet (nor the
    ``[postgres]`` extra it needs)."""

    @property
    def recorder(self) -> HubRecorder:
        """What every run of this hub records with (goldfive.hub.fleet.FleetRecorder)."""
        ...

    def adopt(self, run: RunnerAttachment) -> None:
        """``run`` is served from the fleet: controls routed, history from the database."""
        ...

    async def catch_up(self, run: RunnerAttachment) -> None:
        """Fold what the database holds of ``run`` beyond what this hub has."""
        ...

    async def claim(self, run_id: str, host: str, pid: int, *, hosted: bool = False, locked: bool = False) -> None:
        """``run_id``'s runner is connected here now (every hub is told). ``locked``: this hub
        holds the run's lock already (checked just now), so a hosted run's is not taken again."""
        ...

    async def release(self, run_id: str) -> None:
        """``run_id``'s runner left this hub."""
        ...


class _End:
    """Queued by a stream's reader when it stops: ``code`` set means "refuse with this"."""

    __slots__ = ("aborted", "code", "detail")

    def __init__(self, code: grpc.StatusCode | None = None, detail: str = "", *, aborted: bool = False) -> None:
        self.code, self.detail = code, detail
        #: The call was aborted already (its status is set): end without another abort.
        self.aborted = aborted


class _Conn:
    """One runner's stream: what goes down it is queued here and written by the handler."""

    def __init__(self, hello: service_pb2.RunnerHello) -> None:
        self.host = hello.host[:MAX_HOST]
        self.pid = hello.pid
        self.out: asyncio.Queue[service_pb2.HubMessage | _End] = asyncio.Queue()
        self.closed = False
        self.received = -1  # the last sequence stored from this stream
        #: The credential whose run this stream counts as (goldfive.hub.quota); None once released.
        self.owner: str | None = None

    def send(self, msg: service_pb2.HubMessage) -> None:
        if not self.closed:
            self.out.put_nowait(msg)

    def end(self) -> None:
        """End the stream without a goodbye (the hub is stopping: the runner comes back)."""
        if not self.closed:
            self.out.put_nowait(_End())
            self.closed = True

    def goodbye(self, why: str) -> None:
        if not self.closed:
            self.out.put_nowait(service_pb2.HubMessage(goodbye=why))
            self.closed = True


class HubService(service_pb2_grpc.HubServicer):
    def __init__(
        self,
        host: RunHost,
        *,
        interrupt_after: float = DEFAULT_INTERRUPT_AFTER,
        confirm_interval: float = 0.2,
        fleet: FleetPart | None = None,
        limits: RunnerLimits | None = None,
        default_budget: Budget | None = None,
    ) -> None:
        self.host = host
        #: ``serve --budget``: given to each connected run that has no budget of its own.
        self.default_budget = default_budget
        #: What each runner credential may use of this hub (goldfive.hub.quota).
        self.quotas = Quotas(limits)
        self._hook_locks: dict[str, asyncio.Lock] = {}
        self.interrupt_after = interrupt_after
        self.confirm_interval = confirm_interval
        #: Several hubs on one PostgreSQL database (goldfive.hub.fleet.Fleet), or None.
        self.fleet = fleet
        self._recorder: HubRecorder | None = fleet.recorder if fleet is not None else None
        self._releases: set[asyncio.Task[None]] = set()
        self._dirty: dict[_Conn | LaneConn, RunnerAttachment] = {}
        self._ticker: asyncio.Task[None] | None = None
        self._conns: set[_Conn | LaneConn] = set()
        self._kick = asyncio.Event()  # COMMIT_ROWS rows wait: commit now
        self._ack_keys = AckKeys()
        self._turns: Turns | None = None
        #: Group commits done, and their total and longest duration in seconds (benches).
        self.commits = 0
        self.commit_seconds = 0.0
        self.commit_max_seconds = 0.0

    @property
    def recorder(self) -> HubRecorder:
        if self._recorder is None:
            # "batched": a connected run's lock is its runner's business, not the hub's. Only
            # the ticker writes (in a worker thread); the loop-side size and timer flushes are
            # a backstop far beyond what the ticker lets pile up.
            self._recorder = RunRecorder(
                self.host.db_path,
                durability="batched",
                writer_thread=True,
                batch_size=10 * COMMIT_ROWS,
                max_pending=50 * COMMIT_ROWS,
                flush_interval=5.0,
            )
        return self._recorder

    @property
    def turns(self) -> Turns:
        """The hub's ingest work (storing batches, confirming them) takes turns on the event
        loop, so a control never waits long behind it: the loop's baton (goldfive.hub.turns)."""
        return self._turns if self._turns is not None else loop_turns()

    @turns.setter
    def turns(self, turns: Turns) -> None:
        self._turns = turns

    async def Connect(
        self,
        request_iterator: AsyncIterator[service_pb2.RunnerMessage],
        context: grpc.aio.ServicerContext[service_pb2.RunnerMessage, service_pb2.HubMessage],
    ) -> AsyncGenerator[service_pb2.HubMessage, None]:
        try:
            first = await anext(request_iterator)
        except StopAsyncIteration:
            return
        if first.WhichOneof("body") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message on Hub.Connect must be a RunnerHello")
        problem = hello_problem(first.hello)
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        conn = _Conn(first.hello)
        run = await self.claim(first.hello, conn, context)
        run.attach(conn, first.hello.goal_summary[:1000])
        conn.received = run.stored_through
        if first.hello.resume_after > conn.received:
            log.warning(
                "hub: run %s's runner was told events through %d were stored, this hub holds %d (a replaced database?)",
                run.run_id, first.hello.resume_after, conn.received,
            )  # fmt: skip
        self.opened(conn)
        owner = conn.owner or ""
        reader = asyncio.get_running_loop().create_task(self._read(conn, run, request_iterator, owner))
        try:
            yield service_pb2.HubMessage(welcome=service_pb2.HubWelcome(stored_through=conn.received))
            while True:
                msg = await conn.out.get()
                if isinstance(msg, _End):
                    if msg.code is not None and not msg.aborted:
                        await context.abort(msg.code, msg.detail)
                    return
                yield msg
                if msg.WhichOneof("body") == "goodbye":
                    return
        finally:
            conn.closed = True
            reader.cancel()
            try:
                await reader
            except asyncio.CancelledError:
                pass
            self.left(run, conn)

    def opened(self, conn: _Conn | LaneConn) -> None:
        """``conn`` (a stream or a lane) is a runner's now: the ticker confirms its commits."""
        self._conns.add(conn)
        self._start_ticker()

    def mark_stored(self, conn: _Conn | LaneConn, run: RunnerAttachment) -> None:
        """``conn`` sent events of ``run`` that the next group commit confirms."""
        self._dirty[conn] = run

    def unmark(self, conn: _Conn | LaneConn) -> bool:
        """Take ``conn`` out of the next group commit (its caller commits and confirms now);
        True when it had something waiting."""
        return self._dirty.pop(conn, None) is not None

    def left(self, run: RunnerAttachment, conn: _Conn | LaneConn) -> None:
        """``conn``'s stream (or lane) ended: the run is disconnected, its credential's run
        is counted no more, and a run that never stored an event (a hello alone) is
        forgotten rather than kept as a run nobody will ever see move."""
        self._conns.discard(conn)
        self._dirty.pop(conn, None)
        run.detach(conn, self.interrupt_after)
        if conn.owner is not None:
            self.quotas.release_run(conn.owner)
            conn.owner = None
        if run.conn is None and not run.started_by_hub and run.stored_through < 0 and run.run.history is None and not run.hub:
            if self.host.get(run.run_id) is run.run:
                self.host.remove(run.run_id)
                self._background(self._forget(run))
            return
        self._released(run)

    async def _forget(self, run: RunnerAttachment) -> None:
        try:
            await self.host.registry.forget(run.run_id)
            await self.recorder.forget_run(run.run_id)  # what the log holds of it: its provenance
            if self.fleet is not None:
                await self.fleet.release(run.run_id)
        except Exception as exc:  # the registry's row stays; it holds no event, so nothing is lost
            log.warning("hub: could not forget empty run %s: %s", run.run_id, one_line(exc))

    def _background(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    def _released(self, run: RunnerAttachment) -> None:
        """A runner's stream (or lane) ended: in a fleet, say no hub has the run unless
        another runner already took it."""
        if self.fleet is not None and run.conn is None:
            self._background(self.fleet.release(run.run_id))

    async def ConnectShared(
        self,
        request_iterator: AsyncIterator[service_pb2.RunnerFrame],
        context: grpc.aio.ServicerContext[service_pb2.RunnerFrame, service_pb2.HubFrame],
    ) -> AsyncGenerator[service_pb2.HubFrame, None]:
        """Many runs of one process on one stream (goldfive.hub.shared): each lane is served
        as its own Connect stream would be; a frame goes down with every part queued."""
        stream = SharedStream(self)
        stream.who = caller(context)
        key = self._ack_keys.open(stream)  # told in the first frame: the runner may send its acks apart
        told = False
        reader = asyncio.get_running_loop().create_task(stream.read(request_iterator))
        try:
            while True:
                if not stream.out and not stream.finished:
                    await stream.wake.wait()
                stream.wake.clear()
                stream.sweep()
                if stream.out:
                    frame = service_pb2.HubFrame(parts=stream.take())
                    if not told:
                        frame.acks_key, told = key, True
                    yield frame
                elif stream.finished:
                    return
        finally:
            self._ack_keys.close(key)
            reader.cancel()
            try:
                await reader
            except asyncio.CancelledError:
                pass
            stream.close_all()

    async def ShareAcks(
        self,
        request_iterator: AsyncIterator[service_pb2.RunnerFrame],
        context: grpc.aio.ServicerContext[service_pb2.RunnerFrame, service_pb2.ShareAcksResponse],
    ) -> service_pb2.ShareAcksResponse:
        """A shared stream's acks on a call of their own (goldfive.hub.acks): the credential
        that opened the stream only."""
        return await self._ack_keys.serve(request_iterator, context)

    async def Hook(
        self,
        request: service_pb2.HookReport,
        context: grpc.aio.ServicerContext[service_pb2.HookReport, service_pb2.HookAnswer],
    ) -> service_pb2.HookAnswer:
        """One hook event of an agent session (goldfive.hub.hooked): written into the
        session's run; a call a person decides is held until the decision or the wait."""
        problem = hook_problem(request)
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        run = await self._hooked(request, context)
        answer = await run.report(request)
        if answer.decision:
            log.info("hub: %s %s for %s in run %s", answer.decision, request.tool_name, request.tool_use_id, run.run_id)
        return answer

    async def _hooked(self, r: service_pb2.HookReport, context: CallContext) -> HookAttachment:
        """The HookAttachment of ``r``'s session, registered to the caller on its first report."""
        run_id = run_id_for(r.source, r.session_id)
        who, role = caller(context), caller_role(context)
        lock = self._hook_locks.setdefault(run_id, asyncio.Lock())  # the first reports of a session may race
        async with lock:
            registry = self.host.registry
            try:
                reg = await registry.get(run_id) or await registry.register(run_id, HOOKED, who)
            except Exception as exc:  # the registry cannot be read: nobody's ownership can be checked
                await context.abort(
                    grpc.StatusCode.UNAVAILABLE, f"this hub cannot check who run {run_id} belongs to now ({one_line(exc)[:200]}); try again"
                )
                raise AssertionError("unreachable: abort raises") from None
            refusal = hook_refusal(reg, who, role)
            if refusal is not None:
                await context.abort(refusal.code, refusal.detail)
            existing = self.host.get(run_id)
            hooked = hook_of(existing)
            if hooked is not None:
                return hooked
            if existing is None:
                hooked = HookAttachment.new(run_id, r.source, self.recorder, self.commit)
                self.recorder.write_as(run_id, writer_label(who, role))
            else:
                hooked = HookAttachment.from_recorded(existing, r.source, self.recorder, self.commit)
            hooked.run.owner = reg.owner
            self.host.adopt(hooked.run)
            return hooked

    async def claim(self, hello: service_pb2.RunnerHello, conn: _Conn | LaneConn, context: CallContext) -> RunnerAttachment:
        """The RunnerAttachment ``hello`` names (existing, new, or a recorded one going on), once
        the hub's registry says the caller may connect as it (goldfive.hub.trust) and its
        credential is within its quota. Refusals abort ``context`` with a sentence."""
        run_id = hello.run_id
        who, role = caller(context), caller_role(context)
        registry = self.host.registry
        try:
            reg = await registry.get(run_id)
            existing = self.host.get(run_id)
            if reg is None and existing is not None and runner_of(existing) is None:
                if existing.origin in (Origin.HOSTED, Origin.PUSHED):
                    await context.abort(
                        grpc.StatusCode.FAILED_PRECONDITION, f"run {run_id} is hosted by this hub; a runner cannot connect as it"
                    )
            if reg is None:
                reg = await registry.register(run_id, CONNECTED, who)
        except grpc.aio.AbortError:
            raise
        except Refused:
            raise
        except Exception as exc:  # the registry cannot be read: nobody's ownership can be checked
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, f"this hub cannot check who run {run_id} belongs to now ({one_line(exc)[:200]}); try again"
            )
            raise AssertionError("unreachable: abort raises") from None
        refusal = connect_refusal(reg, who, role, hello.take_over)
        if refusal is not None:
            log.warning("hub: refused %s connecting as run %s: %s", writer_label(who, role), run_id, refusal.detail)
            await context.abort(refusal.code, refusal.detail)
        locked = reg.origin == PLACED and await self._hold_placed(run_id, context)
        problem = self.quotas.admit_run(who)
        if problem:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, problem)
        conn.owner = who
        try:
            attached = runner_of(existing)
            if attached is not None:
                run = attached
            elif existing is None:
                run = RunnerAttachment.new(run_id, self.recorder)
            else:
                run = RunnerAttachment.from_recorded(existing, self.recorder)
            if run.registry is None:
                run.registry = registry
                run.routed.update(await registry.routed_controls(run_id))
            run.max_event_bytes = self.quotas.limits.event_bytes
            run.default_budget = self.default_budget
            run.run.owner = reg.owner
            self.host.adopt(run.run)
            if self.fleet is not None:
                await self._claim_in_fleet(self.fleet, run, conn, context, hosted=reg.started_by_hub, locked=locked)
            # the log records who writes the run from here on (what it holds is the previous writer's)
            self.recorder.write_as(run_id, writer_label(who, role), run.stored_through + 1)
        except BaseException:
            self.quotas.release_run(who)
            conn.owner = None
            raise
        if reg.owner != who:
            log.warning("hub: %s took run %s over from its owner %r", writer_label(who, role), run_id, reg.owner)
        return run

    async def _hold_placed(self, run_id: str, context: CallContext) -> bool:
        """A placed run's actor connecting: this hub takes the run's lock first (a registry
        with locks; held already when this hub placed it or took it back: then it is checked,
        not taken again). When another live hub holds it (it placed the run again, or took it
        back), the actor is refused (FAILED_PRECONDITION): it is an old copy of the run, and
        ends. True when this hub holds the lock now; False when its registry has none."""
        locking = placed_run_locks(self.host.registry)
        if locking is None:
            return False
        try:
            held = await locking.hold_runs([run_id], PLACED_LOCK_HOLDER)
        except Exception as exc:  # the file cannot be locked now: the actor tries again
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"this hub cannot take run {run_id}'s lock now ({one_line(exc)[:200]}); try again")
            raise AssertionError("unreachable: abort raises") from None
        holder = held.get(run_id)
        if holder is not None:
            detail = f"run {run_id} belongs to another hub ({holder.describe()}), which holds its lock: this copy of it must end"
            log.warning("hub: refused an actor of placed run %s: %s", run_id, detail)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, detail)
        return True

    async def _claim_in_fleet(
        self, fleet: FleetPart, run: RunnerAttachment, conn: _Conn | LaneConn, context: CallContext, *, hosted: bool, locked: bool
    ) -> None:
        """Several hubs: fold what the database holds beyond what this hub has (the runner may
        come from another hub, which stored more) and say the run is on this hub now."""
        fleet.adopt(run)
        try:
            await fleet.catch_up(run)
            await fleet.claim(run.run_id, conn.host, conn.pid, hosted=hosted, locked=locked)
        except RunLocked as exc:  # another live hub runs it (took it over, placed it again): an old copy
            log.warning("hub: refused a runner of run %s: %s", run.run_id, exc)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"{exc}: this copy of it must end")
        except Exception as exc:  # the database is unreachable: degraded
            if run.stored_through < 0 and not (run.run.memory is not None and run.run.memory.events):
                await context.abort(
                    grpc.StatusCode.UNAVAILABLE, f"this hub cannot reach its database ({' '.join(str(exc).split())[:200]}); try again"
                )
            log.warning("hub: run %s reconnected while the database is unreachable; serving it from memory", run.run_id)

    async def _read(self, conn: _Conn, run: RunnerAttachment, messages: AsyncIterator[service_pb2.RunnerMessage], owner: str) -> None:
        """Read a runner's stream: acks are handed over as they are read; batches of events
        are checked, stored and spent against the runner's rate by ``_store``, at most
        ``_BATCHES_AHEAD`` batches behind (so an ack never waits behind them)."""
        end = _End()
        queue: asyncio.Queue[Any] = asyncio.Queue(_BATCHES_AHEAD)
        worker = asyncio.get_running_loop().create_task(self._store(conn, run, queue, owner))
        try:
            async for msg in messages:
                if conn.closed:
                    return  # taken over: this stream's events are no longer the run's
                body = msg.WhichOneof("body")
                if body == "events":
                    if worker.done() or not await _hand(queue, msg.events, worker):
                        break  # the worker refused a batch (or failed): said below
                elif body == "ack":
                    run.acked(msg.ack)
                elif body == "hello":
                    end = _End(grpc.StatusCode.INVALID_ARGUMENT, "a second RunnerHello on the same stream")
                    return
            else:
                await _hand(queue, None, worker)
            if await worker or conn.closed:
                return  # a batch was refused (the worker said so) or the run was taken over
            # The runner ended its side (its run is closing): confirm what it sent, then end.
            if self.unmark(conn) and await self.commit():
                conn.send(service_pb2.HubMessage(confirmed_sequence=conn.received))
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError:
            pass  # the runner's connection broke: the handler ends and the run is disconnected
        except grpc.aio.AbortError:  # bytes that are not a RunnerMessage: the call is refused already
            log.info("hub: run %s's stream sent bytes that do not parse; refused", run.run_id)
            end = _End(aborted=True)
        except Exception:  # isolation boundary: a bug here ends this stream, not the hub
            log.exception("hub: reading run %s's stream failed", run.run_id)
            end = _End(grpc.StatusCode.INTERNAL, f"the hub failed while storing run {run.run_id}; its log has the details")
        finally:
            if not worker.done():
                worker.cancel()
            (refused,) = await asyncio.gather(worker, return_exceptions=True)
            if not (isinstance(refused, str) and refused):  # else the worker ended the stream already
                conn.out.put_nowait(end)

    async def _store(self, conn: _Conn, run: RunnerAttachment, queue: asyncio.Queue[Any], owner: str) -> str:
        """Check, store and spend the batches ``_read`` queued, in order, until None. A batch
        that cannot be stored ends the stream (nothing of it stored, nothing after it); its
        reason is returned, else ""."""
        turn = self.turns.turn()
        while True:
            waited = queue.empty()
            if (batch := await queue.get()) is None:
                break
            if waited:
                turn = self.turns.turn()  # (idle until now: a fresh turn)
            elif await turn.check() and conn.closed:  # queued batches: the loop turns between them too
                return ""
            if conn.closed:
                return ""
            events = batch.events
            try:
                problem = run.check_batch(events, conn.received, batch.ByteSize())
                if problem:  # refused now, though the reader may be waiting for the runner's next message
                    conn.out.put_nowait(_End(grpc.StatusCode.INVALID_ARGUMENT, problem))
                    return problem
                if events:
                    await run.ingest_in_turns(events, conn, turn)
                    self.mark_stored(conn, run)
                    self.stored_some()
                    await self.quotas.spend(owner, len(events))
            except Exception:  # isolation boundary: a bug here ends this stream, not the hub
                log.exception("hub: storing run %s's events failed", run.run_id)
                why = f"the hub failed while storing run {run.run_id}; its log has the details"
                conn.out.put_nowait(_End(grpc.StatusCode.INTERNAL, why))
                return why
        return ""

    # -- group commit --------------------------------------------------------------------
    async def commit(self) -> bool:
        """Write what the recorder holds; True when everything is stored."""
        started = time.perf_counter()
        try:
            return bool(await self.recorder.commit())
        finally:
            took = time.perf_counter() - started
            self.commits += 1
            self.commit_seconds += took
            self.commit_max_seconds = max(self.commit_max_seconds, took)

    def stored_some(self) -> None:
        """Rows were added to the recording: commit early when many wait."""
        if self.fleet is None and self.recorder.unwritten >= COMMIT_ROWS:
            self._kick.set()

    def _start_ticker(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.get_running_loop().create_task(self._tick(), name="hub-confirm")

    async def _tick(self) -> None:
        while self._conns or self._dirty:
            try:
                await asyncio.wait_for(self._kick.wait(), self.confirm_interval)
            except TimeoutError:
                pass
            self._kick.clear()
            if not self._dirty:
                continue
            dirty = list(self._dirty.items())
            marks = [(conn, conn.received) for conn, _ in dirty]
            self._dirty.clear()
            if not await self.commit():
                for conn, run in dirty:  # nothing confirmed: try again next tick
                    self._dirty.setdefault(conn, run)
                continue
            turn = self.turns.turn()
            for (conn, run), (_, seq) in zip(dirty, marks):
                # A thousand runs' confirmations (and trims) are tens of milliseconds of work:
                # in turns, so a control or an ack waiting for the loop gets it between them.
                await turn.check()
                conn.send(service_pb2.HubMessage(confirmed_sequence=seq))
                if self.fleet is None:  # (several hubs keep their own account of memory)
                    run.committed(seq, KEEP_IN_MEMORY)

    def end_streams(self) -> None:
        """End every runner's stream now (before the server stops): they reconnect to the
        next hub on this address and resend what it has not stored."""
        for conn in list(self._conns):
            conn.end()

    async def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        if self._recorder is not None:
            await self._recorder.close()
