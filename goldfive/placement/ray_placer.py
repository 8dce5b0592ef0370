"""RayPlacer: ``goldfive serve --ray ADDRESS|auto`` places each started run as a Ray actor.

The hub is a Ray driver. ``place`` checks the request as a hosted start would (bad input is
one line), shows the run at once as pending placement (a served run of origin PLACED, its :class:`~goldfive.hub.connected.RunnerAttachment` holding the placement), and creates a
:class:`RunActor` with ``max_restarts=-1`` (a lost node's actor is built again elsewhere
with the same spec and continues the run from the hub's record) and ``max_task_retries=-1``
(the hub's ``wait`` call follows it across restarts). The actor connects back to the hub's
advertised address over ``Hub.Connect``; from then on the run is a connected run.

Actors are detached (``lifetime="detached"``), named in a Ray namespace of the hub's database
(:func:`namespace_for`): a hub that dies (killed, crashed) leaves its runs going on in their
actors, whose links reconnect when a hub answers at the address they dial again. A hub started
again on that database finds them there (``resume_recorded``) and takes them back instead of
placing them again: each run goes on in the same process, nothing redone, one copy. A hub that
stops (SIGTERM, Ctrl-C) ends its actors, as it leaves its hosted runs interrupted; the next
start places them again. An actor is ended when its runs end (a pool, when every run it was
given has ended), so no detached actor outlives its runs. The only module that imports ray.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import os
import socket
import uuid
from typing import TYPE_CHECKING, Any

import ray as _ray

from goldfive.errors import GoldfiveError, ServeConfigError
from goldfive.placement.actor import RunActor, RunPool
from goldfive.hub.connected import Placement, RunnerAttachment, runner_of
from goldfive.remote.host import Origin, ServedRun
from goldfive.placement.resources import RayResources
from goldfive.placement.spec import PlacedSpec
from goldfive.remote.auth import is_loopback, split_host_port
from goldfive.store.registry import PLACED, PLACED_LOCK_HOLDER, LaunchSpec, placed_run_locks

if TYPE_CHECKING:
    from goldfive.hub.service import HubService
    from goldfive.pb.goldfive.v1.service_pb2 import StartRunRequest
    from goldfive.remote.host import RunHost
    from goldfive.remote.service import Placer

__all__ = ["RayPlacer", "namespace_for"]

log = logging.getLogger("goldfive.placement")
#: ray is only partly typed: Any at the seam.
ray: Any = _ray

#: Seconds to wait for a TCP connection to the cluster before saying it cannot be reached
#: (ray.init itself retries for minutes).
CONNECT_TIMEOUT = 5.0
#: How often Ray is asked why runs are not placed, while some are not. Ray has no event for
#: "still pending, and why", so it is read again; one ask covers every pending run (one
#: state-API listing, one node listing), and a run is first explained once it has waited this
#: long (an ordinary start, a worker process booting, takes about a second).
ASK_EVERY = 3.0


def namespace_for(db: str) -> str:
    """The Ray namespace of the actors of the hubs serving database ``db`` (a file's real path,
    or a PostgreSQL DSN as given): a hub started again on it, or another hub of its fleet,
    finds the actors there by name."""
    key = db if "://" in db else os.path.realpath(db)
    return "goldfive-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def host_port(address: str) -> tuple[str, int] | None:
    """``HOST:PORT`` split, or None when it is not one."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


def _reachable(address: str) -> str:
    """Why ``address`` (HOST:PORT or ray://HOST:PORT) cannot be reached, or ""."""
    parts = host_port(address.removeprefix("ray://"))
    if parts is None:
        return f"{address!r} is not HOST:PORT (or auto)"
    host, port = parts
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            return ""
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__


@dataclasses.dataclass
class _Pool:
    """One RunPool actor: how many runs it was given (at most ``runs_per_actor``) and how many
    of those have ended. When every run it was given has ended it is ended, and takes no more."""

    actor: Any
    taken: int = 0
    ended: int = 0


def _fmt(resources: dict[str, float]) -> str:
    return "{" + ", ".join(f"{k}: {v:g}" for k, v in sorted(resources.items())) + "}"


class RayPlacer:
    def __init__(
        self,
        resources: RayResources,
        *,
        connect_token: str = "",
        read_token: str = "",
        advertise: str | None = None,
        search_dir: str | None = None,
        connect_as: str = "",
        runs_per_actor: int = 1,
    ) -> None:
        if runs_per_actor < 1:
            raise ServeConfigError(f"--runs-per-actor must be 1 or more, not {runs_per_actor}")
        self.resources = resources
        #: How many runs share one actor process (1: each run in its own, as before).
        self.runs_per_actor = runs_per_actor
        self.connect_token = connect_token
        #: The name of the credential ``connect_token`` is: the owner of every placed run
        #: (only it may connect as one; goldfive.store.registry).
        self.connect_as = connect_as
        self.read_token = read_token
        self.advertise = advertise
        self.search_dir = os.path.abspath(search_dir or os.getcwd())
        #: The address actors dial back (set by ``bind``).
        self.address = ""
        self._bound_host: RunHost | None = None
        self._bound_hub: HubService | None = None
        self._actor_class: Any = None
        self._pool_class: Any = None
        self._actors: dict[str, Any] = {}
        #: runs_per_actor > 1: the pools taking runs, each with how many of its runs go on.
        self._pools: list[_Pool] = []
        self._watchers: set[asyncio.Task[None]] = set()
        #: Runs whose actor Ray has not placed yet, and the task that explains why.
        self._pending: dict[str, tuple[RunnerAttachment, float]] = {}
        self._explainer: asyncio.Task[None] | None = None
        #: Registrations waiting to be written together (``_register``), and the task writing them.
        self._registering: list[tuple[tuple[str, str, str, LaunchSpec], asyncio.Future[None]]] = []
        self._registrar: asyncio.Task[None] | None = None
        #: Pools found going on at start (``resume_recorded``): they take no new run.
        self._found: dict[str, _Pool] = {}
        #: The runs whose lock this hub holds (in a registry that has locks): taken
        #: as it places them (with their registration) or takes them back, dropped when they end.
        self._held: set[str] = set()

    # -- the cluster -------------------------------------------------------------------------
    @classmethod
    def connect(cls, address: str, resources: RayResources, *, namespace: str = "goldfive", **kwargs: Any) -> RayPlacer:
        """Join the cluster at ``address`` ("auto": the one started on this machine with
        ``ray start``), in ``namespace`` (:func:`namespace_for` the hub's database).
        ServeConfigError (one line) when it cannot be reached."""
        if address != "auto":
            why = _reachable(address)
            if why:
                raise ServeConfigError(f"cannot reach the Ray cluster at {address}: {why}")
        try:
            ray.init(address=address, namespace=namespace, logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = " ".join(str(exc).split())[:300]
            raise ServeConfigError(f"cannot join the Ray cluster at {address}: {first}") from None
        placer = cls(resources, **kwargs)
        placer._actor_class = ray.remote(RunActor)
        placer._pool_class = ray.remote(RunPool)
        return placer

    def check_listen(self, listen: str) -> None:
        """Refuse a dial-back address no node of the cluster can use: a loopback address while
        some node is on another machine (actors there would dial themselves)."""
        host, _ = split_host_port(self.advertise or listen)
        if not is_loopback(host):
            return
        here = ray.util.get_node_ip_address()
        others = sorted({n["NodeManagerAddress"] for n in ray.nodes() if n.get("Alive") and n["NodeManagerAddress"] != here})
        others = [a for a in others if not is_loopback(a)]
        if others:
            flag = "--advertise" if self.advertise else "--listen"
            raise ServeConfigError(
                f"{flag} {self.advertise or listen} is a loopback address, which the Ray node(s) at {', '.join(others[:3])} "
                "cannot dial back: listen on an address they reach, or give --advertise HOST:PORT"
            )

    def bind(self, host: RunHost, hub: HubService, address: str) -> None:
        """The hub's run table, its Hub service (whose recorder stores the placed runs) and its
        bound address; actors dial ``--advertise`` or that address (a wildcard listen
        address becomes this machine's address as Ray sees it)."""
        self._bound_host, self._bound_hub = host, hub
        if self.advertise:
            self.address = self.advertise
            return
        name, port = split_host_port(address)
        if name in ("", "0.0.0.0", "::", "[::]"):
            name = ray.util.get_node_ip_address()
        self.address = f"{name}:{port}"

    @property
    def _host(self) -> RunHost:
        if self._bound_host is None:
            raise GoldfiveError("the Ray placer is not bound to a hub yet")
        return self._bound_host

    @property
    def _hub(self) -> HubService:
        if self._bound_hub is None:
            raise GoldfiveError("the Ray placer is not bound to a hub yet")
        return self._bound_hub

    # -- runs --------------------------------------------------------------------------------
    async def place(self, request: StartRunRequest, started_by: str = "") -> str:
        from goldfive.remote.launch import start_spec

        if self._bound_hub is None:
            raise GoldfiveError("the Ray placer is not bound to a hub yet")
        launch = start_spec(request.agent, request.goal, request.plan_json, request.speed, budget=request.budget)  # refused here, in one line
        run_id = uuid.uuid4().hex
        assert launch.spec is not None
        recorded = dataclasses.replace(launch.spec, started_by=started_by)
        await self._register(run_id, recorded)
        run = RunnerAttachment.placed_run(run_id, self._hub.recorder, goal_summary=str(launch.user_input)[:1000])
        self._launch(run, self._spec(run_id, recorded))
        return run_id

    async def _register(self, run_id: str, launch: LaunchSpec) -> None:
        """Record the run in the hub's registry before it is placed. The starts that arrive
        together are recorded together (one commit for a burst, where a commit each made the
        hub place about 55 runs a second); each returns once its own is written."""
        loop = asyncio.get_running_loop()
        written: asyncio.Future[None] = loop.create_future()
        self._registering.append(((run_id, PLACED, self.connect_as, launch), written))
        if self._registrar is None or self._registrar.done():
            self._registrar = loop.create_task(self._register_batches(), name="ray-register")
        await written

    async def _register_batches(self) -> None:
        registry = self._host.registry
        # The run's lock is taken with its registration, in the same commit (SQLite's in its
        # file, PostgreSQL's as the fleet's run lock): a run is this hub's from its placement.
        locking = placed_run_locks(registry)
        while self._registering:
            await asyncio.sleep(0)  # the starts arriving now join this batch
            batch, self._registering = self._registering, []
            outcomes: list[BaseException | None]
            if locking is not None:
                try:
                    await locking.register_many([row for row, _ in batch], hold=PLACED_LOCK_HOLDER)
                    self._held.update(row[0] for row, _ in batch)
                    outcomes = [None] * len(batch)
                except Exception as exc:  # each start waiting on this batch is refused with it
                    outcomes = [exc] * len(batch)
            else:
                done = await asyncio.gather(*(registry.register(*row) for row, _ in batch), return_exceptions=True)
                outcomes = [d if isinstance(d, BaseException) else None for d in done]
            for (_, written), error in zip(batch, outcomes):
                if written.done():
                    continue
                if error is None:
                    written.set_result(None)
                else:
                    written.set_exception(error)

    async def _let_go(self, run_ids: list[str]) -> None:
        """Drop the locks of ``run_ids`` this hub holds (their runs ended; the hub stops)."""
        mine = [r for r in run_ids if r in self._held]
        if not mine:
            return
        self._held.difference_update(mine)
        locking = placed_run_locks(self._host.registry)
        try:
            if locking is not None:
                await locking.let_go(mine, PLACED_LOCK_HOLDER)
        except Exception as exc:  # isolation boundary: the rows are stale once this process exits
            log.warning("could not drop the locks of %d placed run(s): %s", len(mine), " ".join(str(exc).split())[:200])

    async def resume_recorded(self) -> list[str]:
        """Take back, or place again, every unfinished run this hub placed before it stopped
        (``serve`` after a restart), built from the launch the hub recorded in its registry,
        never from the run's events.

        The run's lock decides (taken for all of them in one transaction): a run whose lock
        another live hub holds (another hub on this database) is left to it, whatever its
        actor dials. For the others, now this hub's: a run whose actor is still going on (the
        hub died; its actors are detached) and dials this hub's address is taken back: it goes
        on in the same process, its link reconnects here. An actor that dials another address
        is ended (the hub it reports to does not hold the run: it is gone) and the run is
        placed again: its new actor reads the run's history from this hub and continues it.
        One copy of each run. Returns the runs placed again."""
        registry = self._host.registry
        registrations = await registry.all()
        wanted = []
        for reg in registrations.values():
            if reg.origin != PLACED or reg.launch is None:
                continue  # not placed by this hub: never placed from what its events say
            old = self._host.get(reg.run_id)  # read from the database now if not listed yet
            if old is not None and not old.state.finished:
                wanted.append((reg, old))
        locking = placed_run_locks(registry)
        held_elsewhere = await locking.hold_runs([reg.run_id for reg, _ in wanted], PLACED_LOCK_HOLDER) if locking is not None and wanted else {}
        if locking is not None:
            self._held.update(reg.run_id for reg, _ in wanted if reg.run_id not in held_elsewhere)
        live = await asyncio.to_thread(self._live_actors)
        placed = []
        for reg, old in wanted:
            assert reg.launch is not None
            found = live.get(reg.run_id)
            holder = held_elsewhere.get(reg.run_id)
            if holder is not None:
                dials = f" (its actor dials {found[1]})" if found is not None else ""
                log.warning("run %s is left to %s, which holds its lock%s", old.run_id, holder.describe(), dials)
                continue  # another hub on this database, alive: its run, one copy
            if found is not None and found[1] == self.address:
                self._take_back(old, found[0], found[2], self._spec(old.run_id, reg.launch))
                log.info("run %s goes on in its actor, taken back by this hub", old.run_id)
                continue
            if found is not None:
                await asyncio.to_thread(ray.kill, found[0], no_restart=True)
                log.info("run %s's actor dials %s, whose hub does not hold the run's lock: ended, the run is placed again", old.run_id, found[1])
            if old.live or old.history is None or old.origin is Origin.PLACED:
                continue
            self._launch(RunnerAttachment.from_recorded(old, self._hub.recorder, placed=True), self._spec(old.run_id, reg.launch))
            log.warning("run %s placed on Ray again, to continue from its recording", old.run_id)
            placed.append(old.run_id)
        return placed

    def _live_actors(self) -> dict[str, tuple[Any, str, bool]]:
        """The runs going on in this namespace's actors: run id -> (actor, the hub address it
        dials, whether the actor is a pool). Blocking; an actor that does not answer within
        CONNECT_TIMEOUT (being rebuilt: its runs are gone with its process) holds none."""
        found: dict[str, tuple[Any, str, bool]] = {}
        names = [n for n in ray.util.list_named_actors() if n.startswith(("run-", "pool-"))]
        handles = {}
        for name in names:
            try:
                handles[name] = ray.get_actor(name)
            except ValueError:  # ended since it was listed
                continue
        asks = {handles[name].dials.remote(): name for name in handles}
        ready, _ = ray.wait(list(asks), num_returns=len(asks), timeout=CONNECT_TIMEOUT) if asks else ([], [])
        for ref in ready:
            name = asks[ref]
            try:
                dials = ray.get(ref)
            except Exception as exc:  # isolation boundary: an actor that died since
                log.debug("ray actor %s: %s", name, exc)
                continue
            for run_id, hub in dials.items():
                found[run_id] = (handles[name], hub, name.startswith("pool-"))
        return found

    def _take_back(self, old: ServedRun, actor: Any, pooled: bool, spec: PlacedSpec) -> None:
        """Serve ``old`` as a placed run again, its actor (found going on) followed as this hub's
        own: a pool is asked to run it again (it waits for the copy it runs: none started), so
        this hub's call is the one Ray retries if the process is lost."""
        run = runner_of(old) or RunnerAttachment.from_recorded(old, self._hub.recorder, placed=True)
        if run.placement is None:  # its actor reconnected before this hub looked
            run.placement = Placement()
            run.run.origin = Origin.PLACED
        run.placement.placed = run.conn is not None
        self._host.adopt(run.run)
        pool: _Pool | None = None
        ended = None
        if pooled:
            key = actor._actor_id.hex()
            pool = self._found.setdefault(key, _Pool(actor))
            pool.taken += 1
            ended = actor.run.remote(spec)
        self._follow_actor(run, actor, ended, pool)

    async def place_again(self, run: RunnerAttachment, launch: LaunchSpec) -> None:
        """Place ``run`` again from the launch the hubs recorded when it was first placed
        (several hubs on one database: the hub that placed it is gone). ``run`` already holds
        the run's state; its new actor reads the history back and continues it. The gone
        hub's actor (detached, dialing the gone hub) is ended first if it still holds the run:
        one copy of each run. Ray's listing of the actors (up to CONNECT_TIMEOUT) and the kill
        block, so they run in a thread: the hub's loop keeps serving meanwhile. The caller
        took the run's lock for this hub (the takeover): it is dropped when the run ends, as
        for a run this hub placed first."""
        if placed_run_locks(self._host.registry) is not None:
            self._held.add(run.run_id)
        live = (await asyncio.to_thread(self._live_actors)).get(run.run_id)
        if live is not None:
            await asyncio.to_thread(ray.kill, live[0], no_restart=True)
        self._launch(run, self._spec(run.run_id, launch))

    def _spec(self, run_id: str, launch: LaunchSpec) -> PlacedSpec:
        """The actor's spec for a recorded launch: the agent is imported from this hub's
        search directory (the same path on every node), never from one a record names."""
        return PlacedSpec(
            run_id=run_id, hub=self.address, agent=launch.target, goal=launch.goal, plan_json=launch.plan_json,
            speed=launch.speed, search_dir=self.search_dir, connect_token=self.connect_token, read_token=self.read_token,
            budget=launch.budget, budget_author=launch.started_by,
        )  # fmt: skip

    def _launch(self, run: RunnerAttachment, spec: PlacedSpec) -> None:
        """Serve ``run`` and create its actor (or add it to a pool with room); a task watches
        it until its run ends."""
        run_id = run.run_id
        self._host.adopt(run.run)
        pool: _Pool | None = None
        if self.runs_per_actor > 1:
            pool = self._pool_with_room()
            pool.taken += 1
            actor = pool.actor
            ended = actor.run.remote(spec)  # retried on the rebuilt actor after a lost node
        else:
            actor = self._actor_class.options(
                max_restarts=-1, max_task_retries=-1, max_concurrency=4, lifetime="detached", name=f"run-{run_id}",
                **self.resources.options(),
            ).remote(spec)  # fmt: skip
            ended = None
        self._follow_actor(run, actor, ended, pool)

    def _follow_actor(self, run: RunnerAttachment, actor: Any, ended: Any, pool: _Pool | None) -> None:
        run_id = run.run_id
        _placement(run).actor_id = actor._actor_id.hex()
        self._actors[run_id] = actor
        task = asyncio.get_running_loop().create_task(self._watch(run, actor, ended, pool), name=f"ray-run-{run_id}")
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    def _pool_with_room(self) -> _Pool:
        """A pool given fewer than ``runs_per_actor`` runs so far, or a new one. A pool takes
        runs until it has been given that many, and ends when they all have ended."""
        for pool in self._pools:
            if pool.taken < self.runs_per_actor:
                return pool
        n = self.runs_per_actor
        pool_id = uuid.uuid4().hex
        actor = self._pool_class.options(
            max_restarts=-1, max_task_retries=-1, max_concurrency=n + 4, lifetime="detached", name=f"pool-{pool_id}",
            **self.resources.options(),
        ).remote(pool_id)  # fmt: skip
        pool = _Pool(actor)
        self._pools.append(pool)
        return pool

    async def _watch(self, run: RunnerAttachment, actor: Any, ended: Any = None, pool: _Pool | None = None) -> None:
        """Say why the run is not placed while Ray has not placed it; when its run ends, end
        the actor (it is detached: Ray would otherwise keep the process, and restart it), or
        for a pool, when every run it was given has ended (it takes no more after that)."""
        # Cancelled (the hub closing) this raises: ``close`` ends the actors.
        ran = await self._follow(run, actor, ended)
        self._actors.pop(run.run_id, None)
        await self._let_go([run.run_id])
        if pool is None:
            if ran:
                ray.kill(actor, no_restart=True)
        else:
            pool.ended += 1
            if pool.ended >= pool.taken:  # every run it was given has ended
                if pool in self._pools:
                    self._pools.remove(pool)
                self._found = {k: p for k, p in self._found.items() if p is not pool}
                ray.kill(actor, no_restart=True)

    async def _follow(self, run: RunnerAttachment, actor: Any, ended: Any) -> bool:
        """Until the run ends: True, or False when Ray gave up on its actor (the run says so)."""
        placed = asyncio.wrap_future(actor.where.remote().future())
        self._pending[run.run_id] = (run, asyncio.get_running_loop().time())
        if self._explainer is None or self._explainer.done():
            self._explainer = asyncio.get_running_loop().create_task(self._explain(), name="ray-pending-reasons")
        try:
            try:
                await placed
            finally:
                self._pending.pop(run.run_id, None)
            outcome = await asyncio.wrap_future((ended if ended is not None else actor.wait.remote()).future())
            log.info("placed run %s: %s", run.run_id, outcome)
            if not _placement(run).placed:
                await self._actor_ended(run, f"its process ended before the run connected: {outcome}"[:500])
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: Ray gave up on the actor; the run says it
            await self._actor_ended(run, f"Ray gave up on its actor: {type(exc).__name__}", " ".join(str(exc).split())[:300])
            return False
        finally:
            placed.cancel()
        return True

    async def _actor_ended(self, run: RunnerAttachment, reason: str, detail: str = "") -> None:
        """This hub's actor of ``run`` ended before the run was done (``reason``). When another
        live hub holds the run's lock, that is why (it placed the run again or took it back,
        and this copy was refused or ended): the run is that hub's, not failed, and is left
        as the fleet shows it. Otherwise the placement failed, and the run says why."""
        locking = placed_run_locks(self._host.registry)
        holder = None
        try:
            holder = await locking.held_elsewhere(run.run_id) if locking is not None else None
        except Exception as exc:  # isolation boundary: the lock cannot be read; what Ray said stands
            log.debug("placed run %s: its lock cannot be read: %s", run.run_id, exc)
        if holder is not None:
            log.warning("run %s is held by %s: this hub's actor of it ended, the run goes on there", run.run_id, holder.describe())
            return
        if detail:
            log.error("placed run %s: its Ray actor is gone: %s", run.run_id, detail)
        run.placement_failed(reason)

    async def _explain(self) -> None:
        """While runs wait to be placed: every ASK_EVERY seconds, Ray's word on why, for each
        that has waited that long."""
        loop = asyncio.get_running_loop()
        while self._pending:
            await asyncio.sleep(ASK_EVERY)
            now = loop.time()
            runs = [run for run, since in self._pending.values() if now - since >= ASK_EVERY and not _placement(run).placed]
            if runs:
                reasons = await asyncio.to_thread(self.why_pending, [_placement(r).actor_id for r in runs])
                for run in runs:
                    # Ray's state API can take seconds to answer: a run placed meanwhile (whose
                    # process may have failed already, the run saying why) is not pending now.
                    if self._pending.get(run.run_id, (None, 0.0))[0] is run:
                        run.placement_waiting(reasons[_placement(run).actor_id])

    def why_pending(self, actor_ids: list[str]) -> dict[str, str]:
        """For each actor: Ray's state of it, what it asks for, and whether any live node could
        ever hold it (blocking: one listing of Ray's state API, one of its nodes)."""
        states: dict[str, Any] = {}
        try:
            from ray.util.state import list_actors

            wanted = set(actor_ids)
            for class_name in ("RunActor", "RunPool") if self.runs_per_actor > 1 else ("RunActor",):
                for found in list_actors(filters=[("class_name", "=", class_name)], detail=True, limit=10_000, timeout=10):
                    if found.actor_id in wanted:
                        states[found.actor_id] = found
        except Exception as exc:  # isolation boundary: no state API (no dashboard); the rest still says why
            log.debug("ray state API: %s", exc)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        return {actor_id: self._reason(states.get(actor_id), nodes) for actor_id in actor_ids}

    def _reason(self, found: Any, nodes: list[dict[str, Any]]) -> str:
        required = self.resources.required()
        state = "PENDING_CREATION"
        if found is not None:
            state = str(found.state)
            required = {k: float(v) for k, v in (found.required_resources or required).items()}
        if not nodes:
            return f"Ray {state}: the cluster has no live node"
        fits = [n for n in nodes if all(n["Resources"].get(k, 0.0) >= v for k, v in required.items())]
        if not fits:
            missing = {k: v for k, v in required.items() if max(n["Resources"].get(k, 0.0) for n in nodes) < v}
            return f"Ray {state}: no live node has {_fmt(missing)} (the run asks {_fmt(required)}; {len(nodes)} node(s) up)"
        return (
            f"Ray {state}: {len(fits)} node(s) can hold {_fmt(required)}; "
            "Ray is starting its process or waiting for their resources to be free"
        )

    async def close(self) -> None:
        """Stop watching, end the actors of the runs going on (a hub that stops leaves its runs
        interrupted; the next start places them again) and leave the cluster."""
        tasks = [*self._watchers, *([self._explainer] if self._explainer is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        actors = {a._actor_id.hex(): a for a in [*self._actors.values(), *(p.actor for p in self._pools), *(p.actor for p in self._found.values())]}
        await self._let_go(sorted(self._held))  # its runs are interrupted: the next start takes them
        self._actors.clear()
        self._pools.clear()
        self._found.clear()

        def end() -> None:
            for actor in actors.values():
                try:
                    ray.kill(actor, no_restart=True)
                except Exception as exc:  # isolation boundary: one that is gone already
                    log.debug("ray kill: %s", exc)
            ray.shutdown()

        await asyncio.to_thread(end)


def _placement(run: RunnerAttachment) -> Placement:
    """The placement part of a run this placer placed (every run it holds has one)."""
    assert run.placement is not None, f"run {run.run_id} was not placed by this hub"
    return run.placement


if TYPE_CHECKING:

    def _what_the_server_asks(placer: RayPlacer) -> Placer:
        return placer  # mypy checks that a RayPlacer is the Placer the server, Runs service and fleet take
